// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offcpu sessions: load bpf/offcpu.bpf.c (embedded as a skeleton), attach
 * it to sched_switch (tp_btf, else raw_tp), and read its aggregates.  The
 * generic half (attach, exact snapshots, meta) is user/session/session.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/offcpu.h>
#include <kagg/session.h>
#include "shared/offcpu.h"
#include "offcpu.skel.h"
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"
#include "session/session_internal.h"
#include "builtin/offcpu_stream.h"

struct offcpu {
	struct offcpu_bpf *skel;
	bool stacks;
	__u32 state_mask; /* OFFCPU_ST_* from --state */
	struct ostream st;
};

#define slog session_log

_Static_assert(OFFCPU_CNT_MAX <= SESSION_MAX_COUNTERS, "offcpu counters fit the session's");

/* "RSD" -> OFFCPU_ST_* mask; -EINVAL on an unknown letter. */
static int parse_states(const char *str, __u32 *mask)
{
	static const char letters[] = "RSDTtXZPI";
	const char *p, *hit;

	if (!str) {
		*mask = OFFCPU_ST_ALL;
		return 0;
	}
	*mask = 0;
	for (p = str; *p; p++) {
		if (*p == ',' || *p == '|')
			continue;
		hit = strchr(letters, *p);
		if (!hit)
			return -EINVAL;
		*mask |= 1u << (hit - letters);
	}
	return *mask ? 0 : -EINVAL;
}

/* The filters after the tasks' (session_tasks_open). */
static void describe_filters(struct kagg_session *s, const struct kagg_offcpu_opts *o)
{
	if (o->states)
		session_filters_add(s, "state=%s ", o->states);
	if (o->min_ns)
		session_filters_add(s, "min=%" PRIu64 "ns ", o->min_ns);
	if (o->max_ns)
		session_filters_add(s, "max=%" PRIu64 "ns ", o->max_ns);
	if (o->threads == KAGG_THREADS_USER)
		session_filters_add(s, "user-threads ");
	if (o->threads == KAGG_THREADS_KERNEL)
		session_filters_add(s, "kernel-threads ");
	session_filters_end(s);
}

/* Open, configure and load the skeleton with one of the two programs. */
static int load_skel(struct kagg_session *s, const void *opts, bool btf)
{
	const struct kagg_offcpu_opts *o = opts;
	struct offcpu *t = s->tool;
	bool agg = s->path != KAGG_MODE_STREAM, str = session_streams(s);
	struct offcpu_bpf *skel;
	bool table;
	int err;

	skel = offcpu_bpf__open();
	if (!skel)
		return -errno;
	err = session_unwind_size(s, &UNW_MAPS(skel), &skel->rodata->unwind, o->unwind,
				  o->stacks && o->threads != KAGG_THREADS_KERNEL, o->unwind_rows,
				  btf, &table);
	if (err) {
		offcpu_bpf__destroy(skel);
		return err;
	}
	const struct session_tp_prog progs[] = {
		{ table ? skel->progs.offcpu_unw : skel->progs.offcpu_tp_btf,
		  skel->progs.offcpu_raw_tp, false, true },
		{ skel->progs.offcpu_stream_tp_btf, skel->progs.offcpu_stream_raw_tp, true, true },
	};

	skel->rodata->key_mode = s->key;
	skel->rodata->filter_tgid = o->nr_pids > 0;
	skel->rodata->filter_tid = o->nr_tids > 0;
	skel->rodata->filter_cgroup = o->cgroup != NULL;
	skel->rodata->user_only = o->threads == KAGG_THREADS_USER;
	skel->rodata->kernel_only = o->threads == KAGG_THREADS_KERNEL;
	skel->rodata->with_stacks = o->stacks;
	skel->rodata->state_mask = t->state_mask;
	skel->rodata->min_ns = o->min_ns;
	skel->rodata->max_ns = o->max_ns ? o->max_ns : ~0ULL;
	skel->rodata->unit_ns = units_ns(s->unit);
	skel->rodata->unit_ns_log2 = units_log2(s->unit);
	skel->rodata->share_event = s->path == KAGG_MODE_BOTH;
	skel->rodata->wake_mode = o->wake;
	skel->rodata->wake_bytes = o->wake_bytes ? o->wake_bytes : o->stream_bytes / 4;

	bpf_program__set_autoload(table ? skel->progs.offcpu_tp_btf : skel->progs.offcpu_unw,
				  false);
	session_tp_autoload(s, progs, 2, btf);
	/* Size what this configuration does not use down to nothing. */
	bpf_map__set_max_entries(skel->maps.events, str ? o->stream_bytes : 4096);
	if (session_task_storage(s, btf) || !agg)
		bpf_map__set_max_entries(skel->maps.start_hash, 1);
	if (!session_task_storage(s, btf) || !agg)
		bpf_map__set_autocreate(skel->maps.start_store, false);
	if (!o->stacks) {
		bpf_map__set_max_entries(skel->maps.stack_agg, 1);
		bpf_map__set_max_entries(skel->maps.stackmap, 1);
		bpf_map__set_max_entries(skel->maps.proc_notes, 4096);
	}
	session_tasks_size(&SESSION_TASKS(o), skel->maps.tgids, skel->maps.tids);
	err = session_hists_setup(s, &SESSION_HIST_MAPS(skel), s->key != KAGG_KEY_NONE, o->buckets,
				  o->exp_scale, 0)
		      ?: session_atomics_fallback(s, skel->obj);
	if (!err)
		err = offcpu_bpf__load(skel);
	if (err) {
		offcpu_bpf__destroy(skel);
		return err;
	}
	t->skel = skel;
	session_tp_bind(s, progs, 2, btf, &skel->bss->gen, &skel->bss->armed, skel->maps.counters,
			OFFCPU_CNT_MAX);
	return 0;
}

static int validate(const struct kagg_offcpu_opts *o, struct kagg_session *s, __u32 *state_mask)
{

	if ((unsigned int)o->unit > KAGG_UNIT_MSECS || (unsigned int)o->key > KAGG_KEY_CGROUP ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP ||
	    (unsigned int)o->threads > KAGG_THREADS_KERNEL || (o->nr_pids && !o->pids) ||
	    (o->nr_tids && !o->tids) || (o->max_ns && o->max_ns < o->min_ns)) {
		slog(s, KAGG_LOG_WARN, "invalid offcpu options");
		return -EINVAL;
	}
	if (!session_stream_opts_ok(o->mode, o->stream_bytes) ||
	    (unsigned int)o->wake > KAGG_WAKE_EVERY || (o->stacks && o->mode == KAGG_MODE_STREAM)) {
		slog(s, KAGG_LOG_WARN,
		     "invalid streaming options (stream_bytes must be a power of "
		     "two >= 4096; stacks need the kernel path)");
		return -EINVAL;
	}
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP) {
		slog(s, KAGG_LOG_WARN, "invalid offcpu buckets");
		return -EINVAL;
	}
	if (session_key_check(s, o->key, o->mode, o->buckets))
		return -EINVAL;
	if (o->nr_pids > 1024 || o->nr_tids > 1024) {
		slog(s, KAGG_LOG_WARN, "at most 1024 pids and 1024 tids can be filtered");
		return -EINVAL;
	}
	if (parse_states(o->states, state_mask)) {
		slog(s, KAGG_LOG_WARN, "invalid task state filter '%s' (use letters of RSDTtPI)",
		     o->states);
		return -EINVAL;
	}
	return 0;
}

static int offcpu_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct offcpu *t = s->tool;
	int err;

	err = session_read_hists(s, &SESSION_HIST_MAPS(t->skel), s->key != KAGG_KEY_NONE, g, reset,
				 snap, NULL);
	if (!err && t->stacks)
		err = session_read_stacks(s, t->skel->maps.stack_agg, t->skel->maps.stackmap, g,
					  reset, true, snap);
	return err;
}

static int offcpu_read_stream(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g,
			      bool reset)
{
	struct offcpu *t = s->tool;

	return ostream_read(&t->st, g, reset, snap);
}

static void offcpu_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			bool reset)
{
	struct offcpu *t = s->tool;

	if (session_streams(s)) {
		snap_add_drop(snap, "stream_kernel_gaps",
			      SESSION_KERNEL_GAPS_WHAT " (from the stream)",
			      t->st.chain.breaks - t->st.kernel_gaps0, false);
		if (reset)
			t->st.kernel_gaps0 = t->st.chain.breaks;
	}
	if (s->path == KAGG_MODE_STREAM)
		return;
	snap->meta.events_recorded = cnt[OFFCPU_CNT_SAMPLES];
	snap->meta.events_filtered = cnt[OFFCPU_CNT_FILTERED_RANGE];
	snap_add_drop(snap, "task_storage", "switch-out not recorded: task storage busy or full",
		      cnt[OFFCPU_CNT_DROP_STORAGE], true);
	snap_add_drop(snap, "keys_full", "interval not aggregated: per-key map full",
		      cnt[OFFCPU_CNT_DROP_KEYS_FULL], true);
	if (s->exp_cells)
		snap_add_drop(snap, "exp_cells", "interval not counted: exp bucket map full",
			      cnt[OFFCPU_CNT_DROP_EXP_CELLS], true);
	snap_add_drop(snap, "switch_in_missed",
		      "interval lost: a task left the CPU again before its switch-in was seen",
		      cnt[OFFCPU_CNT_DROP_UNCLOSED], true);
	snap_add_drop(snap, "kernel_gaps", SESSION_KERNEL_GAPS_WHAT, cnt[OFFCPU_CNT_KERNEL_GAPS],
		      false);
	if (t->stacks) {
		snap_add_drop(snap, "kstack", "kernel stack not captured (interval kept)",
			      cnt[OFFCPU_CNT_DROP_KSTACK], false);
		snap_add_drop(snap, "ustack", "user stack not captured (interval kept)",
			      cnt[OFFCPU_CNT_DROP_USTACK], false);
		session_unwind_meta(s, snap, &cnt[OFFCPU_CNT_UNW], reset);
	}
}

static void offcpu_destroy(struct kagg_session *s)
{
	struct offcpu *t = s->tool;

	if (session_streams(s))
		ostream_fini(&t->st);
	offcpu_bpf__destroy(t->skel);
}

/* Streaming: the consumer of the records, once the programs are loaded. */
static int offcpu_stream_init(struct kagg_session *s, const void *opts)
{
	const struct kagg_offcpu_opts *o = opts;
	struct offcpu *t = s->tool;
	struct ostream_cfg cfg = {
		.core = SESSION_SCONS_CFG(s, t->skel, o, .rb_subbufs = o->rb_subbufs,
					  .rb_consume = o->rb_consume,
					  .batch_bytes = o->wake_bytes ?: o->stream_bytes / 4),
		.key = s->key,
		.min_ns = o->min_ns,
		.max_ns = o->max_ns ? o->max_ns : ~0ULL,
		.unit_ns = units_ns(s->unit),
		.unit = s->unit,
		.exp = s->exp_words ? &t->skel->rodata->exp_params : NULL,
		.cb = o->on_switch,
		.cb_ctx = o->on_switch_ctx,
	};

	return SESSION_STREAM_START(s, ostream_init, &t->st, &cfg, ostream_on_record);
}

static int offcpu_open(struct kagg_session *s, void *opts)
{
	struct kagg_offcpu_opts *o = opts;
	struct offcpu *t = s->tool;
	int err;

	session_open_stream(s, o->unit, o->key, "sched:sched_switch", o->mode, &o->stream_bytes);
	t->stacks = o->stacks;
	err = validate(o, s, &t->state_mask) ?:
	      session_unwind_check(s, o->unwind, o->stacks && o->threads != KAGG_THREADS_KERNEL) ?:
	      session_tasks_open(s, &SESSION_TASKS(o));
	if (err)
		return err;
	describe_filters(s, o);
	err = session_load_tp(s, o->attach, "the sched_switch program", load_skel, o)
		      ?: session_tasks_fill(s, &SESSION_TASKS(o), t->skel->maps.tgids,
					    t->skel->maps.tids, t->skel->maps.cgroup);
	if (!err && o->stacks)
		err = session_set_notes(s, t->skel->maps.proc_notes,
					&t->skel->bss->proc_notes_lost);
	if (!err && o->stacks)
		err = session_unwind_start(s, &UNW_MAPS(t->skel), o->pids, o->nr_pids);
	return err;
}

/* Attached again after a detach: its chains of switches unknown (session_chain_forget). */
static void offcpu_reattach(struct kagg_session *s)
{
	session_chain_forget(s, OFFCPU_CNT_CHAIN, &((struct offcpu *)s->tool)->st.chain);
}

SESSION_TOOL(offcpu, struct offcpu, .read_stream = offcpu_read_stream,
	     .stream_init = offcpu_stream_init, .reattach = offcpu_reattach);
