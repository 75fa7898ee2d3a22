// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Snapshots: the immutable result of one read of a session, and its
 * printers (BCC-style text, folded stacks, JSON).
 *
 *   session read ─▶ snap_new()                     building: the session's
 *                   snap_alloc_hists/stacks()      thread alone, through
 *                   snap_add_drop/prog()           snapshot_internal.h
 *                   snap_strdup/own(), snap_sort_hists()
 *                ─▶ handed out const ─▶ accessors, kagg_snapshot__print()
 *                ─▶ kagg_snapshot__free(): one call frees it all
 *
 * What it guarantees:
 * - It owns every byte it points to: histograms and their slots (two
 *   arrays), stacks and frames, every string of its meta and keys (through
 *   snap_own()), and with --mode both the streamed path's snapshot.  It
 *   shares nothing with the session, which may read again, reset or be
 *   destroyed while the caller keeps it.
 * - Once handed out it does not change: the API gives const pointers only,
 *   so any number of threads may read and print one snapshot at once.
 * - A built-in tool's histograms are sorted by key (pid, tid, cgroup, comm,
 *   id), a program's by aggregation and label; the two paths of --mode both
 *   pair up by their whole key (cmp_key(), on sorted indexes of both lists),
 *   whatever order each keeps.
 * - The printers escape every string that came from outside (comm, symbol
 *   names, labels, meta): text through util/text (terminal-safe), JSON through
 *   util/json (valid UTF-8 out, whatever the bytes in), folded stacks with a
 *   ';' inside a name written as ':'.  A percentile from buckets is printed
 *   with its bucket's bounds as its error; "exact" only when the histogram
 *   (or its key's streamed twin) kept its values.  A write error on the
 *   stream is returned (-EIO from ferror()), not hidden.
 * - A caller's own struct kagg_hist is read up to its sz, at least the
 *   first release's fields (HIST_MIN_SZ), never past it.
 *
 * What it does not do:
 * - Lock anything while it is built.
 * - Keep more than SNAP_MAX_DROPS drop causes or SNAP_MAX_PROGS programs:
 *   snap_add_drop() and snap_add_prog() add nothing past them.
 * - Clean up a half-built snapshot on ENOMEM: the builder frees it
 *   (snap_own() frees only the pointer it could not take).
 * - Check that a histogram's layout (nr_slots, unit, linear or exp fields)
 *   makes sense: the printers trust what the library built.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/snapshot.h>
#include "util/array.h"
#include "util/json.h"
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"
#include "util/text.h"

/* Slot k's bounds as text: signed for linear slots, unsigned log2 otherwise. */
static void slot_bounds(const struct kagg_hist *h, int k, char *lo, char *hi, size_t sz)
{
	uint64_t low, high;

	if (hist_is_exp(h)) {
		double l, u;

		hist_slot_bounds(h, (unsigned int)k, &l, &u);
		snprintf(lo, sz, "%.6g", l);
		snprintf(hi, sz, "%.6g", u);
		return;
	}
	if (h->lin_step) {
		int64_t l = h->lin_min + (int64_t)(k * h->lin_step);

		snprintf(lo, sz, "%" PRId64, l);
		snprintf(hi, sz, "%" PRId64, l + (int64_t)h->lin_step - 1);
		return;
	}
	kagg_log2_bounds(k, &low, &high);
	snprintf(lo, sz, "%" PRIu64, low);
	snprintf(hi, sz, "%" PRIu64, high);
}

/* The value column's name: the counted value, else the time unit. */
static const char *value_name(const struct kagg_hist *h)
{
	const char *unit = kagg_unit__name(h->unit);

	return h->value ? h->value : unit ? unit : "?";
}

/* ------------------------------------------------------------ building */

struct kagg_snapshot *snap_new(void)
{
	struct kagg_snapshot *snap = calloc(1, sizeof(struct kagg_snapshot));

	if (snap) {
		snap->meta.sz = sizeof(snap->meta);
		snap->meta.drops = snap->drop_ptrs;
		snap->meta.progs = snap->prog_ptrs;
		snap->meta.maps = snap->map_ptrs;
	}
	return snap;
}

void *snap_own(struct kagg_snapshot *snap, void *p)
{
	void **tmp;

	if (!p)
		return NULL;
	if (snap->nr_owned == snap->cap_owned) {
		size_t cap = snap->cap_owned ? snap->cap_owned * 2 : 32;

		tmp = realloc(snap->owned, cap * sizeof(*tmp));
		if (!tmp) {
			free(p);
			return NULL;
		}
		snap->owned = tmp;
		snap->cap_owned = cap;
	}
	snap->owned[snap->nr_owned++] = p;
	return p;
}

const char *snap_strdup(struct kagg_snapshot *snap, const char *s)
{
	return s ? snap_own(snap, strdup(s)) : NULL;
}

int snap_alloc_hists(struct kagg_snapshot *snap, size_t n, unsigned int nr_slots)
{
	size_t i;

	snap->hists = calloc(n ? n : 1, sizeof(*snap->hists));
	snap->slots = calloc(n ? n * nr_slots : 1, sizeof(uint64_t));
	if (!snap->hists || !snap->slots)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		snap->hists[i].sz = sizeof(snap->hists[i]);
		snap->hists[i].nr_slots = nr_slots;
		snap->hists[i].slots = snap->slots + i * nr_slots;
	}
	snap->nr_hists = n;
	return 0;
}

void snap_add_drop(struct kagg_snapshot *snap, const char *cause, const char *what, uint64_t count,
		   bool loses_event)
{
	struct kagg_meta *m = &snap->meta;

	if (m->nr_drops >= SNAP_MAX_DROPS)
		return;
	snap->drops[m->nr_drops] =
		(struct kagg_drop){ sizeof(struct kagg_drop), cause, what, count };
	snap->drop_ptrs[m->nr_drops] = &snap->drops[m->nr_drops];
	m->nr_drops++;
	if (loses_event)
		m->drops_total += count;
}

/*
 * The next of snap's MAX fixed entries arr (counted in meta.NR, pointed to from ptrs), zeroed
 * but for its sz; NULL when they are all taken.
 */
#define SNAP_ADD(snap, arr, ptrs, NR, MAX)                            \
	({                                                            \
		__typeof__(&(snap)->arr[0]) e_ = NULL;                \
                                                                      \
		if ((snap)->meta.NR < (MAX)) {                        \
			e_ = &(snap)->arr[(snap)->meta.NR];           \
			*e_ = (__typeof__(*e_)){ .sz = sizeof(*e_) }; \
			(snap)->ptrs[(snap)->meta.NR++] = e_;         \
		}                                                     \
		e_;                                                   \
	})

struct kagg_map_cost *snap_add_map(struct kagg_snapshot *snap)
{
	return SNAP_ADD(snap, maps, map_ptrs, nr_maps, SNAP_MAX_MAPS);
}

struct kagg_prog_cost *snap_add_prog(struct kagg_snapshot *snap)
{
	return SNAP_ADD(snap, progs, prog_ptrs, nr_progs, SNAP_MAX_PROGS);
}

int snap_alloc_stacks(struct kagg_snapshot *snap, size_t n)
{
	size_t i;

	snap->stacks = calloc(n ? n : 1, sizeof(*snap->stacks));
	if (!snap->stacks)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		snap->stacks[i].sz = sizeof(snap->stacks[i]);
	return 0;
}

struct kagg_frame *snap_frames(struct kagg_snapshot *snap, size_t n,
			       const struct kagg_frame *const **ptrs)
{
	struct kagg_frame *fr = snap_own(snap, calloc(n ? n : 1, sizeof(*fr)));
	const struct kagg_frame **p = snap_own(snap, calloc(n ? n : 1, sizeof(*p)));
	size_t i;

	if (!fr || !p)
		return NULL;
	for (i = 0; i < n; i++) {
		fr[i].sz = sizeof(fr[i]);
		p[i] = &fr[i];
	}
	*ptrs = p;
	return fr;
}

static int cmp_hist(const void *a, const void *b)
{
	const struct kagg_hist *x = a, *y = b;

	if (x->key.pid != y->key.pid)
		return x->key.pid < y->key.pid ? -1 : 1;
	if (x->key.tid != y->key.tid)
		return x->key.tid < y->key.tid ? -1 : 1;
	if (x->cgroup_id != y->cgroup_id) /* per cgroup */
		return x->cgroup_id < y->cgroup_id ? -1 : 1;
	if (x->key.mode == KAGG_KEY_COMM && memcmp(x->key.comm, y->key.comm, sizeof(x->key.comm)))
		return memcmp(x->key.comm, y->key.comm, sizeof(x->key.comm));
	return x->key.id < y->key.id ? -1 : x->key.id > y->key.id;
}

void snap_sort_hists(struct kagg_snapshot *snap)
{
	qsort(snap->hists, snap->nr_hists, sizeof(*snap->hists), cmp_hist);
}

void kagg_snapshot__free(struct kagg_snapshot *snap)
{
	size_t i;

	if (!snap)
		return;
	for (i = 0; i < snap->nr_owned; i++)
		free(snap->owned[i]);
	free(snap->owned);
	free(snap->hists);
	free(snap->slots);
	free(snap->stacks);
	kagg_snapshot__free(snap->stream);
	free(snap);
}

const struct kagg_snapshot *kagg_snapshot__stream(const struct kagg_snapshot *snap)
{
	if (!snap) {
		errno = EINVAL;
		return NULL;
	}
	return snap->stream;
}

/* ------------------------------------------------------------ accessors */

size_t kagg_snapshot__hist_cnt(const struct kagg_snapshot *snap)
{
	return snap ? snap->nr_hists : 0;
}

const struct kagg_hist *kagg_snapshot__hist(const struct kagg_snapshot *snap, size_t i)
{
	return ARRAY_AT(snap, nr_hists, hists, i);
}

size_t kagg_snapshot__stack_cnt(const struct kagg_snapshot *snap)
{
	return snap ? snap->nr_stacks : 0;
}

const struct kagg_stack *kagg_snapshot__stack(const struct kagg_snapshot *snap, size_t i)
{
	return ARRAY_AT(snap, nr_stacks, stacks, i);
}

const struct kagg_meta *kagg_snapshot__meta(const struct kagg_snapshot *snap)
{
	if (!snap) {
		errno = EINVAL;
		return NULL;
	}
	return &snap->meta;
}

/* ------------------------------------------------------------ text */

/* Index of the last non-zero slot, -1 when all are zero. */
static int hist_last(const struct kagg_hist *h)
{
	int i, last = -1;

	for (i = 0; i < (int)h->nr_slots; i++)
		if (h->slots[i])
			last = i;
	return last;
}

static void print_bar(FILE *f, uint64_t val, uint64_t max, int width)
{
	int stars = max ? (int)(val * width / max) : 0, i;

	for (i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', f);
}

/* The percentiles to print: the caller's, or p50, p90, p99, p99.9 and max. */
struct pct_list {
	const double *q;
	size_t n;
};

static const double default_pcts[] = { 50, 90, 99, 99.9, 100 };
static const struct pct_list default_pct_list = { default_pcts, 5 };

/* "p50", "p99.9", or "max" for 100. */
static void pct_name(double q, char *buf, size_t sz)
{
	if (q >= 100)
		snprintf(buf, sz, "max");
	else
		snprintf(buf, sz, "p%g", q);
}

/* Whether ex, a histogram that could keep its values, has too many to keep. */
static bool hist_over_cap(const struct kagg_hist *ex)
{
	return ex && KAGG_HAS_FIELD(ex, kagg_hist, values) && ex->exact == KAGG_EXACT_OVER_CAP;
}

/* Decimals of an exact value of h: times in usecs or msecs have fractions of them. */
static int hist_decimals(const struct kagg_hist *h)
{
	return h->value || h->unit == KAGG_UNIT_NSECS ? 0 : 3;
}

/*
 * "p50 = 3012.0 usecs [2048, 4095]", one line per percentile: the bounds are its error.
 * When ex (h itself, or the streamed histogram of its key) keeps its values, each line
 * ends with the exact percentile: "  exact 3045.127".  When h has its exact extremes,
 * "min = 1021.337 usecs" first and "max = ..." last, without bounds, in place of p100.
 */
static void print_pcts_text(const struct kagg_hist *h, const struct kagg_hist *ex,
			    const struct pct_list *pl, const char *vname, FILE *f)
{
	char name[16], low[24], high[24];
	bool any = false, mm;
	unsigned int k;
	double v, x, min, max;
	size_t i;

	mm = h->total && hist_minmax(h, &min, &max);
	if (mm) {
		fprintf(f, "\n%-5s = %.*f %s\n", "min", hist_decimals(h), min, vname);
		any = true;
	}
	for (i = 0; i < pl->n; i++) {
		if (mm && pl->q[i] >= 100)
			continue; /* the max, exact, comes last */
		if (hist_pct_slot(h, pl->q[i], &k, &v))
			continue;
		pct_name(pl->q[i], name, sizeof(name));
		slot_bounds(h, (int)k, low, high, sizeof(low));
		fprintf(f, "%s%-5s = %.1f %s [%s, %s]", any ? "" : "\n", name, v, vname, low, high);
		if (ex && !hist_exact_pct(ex, pl->q[i], &x))
			fprintf(f, "  exact %.3f", x);
		fputc('\n', f);
		any = true;
	}
	if (mm)
		fprintf(f, "%-5s = %.*f %s\n", "max", hist_decimals(h), max, vname);
	if (any && hist_over_cap(ex))
		fprintf(f, "(no exact percentiles: more than %u values in the interval)\n",
			KAGG_EXACT_MAX_VALUES);
}

/* The histogram's sum, when it has one (callers' records may predate the field). */
static bool hist_sum(const struct kagg_hist *h, double *sum)
{
	if (!KAGG_HAS_FIELD(h, kagg_hist, sum) || !h->has_sum)
		return false;
	*sum = h->sum;
	return true;
}

/* The program aggregation h is of (kagg_prog__open()), or NULL. */
static const char *hist_agg(const struct kagg_hist *h)
{
	return KAGG_HAS_FIELD(h, kagg_hist, label_values) ? h->agg : NULL;
}

/*
 * The whole key of a histogram: what cmp_hist() orders by, then the aggregation and the
 * label, where a program's histograms differ (kagg run sorts them by those, not by
 * cmp_hist()).  The two paths of --mode both are paired by it.
 */
static int cmp_key(const struct kagg_hist *x, const struct kagg_hist *y)
{
	const char *ax = hist_agg(x), *ay = hist_agg(y);
	int c = cmp_hist(x, y);

	if (!c)
		c = strcmp(ax ? ax : "", ay ? ay : "");
	if (!c)
		c = strcmp(x->key.label ? x->key.label : "", y->key.label ? y->key.label : "");
	return c;
}

static int cmp_key_ptr(const void *a, const void *b)
{
	return cmp_key(*(const struct kagg_hist *const *)a, *(const struct kagg_hist *const *)b);
}

/* snap's histograms in cmp_key() order; NULL when it has none or memory ran out. */
static const struct kagg_hist **key_index(const struct kagg_snapshot *snap)
{
	const struct kagg_hist **v;
	size_t i;

	if (!snap || !snap->nr_hists)
		return NULL;
	v = malloc(snap->nr_hists * sizeof(*v));
	for (i = 0; v && i < snap->nr_hists; i++)
		v[i] = &snap->hists[i];
	if (v)
		qsort(v, snap->nr_hists, sizeof(*v), cmp_key_ptr);
	return v;
}

/* The histogram of h's key among the n of idx (key_index()), NULL when none. */
static const struct kagg_hist *hist_pair(const struct kagg_hist *const *idx, size_t n,
					 const struct kagg_hist *h)
{
	const struct kagg_hist *const *p =
		idx ? bsearch(&h, idx, n, sizeof(*idx), cmp_key_ptr) : NULL;

	return p ? *p : NULL;
}

/* h is a counter of a program's (KAGG_COUNT): no slots, a count and a sum. */
static bool hist_is_counter(const struct kagg_hist *h)
{
	return hist_agg(h) && !h->nr_slots;
}

/* "avg = 12.3 usecs, total: 4567 usecs, count: 371", as funclatency ends its histograms. */
static void print_sum_text(const struct kagg_hist *h, const char *name, FILE *f)
{
	double sum;

	if (!hist_sum(h, &sum) || !h->total)
		return;
	fprintf(f, "\navg = %.1f %s, total: %.0f %s, count: %" PRIu64 "\n", sum / (double)h->total,
		name, sum, name, h->total);
}

/* The first slot printed: 0 (BCC's layout), or for exp buckets the first non-empty one. */
static int hist_first(const struct kagg_hist *h)
{
	int i;

	if (!hist_is_exp(h))
		return 0;
	for (i = 0; i < (int)h->nr_slots; i++)
		if (h->slots[i])
			return i;
	return 0;
}

static int print_hist_text(const struct kagg_hist *h, const struct pct_list *pl, FILE *f)
{
	struct text_esc e = {};
	const char *vname = text_esc(&e, value_name(h), SIZE_MAX);
	char low[24], high[24];
	uint64_t max = 0;
	int first = hist_first(h), last, i, w, bar;

	if (hist_is_counter(h)) {
		fprintf(f, "count = %" PRIu64 ", sum = %.*f %s\n", h->total, h->value ? 0 : 1,
			h->sum, vname);
		text_esc_free(&e);
		return ferror(f) ? -EIO : 0;
	}
	last = hist_last(h);
	for (i = first; i <= last; i++)
		if (h->slots[i] > max)
			max = h->slots[i];
	/* Wide buckets need wide columns: the same layout switch BCC makes. */
	w = last <= 32 ? 10 : 20;
	bar = last <= 32 ? 40 : 20;
	fprintf(f, "%*s%-*s : count    distribution\n", w - 5, "", w + 9, vname);
	if (last < 0)
		fprintf(f, "%*s(no events)\n", w - 5, "");
	for (i = first; i <= last; i++) {
		if (hist_is_exp(h) && !h->slots[i])
			continue; /* exp buckets are many and narrow: the non-empty ones */
		slot_bounds(h, i, low, high, sizeof(low));
		fprintf(f, "%*s -> %-*s : %-8" PRIu64 " |", w, low, w, high, h->slots[i]);
		print_bar(f, h->slots[i], max, bar);
		fputs("|\n", f);
	}
	print_sum_text(h, vname, f);
	print_pcts_text(h, h, pl, vname, f);
	text_esc_free(&e);
	return ferror(f) ? -EIO : 0;
}

int kagg_hist__print_text(const struct kagg_hist *h, FILE *f)
{
	if (!sz_in_valid(h, HIST_MIN_SZ, sizeof(*h)) || !f)
		return -EINVAL;
	return print_hist_text(h, &default_pct_list, f);
}

static void fmt_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	size_t n;

	gmtime_r(&ts->tv_sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03ldZ", ts->tv_nsec / 1000000);
}

/* HH:MM:SS, local time, as libbpf-tools' -T prints it. */
static void fmt_local_hms(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&ts->tv_sec, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

void snap_print_timestamp(const struct kagg_snapshot *snap, FILE *f)
{
	char t[16];

	fmt_local_hms(&snap->meta.end, t, sizeof(t));
	fprintf(f, "%s\n", t);
}

/* The meta's strings, escaped (NULL stays NULL). */
#define E(s) ((s) ? text_esc(&e, (s), SIZE_MAX) : NULL)

static void print_meta_text(const struct kagg_meta *m, FILE *f)
{
	struct text_esc e = {};
	char t0[40], t1[40];
	size_t i;

	fmt_time(&m->start, t0, sizeof(t0));
	fmt_time(&m->end, t1, sizeof(t1));
	fprintf(f, "# kagg %s: %s via %s%s%s%s, kernel %s, clock %s\n", E(m->tool), E(m->event),
		E(m->attach), m->attach_note ? " (" : "", m->attach_note ? E(m->attach_note) : "",
		m->attach_note ? ")" : "", E(m->kernel), E(m->clock));
	fprintf(f, "# %s .. %s (%.3f s), CPUs observed %d of %d, filters: %s\n", t0, t1,
		m->duration_s, m->cpus_observed, m->nr_cpus, E(m->filters));
	fprintf(f,
		"# events: %" PRIu64 " seen, %" PRIu64 " recorded, %" PRIu64
		" filtered; dropped %" PRIu64 ":",
		m->events_seen, m->events_recorded, m->events_filtered, m->drops_total);
	for (i = 0; i < m->nr_drops; i++)
		fprintf(f, " %s=%" PRIu64, E(m->drops[i]->cause), m->drops[i]->count);
	fputc('\n', f);
	if (m->has_frames) {
		uint64_t unknown = m->frames_no_maps + m->frames_no_symbols;

		fprintf(f,
			"# frames: %" PRIu64 ", unknown %" PRIu64 " (%.1f%%): no maps %" PRIu64
			", no symbols %" PRIu64 "; stacks lost %" PRIu64
			"; process notes lost %" PRIu64 "\n",
			m->frames, unknown, m->frames ? 100.0 * unknown / m->frames : 0.0,
			m->frames_no_maps, m->frames_no_symbols, m->stacks_lost, m->notes_lost);
		fprintf(f,
			"# frame names from: kallsyms %" PRIu64 ", symtab %" PRIu64
			", dynsym %" PRIu64 ", minidebuginfo %" PRIu64 ", debug file %" PRIu64
			", debuginfod %" PRIu64 ", perf map %" PRIu64 "\n",
			m->frames_kallsyms, m->frames_symtab, m->frames_dynsym,
			m->frames_minidebuginfo, m->frames_debugfile, m->frames_debuginfod,
			m->frames_perfmap);
		if (m->debuginfod_queries || m->debuginfod_skipped)
			fprintf(f,
				"# debuginfod: %" PRIu64 " files asked, not got: not found %" PRIu64
				", timeout %" PRIu64 ", error %" PRIu64
				", not asked (down) %" PRIu64 "; frames left unknown %" PRIu64 "\n",
				m->debuginfod_queries, m->debuginfod_not_found,
				m->debuginfod_timeouts, m->debuginfod_errors, m->debuginfod_skipped,
				m->frames_debuginfod_failed);
		if (m->unwind)
			fprintf(f,
				"# unwind %s: user frames by frame pointer %" PRIu64
				", by table %" PRIu64 "; tables: %" PRIu64 " files, %" PRIu64
				" rows, %" PRIu64 " bytes\n",
				E(m->unwind), m->frames_fp, m->frames_table, m->unwind_files,
				m->unwind_rows, m->unwind_bytes);
	}
	if (!m->snapshot_exact && m->snapshot_note)
		fprintf(f, "# snapshots: %s\n", E(m->snapshot_note));
	if (m->has_stream) {
		fprintf(f,
			"# stream (mode %s): %" PRIu64 " seen, %" PRIu64 " sent, %" PRIu64
			" delivered, %" PRIu64 " dropped (BPF ring buffer full); %" PRIu64
			" bytes moved, consumer CPU %.3f s (%.0f ns/record)\n",
			E(m->mode), m->stream_seen, m->stream_sent, m->stream_delivered,
			m->stream_dropped, m->stream_bytes, m->consumer_cpu_s,
			m->stream_delivered ? m->consumer_cpu_s * 1e9 / m->stream_delivered : 0.0);
		fprintf(f,
			"# stream records land in the reference ftrace buffer: format %s; "
			"overwritten %" PRIu64 ", refused %" PRIu64 "\n",
			E(m->stream_format), m->rb_overrun, m->rb_dropped);
	}
	for (i = 0; m->has_overhead && i < m->nr_progs; i++)
		fprintf(f, "# overhead: %s %.1f ns/event (%" PRIu64 " runs, %" PRIu64 " ns)\n",
			E(m->progs[i]->prog), m->progs[i]->ns_per_run, m->progs[i]->run_cnt,
			m->progs[i]->run_time_ns);
	for (i = 0; m->has_overhead && i < m->nr_maps; i++)
		fprintf(f, "# map: %s %s key %u value %u entries %u x%u: %" PRIu64 " bytes\n",
			E(m->maps[i]->map), E(m->maps[i]->type), m->maps[i]->key_size,
			m->maps[i]->value_size, m->maps[i]->max_entries, m->maps[i]->copies,
			m->maps[i]->bytes);
	if (m->has_overhead && m->nr_maps)
		fprintf(f, "# map bytes: %" PRIu64 " in %zu maps\n", m->map_bytes, m->nr_maps);
	if (m->has_overhead && m->agg_ns_per_event > 0 && m->stream_ns_per_event > 0) {
		double consumer = m->events_seen ? m->consumer_cpu_s * 1e9 / m->events_seen : 0;
		double stream_ns = m->stream_ns_per_event + consumer;

		fprintf(f,
			"# cost per event: agg %.1f ns, stream %.1f ns (BPF %.1f + consumer "
			"%.1f): stream/agg %.2fx%s\n",
			m->agg_ns_per_event, stream_ns, m->stream_ns_per_event, consumer,
			stream_ns / m->agg_ns_per_event,
			m->stream_timed
				? " (one program does both: its stream part timed inside it)"
				: "");
	}
	text_esc_free(&e);
}

int kagg_meta__print(const struct kagg_meta *m, FILE *f)
{
	/* only this library makes a meta: one of another size did not come from it */
	if (!m || !f || m->sz != sizeof(*m))
		return -EINVAL;
	print_meta_text(m, f);
	return ferror(f) ? -EIO : 0;
}

/* --mode both: the two paths' histograms bucket by bucket, with their difference. */
static void print_side_by_side(const struct kagg_hist *a, const struct kagg_hist *b,
			       const struct pct_list *pl, FILE *f)
{
	const struct kagg_hist *h = a ? a : b;
	int last = a ? hist_last(a) : -1, lb = b ? hist_last(b) : -1, i, w;
	struct text_esc e = {};
	const char *vname = text_esc(&e, value_name(h), SIZE_MAX);
	char low[24], high[24];
	uint64_t va, vb;
	double sa, sb;

	if (lb > last)
		last = lb;
	w = last <= 32 ? 10 : 20;
	fprintf(f, "%*s%-*s : agg        stream     diff\n", w - 5, "", w + 9, vname);
	for (i = 0; i <= last; i++) {
		va = a && i < (int)a->nr_slots ? a->slots[i] : 0;
		vb = b && i < (int)b->nr_slots ? b->slots[i] : 0;
		if (hist_is_exp(h) && !va && !vb)
			continue; /* exp buckets are many and narrow: the non-empty ones */
		slot_bounds(h, i, low, high, sizeof(low));
		fprintf(f, "%*s -> %-*s : %-10" PRIu64 " %-10" PRIu64 " %" PRId64 "\n", w, low, w,
			high, va, vb, (int64_t)(vb - va));
	}
	fprintf(f, "%*s%-*s : %-10" PRIu64 " %-10" PRIu64 " %" PRId64 "\n", w - 5, "", w + 9,
		"total", a ? a->total : 0, b ? b->total : 0,
		(int64_t)((b ? b->total : 0) - (a ? a->total : 0)));
	if (a && b && a->total && b->total && hist_sum(a, &sa) && hist_sum(b, &sb))
		fprintf(f, "%*s%-*s : %-10.1f %-10.1f %.1f\n", w - 5, "", w + 9, "avg",
			sa / (double)a->total, sb / (double)b->total,
			sb / (double)b->total - sa / (double)a->total);
	/* the kernel's percentiles, each with the stream's exact one: the error it made */
	print_pcts_text(h, b, pl, vname, f);
	text_esc_free(&e);
}

static void print_key_line(const struct kagg_hist *h, FILE *f)
{
	struct text_esc e = {};
	const char *comm = text_esc(&e, h->key.comm, sizeof(h->key.comm));

	fputc('\n', f);
	if (hist_agg(h))
		fprintf(f, "%s%s", E(h->agg), h->key.label ? ": " : "\n");
	if (h->key.label)
		fprintf(f, "%s%s", E(h->key.label), h->key.mode != KAGG_KEY_NONE ? "  " : "\n");
	if (h->key.mode == KAGG_KEY_PID)
		fprintf(f, "pid = %d %s\n", h->key.pid, comm);
	else if (h->key.mode == KAGG_KEY_TID)
		fprintf(f, "tid = %d (pid %d) %s\n", h->key.tid, h->key.pid, comm);
	else if (h->key.mode == KAGG_KEY_COMM)
		fprintf(f, "comm = %s\n", comm);
	else if (h->key.mode == KAGG_KEY_CGROUP && h->cgroup)
		fprintf(f, "cgroup = %s\n", E(h->cgroup));
	else if (h->key.mode == KAGG_KEY_CGROUP)
		fprintf(f, "cgroup = %" PRIu64 " (gone)\n", h->cgroup_id);
	text_esc_free(&e);
}

static uint64_t ns_to_unit(uint64_t ns, enum kagg_unit unit)
{
	switch (unit) {
	case KAGG_UNIT_NSECS:
		return ns;
	case KAGG_UNIT_MSECS:
		return ns / 1000000;
	default:
		return ns / 1000;
	}
}

static void print_stack_text(const struct kagg_stack *st, enum kagg_unit unit, const char *noun,
			     FILE *f)
{
	struct text_esc e = {};
	unsigned int i;

	if (st->kstack_err && st->kstack_err != -ENOENT)
		fprintf(f, "    [kernel stack lost: %s]\n", strerror(-st->kstack_err));
	for (i = 0; i < st->nr_kframes; i++)
		fprintf(f, "    %s\n", E(st->kframes[i]->sym));
	if (st->nr_uframes || (st->ustack_err && st->ustack_err != -ENOENT))
		fputs("    --\n", f);
	if (st->ustack_err && st->ustack_err != -ENOENT)
		fprintf(f, "    [user stack lost: %s]\n", strerror(-st->ustack_err));
	for (i = 0; i < st->nr_uframes; i++)
		fprintf(f, "    %s\n", E(st->uframes[i]->sym));
	fprintf(f, "    -                %-16s (%d)\n", text_esc(&e, st->comm, sizeof(st->comm)),
		st->tid);
	fprintf(f, "        %" PRIu64 " %s in %" PRIu64 " %s\n\n", ns_to_unit(st->total_ns, unit),
		kagg_unit__name(unit), st->count, noun);
	text_esc_free(&e);
}

void snap_put_folded(FILE *f, const char *s, size_t n)
{
	size_t len = strnlen(s, n), k;

	while (len) {
		for (k = 0; k < len && s[k] != ';'; k++)
			;
		text_fputn(f, s, k);
		if (k < len) {
			fputc(':', f); /* ';' separates frames */
			k++;
		}
		s += k;
		len -= k;
	}
}

/* "comm;user outermost..innermost;--;kernel outermost..innermost value" */
static void print_stack_folded(const struct kagg_stack *st, enum kagg_unit unit, bool delim,
			       FILE *f)
{
	unsigned int i;

	snap_put_folded(f, st->comm, sizeof(st->comm));
	for (i = st->nr_uframes; i > 0; i--) {
		fputc(';', f);
		snap_put_folded(f, st->uframes[i - 1]->sym, SIZE_MAX);
	}
	if (st->nr_kframes && delim)
		fputs(";--", f);
	for (i = st->nr_kframes; i > 0; i--) {
		fputc(';', f);
		snap_put_folded(f, st->kframes[i - 1]->sym, SIZE_MAX);
	}
	fprintf(f, " %" PRIu64 "\n", ns_to_unit(st->total_ns, unit));
}

static enum kagg_unit snap_unit(const struct kagg_snapshot *snap)
{
	enum kagg_unit u = KAGG_UNIT_USECS;

	if (snap->meta.unit)
		kagg_unit__parse(snap->meta.unit, &u);
	return u;
}

/* A key's histograms on the two paths (b: the stream's, NULL without one), as printed. */
struct hist_pair {
	const struct kagg_hist *a, *b;
};

/* What a histogram weighs: the sum of its values when it has one (the "total"), else its count. */
static double hist_weight(const struct kagg_hist *h)
{
	if (!h)
		return 0;
	return h->has_sum ? h->sum : (double)h->total;
}

static double pair_weight(const struct hist_pair *p)
{
	double wa = hist_weight(p->a), wb = hist_weight(p->b);

	return wa > wb ? wa : wb;
}

/* Heaviest first; equal weights in key order. */
static int cmp_pair(const void *x, const void *y)
{
	const struct hist_pair *p = x, *q = y;
	double wp = pair_weight(p), wq = pair_weight(q);

	if (wp != wq)
		return wp < wq ? 1 : -1;
	return cmp_key(p->a ? p->a : p->b, q->a ? q->a : q->b);
}

/*
 * snap's histograms paired by key (cmp_key()) with its stream's (an unpaired key stands
 * alone), heaviest first.  NULL (with *n 0) when memory ran out.
 */
static struct hist_pair *hist_pairs(const struct kagg_snapshot *snap,
				    const struct kagg_snapshot *st, size_t *n)
{
	size_t i = 0, j = 0, na = snap->nr_hists, nb = st ? st->nr_hists : 0;
	const struct kagg_hist **ka = key_index(snap), **kb = key_index(st);
	struct hist_pair *v = NULL;

	*n = 0;
	if ((!na || ka) && (!nb || kb))
		v = calloc(na + nb + 1, sizeof(*v));
	while (v && (i < na || j < nb)) {
		const struct kagg_hist *a = i < na ? ka[i] : NULL;
		const struct kagg_hist *b = j < nb ? kb[j] : NULL;
		int c = a && b ? cmp_key(a, b) : 0;

		if (c < 0)
			b = NULL;
		else if (c > 0)
			a = NULL;
		v[(*n)++] = (struct hist_pair){ a, b };
		i += a != NULL;
		j += b != NULL;
	}
	free(ka);
	free(kb);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_pair);
	return v;
}

/* How a snapshot is printed: kagg_print_opts, read. */
struct prn {
	struct pct_list pl;
	bool no_meta, folded, timestamp;
	bool no_delimiter; /* folded: no ";--" */
	size_t top;	   /* 0: all */
};

static size_t top_of(const struct prn *o, size_t n)
{
	return o->top && o->top < n ? o->top : n;
}

static int print_text(const struct kagg_snapshot *snap, FILE *f, const struct prn *o)
{
	enum kagg_unit unit = snap_unit(snap);
	size_t i, n, nst = top_of(o, snap->nr_stacks);
	struct hist_pair *v;

	if (o->timestamp && !o->folded)
		snap_print_timestamp(snap, f);
	if (!o->no_meta && !o->folded)
		print_meta_text(&snap->meta, f);
	if (o->folded) {
		for (i = 0; i < nst; i++)
			print_stack_folded(&snap->stacks[i], unit, !o->no_delimiter, f);
		return ferror(f) ? -EIO : 0;
	}
	v = hist_pairs(snap, snap->stream, &n);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < top_of(o, n); i++) {
		print_key_line(v[i].a ? v[i].a : v[i].b, f);
		if (snap->stream)
			print_side_by_side(v[i].a, v[i].b, &o->pl, f);
		else
			print_hist_text(v[i].a, &o->pl, f);
	}
	free(v);
	if (top_of(o, n) < n)
		fprintf(f, "\n(%zu more keys, lighter: --top %zu shows the heaviest)\n",
			n - top_of(o, n), o->top);
	if (nst)
		fputc('\n', f);
	for (i = 0; i < nst; i++)
		print_stack_text(&snap->stacks[i], unit,
				 snap->stack_noun ? snap->stack_noun : "intervals", f);
	if (nst < snap->nr_stacks)
		fprintf(f, "(%zu more stacks, lighter: --top %zu shows the heaviest)\n",
			snap->nr_stacks - nst, o->top);
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------ JSON */

static void json_time(struct jw *w, const char *key, const struct timespec *ts)
{
	char buf[40];

	fmt_time(ts, buf, sizeof(buf));
	jw_str(w, key, buf);
}

struct json_count {
	const char *name;
	uint64_t v;
};

/* Object key of counters, from a list ended by a NULL name. */
static void json_counts(struct jw *w, const char *key, const struct json_count *c)
{
	jw_obj_begin(w, key);
	for (; c->name; c++)
		jw_u64(w, c->name, c->v);
	jw_obj_end(w);
}

static void print_meta_json(struct jw *w, const struct kagg_meta *m, bool timestamp)
{
	char t[16];
	size_t i;

	jw_obj_begin(w, "meta");
	jw_str(w, "tool", m->tool);
	jw_str(w, "event", m->event);
	jw_str(w, "attach", m->attach);
	jw_str(w, "attach_note", m->attach_note);
	jw_obj_begin(w, "kernel");
	jw_str(w, "release", m->kernel);
	jw_str(w, "build", m->kernel_build);
	jw_obj_end(w);
	jw_str(w, "clock", m->clock);
	jw_str(w, "unit", m->unit);
	jw_str(w, "filters", m->filters);
	jw_i64(w, "cpus_possible", m->nr_cpus);
	jw_i64(w, "cpus_observed", m->cpus_observed);
	json_time(w, "start", &m->start);
	json_time(w, "end", &m->end);
	if (timestamp) {
		fmt_local_hms(&m->end, t, sizeof(t));
		jw_str(w, "timestamp", t);
	}
	jw_double(w, "duration_s", m->duration_s, 6);
	json_counts(w, "events",
		    (const struct json_count[]){ { "seen", m->events_seen },
						 { "recorded", m->events_recorded },
						 { "filtered", m->events_filtered },
						 { "dropped", m->drops_total },
						 {} });
	jw_obj_begin(w, "drops");
	for (i = 0; i < m->nr_drops; i++)
		jw_u64(w, m->drops[i]->cause, m->drops[i]->count);
	jw_obj_end(w);
	if (m->has_frames) {
		json_counts(w, "frames",
			    (const struct json_count[]){ { "total", m->frames },
							 { "no_maps", m->frames_no_maps },
							 { "no_symbols", m->frames_no_symbols },
							 { "stacks_lost", m->stacks_lost },
							 { "notes_lost", m->notes_lost },
							 {} });
		json_counts(
			w, "frame_sources",
			(const struct json_count[]){ { "kallsyms", m->frames_kallsyms },
						     { "symtab", m->frames_symtab },
						     { "dynsym", m->frames_dynsym },
						     { "minidebuginfo", m->frames_minidebuginfo },
						     { "debugfile", m->frames_debugfile },
						     { "debuginfod", m->frames_debuginfod },
						     { "perfmap", m->frames_perfmap },
						     {} });
		json_counts(w, "debuginfod",
			    (const struct json_count[]){
				    { "queries", m->debuginfod_queries },
				    { "not_found", m->debuginfod_not_found },
				    { "timeouts", m->debuginfod_timeouts },
				    { "errors", m->debuginfod_errors },
				    { "skipped", m->debuginfod_skipped },
				    { "frames_unknown", m->frames_debuginfod_failed },
				    {} });
		if (m->unwind) {
			jw_str(w, "unwind", m->unwind);
			json_counts(w, "unwind_frames",
				    (const struct json_count[]){ { "fp", m->frames_fp },
								 { "table", m->frames_table },
								 { "files", m->unwind_files },
								 { "rows", m->unwind_rows },
								 { "bytes", m->unwind_bytes },
								 {} });
		}
	}
	jw_bool(w, "snapshot_exact", m->snapshot_exact);
	if (m->snapshot_note)
		jw_str(w, "snapshot_note", m->snapshot_note);
	jw_str(w, "mode", m->mode ? m->mode : "agg");
	if (m->has_stream) {
		jw_obj_begin(w, "stream");
		jw_u64(w, "seen", m->stream_seen);
		jw_u64(w, "sent", m->stream_sent);
		jw_u64(w, "delivered", m->stream_delivered);
		jw_u64(w, "dropped", m->stream_dropped);
		jw_u64(w, "bytes", m->stream_bytes);
		jw_double(w, "consumer_cpu_s", m->consumer_cpu_s, 6);
		jw_str(w, "format", m->stream_format);
		jw_u64(w, "rb_overrun", m->rb_overrun);
		jw_u64(w, "rb_refused", m->rb_dropped);
		if (m->has_overhead) {
			jw_double(w, "agg_bpf_ns_per_event", m->agg_ns_per_event, 1);
			jw_double(w, "stream_bpf_ns_per_event", m->stream_ns_per_event, 1);
			jw_bool(w, "stream_timed_in_program", m->stream_timed);
			jw_double(w, "consumer_ns_per_event",
				  m->events_seen ? m->consumer_cpu_s * 1e9 / m->events_seen : 0, 1);
		}
		jw_obj_end(w);
	}
	if (m->has_overhead) {
		jw_arr_begin(w, "overhead");
		for (i = 0; i < m->nr_progs; i++) {
			jw_obj_begin(w, NULL);
			jw_str(w, "prog", m->progs[i]->prog);
			jw_u64(w, "run_cnt", m->progs[i]->run_cnt);
			jw_u64(w, "run_time_ns", m->progs[i]->run_time_ns);
			jw_double(w, "ns_per_event", m->progs[i]->ns_per_run, 1);
			jw_obj_end(w);
		}
		jw_arr_end(w);
		jw_arr_begin(w, "maps");
		for (i = 0; i < m->nr_maps; i++) {
			jw_obj_begin(w, NULL);
			jw_str(w, "map", m->maps[i]->map);
			jw_str(w, "type", m->maps[i]->type);
			jw_u64(w, "key_size", m->maps[i]->key_size);
			jw_u64(w, "value_size", m->maps[i]->value_size);
			jw_u64(w, "max_entries", m->maps[i]->max_entries);
			jw_u64(w, "copies", m->maps[i]->copies);
			jw_u64(w, "bytes", m->maps[i]->bytes);
			jw_obj_end(w);
		}
		jw_arr_end(w);
		jw_u64(w, "map_bytes", m->map_bytes);
	}
	jw_obj_end(w);
}

/* ex: h itself or the streamed histogram of its key, whose values give "exact" (or NULL). */
static void print_pcts_json(struct jw *w, const struct kagg_hist *h, const struct kagg_hist *ex,
			    const struct pct_list *pl)
{
	double v, low, high, x;
	unsigned int k;
	char name[16];
	size_t i;

	jw_obj_begin(w, "percentiles");
	for (i = 0; i < pl->n; i++) {
		bool pretty = w->pretty;

		if (hist_pct_slot(h, pl->q[i], &k, &v))
			continue;
		pct_name(pl->q[i], name, sizeof(name));
		hist_slot_bounds(h, k, &low, &high);
		jw_obj_begin(w, name);
		w->pretty = false;
		jw_double(w, "value", v, 3);
		jw_double(w, "low", low, 0);
		jw_double(w, "high", high, 0);
		if (ex && !hist_exact_pct(ex, pl->q[i], &x))
			jw_double(w, "exact", x, 3);
		jw_obj_end(w);
		w->pretty = pretty;
	}
	jw_obj_end(w);
}

static void print_hist_json(struct jw *w, const struct kagg_hist *h, const struct kagg_hist *ex,
			    const struct pct_list *pl)
{
	uint64_t low, high;
	double sum, min, max;
	int last = hist_last(h), i;

	jw_obj_begin(w, NULL);
	jw_obj_begin(w, "key");
	if (h->key.label || h->key.id) {
		jw_u64(w, "id", h->key.id);
		jw_str(w, "label", h->key.label);
	}
	if (h->key.mode == KAGG_KEY_CGROUP) {
		jw_u64(w, "cgroup_id", h->cgroup_id);
		jw_str(w, "cgroup", h->cgroup);
	}
	if (h->key.mode == KAGG_KEY_COMM) {
		jw_str(w, "comm", h->key.comm);
	} else if (h->key.mode == KAGG_KEY_PID || h->key.mode == KAGG_KEY_TID) {
		jw_i64(w, "pid", h->key.pid);
		if (h->key.mode == KAGG_KEY_TID)
			jw_i64(w, "tid", h->key.tid);
		jw_str(w, "comm", h->key.comm);
	}
	if (hist_agg(h)) {
		size_t j;

		jw_obj_begin(w, "labels");
		for (j = 0; j < h->nr_labels; j++)
			jw_str(w, h->label_names[j], h->label_values[j]);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	if (hist_agg(h))
		jw_str(w, "agg", h->agg);
	if (hist_is_counter(h))
		jw_str(w, "kind", "counter");
	if (h->value)
		jw_str(w, "field", h->value);
	else
		jw_str(w, "unit", kagg_unit__name(h->unit));
	if (hist_is_exp(h))
		jw_i64(w, "scale", h->exp_scale); /* buckets carry their index */
	else if (h->lin_step)
		jw_str(w, "scale", "linear"); /* bounds below are signed */
	jw_u64(w, "total", h->total);
	if (hist_sum(h, &sum)) {
		jw_double(w, "sum", sum, 3);
		jw_u64(w, "count", h->total);
	}
	if (h->total && hist_minmax(h, &min, &max)) {
		jw_double(w, "min", min, hist_decimals(h));
		jw_double(w, "max", max, hist_decimals(h));
	}
	if (hist_has_values(ex) || hist_over_cap(ex))
		jw_str(w, "exact_values", hist_over_cap(ex) ? "over_cap" : "kept");
	print_pcts_json(w, h, ex, pl);
	jw_arr_begin(w, "buckets");
	for (i = hist_first(h); i <= last; i++) {
		bool pretty = w->pretty;
		int64_t l = h->lin_min + (int64_t)(i * h->lin_step);

		if (hist_is_exp(h) && !h->slots[i])
			continue; /* listed by index: the non-empty ones */
		kagg_log2_bounds(i, &low, &high);
		jw_obj_begin(w, NULL);
		w->pretty = false; /* one bucket per line */
		if (hist_is_exp(h) && !i) {
			jw_str(w, "index", "zero"); /* the zero bucket: values of 0 */
			jw_u64(w, "low", 0);
			jw_u64(w, "high", 0);
		} else if (hist_is_exp(h)) {
			double el, eh;

			hist_slot_bounds(h, (unsigned int)i, &el, &eh);
			jw_i64(w, "index", h->exp_base_index + i - 1);
			jw_double_g(w, "low", el);
			jw_double_g(w, "high", eh);
		} else if (h->lin_step) {
			jw_i64(w, "low", l);
			jw_i64(w, "high", l + (int64_t)h->lin_step - 1);
		} else {
			jw_u64(w, "low", low);
			jw_u64(w, "high", high);
		}
		jw_u64(w, "count", h->slots[i]);
		jw_obj_end(w);
		w->pretty = pretty;
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

static void print_frames_json(struct jw *w, const char *key, const struct kagg_frame *const *fr,
			      unsigned int n)
{
	unsigned int i;

	jw_arr_begin(w, key);
	for (i = 0; i < n; i++)
		jw_str(w, NULL, fr[i]->sym);
	jw_arr_end(w);
}

static void print_stack_json(struct jw *w, const struct kagg_stack *st)
{
	jw_obj_begin(w, NULL);
	jw_i64(w, "pid", st->pid);
	jw_i64(w, "tid", st->tid);
	jw_str(w, "comm", st->comm);
	jw_u64(w, "total_ns", st->total_ns);
	jw_u64(w, "count", st->count);
	if (st->kstack_err && st->kstack_err != -ENOENT)
		jw_i64(w, "kstack_err", st->kstack_err);
	if (st->ustack_err && st->ustack_err != -ENOENT)
		jw_i64(w, "ustack_err", st->ustack_err);
	print_frames_json(w, "kernel", st->kframes, st->nr_kframes);
	print_frames_json(w, "user", st->uframes, st->nr_uframes);
	jw_obj_end(w);
}

/*
 * ex_from: the snapshot whose histogram of the same key gives the exact percentiles.
 * With a top, the heaviest top histograms, heaviest first, and "keys_not_shown".
 */
static int print_hists_json(struct jw *w, const struct kagg_snapshot *snap,
			    const struct kagg_snapshot *ex_from, const struct prn *o)
{
	const struct kagg_hist **ex = ex_from == snap ? NULL : key_index(ex_from);
	struct hist_pair *v = NULL;
	size_t i, n = snap->nr_hists;
	bool top = o->top && o->top < n;

	if (top)
		v = hist_pairs(snap, NULL, &n);
	if ((top && !v) || (ex_from != snap && ex_from->nr_hists && !ex)) {
		free(v);
		free(ex);
		return -ENOMEM;
	}
	jw_arr_begin(w, "histograms");
	for (i = 0; i < top_of(o, n); i++) {
		const struct kagg_hist *h = v ? v[i].a : &snap->hists[i];

		print_hist_json(w, h, ex_from == snap ? h : hist_pair(ex, ex_from->nr_hists, h),
				&o->pl);
	}
	jw_arr_end(w);
	if (v)
		jw_u64(w, "keys_not_shown", n - top_of(o, n));
	free(v);
	free(ex);
	return 0;
}

static int print_json(const struct kagg_snapshot *snap, FILE *f, const struct prn *o, bool pretty)
{
	size_t i, nst = top_of(o, snap->nr_stacks);
	struct jw w;
	int err;

	jw_init(&w, f, pretty);
	jw_obj_begin(&w, NULL);
	print_meta_json(&w, &snap->meta, o->timestamp);
	if (snap->stream) {
		jw_obj_begin(&w, "agg");
		err = print_hists_json(&w, snap, snap->stream, o);
		jw_obj_end(&w);
		jw_obj_begin(&w, "stream");
		err = err ?: print_hists_json(&w, snap->stream, snap->stream, o);
		jw_obj_end(&w);
	} else {
		err = print_hists_json(&w, snap, snap, o);
	}
	if (err)
		return err;
	if (snap->nr_stacks) {
		jw_arr_begin(&w, "stacks");
		for (i = 0; i < nst; i++)
			print_stack_json(&w, &snap->stacks[i]);
		jw_arr_end(&w);
		if (nst < snap->nr_stacks)
			jw_u64(&w, "stacks_not_shown", snap->nr_stacks - nst);
	}
	jw_obj_end(&w);
	jw_finish(&w);
	return ferror(f) ? -EIO : 0;
}

int kagg_snapshot__print(const struct kagg_snapshot *snap, FILE *f,
			 const struct kagg_print_opts *opts)
{
	struct prn o = { .pl = default_pct_list };
	enum kagg_format fmt;
	size_t i;

	if (!snap || !f || !opts_valid(opts, OPTS_END(kagg_print_opts)))
		return -EINVAL;
	if (OPTS_GET(opts, kagg_print_opts, percentiles, NULL)) {
		o.pl.q = opts->percentiles;
		o.pl.n = opts->nr_percentiles;
		for (i = 0; i < o.pl.n; i++)
			if (!(o.pl.q[i] > 0 && o.pl.q[i] <= 100))
				return -EINVAL;
	}
	fmt = OPTS_GET(opts, kagg_print_opts, format, KAGG_FORMAT_TEXT);
	o.timestamp = OPTS_GET(opts, kagg_print_opts, timestamp, false);
	o.no_meta = OPTS_GET(opts, kagg_print_opts, no_meta, false);
	o.folded = OPTS_GET(opts, kagg_print_opts, folded, false);
	o.top = OPTS_GET(opts, kagg_print_opts, top, 0);
	o.no_delimiter = OPTS_GET(opts, kagg_print_opts, no_delimiter, false);
	if (fmt == KAGG_FORMAT_JSON || fmt == KAGG_FORMAT_NDJSON)
		return print_json(snap, f, &o, fmt == KAGG_FORMAT_JSON);
	if (fmt != KAGG_FORMAT_TEXT)
		return -EINVAL;
	return print_text(snap, f, &o);
}
