/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the state of a kagg_prog__open() session (user/prog/prog.c) and
 * the reading of its aggregations with their keys printed from BTF
 * (user/prog/keys.c).
 */
#ifndef KAGG_PROG_INT_H
#define KAGG_PROG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include <kagg/common.h>

#include "shared/kagg_sdk.h"
#include "util/cgroup.h"
#include "util/u64map.h"

struct bpf_object;
struct bpf_map;
struct btf;
struct kagg_hist;
struct kagg_prog_opts;
struct kagg_session;
struct kagg_snapshot;

/* One aggregation (or pair) of the object: NAME and NAME__kagg. */
struct pagg {
	char *name;
	struct kagg_sdk_desc d;
	struct bpf_map *map;   /* NULL for a pair */
	struct bpf_map *cells; /* log2 histograms: exp bucket cells NAME__x, if the object has */
	__u32 max;	       /* keys per interval (the map's entries / 2) */
	__u32 key_type;	       /* BTF id of the program's KEY (member k of NAME__key) */
	__u32 key_off;	       /* its offset in the map's key */
	bool unkeyed;	       /* KEY has no field: a per-CPU array indexed by generation */
	bool has_pid;	       /* KEY has a kagg_pid_t field */
	bool ext;	       /* histogram values and cells end with the extremes (not _V1) */
	char what[128];	       /* a KAGG_DROP: its description (NAME__what) */
	bool off;	       /* --set NAME.max=0: neither read nor shown */
};

/* A process's command as first seen alive, and the interval it was last seen in. */
struct pcomm {
	uint32_t pid;
	uint32_t epoch;
	char comm[KAGG_SDK_COMM_LEN];
};

/*
 * cgroup id -> path, read from the cgroup2 mount when an id is not known; kagg_pid_t ->
 * command, read when a key is first seen (poll, streamed records), for the processes
 * gone by the snapshot.
 */
struct pkey_cache {
	struct cg_paths cg;	/* cg.read: in this snapshot already */
	struct u64map comm_idx; /* pid -> index in comms */
	struct pcomm *comms;
	size_t nr_comms, cap_comms;
	uint32_t epoch; /* snapshots taken with reset */
};

struct pstream;

struct pstate {
	char *path; /* as given, or NULL (opts->obj_buf) */
	char *name; /* the tool's name: the file's, without .bpf.o */
	void *buf;  /* the object's bytes */
	size_t size;
	struct bpf_object *obj;
	struct btf *vmlinux;
	bool vmlinux_tried;
	struct pagg *aggs;
	size_t nr_aggs;
	struct bpf_map *counters, *stackmap;
	const char *const *sets; /* during open only */
	size_t nr_sets;
	char *binary;
	char *func;
	char *tp_sys, *tp_name; /* the tracepoint of SEC("tracepoint") programs naming none */
	int pid;
	enum kagg_attach attach;
	bool has_pairs;	  /* programs in two flavours */
	bool from_tracer; /* kernel stacks start in the tracing program */
	bool ustacks;
	char events[256]; /* meta: what the programs attach to */
	struct pkey_cache cache;
	struct pstream *stream; /* the streamed observations (mode stream or both) */
	size_t stream_bytes;
	/* the stream part's time, kagg_stream_ns (NULL: not timed), at the interval's start */
	struct bpf_map *stream_ns;
	uint64_t stream_ns0;
	/*
	 * A built-in tool's names for each histogram read (user/builtin/hist.c), after the
	 * labels from BTF: key is the program's KEY (NULL without one).  NULL: none.
	 */
	int (*relabel)(struct kagg_session *s, const struct pagg *a, const unsigned char *key,
		       struct kagg_hist *h, struct kagg_snapshot *snap);
	bool exp; /* log2 histograms in exp buckets (s->exp_scale) */
	struct kagg_sdk_exp_params exp_params[2]; /* of raw values, of times */
};

/* One histogram or counter of a snapshot being read: aggregation agg, one key. */
struct pentry {
	size_t agg;
	unsigned char *key; /* the map's key (NAME__key, or the generation when unkeyed) */
	uint64_t slots[KAGG_SDK_SLOTS];
	uint64_t *xslots; /* exp buckets (zero bucket first), NULL: slots */
	uint64_t count, sum;
	__u64 nmin, max; /* with has_ext: the extremes, as kagg_ext_put() keeps them */
	bool has_ext;
	char **names, **vals;
	size_t nr_labels;
	char *label;
};

/* Does the key type id (of btf) hold a kagg_kstack_t or kagg_ustack_t field? */
bool pkey_has_stacks(const struct btf *btf, __u32 id);
/* Does it hold a kagg_pid_t field? */
bool pkey_has_pid(const struct btf *btf, __u32 id);
/*
 * Every histogram and counter aggregation's entries of generation g into snap, one
 * kagg_hist each, their keys as labels; deleted when reset.  0 or -errno.
 */
int pread_hists(struct kagg_session *s, struct pstate *t, struct kagg_snapshot *snap, __u32 g,
		bool reset);
void pkey_cache_free(struct pkey_cache *c);
/*
 * The commands of the kagg_pid_t fields of every key now in the maps, read for the pids
 * not known yet (session poll).
 */
void pkey_note_maps(struct kagg_session *s, struct pstate *t);
/*
 * After a snapshot with reset: forget the processes gone that no key has shown since the
 * snapshot before (their keys are all printed); the next interval starts.
 */
void pkey_prune(struct pkey_cache *c);
/* The same for the key of aggregation a at k (its KEY, not the map's key). */
void pkey_note(struct kagg_session *s, struct pstate *t, const struct pagg *a,
	       const unsigned char *k);
/* Slots of an exp bucket histogram: the zero bucket, then KAGG_EXP_SLOTS(scale). */
unsigned int pexp_slots(const struct kagg_session *s);
/* The exp slot of v (0: the zero bucket) with t's parameters of times or of raw values. */
unsigned int pexp_slot(const struct pstate *t, bool time, uint64_t v);
/* Room for one more entry in *es (zeroed, not counted in *n); NULL on ENOMEM. */
struct pentry *pentry_add(struct pentry **es, size_t *n, size_t *cap);
void pentry_free(struct pentry *e);
/*
 * The n entries es into snap, labelled and sorted; es and its entries freed.  err: what
 * collecting them ended with, returned at once when it failed.  0 or -errno.
 */
int pentries_snap(struct kagg_session *s, struct pstate *t, struct kagg_snapshot *snap,
		  struct pentry *es, size_t n, int err);

/*
 * Streaming (user/prog/stream.c): the records of kagg_events, one event format per
 * aggregation generated from its key's BTF, landed in the reference ring buffer and
 * aggregated as the kernel aggregates them.
 */
int pstream_init(struct kagg_session *s, struct pstate *t, size_t map_bytes, size_t rb_subbufs,
		 bool rb_consume);
int pstream_read(struct kagg_session *s, struct pstate *t, struct kagg_snapshot *snap, __u32 g,
		 bool reset);
void pstream_free(struct pstream *st);

/*
 * A built-in tool written with the SDK (user/builtin/hist.c): its session state begins
 * with a struct pstate, its opener builds kagg_prog_opts (the object in memory, the
 * tunables) and calls prog_open_builtin() under its own name; its ops are these, the
 * loader's own, or wrap them.
 */
struct bpf_link;
int prog_open_builtin(struct kagg_session *s, const char *name, struct kagg_prog_opts *o);
int prog_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset);
struct bpf_link *prog_attach(struct kagg_session *s, int i);
void prog_destroy(struct kagg_session *s);
/* Whether the 64 linear buckets from min, step wide, end within int64 (the values' range). */
bool prog_lin_fits(int64_t min, uint64_t step);
/* The aggregation (or pair, or drop) named name; NULL when the program has none. */
const struct pagg *prog_agg(const struct pstate *t, const char *name);

#endif
