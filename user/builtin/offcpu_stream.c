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

#include <linux/types.h>
#include "shared/offcpu.h"
#include "builtin/offcpu_stream.h"
#include "snapshot/snapshot_internal.h"

int ostream_init(struct ostream *st, const struct ostream_cfg *cfg, char *err, size_t err_len)
{
	int ret;

	memset(st, 0, sizeof(*st));
	st->min_ns = cfg->min_ns;
	st->max_ns = cfg->max_ns;
	st->unit_ns = cfg->unit_ns;
	st->cb = cfg->cb;
	st->cb_ctx = cfg->cb_ctx;
	if (u64map_init(&st->starts, 4096) || sagg_init(&st->agg, cfg->key, cfg->unit)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	sexp_init(&st->agg.exp, cfg->exp);
	ret = scons_init(&st->core, &cfg->core, err, err_len)
		      ?: scons_switch_format(&st->core, &st->sw, err, err_len);
	if (ret)
		return ret;
	if (schain_init(&st->chain, st->core.nr_cpus)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

void ostream_fini(struct ostream *st)
{
	scons_fini(&st->core);
	sagg_fini(&st->agg);
	u64map_free(&st->starts);
	schain_fini(&st->chain);
	memset(st, 0, sizeof(*st));
}

/* Close next's interval, as on_switch() does in the kernel. */
static void account(struct ostream *st, const struct offcpu_rec *r)
{
	uint64_t start, delta;

	if (r->selected)
		u64map_put(&st->starts, (uint32_t)r->prev_pid, r->ts);
	if (!r->next_pid || !u64map_del(&st->starts, (uint32_t)r->next_pid, &start))
		return;
	delta = r->ts - start;
	if (delta < st->min_ns || delta > st->max_ns)
		return;
	sagg_add(&st->agg, r->gen, scons_slot(delta, st->unit_ns), delta, r->next_tgid, r->next_pid,
		 r->next_comm);
}

/* Land the record in the reference ring buffer as the kernel's sched_switch event. */
static void land(struct ostream *st, const struct offcpu_rec *r)
{
	const struct scons_switch_ev ev = {
		.prev_comm = r->prev_comm,
		.prev_pid = r->prev_pid,
		.prev_prio = r->prev_prio,
		.prev_state = r->prev_state,
		.next_comm = r->next_comm,
		.next_pid = r->next_pid,
		.next_prio = r->next_prio,
	};

	scons_land_switch(&st->core, &st->sw, r->cpu, r->ts, r->prev_pid, &ev);
}

void ostream_on_record(void *ctx, const void *data, uint32_t len)
{
	const struct offcpu_rec *r = data;
	struct ostream *st = ctx;
	uint32_t cpu;
	bool lost;

	if (len < sizeof(*r))
		return;
	cpu = scons_seq_lost(&st->core, (const struct kagg_rec_hdr *)r, &lost);
	/* the kernel's switch chain, as on_switch() checks it */
	schain_break(&st->chain, cpu, lost, r->prev_pid, r->next_pid);
	account(st, r);
	land(st, r);
	if (st->cb) {
		struct kagg_sched_switch ev = {
			.sz = sizeof(ev),
			.ts = r->ts,
			.cpu = r->cpu,
			.prev_pid = r->prev_pid,
			.prev_tgid = r->prev_tgid,
			.prev_prio = r->prev_prio,
			.next_pid = r->next_pid,
			.next_tgid = r->next_tgid,
			.next_prio = r->next_prio,
			.prev_state = r->prev_state,
			.selected = r->selected,
		};

		memcpy(ev.prev_comm, r->prev_comm, 16);
		memcpy(ev.next_comm, r->next_comm, 16);
		st->cb(st->cb_ctx, &ev);
	}
}

int ostream_read(struct ostream *st, __u32 g, bool reset, struct kagg_snapshot *snap)
{
	return sagg_read(&st->agg, g, reset, snap);
}
