// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offcpu sessions: load bpf/offcpu.bpf.c (embedded as a skeleton), attach
 * it to sched_switch (tp_btf, else raw_tp), and read its aggregates.  The
 * generic half (attach, exact snapshots, meta) is user/session.c.
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
#include "abi/offcpu.h"
#include "offcpu.skel.h"
#include "opts.h"
#include "snapshot_internal.h"
#include "session_internal.h"
#include "offcpu_stream.h"


struct offcpu {
	struct offcpu_bpf *skel;
	bool stacks;
	int cgroup_fd;
	enum kagg_mode mode;
	bool streaming;
	__u32 state_mask;	/* OFFCPU_ST_* from --state */
	struct ostream st;
};

#define DEFAULT_STREAM_BYTES (8u << 20)

#define slog session_log

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

static void describe_filters(struct kagg_session *s, const struct kagg_offcpu_opts *o)
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
	if (o->states)
		ADD("state=%s ", o->states);
	if (o->min_ns)
		ADD("min=%" PRIu64 "ns ", o->min_ns);
	if (o->max_ns)
		ADD("max=%" PRIu64 "ns ", o->max_ns);
	if (o->threads == KAGG_THREADS_USER)
		ADD("user-threads ");
	if (o->threads == KAGG_THREADS_KERNEL)
		ADD("kernel-threads ");
#undef ADD
	if (p == s->filters)
		snprintf(s->filters, sizeof(s->filters), "none");
	else if (p < end)
		p[-1] = '\0';
}

static uint64_t unit_ns(enum kagg_unit u)
{
	return u == KAGG_UNIT_NSECS ? 1 : u == KAGG_UNIT_MSECS ? 1000000 : 1000;
}

/* Open, configure and load the skeleton with one of the two programs. */
static int load_skel(struct kagg_session *s, const void *opts, bool btf)
{
	const struct kagg_offcpu_opts *o = opts;
	struct offcpu *t = s->tool;
	bool agg = t->mode != KAGG_MODE_STREAM;
	struct offcpu_bpf *skel;
	int err;

	skel = offcpu_bpf__open();
	if (!skel)
		return -errno;
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
	skel->rodata->unit_ns = unit_ns(s->unit);
	skel->rodata->unit_ns_log2 = 63 - __builtin_clzll(unit_ns(s->unit));
	skel->rodata->share_event = t->mode == KAGG_MODE_BOTH;
	skel->rodata->wake_mode = o->wake;
	skel->rodata->wake_bytes = o->wake_bytes ? o->wake_bytes : o->stream_bytes / 4;

	bpf_program__set_autoload(skel->progs.offcpu_tp_btf, btf && agg);
	bpf_program__set_autoload(skel->progs.offcpu_raw_tp, !btf && agg);
	bpf_program__set_autoload(skel->progs.offcpu_stream_tp_btf, btf && t->streaming);
	bpf_program__set_autoload(skel->progs.offcpu_stream_raw_tp, !btf && t->streaming);
	/* Size what this configuration does not use down to nothing. */
	bpf_map__set_max_entries(skel->maps.events, t->streaming ? o->stream_bytes : 4096);
	if (btf || !agg)
		bpf_map__set_max_entries(skel->maps.start_hash, 1);
	if (!btf || !agg)
		bpf_map__set_autocreate(skel->maps.start_store, false);
	if (s->key == KAGG_KEY_NONE)
		bpf_map__set_max_entries(skel->maps.key_hist, 1);
	if (!o->stacks) {
		bpf_map__set_max_entries(skel->maps.stack_agg, 1);
		bpf_map__set_max_entries(skel->maps.stackmap, 1);
		bpf_map__set_max_entries(skel->maps.proc_notes, 4096);
	}
	if (!o->nr_pids)
		bpf_map__set_max_entries(skel->maps.tgids, 1);
	if (!o->nr_tids)
		bpf_map__set_max_entries(skel->maps.tids, 1);

	err = offcpu_bpf__load(skel);
	if (err) {
		offcpu_bpf__destroy(skel);
		return err;
	}
	t->skel = skel;
	s->nr_progs = 0;
	if (agg)
		s->progs[s->nr_progs++] = btf ? skel->progs.offcpu_tp_btf : skel->progs.offcpu_raw_tp;
	s->nr_agg_progs = s->nr_progs;
	if (t->streaming)
		s->progs[s->nr_progs++] = btf ? skel->progs.offcpu_stream_tp_btf
					      : skel->progs.offcpu_stream_raw_tp;
	s->gen = &skel->bss->gen;
	s->armed = &skel->bss->armed;
	s->counters = skel->maps.counters;
	s->nr_counters = OFFCPU_CNT_MAX;
	snprintf(s->attach_type, sizeof(s->attach_type), "%s", btf ? "tp_btf" : "raw_tp");
	return 0;
}

static int fill_filters(struct kagg_session *s, const struct kagg_offcpu_opts *o)
{
	struct offcpu *t = s->tool;

	return session_filter_fill(t->skel->maps.tgids, o->pids, o->nr_pids) ?:
	       session_filter_fill(t->skel->maps.tids, o->tids, o->nr_tids) ?:
	       session_cgroup_fill(t->skel->maps.cgroup, t->cgroup_fd);
}

static int validate(const struct kagg_offcpu_opts *o, struct kagg_session *s, __u32 *state_mask)
{

	if ((unsigned int)o->unit > KAGG_UNIT_MSECS || (unsigned int)o->key > KAGG_KEY_TID ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP ||
	    (unsigned int)o->threads > KAGG_THREADS_KERNEL ||
	    (o->nr_pids && !o->pids) || (o->nr_tids && !o->tids) ||
	    (o->max_ns && o->max_ns < o->min_ns)) {
		slog(s, KAGG_LOG_WARN, "invalid offcpu options");
		return -EINVAL;
	}
	if ((unsigned int)o->mode > KAGG_MODE_BOTH || (unsigned int)o->wake > KAGG_WAKE_EVERY ||
	    (o->stream_bytes && (o->stream_bytes < 4096 ||
				 (o->stream_bytes & (o->stream_bytes - 1)))) ||
	    (o->stacks && o->mode == KAGG_MODE_STREAM)) {
		slog(s, KAGG_LOG_WARN, "invalid streaming options (stream_bytes must be a power of "
				       "two >= 4096; stacks need the kernel path)");
		return -EINVAL;
	}
	if (o->nr_pids > 1024 || o->nr_tids > 1024) {
		slog(s, KAGG_LOG_WARN, "at most 1024 pids and 1024 tids can be filtered");
		return -EINVAL;
	}
	if (parse_states(o->states, state_mask)) {
		slog(s, KAGG_LOG_WARN, "invalid task state filter '%s' (use letters of RSDTtPI)",
		     o->states);
		return -EINVAL;
	}
	return session_check_tasks(s, o->pids, o->nr_pids, "process") ?:
	       session_check_tasks(s, o->tids, o->nr_tids, "thread");
}

static int offcpu_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct offcpu *t = s->tool;
	int err;

	if (t->mode == KAGG_MODE_STREAM)
		return ostream_read(&t->st, g, reset, snap);
	if (t->mode == KAGG_MODE_BOTH) {
		snap->stream = snap_new();
		if (!snap->stream)
			return -ENOMEM;
		err = ostream_read(&t->st, g, reset, snap->stream);
		if (err)
			return err;
	}
	if (s->key == KAGG_KEY_NONE)
		err = session_read_hist(s, t->skel->maps.hist, g, reset, snap);
	else
		err = session_read_key_hists(s, t->skel->maps.key_hist, g, reset, snap, NULL);
	if (!err && t->stacks)
		err = session_read_stacks(s, t->skel->maps.stack_agg, t->skel->maps.stackmap, g,
					  reset, true, snap);
	return err;
}

/* Not a loss of ours: what the kernel did not deliver (shows as switch_in_missed). */
#define KERNEL_GAPS_WHAT                                                                           \
	"switches the kernel did not deliver: a CPU's switch did not start from the task its "    \
	"previous one went to (not counted in the drops)"

static void offcpu_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			bool reset)
{
	struct offcpu *t = s->tool;

	if (t->streaming) {
		scons_meta(&t->st.core, snap, cnt[OFFCPU_CNT_STREAM_SEEN], cnt[OFFCPU_CNT_STREAM_SENT],
			   cnt[OFFCPU_CNT_STREAM_DROP], reset);
		snap_add_drop(snap, "stream_kernel_gaps", KERNEL_GAPS_WHAT " (from the stream)",
			      t->st.kernel_gaps - t->st.kernel_gaps0, false);
		if (reset)
			t->st.kernel_gaps0 = t->st.kernel_gaps;
	}
	if (t->mode == KAGG_MODE_STREAM)
		return;
	snap->meta.events_recorded = cnt[OFFCPU_CNT_SAMPLES];
	snap->meta.events_filtered = cnt[OFFCPU_CNT_FILTERED_RANGE];
	snap_add_drop(snap, "task_storage", "switch-out not recorded: task storage busy or full",
		      cnt[OFFCPU_CNT_DROP_STORAGE], true);
	snap_add_drop(snap, "keys_full", "interval not aggregated: per-key map full",
		      cnt[OFFCPU_CNT_DROP_KEYS_FULL], true);
	snap_add_drop(snap, "switch_in_missed",
		      "interval lost: a task left the CPU again before its switch-in was seen",
		      cnt[OFFCPU_CNT_DROP_UNCLOSED], true);
	snap_add_drop(snap, "kernel_gaps", KERNEL_GAPS_WHAT, cnt[OFFCPU_CNT_KERNEL_GAPS], false);
	if (t->stacks) {
		snap_add_drop(snap, "kstack", "kernel stack not captured (interval kept)",
			      cnt[OFFCPU_CNT_DROP_KSTACK], false);
		snap_add_drop(snap, "ustack", "user stack not captured (interval kept)",
			      cnt[OFFCPU_CNT_DROP_USTACK], false);
	}
}

static void offcpu_destroy(struct kagg_session *s)
{
	struct offcpu *t = s->tool;

	if (t->streaming)
		ostream_fini(&t->st);
	offcpu_bpf__destroy(t->skel);
	if (t->cgroup_fd >= 0)
		close(t->cgroup_fd);
}

static const struct session_ops offcpu_ops = {
	.tool = "offcpu",
	.read = offcpu_read,
	.meta = offcpu_meta,
	.destroy = offcpu_destroy,
};

struct kagg_session *kagg_offcpu__open(const struct kagg_offcpu_opts *opts)
{
	struct kagg_offcpu_opts o = {};
	struct session_init in = {};
	struct kagg_session *s;
	struct offcpu *t;
	int err;

	if (!kagg_opts_copy(&o, sizeof(o), opts)) {
		errno = EINVAL;
		return NULL;
	}
	in = (struct session_init){ .log = o.log, .log_ctx = o.log_ctx, .unit = o.unit,
				    .key = o.key, .tool_size = sizeof(*t) };
	s = session_new(&offcpu_ops, &in);
	if (!s)
		return NULL;
	t = s->tool;
	t->cgroup_fd = -1;
	t->stacks = o.stacks;
	t->mode = o.mode;
	t->streaming = o.mode != KAGG_MODE_AGG;
	if (!o.stream_bytes)
		o.stream_bytes = DEFAULT_STREAM_BYTES;
	s->event = "sched:sched_switch";
	s->mode = session_mode_name(o.mode);

	err = validate(&o, s, &t->state_mask);
	if (err)
		goto fail;
	describe_filters(s, &o);
	if (o.cgroup) {
		err = session_open_cgroup(s, o.cgroup, &t->cgroup_fd);
		if (err)
			goto fail;
	}
	err = session_need_btf(s);
	if (err)
		goto fail;

	err = session_load_tp(s, o.attach, "the sched_switch program", load_skel, &o);
	if (err)
		goto fail;
	err = fill_filters(s, &o);
	if (!err && o.stacks)
		err = session_set_notes(s, t->skel->maps.proc_notes);
	if (err)
		goto fail;
	if (t->streaming) {
		struct ostream_cfg cfg = {
			.map_fd = bpf_map__fd(t->skel->maps.events),
			.map_bytes = o.stream_bytes,
			.wake_bytes = o.wake_bytes ? o.wake_bytes : o.stream_bytes / 4,
			.nr_cpus = s->nr_cpus,
			.key = s->key,
			.min_ns = o.min_ns,
			.max_ns = o.max_ns ? o.max_ns : ~0ULL,
			.unit_ns = unit_ns(s->unit),
			.unit = s->unit,
			.rb_subbufs = o.rb_subbufs,
			.rb_consume = o.rb_consume,
			.events_dir = o.events_dir,
			.cb = o.on_switch,
			.cb_ctx = o.on_switch_ctx,
		};
		char msg[256] = "";

		err = ostream_init(&t->st, &cfg, msg, sizeof(msg));
		if (err) {
			slog(s, KAGG_LOG_WARN, "streaming: %s", msg);
			goto fail;
		}
		session_set_stream(s, &t->st.core, ostream_on_record, &t->st);
	}
fail:
	return session_opened(s, err, o.overhead);
}
