// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * runqlat's streaming consumer (see runqlat_stream.h).
 *
 * The latency is computed as bpf/runqlat.bpf.c computes it: a record whose
 * `enq` is set (a selected task woken, or a selected prev switched out still
 * runnable) puts the task on a run queue at the record's time; the task's
 * next switch-in takes it off and the difference is counted on the switch-in
 * CPU, in the generation the record carries.  Records of one CPU arrive in
 * order, and a task's switch-out record is reserved before it can be
 * switched in anywhere else, so the single BPF ring buffer hands userspace
 * every task's events in their order.
 *
 * A lost record (BPF ring buffer full) can break a latency: a missing
 * enqueue hides it, a missing switch-in leaves a stale start that a later
 * switch-in closes, too long.  Losses are counted and reported.
 *
 * Every switch is streamed, so the chain check of the kernel path is made
 * here too (struct schain): a switch the kernel did not deliver is a break,
 * and the wait of prev, when it passes the filters (the record's `sel`), is
 * lost (switch_in_missed).  After a lost record of ours the chain of its CPU
 * is unknown: no break is counted at its next switch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "shared/runqlat.h"
#include "builtin/runqlat_stream.h"
#include "snapshot/snapshot_internal.h"

#define TRACE_FLAG_IRQS_OFF 0x01 /* both events run under the run queue lock, irqs off */

static int wakeup_fmt(struct rqstream *st, const char *name, struct rq_wakeup_fmt *w, char *err,
		      size_t err_len)
{
	return scons_format(&st->core, "sched", name, kagg_rb_events__define_sched, &w->fmt,
			    &w->payload, err, err_len) ?:
	       scons_field(w->fmt, "comm", &w->off_comm, NULL, err, err_len) ?:
	       scons_field(w->fmt, "pid", &w->off_pid, NULL, err, err_len) ?:
	       scons_field(w->fmt, "prio", &w->off_prio, NULL, err, err_len) ?:
	       scons_field(w->fmt, "target_cpu", &w->off_target_cpu, NULL, err, err_len);
}

int rqstream_init(struct rqstream *st, const struct rqstream_cfg *cfg, char *err, size_t err_len)
{
	memset(st, 0, sizeof(*st));
	st->unit_ns = cfg->unit_ns;
	st->target_cpu = cfg->target_cpu;
	st->land = cfg->land ? cfg->land : ~0u;
	if (u64map_init(&st->starts, 4096) || sagg_init(&st->agg, cfg->key, cfg->unit) ||
	    schain_init(&st->chain, cfg->core.nr_cpus)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	sexp_init(&st->agg.exp, cfg->exp);
	return scons_init(&st->core, &cfg->core, err, err_len) ?:
	       scons_switch_format(&st->core, &st->sw, err, err_len) ?:
	       wakeup_fmt(st, "sched_wakeup", &st->wakeup, err, err_len) ?:
	       wakeup_fmt(st, "sched_wakeup_new", &st->wakeup_new, err, err_len);
}

void rqstream_fini(struct rqstream *st)
{
	scons_fini(&st->core);
	sagg_fini(&st->agg);
	u64map_free(&st->starts);
	schain_fini(&st->chain);
	memset(st, 0, sizeof(*st));
}

/* What on_wakeup() and on_switch() do with the task storage, on a map. */
static void account(struct rqstream *st, const struct runqlat_rec *r)
{
	uint64_t start, delta;

	if (r->enq && r->pid)
		u64map_put(&st->starts, (uint32_t)r->pid, r->ts);
	if (r->type != RUNQLAT_REC_SWITCH || !r->next_pid ||
	    !u64map_del(&st->starts, (uint32_t)r->next_pid, &start))
		return;
	if (st->target_cpu >= 0 && r->cpu != (uint32_t)st->target_cpu) {
		st->filtered_cpu++;
		return;
	}
	delta = r->ts - start;
	st->recorded++;
	sagg_add(&st->agg, r->gen, scons_slot(delta, st->unit_ns), delta, r->next_tgid, r->next_pid,
		 r->next_comm);
}

/* Land the record as the kernel's sched_wakeup(_new) or sched_switch event. */
static void land(struct rqstream *st, const struct runqlat_rec *r)
{
	const struct scons_switch_ev ev = {
		.prev_comm = r->comm,
		.prev_pid = r->pid,
		.prev_prio = r->prio,
		.prev_state = r->prev_state,
		.next_comm = r->next_comm,
		.next_pid = r->next_pid,
		.next_prio = r->next_prio,
	};
	const struct rq_wakeup_fmt *w;
	struct kagg_rb_rsv rsv;
	uint8_t *p;

	if (!(st->land & (1u << r->type)))
		return;
	if (r->type == RUNQLAT_REC_SWITCH) {
		scons_land_switch(&st->core, &st->sw, r->cpu, r->ts, r->cur_pid, &ev);
		return;
	}
	w = r->type == RUNQLAT_REC_WAKEUP_NEW ? &st->wakeup_new : &st->wakeup;
	p = scons_begin(&st->core, r->cpu, r->ts, w->fmt, w->payload, TRACE_FLAG_IRQS_OFF,
			r->cur_pid, &rsv);
	if (!p)
		return;
	memcpy(p + w->off_comm, r->comm, 16);
	memcpy(p + w->off_pid, &r->pid, 4);
	memcpy(p + w->off_prio, &r->prio, 4);
	memcpy(p + w->off_target_cpu, &r->target_cpu, 4);
	kagg_rb__commit(&rsv);
}

void rqstream_on_record(void *ctx, const void *data, uint32_t len)
{
	const struct runqlat_rec *r = data;
	struct rqstream *st = ctx;
	uint32_t cpu;
	bool lost; /* records of this CPU lost before: switches maybe */

	if (len < sizeof(*r))
		return;
	cpu = scons_seq_lost(&st->core, (const struct kagg_rec_hdr *)r, &lost);
	/*
	 * The kernel's switch chain, as on_switch() checks it: at a break, prev's wait was lost
	 * (counted when prev passes the filters, and its start goes, as on_switch() clears it).
	 */
	if (r->type != RUNQLAT_REC_SWITCH) {
		if (lost)
			st->chain.last[cpu] = 0;
	} else if (schain_break(&st->chain, cpu, lost, r->pid, r->next_pid) && r->sel &&
		   (st->target_cpu < 0 || r->cpu == (uint32_t)st->target_cpu)) {
		st->switch_in_missed++;
		u64map_del(&st->starts, (uint32_t)r->pid, NULL);
	}
	account(st, r);
	land(st, r);
}

int rqstream_read(struct rqstream *st, uint32_t g, bool reset, struct kagg_snapshot *snap)
{
	return sagg_read(&st->agg, g, reset, snap);
}
