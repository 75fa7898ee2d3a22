/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal layout of struct kagg_snapshot and the helpers sessions use to
 * build one.  A snapshot owns every string and array its public views point
 * to; kagg_snapshot__free() releases them all.
 */
#ifndef KAGG_SNAPSHOT_INT_H
#define KAGG_SNAPSHOT_INT_H

#include <kagg/snapshot.h>

#define SNAP_MAX_DROPS 40
#define SNAP_MAX_PROGS 8 /* SESSION_MAX_PROGS */
#define SNAP_MAX_MAPS 48

struct kagg_snapshot {
	struct kagg_meta meta;
	struct kagg_drop drops[SNAP_MAX_DROPS];
	struct kagg_prog_cost progs[SNAP_MAX_PROGS];
	/* meta.drops and meta.progs point here: drop_ptrs[i] = &drops[i]... */
	const struct kagg_drop *drop_ptrs[SNAP_MAX_DROPS];
	const struct kagg_prog_cost *prog_ptrs[SNAP_MAX_PROGS];
	struct kagg_map_cost maps[SNAP_MAX_MAPS];
	const struct kagg_map_cost *map_ptrs[SNAP_MAX_MAPS];

	struct kagg_hist *hists;
	size_t nr_hists;
	uint64_t *slots; /* nr_hists * 64 counters, hists[i].slots points inside */

	struct kagg_stack *stacks;
	size_t nr_stacks;
	const char *stack_noun; /* what a stack's count counts: "intervals" (NULL) or "samples" */
	bool addrs;		/* KAGG_SNAP_ADDRS: frames by address */

	/* KAGG_MODE_BOTH: the streaming path's histograms. */
	struct kagg_snapshot *stream;

	/* Strings (meta fields, frame names) and frame arrays owned by the snapshot. */
	void **owned;
	size_t nr_owned;
	size_t cap_owned;
};

/* sz of a kagg_hist of the first release (0.1): the least the library reads of one */
#define HIST_MIN_SZ offsetofend(struct kagg_hist, lin_step)

/* Nanoseconds per unit, and its log2 (rounded down) (user/snapshot/units.c). */
uint64_t units_ns(enum kagg_unit unit);
unsigned int units_log2(enum kagg_unit unit);

/* h has exp buckets (has_exp, within its sz) (user/snapshot/buckets.c). */
bool hist_is_exp(const struct kagg_hist *h);
/* Bounds of slot k of h, as kagg_hist__bounds() gives them. */
void hist_slot_bounds(const struct kagg_hist *h, unsigned int k, double *low, double *high);
/*
 * Percentile q in (0, 100] of h: the slot that holds it and its interpolated value, by the
 * rule of user/snapshot/percentile.c.  0, -EINVAL (q out of range), -ENODATA (no values).
 */
int hist_pct_slot(const struct kagg_hist *h, double q, unsigned int *slot, double *value);
/* h's exact extremes (kagg_hist.has_minmax, read up to h->sz): false when it has none. */
bool hist_minmax(const struct kagg_hist *h, double *min, double *max);
/* h keeps its values (exact == KAGG_EXACT_KEPT, within its sz) and has some. */
bool hist_has_values(const struct kagg_hist *h);
/* Exact percentile q of h from its values: 0, -EINVAL (q out of range), -ENODATA (none kept). */
int hist_exact_pct(const struct kagg_hist *h, double q, double *value);

struct kagg_snapshot *snap_new(void);
/* Keep p (malloc'd) until the snapshot is freed; frees p and returns NULL on ENOMEM. */
void *snap_own(struct kagg_snapshot *snap, void *p);
/* strdup owned by the snapshot (NULL on ENOMEM). */
const char *snap_strdup(struct kagg_snapshot *snap, const char *s);
/* Allocate n histograms of nr_slots slots each, zeroed (sz set). 0 or -ENOMEM. */
int snap_alloc_hists(struct kagg_snapshot *snap, size_t n, unsigned int nr_slots);
/* Sort histograms by (pid, tid, id). */
void snap_sort_hists(struct kagg_snapshot *snap);
/*
 * The stacks' storage: n zeroed stacks (sz set).  0 or -ENOMEM.  Frames go
 * through snap_frames().
 */
int snap_alloc_stacks(struct kagg_snapshot *snap, size_t n);
/*
 * n zeroed frames (sz set) owned by snap, and the pointer array a stack
 * shows them through (*ptrs).  NULL on ENOMEM.
 */
struct kagg_frame *snap_frames(struct kagg_snapshot *snap, size_t n,
			       const struct kagg_frame *const **ptrs);
/* Append a map's cost (NULL when SNAP_MAX_MAPS are there), zeroed with sz set. */
struct kagg_map_cost *snap_add_map(struct kagg_snapshot *snap);
/* Append a program's cost (NULL when SNAP_MAX_PROGS are there), zeroed with sz set. */
struct kagg_prog_cost *snap_add_prog(struct kagg_snapshot *snap);
/*
 * Write one name (comm or frame; at most n bytes or up to its NUL) of a folded stack line:
 * ';' separates frames there, so a ';' inside a name (Rust's "<[u8; 32] as Debug>::fmt") is
 * written ':'; the rest is escaped for a terminal as text_fputn() does.
 */
void snap_put_folded(FILE *f, const char *s, size_t n);
/* The "HH:MM:SS" line of kagg_print_opts.timestamp: the local time the snapshot ends. */
void snap_print_timestamp(const struct kagg_snapshot *snap, FILE *f);
/* Append a drop cause. */
void snap_add_drop(struct kagg_snapshot *snap, const char *cause, const char *what, uint64_t count,
		   bool loses_event);

#endif
