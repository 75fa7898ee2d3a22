// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The shared half of the streaming consumers (see stream.h): what happens to
 * a record between the BPF ring buffer and a snapshot.
 *
 *  BPF program ─▶ BPF_MAP_TYPE_RINGBUF ─▶ scons_poll/drain (bpfrb.c, mmap)
 *  (kagg_event_stamp:                       │ per record, the tool's callback:
 *   cpu, seq, gen)                          ├─ scons_seq(): per-CPU sequence gaps,
 *                                           │  delivered count by generation
 *                                           ├─ sagg_add(): log2 or exp bucket, sum,
 *                                           │  the value kept (svals) for percentiles
 *                                           └─ scons_begin()/land: the record as the
 *                                              kernel's event, in the reference
 *                                              ftrace ring buffer (user/rb/)
 *  snapshot ─▶ sagg_read(): histograms of generation g, sorted values
 *           ─▶ scons_meta(): seen/sent/dropped of g, delivered, bytes, CPU
 *
 * What it guarantees:
 * - One thread: the session's thread drains, aggregates and lands; the
 *   reference buffer is created single-writer for it (every CPU's buffer is
 *   written from that thread, clocked by the records' own timestamps).
 * - Every record is accounted for: for a retired generation, after the
 *   snapshot's grace period and the drain that follows it, the BPF side's
 *   seen = sent + dropped (ring full) and delivered = sent; a record
 *   missing from a CPU's sequence is counted in seq_gaps, one refused by
 *   the reference buffer in rb_errors.
 * - The same buckets as the kernel: log2 slots through kagg_log2_div(), exp
 *   buckets through the program's own exp_params and kagg_exp_slot()
 *   (shared/buckets.h), so --mode both compares the two paths bucket for
 *   bucket.
 * - Exact percentiles from the kept values, within bounds: at most
 *   KAGG_EXACT_MAX_VALUES per histogram and SVALS_GEN_MAX per generation;
 *   past either (or on ENOMEM) the histogram says it is over and keeps
 *   none for the rest of the interval.  A steady stream reuses its arrays
 *   across intervals (no page faults, flat RSS).
 * - The formats landed are the kernel's (tracefs, or events_dir), else a
 *   built-in copy, and the meta says which.
 *
 * What it does not do:
 * - Block the producer: a full BPF ring drops in the kernel (counted), a
 *   full reference buffer overwrites or refuses per its mode (counted).
 * - Order records across CPUs beyond the BPF ring's own order.
 * - Lock: nothing here is safe to call from two threads at once.
 * - Recover from ENOMEM while aggregating: sagg_read() returns it for the
 *   rest of the session (sagg.oom).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <bpf/bpf.h>

#include "ftrace/rb_events_internal.h"
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include <linux/types.h>
#include "shared/buckets.h"
#include "snapshot/snapshot_internal.h"
#include "stream/stream.h"
#include "util/tracefs.h"

static uint64_t record_clock(void *ctx)
{
	return ((struct scons *)ctx)->cur_ts;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int scons_init(struct scons *c, const struct scons_cfg *cfg, char *err, size_t err_len)
{
	struct kagg_rb_opts ro = { .sz = sizeof(ro) };
	struct kagg_rb_events_opts eo = { .sz = sizeof(eo) };
	int ret;

	memset(c, 0, sizeof(*c));
	c->nr_cpus = cfg->nr_cpus;
	c->cnt_fd = cfg->cnt_fd;
	c->events_dir = cfg->events_dir;
	c->batch_bytes = cfg->batch_bytes ? cfg->batch_bytes : cfg->map_bytes / 4;
	c->last_seq = calloc(cfg->nr_cpus, sizeof(uint64_t));
	c->evs = kagg_rb_events__new(&eo);
	if (!c->last_seq || !c->evs) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	c->brb = bpfrb__new(cfg->map_fd, cfg->map_bytes);
	if (!c->brb) {
		ret = -errno;
		snprintf(err, err_len, "mapping the BPF ring buffer: %s", strerror(errno));
		return ret;
	}
	ro.nr_cpus = cfg->nr_cpus;
	ro.nr_subbufs = cfg->rb_subbufs ? cfg->rb_subbufs : 128;
	ro.mode = cfg->rb_consume ? KAGG_RB_CONSUME : KAGG_RB_OVERWRITE;
	ro.clock = record_clock;
	ro.clock_ctx = c;
	/* the session's thread alone lands records, in every CPU's buffer */
	ro.single_writer = true;
	c->rb = kagg_rb__new(&ro);
	if (!c->rb) {
		ret = -errno;
		snprintf(err, err_len, "creating the reference ring buffer: %s", strerror(errno));
		return ret;
	}
	return 0;
}

void scons_fini(struct scons *c)
{
	bpfrb__free(c->brb);
	kagg_rb__free(c->rb);
	kagg_rb_events__free(c->evs);
	free(c->last_seq);
	memset(c, 0, sizeof(*c));
}

long scons_drain(struct scons *c, bpfrb_fn fn, void *ctx)
{
	uint64_t t0 = thread_cpu_ns();
	long n = bpfrb__drain(c->brb, fn, ctx, &c->bytes);

	c->delivered += n;
	c->cpu_ns += thread_cpu_ns() - t0;
	return n;
}

int scons_poll(struct scons *c, bpfrb_fn fn, void *ctx, int timeout_ms)
{
	int err;

	if (bpfrb__pending(c->brb) < c->batch_bytes) {
		err = bpfrb__wait(c->brb, timeout_ms);
		if (err < 0)
			return err;
	}
	return (int)scons_drain(c, fn, ctx);
}

uint32_t scons_seq(struct scons *c, const struct kagg_rec_hdr *h)
{
	uint32_t cpu = scons_cpu(c, h->cpu);
	uint64_t seq = h->seq;

	c->delivered_gen[h->gen & 1]++;
	if (c->last_seq[cpu] && seq > c->last_seq[cpu] + 1)
		c->seq_gaps += seq - c->last_seq[cpu] - 1;
	c->last_seq[cpu] = seq;
	return cpu;
}

int schain_init(struct schain *ch, int nr_cpus)
{
	memset(ch, 0, sizeof(*ch));
	ch->last = calloc((size_t)nr_cpus, sizeof(*ch->last));
	if (!ch->last)
		return -ENOMEM;
	ch->nr_cpus = nr_cpus;
	return 0;
}

void schain_fini(struct schain *ch)
{
	free(ch->last);
	memset(ch, 0, sizeof(*ch));
}

void schain_forget(struct schain *ch)
{
	if (ch->last)
		memset(ch->last, 0, (size_t)ch->nr_cpus * sizeof(*ch->last));
}

bool schain_break(struct schain *ch, uint32_t cpu, bool lost, int32_t prev_pid, int32_t next_pid)
{
	bool gap = !lost && ch->last[cpu] && ch->last[cpu] != (uint64_t)(uint32_t)prev_pid + 1;

	ch->last[cpu] = (uint64_t)(uint32_t)next_pid + 1;
	ch->breaks += gap;
	return gap;
}

static size_t fmt_payload(const struct kagg_rb_format *fmt)
{
	size_t i, end, payload = 0;

	for (i = 0; i < fmt->nr_fields; i++) {
		end = fmt->fields[i].offset + fmt->fields[i].size;
		if (end > payload)
			payload = end;
	}
	return payload;
}

int scons_format(struct scons *c, const char *sys, const char *name,
		 int (*builtin)(struct kagg_rb_events *evs), const struct kagg_rb_format **fmt,
		 size_t *payload, char *err, size_t err_len)
{
	const char *base = c->events_dir ? c->events_dir : TRACEFS_DIR "/events";
	char path[512], *text = NULL;
	size_t len = 0;

	*fmt = NULL;
	snprintf(path, sizeof(path), "%s/%s/%s/format", base, sys, name);
	if (!tracefs_read(path, &text, &len) &&
	    !kagg_rb_events__parse(c->evs, sys, text, len, fmt)) {
		if (!c->format_src[0])
			snprintf(c->format_src, sizeof(c->format_src), "kernel (%s/%s)", base, sys);
	} else {
		*fmt = kagg_rb_events__find_by_name(c->evs, sys, name);
		if (!*fmt && !builtin(c->evs))
			*fmt = kagg_rb_events__find_by_name(c->evs, sys, name);
		snprintf(c->format_src, sizeof(c->format_src),
			 "built-in copy of the kernel layout (%s not readable)", path);
	}
	free(text);
	if (!*fmt) {
		snprintf(err, err_len, "no %s:%s format", sys, name);
		return -EINVAL;
	}
	*payload = fmt_payload(*fmt);
	return 0;
}

int scons_field(const struct kagg_rb_format *fmt, const char *name, int *off, int *size, char *err,
		size_t err_len)
{
	const struct kagg_rb_field *f = kagg_rb_format__field(fmt, name);

	if (!f) {
		snprintf(err, err_len, "the %s format lacks %s", fmt->name, name);
		return -ENOENT;
	}
	*off = (int)f->offset;
	if (size)
		*size = (int)f->size;
	return 0;
}

uint8_t *scons_begin(struct scons *c, uint32_t cpu, uint64_t ts, const struct kagg_rb_format *fmt,
		     size_t payload, uint8_t flags, int pid, struct kagg_rb_rsv *rsv)
{
	uint8_t *p;

	c->cur_ts = ts;
	rsv->sz = sizeof(*rsv);
	p = kagg_rb__reserve_cpu(c->rb, (int)scons_cpu(c, cpu), payload, rsv);
	if (!p) {
		c->rb_errors++;
		return NULL;
	}
	memset(p, 0, payload);
	kagg_rb_entry__init(p, fmt->id, flags, 0, pid);
	return p;
}

int scons_switch_format(struct scons *c, struct scons_switch *sw, char *err, size_t err_len)
{
	int ret;

	ret = scons_format(c, "sched", "sched_switch", kagg_rb_events__define_sched, &sw->fmt,
			   &sw->payload, err, err_len);
	if (ret)
		return ret;
	return scons_field(sw->fmt, "prev_comm", &sw->off_prev_comm, NULL, err, err_len) ?:
	       scons_field(sw->fmt, "prev_pid", &sw->off_prev_pid, NULL, err, err_len) ?:
	       scons_field(sw->fmt, "prev_prio", &sw->off_prev_prio, NULL, err, err_len) ?:
	       scons_field(sw->fmt, "prev_state", &sw->off_prev_state, &sw->size_prev_state, err,
			   err_len) ?:
	       scons_field(sw->fmt, "next_comm", &sw->off_next_comm, NULL, err, err_len) ?:
	       scons_field(sw->fmt, "next_pid", &sw->off_next_pid, NULL, err, err_len) ?:
	       scons_field(sw->fmt, "next_prio", &sw->off_next_prio, NULL, err, err_len);
}

#define TRACE_FLAG_IRQS_OFF 0x01

void scons_land_switch(struct scons *c, const struct scons_switch *sw, uint32_t cpu, uint64_t ts,
		       int pid, const struct scons_switch_ev *ev)
{
	struct kagg_rb_rsv rsv;
	uint8_t *p;

	p = scons_begin(c, cpu, ts, sw->fmt, sw->payload, TRACE_FLAG_IRQS_OFF, pid, &rsv);
	if (!p)
		return;
	memcpy(p + sw->off_prev_comm, ev->prev_comm, 16);
	memcpy(p + sw->off_prev_pid, &ev->prev_pid, 4);
	memcpy(p + sw->off_prev_prio, &ev->prev_prio, 4);
	/* prev_state is a long: its low 4 bytes where the kernel declares an int */
	memcpy(p + sw->off_prev_state, &ev->prev_state, sw->size_prev_state == 4 ? 4 : 8);
	memcpy(p + sw->off_next_comm, ev->next_comm, 16);
	memcpy(p + sw->off_next_pid, &ev->next_pid, 4);
	memcpy(p + sw->off_next_prio, &ev->next_prio, 4);
	kagg_rb__commit(&rsv);
}

uint32_t scons_slot(uint64_t ns, uint64_t unit_ns)
{
	return kagg_log2_div(ns, unit_ns, 63 - __builtin_clzll(unit_ns));
}

void sexp_init(struct sexp *x, const volatile struct kagg_exp_params *p)
{
	memset(x, 0, sizeof(*x));
	if (!p)
		return;
	memcpy(&x->p, (const void *)p, sizeof(x->p));
	x->nr_slots = KAGG_EXP_SLOTS(x->p.scale) + 1;
}

int sexp_add(const struct sexp *x, uint64_t **slots, uint64_t ns)
{
	if (!*slots) {
		*slots = calloc(x->nr_slots, sizeof(**slots));
		if (!*slots)
			return -ENOMEM;
	}
	/* as kagg_exp_hist_add() and kagg_exp_cell_add() count it */
	(*slots)[ns ? kagg_exp_slot(ns, &x->p) + 1 : 0]++;
	return 0;
}

void sexp_hist(const struct sexp *x, const uint64_t *slots, struct kagg_hist *h)
{
	unsigned int k;

	h->has_exp = true;
	h->exp_scale = (int)x->p.scale;
	h->exp_base_index = x->p.base_index;
	for (k = 0; slots && k < x->nr_slots && k < h->nr_slots; k++) {
		((uint64_t *)h->slots)[k] = slots[k];
		h->total += slots[k];
	}
}

/*
 * Generation g's record counters summed over the CPUs, cleared when reset.
 * A retired generation is written by no program once the snapshot's grace
 * period is over, so its seen = sent + dropped exactly and clearing it
 * loses nothing; the live generation's entry holds the interval so far.
 */
static void stream_counters(struct scons *c, __u32 g, bool reset, struct kagg_stream_cnt *sum)
{
	struct kagg_stream_cnt *v = calloc(c->nr_cpus, sizeof(*v));
	__u32 key = g & 1;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	if (!v || bpf_map_lookup_elem(c->cnt_fd, &key, v)) {
		free(v);
		return;
	}
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		sum->seen += v[cpu].seen;
		sum->sent += v[cpu].sent;
		sum->dropped += v[cpu].dropped;
	}
	if (reset) {
		memset(v, 0, c->nr_cpus * sizeof(*v));
		bpf_map_update_elem(c->cnt_fd, &key, v, BPF_ANY);
	}
	free(v);
}

void scons_meta(struct scons *c, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct kagg_meta *m = &snap->meta;
	struct kagg_rb_stats rs = { .sz = sizeof(rs) };
	struct kagg_stream_cnt sc;

	stream_counters(c, g, reset, &sc);
	kagg_rb__stats(c->rb, -1, &rs);
	m->has_stream = true;
	m->stream_seen = sc.seen;
	m->stream_sent = sc.sent;
	m->stream_dropped = sc.dropped;
	/*
	 * The records of generation g, like its counters: after the flip's
	 * grace period and the drain that follows it every one of them is
	 * delivered, so a retired generation has delivered = sent.
	 */
	m->stream_delivered = c->delivered_gen[g & 1] - c->delivered0[g & 1];
	m->stream_bytes = c->bytes - c->bytes0;
	m->consumer_cpu_s = (c->cpu_ns - c->cpu_ns0) / 1e9;
	m->stream_format = snap_strdup(snap, c->format_src);
	m->rb_overrun = rs.overrun - c->rb_overrun0;
	m->rb_dropped = rs.dropped_events + rs.commit_overrun - c->rb_dropped0;
	snap_add_drop(snap, "stream_ringbuf_full", "record not streamed: BPF ring buffer full",
		      sc.dropped, true);
	if (reset) {
		c->delivered0[g & 1] = c->delivered_gen[g & 1];
		c->bytes0 = c->bytes;
		c->cpu_ns0 = c->cpu_ns;
		c->rb_overrun0 = rs.overrun;
		c->rb_dropped0 = rs.dropped_events + rs.commit_overrun;
	}
}

/* ---------------------------------------------------------------- aggregates */

#define HUGE_PAGE_BYTES (2u << 20)

/*
 * Memory for a histogram's values: past 2 MiB aligned to and advised for
 * transparent huge pages, so a million values take a handful of page faults
 * instead of two thousand (each costing several us, far more in a guest).
 * The advice is only advice: without THP these are ordinary pages.  free().
 */
static void *values_alloc(size_t bytes)
{
	void *p;

	if (bytes < HUGE_PAGE_BYTES)
		return malloc(bytes);
	if (posix_memalign(&p, HUGE_PAGE_BYTES, bytes))
		return NULL;
	madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

void svals_add(struct svals *s, uint64_t ns, uint64_t *gen_kept)
{
	uint64_t *v;
	uint32_t cap;

	if (s->over)
		return;
	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 64;
		if (s->n >= KAGG_EXACT_MAX_VALUES || *gen_kept >= SVALS_GEN_MAX)
			goto over;
		if (cap > KAGG_EXACT_MAX_VALUES)
			cap = KAGG_EXACT_MAX_VALUES;
		v = values_alloc(cap * sizeof(*v));
		if (!v)
			goto over;
		if (s->n)
			memcpy(v, s->v, s->n * sizeof(*v));
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	if (*gen_kept >= SVALS_GEN_MAX)
		goto over;
	s->v[s->n++] = ns;
	(*gen_kept)++;
	return;
over:
	/* the values kept so far stay counted in gen_kept until the interval ends */
	free(s->v);
	s->v = NULL;
	s->cap = 0;
	s->over = true;
}

void svals_clear(struct svals *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/*
 * Forget s's values but keep its memory for the next interval, so a steady
 * stream reuses one array (no page faults, no regrowth, a flat RSS) instead of
 * growing a new one every interval.  An array four times larger than this
 * interval needed is given back, past 64 Ki values.
 */
static void svals_reset(struct svals *s)
{
	if (s->over || (s->cap > (64u << 10) && s->n < s->cap / 4)) {
		svals_clear(s);
		return;
	}
	s->n = 0;
}

void svals_clear_xslots(struct svals *s, uint64_t **xslots)
{
	svals_clear(s);
	free(*xslots);
	*xslots = NULL;
}

#define SORT_DIGIT_BITS 11
#define SORT_BUCKETS (1u << SORT_DIGIT_BITS)

/*
 * Sort v[0 .. n) ascending, tmp as scratch of the same size: a least-significant-
 * digit radix sort over the bits in which the values differ (found in one pass:
 * a latency in ns rarely varies in more than its low 20-odd bits), 11 bits per
 * pass, each pass counting its digit then scattering.  Returns v or tmp,
 * whichever holds the result.  Linear in n, no comparison callback per pair;
 * the 8 KiB of counts stay in L1 while a pass scatters.
 */
static uint64_t *sort_u64(uint64_t *v, uint64_t *tmp, uint32_t n)
{
	uint64_t *src = v, *dst = tmp, *t, any = 0, all = ~0ULL, diff;
	uint32_t cnt[SORT_BUCKETS], i, b, pos, c;
	int shift, top;

	for (i = 0; i < n; i++) {
		any |= v[i];
		all &= v[i];
	}
	diff = any ^ all; /* the bits that are not the same in every value */
	if (!diff)
		return v;
	top = 64 - __builtin_clzll(diff);
	for (shift = __builtin_ctzll(diff); shift < top; shift += SORT_DIGIT_BITS) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i] >> shift) & (SORT_BUCKETS - 1)]++;
		for (b = 0, pos = 0; b < SORT_BUCKETS; b++) {
			c = cnt[b];
			cnt[b] = pos;
			pos += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & (SORT_BUCKETS - 1)]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

int svals_read(struct svals *s, struct kagg_snapshot *snap, struct kagg_hist *h, uint64_t unit_ns)
{
	uint64_t *sorted;
	double *d;
	uint32_t i;

	h->exact = KAGG_EXACT_OVER_CAP;
	if (s->over || s->n != h->total)
		return 0; /* the values are not all there */
	h->exact = KAGG_EXACT_KEPT;
	if (!s->n)
		return 0;
	d = snap_own(snap, values_alloc(s->n * sizeof(*d)));
	if (!d)
		return -ENOMEM;
	/* d is the sort's scratch; the sorted values end in s->v or in d itself */
	sorted = sort_u64(s->v, (uint64_t *)d, s->n);
	for (i = 0; i < s->n; i++)
		d[i] = (double)sorted[i] / (double)unit_ns;
	h->nr_values = s->n;
	h->values = d;
	return 0;
}

int sagg_init(struct sagg *a, enum kagg_key_mode key, enum kagg_unit unit)
{
	memset(a, 0, sizeof(*a));
	a->key = key;
	a->unit = unit;
	return u64map_init(&a->gen[0].index, 64) ?: u64map_init(&a->gen[1].index, 64);
}

/* Forget g's values and exp buckets; keep: the next interval reuses g->vals' memory. */
static void gen_clear_vals(struct sagg_gen *g, bool keep)
{
	size_t i;

	if (keep) {
		svals_reset(&g->vals);
		free(g->xslots);
		g->xslots = NULL;
	} else {
		svals_clear_xslots(&g->vals, &g->xslots);
	}
	for (i = 0; i < g->nr_keys; i++)
		svals_clear_xslots(&g->keys[i].vals, &g->keys[i].xslots);
	g->kept = 0;
}

void sagg_fini(struct sagg *a)
{
	int i;

	for (i = 0; i < 2; i++) {
		gen_clear_vals(&a->gen[i], false);
		u64map_free(&a->gen[i].index);
		free(a->gen[i].keys);
	}
	memset(a, 0, sizeof(*a));
}

static struct sagg_key *key_get(struct sagg_gen *g, uint32_t tgid, uint32_t pid, const char *comm)
{
	void *arr = g->keys;
	struct sagg_key *e;
	bool created;

	e = u64map_elem(&g->index, (uint64_t)tgid << 32 | pid, &arr, &g->nr_keys, &g->cap_keys,
			sizeof(*e), &created);
	g->keys = arr;
	if (!e || !created)
		return e;
	e->tgid = tgid;
	e->pid = pid;
	memcpy(e->comm, comm, sizeof(e->comm) - 1);
	return e;
}

/*
 * One value into a histogram's buckets (slots, or exp xslots), sum, extremes (ext: nmin and
 * max) and values.
 */
static void hist_add(struct sagg *a, uint64_t *slots, uint64_t **xslots, uint64_t *sum,
		     __u64 *ext[2], struct svals *vals, uint64_t *gen_kept, uint32_t slot,
		     uint64_t ns)
{
	if (!a->exp.nr_slots)
		slots[slot]++;
	else if (sexp_add(&a->exp, xslots, ns))
		a->oom = -ENOMEM;
	*sum += ns;
	kagg_ext_put(ext[0], ext[1], ns);
	svals_add(vals, ns, gen_kept);
}

void sagg_add(struct sagg *a, uint32_t g, uint32_t slot, uint64_t ns, uint32_t tgid, uint32_t pid,
	      const char *comm)
{
	struct sagg_gen *gen = &a->gen[g & 1];
	struct sagg_key *e;

	if (a->key == KAGG_KEY_NONE) {
		hist_add(a, gen->slots, &gen->xslots, &gen->sum,
			 (__u64 *[2]){ &gen->nmin, &gen->max }, &gen->vals, &gen->kept, slot, ns);
		return;
	}
	e = key_get(gen, tgid, a->key == KAGG_KEY_TID ? pid : 0, comm);
	if (!e) {
		a->oom = -ENOMEM;
		return;
	}
	hist_add(a, e->slots, &e->xslots, &e->sum, (__u64 *[2]){ &e->nmin, &e->max }, &e->vals,
		 &gen->kept, slot, ns);
}

int sagg_read(struct sagg *a, uint32_t g, bool reset, struct kagg_snapshot *snap)
{
	struct sagg_gen *gen = &a->gen[g & 1];
	size_t i, n = a->key == KAGG_KEY_NONE ? 1 : gen->nr_keys;
	int err, k;

	if (a->oom)
		return a->oom;
	err = snap_alloc_hists(snap, n, a->exp.nr_slots ? a->exp.nr_slots : KAGG_SLOTS);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct kagg_hist *h = &snap->hists[i];
		const uint64_t *src = a->key == KAGG_KEY_NONE ? gen->slots : gen->keys[i].slots;
		const uint64_t *xsrc = a->key == KAGG_KEY_NONE ? gen->xslots : gen->keys[i].xslots;
		uint64_t sum = a->key == KAGG_KEY_NONE ? gen->sum : gen->keys[i].sum;
		__u64 nmin = a->key == KAGG_KEY_NONE ? gen->nmin : gen->keys[i].nmin;
		__u64 max = a->key == KAGG_KEY_NONE ? gen->max : gen->keys[i].max;
		struct svals *vals = a->key == KAGG_KEY_NONE ? &gen->vals : &gen->keys[i].vals;

		h->unit = a->unit;
		h->key.mode = a->key;
		if (a->key != KAGG_KEY_NONE) {
			h->key.pid = gen->keys[i].tgid;
			h->key.tid = a->key == KAGG_KEY_TID ? (int)gen->keys[i].pid : 0;
			memcpy(h->key.comm, gen->keys[i].comm, sizeof(h->key.comm));
		}
		for (k = 0; !a->exp.nr_slots && k < KAGG_SLOTS; k++) {
			((uint64_t *)h->slots)[k] = src[k];
			h->total += src[k];
		}
		if (a->exp.nr_slots)
			sexp_hist(&a->exp, xsrc, h);
		h->has_sum = true;
		h->sum = (double)sum / (double)units_ns(a->unit);
		if (h->total) {
			h->has_minmax = true;
			h->min = (double)~nmin / (double)units_ns(a->unit);
			h->max = (double)max / (double)units_ns(a->unit);
		}
		err = svals_read(vals, snap, h, units_ns(a->unit));
		if (err)
			return err;
	}
	snap_sort_hists(snap);
	if (reset) {
		gen_clear_vals(gen, true);
		memset(gen->slots, 0, sizeof(gen->slots));
		gen->sum = gen->nmin = gen->max = 0;
		u64map_clear(&gen->index);
		gen->nr_keys = 0;
	}
	return 0;
}
