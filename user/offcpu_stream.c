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

int ostream_init(struct ostream *st, const struct ostream_cfg *cfg, char *err, size_t err_len)
{
	struct scons_cfg cc = {
		.map_fd = cfg->map_fd,
		.map_bytes = cfg->map_bytes,
		.nr_cpus = cfg->nr_cpus,
		.rb_subbufs = cfg->rb_subbufs,
		.rb_consume = cfg->rb_consume,
		.events_dir = cfg->events_dir,
	};
	const struct kagg_rb_format *f;
	int ret;

	memset(st, 0, sizeof(*st));
	st->key = cfg->key;
	st->min_ns = cfg->min_ns;
	st->max_ns = cfg->max_ns;
	st->unit_ns = cfg->unit_ns;
	st->unit = cfg->unit;
	st->cb = cfg->cb;
	st->cb_ctx = cfg->cb_ctx;
	if (u64map_init(&st->starts, 4096) || u64map_init(&st->gen[0].index, 64) ||
	    u64map_init(&st->gen[1].index, 64)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	ret = scons_init(&st->core, &cc, err, err_len) ?:
	      scons_format(&st->core, "sched", "sched_switch", &st->fmt, &st->payload, err,
			   err_len);
	if (ret)
		return ret;
	f = st->fmt;
	return scons_field(f, "prev_comm", &st->off_prev_comm, NULL, err, err_len) ?:
	       scons_field(f, "prev_pid", &st->off_prev_pid, NULL, err, err_len) ?:
	       scons_field(f, "prev_prio", &st->off_prev_prio, NULL, err, err_len) ?:
	       scons_field(f, "prev_state", &st->off_prev_state, &st->size_prev_state, err,
			   err_len) ?:
	       scons_field(f, "next_comm", &st->off_next_comm, NULL, err, err_len) ?:
	       scons_field(f, "next_pid", &st->off_next_pid, NULL, err, err_len) ?:
	       scons_field(f, "next_prio", &st->off_next_prio, NULL, err, err_len);
}

void ostream_fini(struct ostream *st)
{
	int i;

	scons_fini(&st->core);
	u64map_free(&st->starts);
	for (i = 0; i < 2; i++) {
		u64map_free(&st->gen[i].index);
		free(st->gen[i].keys);
	}
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

	p = scons_begin(&st->core, r->cpu, r->ts, st->fmt, st->payload, TRACE_FLAG_IRQS_OFF,
			r->prev_pid, &rsv);
	if (!p)
		return;
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

	if (len < sizeof(*r))
		return;
	scons_seq(&st->core, r->cpu, r->seq);
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
	return scons_drain(&st->core, on_record, st);
}

int ostream_poll(struct ostream *st, int timeout_ms)
{
	return scons_poll(&st->core, on_record, st, timeout_ms);
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
