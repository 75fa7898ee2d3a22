// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * runqlat sessions: load bpf/runqlat.bpf.c, attach it to sched_wakeup,
 * sched_wakeup_new and sched_switch (tp_btf, else raw_tp), read its
 * histograms.  The generic half (attach, exact snapshots, meta) is
 * user/session.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/runqlat.h>
#include "abi/runqlat.h"
#include "runqlat.skel.h"
#include "runqlat_stream.h"
#include "opts.h"
#include "snapshot_internal.h"
#include "session_internal.h"


#define DEFAULT_STREAM_BYTES (8u << 20)

_Static_assert(KAGG_RUNQLAT_EV_WAKEUP == 1 << RUNQLAT_REC_WAKEUP &&
		       KAGG_RUNQLAT_EV_WAKEUP_NEW == 1 << RUNQLAT_REC_WAKEUP_NEW &&
		       KAGG_RUNQLAT_EV_SWITCH == 1 << RUNQLAT_REC_SWITCH,
	       "public event bits are 1 << record type");

struct runqlat {
	struct runqlat_bpf *skel;
	int cgroup_fd;
	enum kagg_mode mode;
	bool streaming;
	struct rqstream st;
	uint64_t recorded0, filtered0; /* stream mode: baselines of st's counts */
};

static void rq_describe_filters(struct kagg_session *s, const struct kagg_runqlat_opts *o)
{
	char *p = s->filters, *end = s->filters + sizeof(s->filters);
	size_t i;

#define ADD(...) (p += snprintf(p, p < end ? (size_t)(end - p) : 0, __VA_ARGS__))
	for (i = 0; i < o->nr_pids; i++)
		ADD("%s%d", i ? "," : "pid=", o->pids[i]);
	if (o->nr_pids)
		ADD(" ");
	for (i = 0; i < o->nr_tids; i++)
		ADD("%s%d", i ? "," : "tid=", o->tids[i]);
	if (o->nr_tids)
		ADD(" ");
	if (o->cgroup)
		ADD("cgroup=%s ", o->cgroup);
	if (o->filter_cpu)
		ADD("cpu=%u ", o->cpu);
#undef ADD
	if (p == s->filters)
		snprintf(s->filters, sizeof(s->filters), "none");
	else if (p < end)
		p[-1] = '\0';
}

static uint64_t rq_unit_ns(enum kagg_unit u)
{
	return u == KAGG_UNIT_NSECS ? 1 : u == KAGG_UNIT_MSECS ? 1000000 : 1000;
}

static int rq_load(struct kagg_session *s, const void *opts, bool btf)
{
	const struct kagg_runqlat_opts *o = opts;
	struct runqlat *t = s->tool;
	bool agg = t->mode != KAGG_MODE_STREAM;
	struct runqlat_bpf *skel;
	int err;

	skel = runqlat_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->key_mode = s->key;
	skel->rodata->filter_tgid = o->nr_pids > 0;
	skel->rodata->filter_tid = o->nr_tids > 0;
	skel->rodata->filter_cgroup = o->cgroup != NULL;
	skel->rodata->target_cpu = o->filter_cpu ? (__s32)o->cpu : -1;
	skel->rodata->unit_ns = rq_unit_ns(s->unit);
	skel->rodata->unit_log2 = s->unit == KAGG_UNIT_NSECS ? 0 : s->unit == KAGG_UNIT_MSECS ? 19 : 9;

	skel->rodata->share_event = t->mode == KAGG_MODE_BOTH;
	skel->rodata->wake_mode = KAGG_BPF_WAKE_WATERMARK;
	skel->rodata->wake_bytes = o->stream_bytes / 4;

	bpf_program__set_autoload(skel->progs.runqlat_wakeup_tp_btf, btf && agg);
	bpf_program__set_autoload(skel->progs.runqlat_wakeup_new_tp_btf, btf && agg);
	bpf_program__set_autoload(skel->progs.runqlat_switch_tp_btf, btf && agg);
	bpf_program__set_autoload(skel->progs.runqlat_wakeup_raw_tp, !btf && agg);
	bpf_program__set_autoload(skel->progs.runqlat_wakeup_new_raw_tp, !btf && agg);
	bpf_program__set_autoload(skel->progs.runqlat_switch_raw_tp, !btf && agg);
	bpf_program__set_autoload(skel->progs.runqlat_stream_wakeup_tp_btf, btf && t->streaming);
	bpf_program__set_autoload(skel->progs.runqlat_stream_wakeup_new_tp_btf,
				  btf && t->streaming);
	bpf_program__set_autoload(skel->progs.runqlat_stream_switch_tp_btf, btf && t->streaming);
	bpf_program__set_autoload(skel->progs.runqlat_stream_wakeup_raw_tp, !btf && t->streaming);
	bpf_program__set_autoload(skel->progs.runqlat_stream_wakeup_new_raw_tp,
				  !btf && t->streaming);
	bpf_program__set_autoload(skel->progs.runqlat_stream_switch_raw_tp, !btf && t->streaming);
	bpf_map__set_max_entries(skel->maps.events, t->streaming ? o->stream_bytes : 4096);
	if (btf)
		bpf_map__set_max_entries(skel->maps.start_hash, 1);
	else
		bpf_map__set_autocreate(skel->maps.start_store, false);
	if (s->key == KAGG_KEY_NONE)
		bpf_map__set_max_entries(skel->maps.key_hist, 1);
	if (!o->nr_pids)
		bpf_map__set_max_entries(skel->maps.tgids, 1);
	if (!o->nr_tids)
		bpf_map__set_max_entries(skel->maps.tids, 1);

	err = runqlat_bpf__load(skel);
	if (err) {
		runqlat_bpf__destroy(skel);
		return err;
	}
	t->skel = skel;
	/* the agg path's programs first: the meta's per-path costs rely on it */
	s->nr_progs = 0;
	if (agg) {
		s->progs[s->nr_progs++] = btf ? skel->progs.runqlat_switch_tp_btf
					      : skel->progs.runqlat_switch_raw_tp;
		s->progs[s->nr_progs++] = btf ? skel->progs.runqlat_wakeup_tp_btf
					      : skel->progs.runqlat_wakeup_raw_tp;
		s->progs[s->nr_progs++] = btf ? skel->progs.runqlat_wakeup_new_tp_btf
					      : skel->progs.runqlat_wakeup_new_raw_tp;
	}
	s->nr_agg_progs = s->nr_progs;
	if (t->streaming) {
		s->progs[s->nr_progs++] = btf ? skel->progs.runqlat_stream_switch_tp_btf
					      : skel->progs.runqlat_stream_switch_raw_tp;
		s->progs[s->nr_progs++] = btf ? skel->progs.runqlat_stream_wakeup_tp_btf
					      : skel->progs.runqlat_stream_wakeup_raw_tp;
		s->progs[s->nr_progs++] = btf ? skel->progs.runqlat_stream_wakeup_new_tp_btf
					      : skel->progs.runqlat_stream_wakeup_new_raw_tp;
	}
	s->gen = &skel->bss->gen;
	s->armed = &skel->bss->armed;
	s->counters = skel->maps.counters;
	s->nr_counters = RUNQLAT_CNT_MAX;
	snprintf(s->attach_type, sizeof(s->attach_type), "%s", btf ? "tp_btf" : "raw_tp");
	return 0;
}

static int rq_fill_filters(struct kagg_session *s, const struct kagg_runqlat_opts *o)
{
	struct runqlat *t = s->tool;

	return session_filter_fill(t->skel->maps.tgids, o->pids, o->nr_pids) ?:
	       session_filter_fill(t->skel->maps.tids, o->tids, o->nr_tids) ?:
	       session_cgroup_fill(t->skel->maps.cgroup, t->cgroup_fd);
}

static int rq_validate(const struct kagg_runqlat_opts *o, struct kagg_session *s)
{

	if ((unsigned int)o->unit > KAGG_UNIT_MSECS || (unsigned int)o->key > KAGG_KEY_TID ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP || (o->nr_pids && !o->pids) ||
	    (o->nr_tids && !o->tids)) {
		session_log(s, KAGG_LOG_WARN, "invalid runqlat options");
		return -EINVAL;
	}
	if ((unsigned int)o->mode > KAGG_MODE_BOTH ||
	    (o->stream_bytes && (o->stream_bytes < 4096 ||
				 (o->stream_bytes & (o->stream_bytes - 1))))) {
		session_log(s, KAGG_LOG_WARN, "invalid streaming options (stream_bytes must be a "
			    "power of two >= 4096)");
		return -EINVAL;
	}
	if (o->land_events > 7 || (o->rb_subbufs && (o->rb_subbufs < 2 || o->rb_subbufs > 65534))) {
		session_log(s, KAGG_LOG_WARN, "invalid reference buffer options (land_events, "
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
	return session_check_tasks(s, o->pids, o->nr_pids, "process") ?:
	       session_check_tasks(s, o->tids, o->nr_tids, "thread");
}

static int runqlat_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct runqlat *t = s->tool;
	int err;

	if (t->mode == KAGG_MODE_STREAM)
		return rqstream_read(&t->st, g, reset, snap);
	if (t->mode == KAGG_MODE_BOTH) {
		snap->stream = snap_new();
		if (!snap->stream)
			return -ENOMEM;
		err = rqstream_read(&t->st, g, reset, snap->stream);
		if (err)
			return err;
	}
	if (s->key == KAGG_KEY_NONE)
		return session_read_hist(s, t->skel->maps.hist, g, reset, snap);
	return session_read_key_hists(s, t->skel->maps.key_hist, g, reset, snap, NULL);
}

static void runqlat_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			 bool reset)
{
	struct runqlat *t = s->tool;

	if (t->streaming)
		scons_meta(&t->st.core, snap, cnt[RUNQLAT_CNT_STREAM_SEEN],
			   cnt[RUNQLAT_CNT_STREAM_SENT], cnt[RUNQLAT_CNT_STREAM_DROP], reset);
	if (t->mode == KAGG_MODE_STREAM) {
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
}

static void runqlat_destroy(struct kagg_session *s)
{
	struct runqlat *t = s->tool;

	if (t->streaming)
		rqstream_fini(&t->st);
	runqlat_bpf__destroy(t->skel);
	if (t->cgroup_fd >= 0)
		close(t->cgroup_fd);
}

static const struct session_ops runqlat_ops = {
	.tool = "runqlat",
	.read = runqlat_read,
	.meta = runqlat_meta,
	.destroy = runqlat_destroy,
};

struct kagg_session *kagg_runqlat__open(const struct kagg_runqlat_opts *opts)
{
	struct kagg_runqlat_opts o = {};
	struct session_init in = {};
	struct kagg_session *s;
	struct runqlat *t;
	int err;

	if (!kagg_opts_copy(&o, sizeof(o), opts)) {
		errno = EINVAL;
		return NULL;
	}
	in = (struct session_init){ .log = o.log, .log_ctx = o.log_ctx, .unit = o.unit,
				    .key = o.key, .tool_size = sizeof(*t) };
	s = session_new(&runqlat_ops, &in);
	if (!s)
		return NULL;
	t = s->tool;
	t->cgroup_fd = -1;
	t->mode = o.mode;
	t->streaming = o.mode != KAGG_MODE_AGG;
	if (!o.stream_bytes)
		o.stream_bytes = DEFAULT_STREAM_BYTES;
	s->event = "sched:sched_wakeup,sched_wakeup_new,sched_switch";
	s->mode = session_mode_name(o.mode);

	err = rq_validate(&o, s);
	if (err)
		goto fail;
	rq_describe_filters(s, &o);
	if (o.cgroup) {
		err = session_open_cgroup(s, o.cgroup, &t->cgroup_fd);
		if (err)
			goto fail;
	}
	err = session_need_btf(s);
	if (err)
		goto fail;

	err = session_load_tp(s, o.attach, "the sched_wakeup/sched_switch programs", rq_load,
			      &o);
	if (err)
		goto fail;
	err = rq_fill_filters(s, &o);
	if (err)
		goto fail;
	if (t->streaming) {
		struct rqstream_cfg cfg = {
			.core = {
				.map_fd = bpf_map__fd(t->skel->maps.events),
				.map_bytes = o.stream_bytes,
				.nr_cpus = s->nr_cpus,
				.events_dir = o.events_dir,
				.rb_subbufs = o.rb_subbufs,
				.rb_consume = o.rb_consume,
			},
			.key = s->key,
			.unit = s->unit,
			.unit_ns = rq_unit_ns(s->unit),
			.target_cpu = o.filter_cpu ? (int)o.cpu : -1,
			/* the public bits are 1 << RUNQLAT_REC_* */
			.land = o.land_events,
		};
		char msg[256] = "";

		err = rqstream_init(&t->st, &cfg, msg, sizeof(msg));
		if (err) {
			session_log(s, KAGG_LOG_WARN, "streaming: %s", msg);
			goto fail;
		}
		session_set_stream(s, &t->st.core, rqstream_on_record, &t->st);
	}
fail:
	return session_opened(s, err, o.overhead);
}
