// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offcpu's streaming consumer (see offcpu_stream.h).
 *
 * The userspace histogram is computed exactly as the BPF side computes its
 * own: a selected task's switch-out time is remembered by thread id, its
 * next switch-in closes the interval, which is filtered by [min, max],
 * bucketed in the session unit and counted in the generation the record
 * carries.  The BPF programs share each event's timestamp and generation
 * (see event_stamp() in bpf/offcpu.bpf.c), so with no record lost both
 * paths produce identical histograms, interval by interval.
 *
 * A lost record (BPF ring buffer full) can break an interval: a missing
 * switch-out means the interval is not seen; a missing switch-in leaves a
 * stale start that the next switch-in of that thread closes, too long.
 * Losses are counted and reported; the kernel path is unaffected by them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include <linux/types.h>
#include "bits.bpf.h"
#include "offcpu.h"
#include "offcpu_stream.h"
#include "snapshot.h"

#define TRACE_FLAG_IRQS_OFF 0x01 /* sched_switch runs with interrupts disabled */

static uint64_t record_clock(void *ctx)
{
	return ((struct ostream *)ctx)->cur_ts;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static char *read_text(const char *path, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap), *tmp;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += r;
		if (cap - n < 2) {
			tmp = realloc(buf, cap * 2);
			if (!tmp)
				break;
			buf = tmp;
			cap *= 2;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* sched/sched_switch from the kernel's format file, else our built-in replica. */
static int load_format(struct ostream *st, const char *dir, char *err, size_t err_len)
{
	const char *base = dir ? dir : "/sys/kernel/tracing/events";
	const struct kagg_rb_field *f;
	const struct kagg_rb_format *fmt = NULL;
	char path[512], *text;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/sched/sched_switch/format", base);
	text = read_text(path, &len);
	if (text && !kagg_rb_events__parse(st->evs, "sched", text, len, &fmt)) {
		snprintf(st->format_src, sizeof(st->format_src), "kernel (%s)", path);
	} else {
		fmt = NULL;
		if (!kagg_rb_events__define_sched(st->evs))
			fmt = kagg_rb_events__find_by_name(st->evs, "sched", "sched_switch");
		snprintf(st->format_src, sizeof(st->format_src),
			 "built-in copy of the kernel layout (%s not readable)", path);
	}
	free(text);
	if (!fmt) {
		snprintf(err, err_len, "no sched_switch format");
		return -EINVAL;
	}
	st->fmt = fmt;
#define FIELD(name, off)                                                       \
	do {                                                                   \
		f = kagg_rb_format__field(fmt, name);                          \
		if (!f) {                                                      \
			snprintf(err, err_len, "sched_switch format lacks %s", name); \
			return -EINVAL;                                        \
		}                                                              \
		off = f->offset;                                               \
	} while (0)
	FIELD("prev_comm", st->off_prev_comm);
	FIELD("prev_pid", st->off_prev_pid);
	FIELD("prev_prio", st->off_prev_prio);
	FIELD("prev_state", st->off_prev_state);
	st->size_prev_state = f->size;
	FIELD("next_comm", st->off_next_comm);
	FIELD("next_pid", st->off_next_pid);
	FIELD("next_prio", st->off_next_prio);
#undef FIELD
	st->payload = 0;
	for (size_t i = 0; i < fmt->nr_fields; i++) {
		size_t end = fmt->fields[i].offset + fmt->fields[i].size;

		if (end > st->payload)
			st->payload = end;
	}
	return 0;
}

int ostream_init(struct ostream *st, const struct ostream_cfg *cfg, char *err, size_t err_len)
{
	struct kagg_rb_opts ro = { .sz = sizeof(ro) };
	struct kagg_rb_events_opts eo = { .sz = sizeof(eo) };
	int i, ret;

	memset(st, 0, sizeof(*st));
	st->key = cfg->key;
	st->min_ns = cfg->min_ns;
	st->max_ns = cfg->max_ns;
	st->unit_ns = cfg->unit_ns;
	st->unit = cfg->unit;
	st->nr_cpus = cfg->nr_cpus;
	st->cb = cfg->cb;
	st->cb_ctx = cfg->cb_ctx;
	st->last_seq = calloc(cfg->nr_cpus, sizeof(uint64_t));
	if (!st->last_seq || u64map_init(&st->starts, 4096) || u64map_init(&st->gen[0].index, 64) ||
	    u64map_init(&st->gen[1].index, 64)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	st->brb = bpfrb__new(cfg->map_fd, cfg->map_bytes);
	if (!st->brb) {
		ret = -errno;
		snprintf(err, err_len, "mapping the BPF ring buffer: %s", strerror(errno));
		return ret;
	}
	st->evs = kagg_rb_events__new(&eo);
	if (!st->evs) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	ret = load_format(st, cfg->events_dir, err, err_len);
	if (ret)
		return ret;
	ro.nr_cpus = cfg->nr_cpus;
	ro.nr_subbufs = cfg->rb_subbufs ? cfg->rb_subbufs : 128;
	ro.mode = cfg->rb_consume ? KAGG_RB_CONSUME : KAGG_RB_OVERWRITE;
	ro.clock = record_clock;
	ro.clock_ctx = st;
	st->rb = kagg_rb__new(&ro);
	if (!st->rb) {
		ret = -errno;
		snprintf(err, err_len, "creating the reference ring buffer: %s", strerror(errno));
		return ret;
	}
	for (i = 0; i < 2; i++)
		st->gen[i].delivered = 0;
	return 0;
}

void ostream_fini(struct ostream *st)
{
	int i;

	bpfrb__free(st->brb);
	kagg_rb__free(st->rb);
	kagg_rb_events__free(st->evs);
	u64map_free(&st->starts);
	for (i = 0; i < 2; i++) {
		u64map_free(&st->gen[i].index);
		free(st->gen[i].keys);
	}
	free(st->last_seq);
	memset(st, 0, sizeof(*st));
}

static struct ostream_key *key_get(struct ostream_gen *g, uint32_t tgid, uint32_t pid,
				   const char *comm)
{
	uint64_t k = (uint64_t)tgid << 32 | pid, *idx = u64map_get(&g->index, k);
	struct ostream_key *e;

	if (idx)
		return &g->keys[*idx];
	if (g->nr_keys == g->cap_keys) {
		size_t cap = g->cap_keys ? g->cap_keys * 2 : 64;

		e = realloc(g->keys, cap * sizeof(*e));
		if (!e)
			return NULL;
		g->keys = e;
		g->cap_keys = cap;
	}
	if (u64map_put(&g->index, k, g->nr_keys))
		return NULL;
	e = &g->keys[g->nr_keys++];
	memset(e, 0, sizeof(*e));
	e->tgid = tgid;
	e->pid = pid;
	memcpy(e->comm, comm, sizeof(e->comm) - 1);
	return e;
}

/* Close next's interval, as on_switch() does in the kernel. */
static void account(struct ostream *st, const struct offcpu_rec *r)
{
	struct ostream_gen *g = &st->gen[r->gen & 1];
	struct ostream_key *e;
	uint64_t start, delta;
	uint32_t slot;

	g->delivered++;
	if (r->selected)
		u64map_put(&st->starts, (uint32_t)r->prev_pid, r->ts);
	if (!r->next_pid || !u64map_del(&st->starts, (uint32_t)r->next_pid, &start))
		return;
	delta = r->ts - start;
	if (delta < st->min_ns || delta > st->max_ns)
		return;
	slot = kagg_log2_div(delta, st->unit_ns, 63 - __builtin_clzll(st->unit_ns));
	if (st->key == KAGG_KEY_NONE) {
		g->slots[slot]++;
		return;
	}
	e = key_get(g, r->next_tgid, st->key == KAGG_KEY_TID ? r->next_pid : 0, r->next_comm);
	if (!e) {
		st->oom = -ENOMEM;
		return;
	}
	e->slots[slot]++;
}

/* Land the record in the reference ring buffer as the kernel's sched_switch event. */
static void land(struct ostream *st, const struct offcpu_rec *r)
{
	struct kagg_rb_rsv rsv;
	int64_t state = r->prev_state;
	uint8_t *p;

	st->cur_ts = r->ts;
	p = kagg_rb__reserve_cpu(st->rb, (int)(r->cpu % (uint32_t)st->nr_cpus), st->payload, &rsv);
	if (!p) {
		st->rb_errors++;
		return;
	}
	memset(p, 0, st->payload);
	kagg_rb_entry__init(p, st->fmt->id, TRACE_FLAG_IRQS_OFF, 0, r->prev_pid);
	memcpy(p + st->off_prev_comm, r->prev_comm, 16);
	memcpy(p + st->off_prev_pid, &r->prev_pid, 4);
	memcpy(p + st->off_prev_prio, &r->prev_prio, 4);
	memcpy(p + st->off_prev_state, &state, st->size_prev_state == 4 ? 4 : 8);
	memcpy(p + st->off_next_comm, r->next_comm, 16);
	memcpy(p + st->off_next_pid, &r->next_pid, 4);
	memcpy(p + st->off_next_prio, &r->next_prio, 4);
	kagg_rb__commit(&rsv);
}

static void on_record(void *ctx, const void *data, uint32_t len)
{
	const struct offcpu_rec *r = data;
	struct ostream *st = ctx;
	uint32_t cpu;

	if (len < sizeof(*r))
		return;
	cpu = r->cpu % (uint32_t)st->nr_cpus;
	if (st->last_seq[cpu] && r->seq > st->last_seq[cpu] + 1)
		st->seq_gaps += r->seq - st->last_seq[cpu] - 1;
	st->last_seq[cpu] = r->seq;
	account(st, r);
	land(st, r);
	if (st->cb) {
		struct kagg_sched_switch ev = {
			.ts = r->ts, .cpu = r->cpu,
			.prev_pid = r->prev_pid, .prev_tgid = r->prev_tgid, .prev_prio = r->prev_prio,
			.next_pid = r->next_pid, .next_tgid = r->next_tgid, .next_prio = r->next_prio,
			.prev_state = r->prev_state, .selected = r->selected,
		};

		memcpy(ev.prev_comm, r->prev_comm, 16);
		memcpy(ev.next_comm, r->next_comm, 16);
		st->cb(st->cb_ctx, &ev);
	}
}

long ostream_drain(struct ostream *st)
{
	uint64_t t0 = thread_cpu_ns();
	long n = bpfrb__drain(st->brb, on_record, st, &st->bytes);

	st->delivered += n;
	st->cpu_ns += thread_cpu_ns() - t0;
	return n;
}

int ostream_poll(struct ostream *st, int timeout_ms)
{
	int err;

	if (!bpfrb__pending(st->brb)) {
		err = bpfrb__wait(st->brb, timeout_ms);
		if (err < 0)
			return err;
	}
	return (int)ostream_drain(st);
}

int ostream_read(struct ostream *st, __u32 g, bool reset, struct kagg_snapshot *snap)
{
	struct ostream_gen *gen = &st->gen[g & 1];
	size_t i, n = st->key == KAGG_KEY_NONE ? 1 : gen->nr_keys;
	int err, k;

	if (st->oom)
		return st->oom;
	err = snap_alloc_hists(snap, n, KAGG_SLOTS);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct kagg_hist *h = &snap->hists[i];
		const uint64_t *src = st->key == KAGG_KEY_NONE ? gen->slots : gen->keys[i].slots;

		h->unit = st->unit;
		h->key.mode = st->key;
		if (st->key != KAGG_KEY_NONE) {
			h->key.pid = gen->keys[i].tgid;
			h->key.tid = st->key == KAGG_KEY_TID ? (int)gen->keys[i].pid : 0;
			memcpy(h->key.comm, gen->keys[i].comm, sizeof(h->key.comm));
		}
		for (k = 0; k < KAGG_SLOTS; k++) {
			((uint64_t *)h->slots)[k] = src[k];
			h->total += src[k];
		}
	}
	snap_sort_hists(snap);
	if (reset) {
		memset(gen->slots, 0, sizeof(gen->slots));
		u64map_clear(&gen->index);
		gen->nr_keys = 0;
		gen->delivered = 0;
	}
	return 0;
}
