// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * runqlat sessions: load bpf/runqlat.bpf.c, attach it to sched_wakeup,
 * sched_wakeup_new and sched_switch (tp_btf, else raw_tp), read its
 * histograms.  The generic half (attach, exact snapshots, meta) is
 * user/session/session.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/runqlat.h>
#include "shared/runqlat.h"
#include "runqlat.skel.h"
#include "builtin/runqlat_stream.h"
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"
#include "session/session_internal.h"

_Static_assert(KAGG_RUNQLAT_EV_WAKEUP == 1 << RUNQLAT_REC_WAKEUP &&
		       KAGG_RUNQLAT_EV_WAKEUP_NEW == 1 << RUNQLAT_REC_WAKEUP_NEW &&
		       KAGG_RUNQLAT_EV_SWITCH == 1 << RUNQLAT_REC_SWITCH,
	       "public event bits are 1 << record type");

struct runqlat {
	struct runqlat_bpf *skel;
	struct rqstream st;
	uint64_t recorded0, filtered0; /* stream mode: baselines of st's counts */
	uint64_t gaps0, missed0;       /* streaming: baselines of st's chain counts */
};

static int rq_load(struct kagg_session *s, const void *opts, bool btf)
{
	const struct kagg_runqlat_opts *o = opts;
	struct runqlat *t = s->tool;
	struct runqlat_bpf *skel;
	int err;

	skel = runqlat_bpf__open();
	if (!skel)
		return -errno;
	/* the agg path's programs first (session_tp_bind), switch first in each */
	const struct session_tp_prog progs[] = {
		{ skel->progs.runqlat_switch_tp_btf, skel->progs.runqlat_switch_raw_tp, false,
		  true },
		{ skel->progs.runqlat_wakeup_tp_btf, skel->progs.runqlat_wakeup_raw_tp, false,
		  true },
		{ skel->progs.runqlat_wakeup_new_tp_btf, skel->progs.runqlat_wakeup_new_raw_tp,
		  false, true },
		{ skel->progs.runqlat_stream_switch_tp_btf,
		  skel->progs.runqlat_stream_switch_raw_tp, true, true },
		{ skel->progs.runqlat_stream_wakeup_tp_btf,
		  skel->progs.runqlat_stream_wakeup_raw_tp, true, true },
		{ skel->progs.runqlat_stream_wakeup_new_tp_btf,
		  skel->progs.runqlat_stream_wakeup_new_raw_tp, true, true },
	};

	skel->rodata->key_mode = s->key;
	skel->rodata->filter_tgid = o->nr_pids > 0;
	skel->rodata->filter_tid = o->nr_tids > 0;
	skel->rodata->filter_cgroup = o->cgroup != NULL;
	skel->rodata->target_cpu = o->filter_cpu ? (__s32)o->cpu : -1;
	skel->rodata->unit_ns = units_ns(s->unit);
	skel->rodata->unit_log2 = units_log2(s->unit);

	skel->rodata->share_event = s->path == KAGG_MODE_BOTH;
	skel->rodata->wake_mode = KAGG_BPF_WAKE_WATERMARK;
	skel->rodata->wake_bytes = o->stream_bytes / 4;

	session_tp_autoload(s, progs, 6, btf);
	bpf_map__set_max_entries(skel->maps.events, session_streams(s) ? o->stream_bytes : 4096);
	if (session_task_storage(s, btf))
		bpf_map__set_max_entries(skel->maps.start_hash, 1);
	else
		bpf_map__set_autocreate(skel->maps.start_store, false);
	session_tasks_size(&SESSION_TASKS(o), skel->maps.tgids, skel->maps.tids);
	err = session_hists_setup(s, &SESSION_HIST_MAPS(skel), s->key != KAGG_KEY_NONE, o->buckets,
				  o->exp_scale, o->exp_cells)
		      ?: session_atomics_fallback(s, skel->obj);
	if (!err)
		err = runqlat_bpf__load(skel);
	if (err) {
		runqlat_bpf__destroy(skel);
		return err;
	}
	t->skel = skel;
	session_tp_bind(s, progs, 6, btf, &skel->bss->gen, &skel->bss->armed, skel->maps.counters,
			RUNQLAT_CNT_MAX);
	return 0;
}

static int rq_validate(const struct kagg_runqlat_opts *o, struct kagg_session *s)
{

	if ((unsigned int)o->unit > KAGG_UNIT_MSECS || (unsigned int)o->key > KAGG_KEY_CGROUP ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP || (o->nr_pids && !o->pids) ||
	    (o->nr_tids && !o->tids)) {
		session_log(s, KAGG_LOG_WARN, "invalid runqlat options");
		return -EINVAL;
	}
	if (session_check_stream(s, o->mode, o->stream_bytes) ||
	    session_key_check(s, o->key, o->mode, o->buckets))
		return -EINVAL;
	if (o->land_events > 7 || (o->rb_subbufs && (o->rb_subbufs < 2 || o->rb_subbufs > 65534))) {
		session_log(s, KAGG_LOG_WARN,
			    "invalid reference buffer options (land_events, "
			    "rb_subbufs 2 to 65534)");
		return -EINVAL;
	}
	if (o->filter_cpu && o->cpu >= (unsigned int)s->nr_cpus) {
		session_log(s, KAGG_LOG_WARN, "no such CPU: %u (this machine has CPUs 0-%d)",
			    o->cpu, s->nr_cpus - 1);
		return -EINVAL;
	}
	if (o->nr_pids > 1024 || o->nr_tids > 1024) {
		session_log(s, KAGG_LOG_WARN, "at most 1024 pids and 1024 tids can be filtered");
		return -EINVAL;
	}
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP) {
		session_log(s, KAGG_LOG_WARN, "invalid runqlat buckets");
		return -EINVAL;
	}
	return 0;
}

static int runqlat_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct runqlat *t = s->tool;

	return session_read_hists(s, &SESSION_HIST_MAPS(t->skel), s->key != KAGG_KEY_NONE, g, reset,
				  snap, NULL);
}

static int runqlat_read_stream(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g,
			       bool reset)
{
	struct runqlat *t = s->tool;

	return rqstream_read(&t->st, g, reset, snap);
}

static void runqlat_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			 bool reset)
{
	struct runqlat *t = s->tool;

	if (session_streams(s)) {
		snap_add_drop(
			snap, "stream_switch_in_missed",
			"latency lost: a task got a CPU by a switch the kernel did not deliver "
			"(from the stream)",
			t->st.switch_in_missed - t->missed0, true);
		snap_add_drop(snap, "stream_kernel_gaps",
			      SESSION_KERNEL_GAPS_WHAT " (from the stream)",
			      t->st.chain.breaks - t->gaps0, false);
		if (reset) {
			t->missed0 = t->st.switch_in_missed;
			t->gaps0 = t->st.chain.breaks;
		}
	}
	if (s->path == KAGG_MODE_STREAM) {
		snap->meta.events_recorded = t->st.recorded - t->recorded0;
		snap->meta.events_filtered = t->st.filtered_cpu - t->filtered0;
		if (reset) {
			t->recorded0 = t->st.recorded;
			t->filtered0 = t->st.filtered_cpu;
		}
		snap_add_drop(snap, "task_storage", "cgroup mark not recorded: task storage full",
			      cnt[RUNQLAT_CNT_DROP_STORAGE], true);
		return;
	}
	snap->meta.events_recorded = cnt[RUNQLAT_CNT_SAMPLES];
	snap->meta.events_filtered = cnt[RUNQLAT_CNT_FILTERED_CPU];
	snap_add_drop(snap, "task_storage", "enqueue not recorded: task storage busy or full",
		      cnt[RUNQLAT_CNT_DROP_STORAGE], true);
	snap_add_drop(snap, "keys_full", "latency not aggregated: per-key map full",
		      cnt[RUNQLAT_CNT_DROP_KEYS_FULL], true);
	if (s->exp_cells)
		snap_add_drop(snap, "exp_cells", "latency not counted: exp bucket map full",
			      cnt[RUNQLAT_CNT_DROP_EXP_CELLS], true);
	snap_add_drop(snap, "switch_in_missed",
		      "latency lost: a task got a CPU by a switch the kernel did not deliver",
		      cnt[RUNQLAT_CNT_DROP_SWITCH_IN], true);
	snap_add_drop(snap, "kernel_gaps", SESSION_KERNEL_GAPS_WHAT, cnt[RUNQLAT_CNT_KERNEL_GAPS],
		      false);
}

static void runqlat_destroy(struct kagg_session *s)
{
	struct runqlat *t = s->tool;

	if (session_streams(s))
		rqstream_fini(&t->st);
	runqlat_bpf__destroy(t->skel);
}

/* Streaming: the consumer of the records, once the programs are loaded. */
static int runqlat_stream_init(struct kagg_session *s, const void *opts)
{
	const struct kagg_runqlat_opts *o = opts;
	struct runqlat *t = s->tool;
	struct rqstream_cfg cfg = {
		.core = SESSION_SCONS_CFG(s, t->skel, o, .rb_subbufs = o->rb_subbufs,
					  .rb_consume = o->rb_consume),
		.key = s->key,
		.unit = s->unit,
		.unit_ns = units_ns(s->unit),
		.exp = s->exp_words ? &t->skel->rodata->exp_params : NULL,
		.target_cpu = o->filter_cpu ? (int)o->cpu : -1,
		/* the public bits are 1 << RUNQLAT_REC_* */
		.land = o->land_events,
	};

	return SESSION_STREAM_START(s, rqstream_init, &t->st, &cfg, rqstream_on_record);
}

static int runqlat_open(struct kagg_session *s, void *opts)
{
	struct kagg_runqlat_opts *o = opts;
	struct runqlat *t = s->tool;
	int err;

	session_open_stream(s, o->unit, o->key, "sched:sched_wakeup,sched_wakeup_new,sched_switch",
			    o->mode, &o->stream_bytes);
	err = rq_validate(o, s) ?: session_tasks_open(s, &SESSION_TASKS(o));
	if (err)
		return err;
	if (o->filter_cpu)
		session_filters_add(s, "cpu=%u ", o->cpu);
	session_filters_end(s);
	return session_load_tp(s, o->attach, "the sched_wakeup/sched_switch programs", rq_load, o)
		       ?: session_tasks_fill(s, &SESSION_TASKS(o), t->skel->maps.tgids,
					     t->skel->maps.tids, t->skel->maps.cgroup);
}

/* Attached again after a detach: its chains of switches unknown (session_chain_forget). */
static void runqlat_reattach(struct kagg_session *s)
{
	session_chain_forget(s, RUNQLAT_CNT_CHAIN, &((struct runqlat *)s->tool)->st.chain);
}

SESSION_TOOL(runqlat, struct runqlat, .read_stream = runqlat_read_stream,
	     .stream_init = runqlat_stream_init, .reattach = runqlat_reattach);
