// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The generic half of every session: attach/detach, interval baselines,
 * exact read-and-reset, BPF run-time accounting and the meta block.
 *
 * Exact read-and-reset: every aggregate of every program is split in two
 * generations selected by the program's `gen` global.  A reset flips gen,
 * then waits for an RCU grace period with membarrier(MEMBARRIER_CMD_GLOBAL)
 * -- the kernel implements it as synchronize_rcu(), and BPF tracing programs
 * run inside RCU read-side sections -- so every program run that may still
 * write the old generation has returned; then the old generation is read
 * and cleared while programs write only the new one.  No event is lost or
 * counted twice.  Where membarrier is refused (nohz_full kernels) the flip
 * is followed by a short sleep and every snapshot says it is not exact.
 *
 * The streamed records' counters (seen, sent, dropped) are split by
 * generation the same way, so each interval's seen = sent + dropped
 * exactly.  What this does not guarantee: the other meta counters (events
 * seen, drops) are read right after the flip, so an event in flight at that
 * instant may be counted in the neighbouring interval's meta; the
 * histograms are exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "shared/exp_table.h"
#include "shared/unwind.h"
#include "util/array.h"
#include "util/log.h"
#include "util/opts.h"
#include "session/session_internal.h"
#include "snapshot/stacks.h"
#include "stream/bpfrb.h"
#include "stream/stream.h"
#include "syms/debuginfo.h"
#include "syms/syms.h"
#include "unwind/loader.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

void session_log(struct kagg_session *s, enum kagg_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(s->log, s->log_ctx, lvl, fmt, ap);
	va_end(ap);
}

bool session_perm_error(int err)
{
	return err == -EPERM || err == -EACCES;
}

int session_load_failed(struct kagg_session *s, int err, const char *what)
{
	if (session_perm_error(err))
		session_log(s, KAGG_LOG_WARN,
			    "loading BPF programs: %s: run as root or with "
			    "CAP_BPF and CAP_PERFMON",
			    strerror(-err));
	else
		session_log(s, KAGG_LOG_WARN, "loading %s failed: %s", what, strerror(-err));
	return err;
}

int session_load_tp(struct kagg_session *s, enum kagg_attach attach, const char *what,
		    int (*load)(struct kagg_session *s, const void *opts, bool btf),
		    const void *opts)
{
	int err = session_need_btf(s);

	if (err)
		return err;
	err = -EOPNOTSUPP;
	if (attach != KAGG_ATTACH_RAW_TP) {
		err = load(s, opts, true);
		if (err && attach == KAGG_ATTACH_AUTO && !session_perm_error(err)) {
			snprintf(s->attach_note, sizeof(s->attach_note),
				 "tp_btf: %s failed to load: %s", what, strerror(-err));
			session_log(s, KAGG_LOG_INFO, "%s; falling back to raw_tp", s->attach_note);
		}
	}
	if (err && attach != KAGG_ATTACH_TP_BTF && !session_perm_error(err))
		err = load(s, opts, false);
	return err ? session_load_failed(s, err, what) : 0;
}

/* A kernel feature probed once per session: *known 1 (has it) or -1 (lacks it), 0 unprobed. */
static int probe_once(int *known, bool map, int type)
{
	if (!*known)
		*known = (map ? libbpf_probe_bpf_map_type(type, NULL)
			      : libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, type, NULL)) > 0
				 ? 1
				 : -1;
	return *known > 0;
}

bool session_no_task_storage;

bool session_has_task_storage(struct kagg_session *s)
{
	return !session_no_task_storage &&
	       probe_once(&s->feat_task_storage, true, BPF_MAP_TYPE_TASK_STORAGE);
}

bool session_has_attach_cookie(struct kagg_session *s)
{
	return probe_once(&s->feat_attach_cookie, false, BPF_FUNC_get_attach_cookie);
}

const char *session_lacks_unwind_helpers(struct kagg_session *s)
{
	if (!probe_once(&s->feat_loop, false, BPF_FUNC_loop))
		return "bpf_loop() in this kernel (5.17)";
	if (!probe_once(&s->feat_task_regs, false, BPF_FUNC_task_pt_regs))
		return "bpf_task_pt_regs() in this kernel (5.15)";
	return NULL;
}

bool session_task_storage(struct kagg_session *s, bool btf)
{
	size_t n;

	if (!btf || session_has_task_storage(s))
		return btf;
	n = strlen(s->attach_note);
	if (!strstr(s->attach_note, "no BPF task storage"))
		snprintf(s->attach_note + n, sizeof(s->attach_note) - n,
			 "%sno BPF task storage in this kernel (BPF_MAP_TYPE_TASK_STORAGE): "
			 "per-task state in a hash by thread id, a full hash counted as a drop",
			 n ? "; " : "");
	return false;
}

bool session_task_exists(int id)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", id);
	return id > 0 && access(path, F_OK) == 0;
}

static int check_tasks(struct kagg_session *s, const int *ids, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!session_task_exists(ids[i])) {
			session_log(s, KAGG_LOG_WARN, "no such %s: %d", what, ids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

static int open_cgroup(struct kagg_session *s, const char *path)
{
	struct statfs sfs;
	int f, err;

	f = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f < 0) {
		err = -errno;
		session_log(s, KAGG_LOG_WARN, "cannot open cgroup %s: %s", path, strerror(errno));
		return err;
	}
	if (fstatfs(f, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(f);
		session_log(s, KAGG_LOG_WARN, "%s is not a cgroup v2 directory", path);
		return -EINVAL;
	}
	s->cgroup_fd = f;
	return 0;
}

int session_tasks_open(struct kagg_session *s, const struct session_tasks *tk)
{
	int err;

	err = check_tasks(s, tk->pids, tk->nr_pids, "process")
		      ?: check_tasks(s, tk->tids, tk->nr_tids, "thread");
	if (err)
		return err;
	session_filters_ids(s, "pid", tk->pids, tk->nr_pids);
	session_filters_ids(s, "tid", tk->tids, tk->nr_tids);
	if (!tk->cgroup)
		return 0;
	session_filters_add(s, "cgroup=%s ", tk->cgroup);
	return open_cgroup(s, tk->cgroup);
}

void session_tasks_size(const struct session_tasks *tk, struct bpf_map *tgids, struct bpf_map *tids)
{
	if (tgids && !tk->nr_pids)
		bpf_map__set_max_entries(tgids, 1);
	if (tids && !tk->nr_tids)
		bpf_map__set_max_entries(tids, 1);
}

/* ids into a hash map of u32 -> u8. */
static int fill_ids(struct bpf_map *ids_map, const int *ids, size_t n)
{
	__u8 one = 1;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		__u32 id = ids[i];

		err = bpf_map__update_elem(ids_map, &id, sizeof(id), &one, 1, BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

int session_tasks_fill(struct kagg_session *s, const struct session_tasks *tk,
		       struct bpf_map *tgids, struct bpf_map *tids, struct bpf_map *cgroup)
{
	__u32 zero = 0, fd = s->cgroup_fd;

	return fill_ids(tgids, tk->pids, tk->nr_pids) ?: fill_ids(tids, tk->tids, tk->nr_tids) ?:
	       (s->cgroup_fd < 0 ? 0 : bpf_map__update_elem(cgroup, &zero, sizeof(zero), &fd,
							     sizeof(fd), BPF_ANY));
}

int session_need_btf(struct kagg_session *s)
{
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		return 0;
	session_log(s, KAGG_LOG_WARN,
		    "kernel BTF not found at /sys/kernel/btf/vmlinux: kagg "
		    "needs a kernel built with CONFIG_DEBUG_INFO_BTF");
	return -EOPNOTSUPP;
}

void session_use_path(struct kagg_session *s, enum kagg_mode mode, size_t *bytes)
{
	s->path = mode;
	if (!*bytes)
		*bytes = STREAM_DEFAULT_BYTES;
}

int session_check_stream(struct kagg_session *s, enum kagg_mode mode, size_t bytes)
{
	if (session_stream_opts_ok(mode, bytes))
		return 0;
	session_log(s, KAGG_LOG_WARN,
		    "invalid streaming options (stream_bytes must be a power of two >= 4096)");
	return -EINVAL;
}

void session_open_stream(struct kagg_session *s, enum kagg_unit unit, enum kagg_key_mode key,
			 const char *event, enum kagg_mode mode, size_t *bytes)
{
	s->unit = unit;
	s->key = key;
	s->event = event;
	session_use_path(s, mode, bytes);
}

const char *session_mode_name(enum kagg_mode mode)
{
	return mode == KAGG_MODE_BOTH ? "both" : mode == KAGG_MODE_STREAM ? "stream" : "agg";
}

int session_stream_started(struct kagg_session *s, int err, const char *msg, struct scons *c,
			   void (*fn)(void *ctx, const void *data, uint32_t len), void *ctx)
{
	if (err) {
		session_log(s, KAGG_LOG_WARN, "streaming: %s", msg);
		return err;
	}
	s->stream = c;
	s->stream_fn = fn;
	s->stream_ctx = ctx;
	s->rb = c->rb;
	s->rb_events = c->evs;
	return 0;
}

/* Program p is used on the session's path. */
static bool tp_used(const struct kagg_session *s, const struct session_tp_prog *p)
{
	return p->used && (p->stream ? session_streams(s) : s->path != KAGG_MODE_STREAM);
}

void session_tp_autoload(struct kagg_session *s, const struct session_tp_prog *p, int n, bool btf)
{
	int i;

	for (i = 0; i < n; i++) {
		bpf_program__set_autoload(p[i].tp_btf, btf && tp_used(s, &p[i]));
		bpf_program__set_autoload(p[i].raw_tp, !btf && tp_used(s, &p[i]));
	}
}

void session_tp_bind(struct kagg_session *s, const struct session_tp_prog *p, int n, bool btf,
		     volatile __u32 *gen, volatile __u32 *armed, struct bpf_map *counters,
		     int nr_counters)
{
	int i, stream;

	s->nr_progs = 0;
	for (stream = 0; stream < 2; stream++) {
		for (i = 0; i < n; i++)
			if (p[i].stream == stream && tp_used(s, &p[i]))
				s->progs[s->nr_progs++] = btf ? p[i].tp_btf : p[i].raw_tp;
		if (!stream)
			s->nr_agg_progs = s->nr_progs;
	}
	session_bind(s, gen, armed, counters, nr_counters, btf ? "tp_btf" : "raw_tp");
}

static struct kagg_session *session_new(const struct session_ops *ops)
{
	struct kagg_session *s = calloc(1, sizeof(*s));
	int n;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->ops = ops;
	s->stats_fd = -1;
	s->cgroup_fd = -1;
	s->clock = "CLOCK_MONOTONIC (bpf_ktime_get_ns)";
	snprintf(s->filters, sizeof(s->filters), "none");
	uname(&s->uts);
	n = libbpf_num_possible_cpus();
	s->nr_cpus = n > 0 ? n : 1;
	s->cpu_events0 = calloc(s->nr_cpus, sizeof(uint64_t));
	if (ops->tool_size)
		s->tool = calloc(1, ops->tool_size);
	if (!s->cpu_events0 || (ops->tool_size && !s->tool)) {
		free(s->cpu_events0);
		free(s->tool);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Finish opening once the tool has loaded its programs: stats fd, membarrier probe. */
static int session_ready(struct kagg_session *s)
{
	int ret;

	ret = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	s->exact = ret > 0 && (ret & MEMBARRIER_CMD_GLOBAL);
	if (!s->exact)
		session_log(s, KAGG_LOG_WARN,
			    "membarrier(MEMBARRIER_CMD_GLOBAL) unavailable: "
			    "interval snapshots are not exact");
	if (s->overhead) {
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (s->stats_fd < 0) {
			ret = -errno;
			session_log(s, KAGG_LOG_WARN, "BPF_ENABLE_STATS failed: %s",
				    strerror(errno));
			return ret;
		}
	}
	return 0;
}

struct kagg_session *session_open(const struct session_ops *ops, const void *opts)
{
	return session_open_arg(ops, opts, NULL);
}

struct kagg_session *session_open_arg(const struct session_ops *ops, const void *opts,
				      const void *arg)
{
	struct kagg_session *s = NULL;
	void *o = malloc(ops->opts_size);
	int err;

	if (!o) {
		err = -ENOMEM;
		goto out;
	}
	if (!opts_valid(opts, ops->opts_known) || !opts_copy(o, ops->opts_size, opts)) {
		err = -EINVAL;
		goto out;
	}
	s = session_new(ops);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(&s->log, (char *)o + ops->opts_log, sizeof(s->log));
	memcpy(&s->log_ctx, (char *)o + ops->opts_log_ctx, sizeof(s->log_ctx));
	memcpy(&s->overhead, (char *)o + ops->opts_overhead, sizeof(s->overhead));
	s->open_arg = arg;
	err = ops->open(s, o);
	s->open_arg = NULL;
	if (!err && ops->stream_init && session_streams(s))
		err = ops->stream_init(s, o);
	err = err ?: session_ready(s);
out:
	free(o);
	if (!err)
		return s;
	kagg_session__destroy(s);
	errno = -err;
	return NULL;
}

void session_filters_add(struct kagg_session *s, const char *fmt, ...)
{
	size_t len = s->filters_len, size = sizeof(s->filters);
	va_list ap;

	va_start(ap, fmt);
	s->filters_len += vsnprintf(s->filters + (len < size ? len : size),
				    len < size ? size - len : 0, fmt, ap);
	va_end(ap);
}

void session_filters_ids(struct kagg_session *s, const char *name, const int *ids, size_t n)
{
	size_t i;

	if (!n)
		return;
	session_filters_add(s, "%s=", name);
	for (i = 0; i < n; i++)
		session_filters_add(s, i ? ",%d" : "%d", ids[i]);
	session_filters_add(s, " ");
}

void session_filters_end(struct kagg_session *s)
{
	if (!s->filters_len)
		snprintf(s->filters, sizeof(s->filters), "none");
	else if (s->filters_len < sizeof(s->filters) && s->filters[s->filters_len - 1] == ' ')
		s->filters[s->filters_len - 1] = '\0';
}

void session_bind(struct kagg_session *s, volatile __u32 *gen, volatile __u32 *armed,
		  struct bpf_map *counters, int nr_counters, const char *attach_type)
{
	s->gen = gen;
	s->armed = armed;
	s->counters = counters;
	s->nr_counters = nr_counters;
	snprintf(s->attach_type, sizeof(s->attach_type), "%s", attach_type);
}

void session_chain_forget(struct kagg_session *s, int idx, struct schain *stream)
{
	size_t each = (size_t)s->nr_counters * sizeof(__u64);
	__u32 zero = 0;
	__u64 *v = NULL;
	int i, err = -EINVAL;

	/* a program still running since the detach (a link's release does not wait) first */
	if (s->exact)
		syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	if (s->counters && idx > 0 && idx < s->nr_counters)
		v = calloc((size_t)s->nr_cpus, each);
	if (v)
		err = bpf_map__lookup_elem(s->counters, &zero, sizeof(zero), v, each * s->nr_cpus,
					   0);
	if (v && !err) {
		for (i = 0; i < s->nr_cpus; i++)
			v[(size_t)i * s->nr_counters + idx] = 0;
		err = bpf_map__update_elem(s->counters, &zero, sizeof(zero), v, each * s->nr_cpus,
					   0);
	}
	if (err || !v)
		session_log(s, KAGG_LOG_WARN,
			    "the switch chains could not be reset: each CPU may count one false "
			    "kernel gap");
	free(v);
	/* the records sent before the detach, then the stream's chains */
	if (s->stream) {
		scons_drain(s->stream, s->stream_fn, s->stream_ctx);
		schain_forget(stream);
	}
}

/* ------------------------------------------------------------ accounting */

/* BPF_MAP_TYPE_CGRP_STORAGE (the 6.2 UAPI): by number, older <linux/bpf.h> lack the name. */
#define SESSION_MAP_CGRP_STORAGE 32

/* The bytes of map info's keys and values, copies of each value (kagg_map_cost). */
static uint64_t map_bytes(const struct bpf_map_info *mi, uint32_t copies)
{
	switch (mi->type) {
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
		return mi->max_entries;
	case BPF_MAP_TYPE_TASK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_SK_STORAGE:
	case SESSION_MAP_CGRP_STORAGE:
		return 0;
	default:
		return (uint64_t)mi->max_entries *
		       (mi->key_size + (uint64_t)mi->value_size * copies);
	}
}

static bool map_percpu(enum bpf_map_type t)
{
	return t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

/* The maps of the session's loaded programs, each once, into the meta (with overhead). */
static void meta_maps(struct kagg_session *s, struct kagg_snapshot *snap)
{
	__u32 seen[SNAP_MAX_MAPS], nseen = 0, ids[SNAP_MAX_MAPS];
	struct kagg_meta *m = &snap->meta;
	int i;

	for (i = 0; i < s->nr_progs; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info), j, k;
		int pfd = bpf_program__fd(s->progs[i]);

		if (pfd < 0)
			continue;
		info.nr_map_ids = SNAP_MAX_MAPS;
		info.map_ids = (__u64)(unsigned long)ids;
		if (bpf_prog_get_info_by_fd(pfd, &info, &len))
			continue;
		for (j = 0; j < info.nr_map_ids && j < SNAP_MAX_MAPS; j++) {
			struct bpf_map_info mi = {};
			__u32 mlen = sizeof(mi);
			struct kagg_map_cost *mc;
			int fd;

			for (k = 0; k < nseen && seen[k] != ids[j]; k++)
				;
			if (k < nseen || nseen == SNAP_MAX_MAPS)
				continue;
			seen[nseen++] = ids[j];
			fd = bpf_map_get_fd_by_id(ids[j]);
			if (fd < 0)
				continue;
			if (!bpf_map_get_info_by_fd(fd, &mi, &mlen) && (mc = snap_add_map(snap))) {
				mc->map = snap_strdup(snap, mi.name);
				mc->type = libbpf_bpf_map_type_str(mi.type);
				mc->key_size = mi.key_size;
				mc->value_size = mi.value_size;
				mc->max_entries = mi.max_entries;
				mc->copies = map_percpu(mi.type) ? (uint32_t)s->nr_cpus : 1;
				mc->bytes = map_bytes(&mi, mc->copies);
				m->map_bytes += mc->bytes;
			}
			close(fd);
		}
	}
}

static void read_prog_stats(struct kagg_session *s, uint64_t *cnt, uint64_t *time_ns,
			    uint64_t *recursion)
{
	int i;

	for (i = 0; i < s->nr_progs; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		cnt[i] = time_ns[i] = recursion[i] = 0;
		if (bpf_prog_get_info_by_fd(bpf_program__fd(s->progs[i]), &info, &len))
			continue;
		cnt[i] = info.run_cnt;
		time_ns[i] = info.run_time_ns;
		recursion[i] = info.recursion_misses;
	}
}

/* Sum the per-CPU counters; per-CPU event counts (counter 0) into cpu_ev when non-NULL. */
static int read_counters(struct kagg_session *s, uint64_t *sum, uint64_t *cpu_ev)
{
	size_t vsz = sizeof(uint64_t) * s->nr_counters;
	uint64_t *vals;
	__u32 zero = 0;
	int err, cpu, i;

	memset(sum, 0, sizeof(uint64_t) * SESSION_MAX_COUNTERS);
	if (!s->counters)
		return 0;
	vals = calloc(s->nr_cpus, vsz);
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(s->counters, &zero, sizeof(zero), vals, vsz * s->nr_cpus, 0);
	if (!err) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			for (i = 0; i < s->nr_counters; i++)
				sum[i] += vals[cpu * s->nr_counters + i];
			if (cpu_ev)
				cpu_ev[cpu] = vals[cpu * s->nr_counters];
		}
	}
	free(vals);
	return err;
}

static void set_baseline(struct kagg_session *s)
{
	clock_gettime(CLOCK_REALTIME, &s->t0_real);
	clock_gettime(CLOCK_MONOTONIC, &s->t0_mono);
	read_counters(s, s->cnt0, s->cpu_events0);
	read_prog_stats(s, s->run_cnt0, s->run_time0, s->recursion0);
}

/* ------------------------------------------------------------ lifecycle */

int kagg_session__attach(struct kagg_session *s)
{
	int i, err;

	if (!s)
		return -EINVAL;
	if (s->attached)
		return -EALREADY;
	if (s->ever_attached && s->ops->reattach)
		s->ops->reattach(s);
	for (i = 0; i < s->nr_progs; i++) {
		s->links[i] =
			s->ops->attach ? s->ops->attach(s, i) : bpf_program__attach(s->progs[i]);
		if (!s->links[i]) {
			err = -errno;
			session_log(s, KAGG_LOG_WARN, "attaching %s (%s) failed: %s",
				    bpf_program__name(s->progs[i]), s->attach_type,
				    strerror(errno));
			kagg_session__detach(s);
			return err;
		}
	}
	s->attached = true;
	/* Programs count nothing until armed: the baseline taken before is exact. */
	if (!s->ever_attached)
		set_baseline(s);
	if (s->armed)
		*s->armed = 1;
	s->ever_attached = true;
	return 0;
}

int kagg_session__detach(struct kagg_session *s)
{
	int i;

	if (!s)
		return -EINVAL;
	if (s->armed)
		*s->armed = 0;
	for (i = 0; i < s->nr_progs; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	s->attached = false;
	return 0;
}

void kagg_session__destroy(struct kagg_session *s)
{
	if (!s)
		return;
	kagg_session__detach(s);
	session_unwind_stop(s); /* before the maps it fills go */
	/* The tool releases what it holds; its state itself came with the session. */
	if (s->tool && s->ops && s->ops->destroy)
		s->ops->destroy(s);
	free(s->tool);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	cg_paths_free(&s->cg);
	syms__free(s->syms);
	unwl_free(s->unw);
	bpfrb__free(s->notes);
	u64map_free(&s->notes_seen);
	free(s->notes_arr);
	free(s->cpu_events0);
	free(s);
}

/* ------------------------------------------------------------ process notes */

/*
 * Reads of one address space's maps, at most: an exec and the loader's libraries take a few,
 * more come from a program that keeps changing what is executable (a JIT, whose code has no
 * symbols to read anyway).  A library loaded after that is found at the snapshot, by
 * syms__recheck_maps(), if the process still lives.
 */
#define NOTE_MAX_READS 16

/*
 * A process seen in a stack (bpf/proc_notes.bpf.h): read its maps now, while it lives,
 * unless this tgid was handled with the same address space (mm) and executable size already.
 */
static void on_note(void *ctx, const void *data, uint32_t len)
{
	const struct kagg_proc_note *n = data;
	struct kagg_session *s = ctx;
	void *arr = s->notes_arr;
	struct note_seen *ns;
	bool created;

	if (len < sizeof(*n) || !n->tgid)
		return;
	ns = u64map_elem(&s->notes_seen, n->tgid, &arr, &s->notes_n, &s->notes_cap, sizeof(*ns),
			 &created);
	s->notes_arr = arr;
	if (!ns)
		return;
	if (!created && ns->mm == n->mm) {
		if (ns->exec_pages == n->exec_pages || ns->reads >= NOTE_MAX_READS)
			return;
	} else {
		ns->tgid = n->tgid;
		ns->mm = n->mm;
		ns->reads = 0;
	}
	ns->exec_pages = n->exec_pages;
	ns->reads++;
	syms__add_pid(s->syms, n->tgid);
	session_unwind_queue(s, n->tgid);
}

/* Drop the notes of processes that are gone: a later note for their pid reads it afresh. */
static void notes_forget_gone(struct kagg_session *s)
{
	struct u64map m;
	size_t i, n = 0;

	if (!s->notes_n || u64map_init(&m, s->notes_n))
		return;
	for (i = 0; i < s->notes_n; i++) {
		if (syms_pid_gone((int)s->notes_arr[i].tgid)) {
			unwl_forget_pid(s->unw, (int)s->notes_arr[i].tgid);
			continue;
		}
		if (u64map_put(&m, s->notes_arr[i].tgid, n)) {
			/* out of memory: forget them all, the next notes read the maps again */
			u64map_free(&m);
			u64map_clear(&s->notes_seen);
			s->notes_n = 0;
			return;
		}
		s->notes_arr[n++] = s->notes_arr[i];
	}
	u64map_free(&s->notes_seen);
	s->notes_seen = m;
	s->notes_n = n;
}

/*
 * A long run sees processes come and go: after a snapshot that reset its stacks, every 10 s
 * at most, drop the maps and notes of the processes gone since the previous pass (see
 * syms__forget_gone()), so memory follows the recent processes, not all there were.
 */
#define SESSION_FORGET_NS (10 * 1000000000ULL)

static void session_forget_gone(struct kagg_session *s)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (s->forgot_ns && now - s->forgot_ns < SESSION_FORGET_NS)
		return;
	s->forgot_ns = now;
	syms__forget_gone(s->syms);
	if (s->notes)
		notes_forget_gone(s);
}

void session_drain_notes(struct kagg_session *s)
{
	if (s->notes)
		bpfrb__drain(s->notes, on_note, s, NULL);
}

int session_set_notes(struct kagg_session *s, struct bpf_map *ring, const volatile __u64 *lost)
{
	int err;

	if (!s->syms) {
		s->syms = syms__new();
		if (!s->syms)
			return -errno;
	}
	err = u64map_init(&s->notes_seen, 256);
	if (err)
		return err;
	s->notes_lost = lost;
	s->notes = bpfrb__new(bpf_map__fd(ring), bpf_map__max_entries(ring));
	if (!s->notes)
		return -errno;
	return 0;
}

int kagg_session__poll(struct kagg_session *s, int timeout_ms)
{
	struct timespec ts;
	int ret;

	if (!s)
		return -EINVAL;
	if (s->ops->poll)
		s->ops->poll(s);
	session_drain_notes(s);
	if (s->stream) {
		ret = scons_poll(s->stream, s->stream_fn, s->stream_ctx, timeout_ms);
		session_drain_notes(s);
		return ret;
	}
	if (timeout_ms <= 0)
		return 0;
	if (s->notes) {
		ret = bpfrb__wait(s->notes, timeout_ms);
		session_drain_notes(s);
		return ret < 0 ? ret : 0;
	}
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
	return nanosleep(&ts, NULL) ? -errno : 0;
}

struct kagg_rb *kagg_session__ringbuf(struct kagg_session *s)
{
	if (!s || !s->rb) {
		errno = s ? ENOENT : EINVAL;
		return NULL;
	}
	return s->rb;
}

const struct kagg_rb_events *kagg_session__events(struct kagg_session *s)
{
	if (!s || !s->rb_events) {
		errno = s ? ENOENT : EINVAL;
		return NULL;
	}
	return s->rb_events;
}

/* ------------------------------------------------------------ snapshots */

/* Retire the current generation; returns the one to read. */
static __u32 flip_generation(struct kagg_session *s)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	__u32 old = *s->gen & 1;

	*s->gen = old ^ 1;
	if (!s->exact || syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0)) {
		s->exact = false;
		nanosleep(&ts, NULL);
	}
	return old;
}

static void fill_meta(struct kagg_session *s, struct kagg_snapshot *snap, bool reset)
{
	uint64_t cnt[SESSION_MAX_COUNTERS], delta[SESSION_MAX_COUNTERS], *cpu_ev;
	uint64_t rc[SESSION_MAX_PROGS], rt[SESSION_MAX_PROGS], rec[SESSION_MAX_PROGS];
	uint64_t recursion = 0;
	struct kagg_meta *m = &snap->meta;
	struct timespec now_mono;
	int cpu, i;

	m->tool = s->ops->tool;
	m->event = s->event;
	m->attach = snap_strdup(snap, s->attach_type);
	m->attach_note = s->attach_note[0] ? snap_strdup(snap, s->attach_note) : NULL;
	m->kernel = snap_strdup(snap, s->uts.release);
	m->kernel_build = snap_strdup(snap, s->uts.version);
	m->clock = s->clock;
	m->filters = snap_strdup(snap, s->filters);
	m->unit = kagg_unit__name(s->unit);
	m->nr_cpus = s->nr_cpus;
	m->start = s->t0_real;
	clock_gettime(CLOCK_REALTIME, &m->end);
	clock_gettime(CLOCK_MONOTONIC, &now_mono);
	m->duration_s = (now_mono.tv_sec - s->t0_mono.tv_sec) +
			(now_mono.tv_nsec - s->t0_mono.tv_nsec) / 1e9;

	cpu_ev = calloc(s->nr_cpus, sizeof(uint64_t));
	if (cpu_ev && !read_counters(s, cnt, cpu_ev)) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			m->cpus_observed += cpu_ev[cpu] > s->cpu_events0[cpu];
	} else {
		memcpy(cnt, s->cnt0, sizeof(cnt));
	}
	for (i = 0; i < SESSION_MAX_COUNTERS; i++)
		delta[i] = cnt[i] - s->cnt0[i];
	read_prog_stats(s, rc, rt, rec);
	for (i = 0; i < s->nr_progs; i++)
		recursion += rec[i] - s->recursion0[i];

	m->events_seen = delta[0];
	m->mode = session_mode_name(s->path);
	if (s->stream)
		scons_meta(s->stream, snap, s->snap_gen, reset);
	s->ops->meta(s, snap, delta, reset);
	snap_add_drop(snap, "prog_recursion", "event not seen: program already running on this CPU",
		      recursion, true);
	m->snapshot_exact = s->exact;
	m->snapshot_note =
		s->exact ? NULL : "not exact: membarrier(MEMBARRIER_CMD_GLOBAL) unavailable";
	if (s->stats_fd >= 0) {
		m->has_overhead = true;
		meta_maps(s, snap);
		for (i = 0; i < s->nr_progs && i < SNAP_MAX_PROGS; i++) {
			struct kagg_prog_cost *pc = snap_add_prog(snap);

			pc->prog = bpf_program__name(s->progs[i]);
			pc->run_cnt = rc[i] - s->run_cnt0[i];
			pc->run_time_ns = rt[i] - s->run_time0[i];
			pc->ns_per_run = pc->run_cnt ? (double)pc->run_time_ns / pc->run_cnt : 0;
			if (m->has_stream && m->events_seen) {
				if (i < s->nr_agg_progs)
					m->agg_ns_per_event +=
						(double)pc->run_time_ns / m->events_seen;
				else
					m->stream_ns_per_event +=
						(double)pc->run_time_ns / m->events_seen;
			}
		}
		if (m->has_stream && m->events_seen && s->stream_part_ns) {
			double part = (double)s->stream_part_ns / m->events_seen;

			m->stream_timed = true;
			m->stream_ns_per_event += part;
			m->agg_ns_per_event =
				m->agg_ns_per_event > part ? m->agg_ns_per_event - part : 0;
		}
	}
	if (reset && cpu_ev) {
		memcpy(s->cnt0, cnt, sizeof(cnt));
		memcpy(s->cpu_events0, cpu_ev, s->nr_cpus * sizeof(uint64_t));
		memcpy(s->run_cnt0, rc, sizeof(rc));
		memcpy(s->run_time0, rt, sizeof(rt));
		memcpy(s->recursion0, rec, sizeof(rec));
		s->t0_real = m->end;
		s->t0_mono = now_mono;
	}
	free(cpu_ev);
}

/* Generation g of the kernel path, of the stream (into snap->stream with both), or both. */
static int read_paths(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	int err;

	if (s->path == KAGG_MODE_STREAM)
		return s->ops->read_stream(s, snap, g, reset);
	if (s->path == KAGG_MODE_BOTH) {
		snap->stream = snap_new();
		if (!snap->stream)
			return -ENOMEM;
		err = s->ops->read_stream(s, snap->stream, g, reset);
		if (err)
			return err;
	}
	return s->ops->read(s, snap, g, reset);
}

struct kagg_snapshot *kagg_session__snapshot(struct kagg_session *s, unsigned int flags)
{
	bool reset = flags & KAGG_SNAP_RESET;
	struct kagg_snapshot *snap;
	__u32 g;
	int err;

	if (!s || (flags & ~(KAGG_SNAP_RESET | KAGG_SNAP_ADDRS))) {
		errno = EINVAL;
		return NULL;
	}
	if (!s->ever_attached) {
		errno = ENOTCONN;
		return NULL;
	}
	snap = snap_new();
	if (!snap) {
		errno = ENOMEM;
		return NULL;
	}
	snap->addrs = flags & KAGG_SNAP_ADDRS;
	g = reset ? flip_generation(s) : (*s->gen & 1);
	s->snap_gen = g;
	if (s->stream)
		scons_drain(s->stream, s->stream_fn, s->stream_ctx);
	/* Counters and times are read after the flip, so the interval boundary matches it. */
	fill_meta(s, snap, reset);
	err = read_paths(s, snap, g, reset);
	if (err) {
		kagg_snapshot__free(snap);
		errno = -err;
		return NULL;
	}
	return snap;
}

/* ------------------------------------------------------------ readers */

double session_sum(const struct kagg_session *s, uint64_t raw)
{
	switch (s->sum) {
	case SESSION_SUM_U64:
		return (double)raw;
	case SESSION_SUM_S64:
		return (double)(int64_t)raw;
	default:
		return (double)raw / (double)units_ns(s->unit);
	}
}

void session_ext_fold(const struct kagg_session *s, struct kagg_hist *h, uint64_t nmin,
		      uint64_t max)
{
	uint64_t flip = s->sum == SESSION_SUM_S64 ? 1ULL << 63 : 0; /* kagg_ext_flip */
	double lo = session_sum(s, ~nmin ^ flip), hi = session_sum(s, max ^ flip);

	/*
	 * None to fold: a live generation read between a value's count and its extremes, or
	 * two CPUs racing one extreme where compare-and-swap is a plain store (5.10)
	 */
	if (lo <= hi)
		session_minmax_add(h, lo, hi);
}

void session_minmax_add(struct kagg_hist *h, double min, double max)
{
	if (!h->has_minmax || min < h->min)
		h->min = min;
	if (!h->has_minmax || max > h->max)
		h->max = max;
	h->has_minmax = true;
}

int session_percpu_zero(struct bpf_map *map, __u32 key, void *vals, size_t bytes)
{
	memset(vals, 0, bytes);
	return bpf_map__update_elem(map, &key, sizeof(key), vals, bytes, BPF_ANY);
}

int session_hist_fold(struct kagg_session *s, struct bpf_map *map, __u32 key, bool slots,
		      bool reset, struct kagg_hist_val *vals, struct kagg_hist *h)
{
	int copies = session_map_copies(s, map);
	size_t vsz = sizeof(*vals) * copies;
	uint64_t sum = 0, cnt = 0;
	__u64 nmin = 0, max = 0;
	int err, cpu, i;

	err = bpf_map__lookup_elem(map, &key, sizeof(key), vals, vsz, 0);
	if (err)
		return err;
	for (cpu = 0; cpu < copies; cpu++) {
		for (i = 0; i < KAGG_SLOTS; i++) {
			if (slots)
				((uint64_t *)h->slots)[i] += vals[cpu].slots[i];
			cnt += vals[cpu].slots[i];
		}
		sum += vals[cpu].sum;
		kagg_ext_merge(&nmin, &max, vals[cpu].nmin, vals[cpu].max);
	}
	if (slots)
		h->total += cnt;
	if (slots && cnt)
		session_ext_fold(s, h, nmin, max);
	h->has_sum = true;
	h->sum = session_sum(s, sum);
	return reset ? session_percpu_zero(map, key, vals, vsz) : 0;
}

int session_read_hist(struct kagg_session *s, struct bpf_map *hist, __u32 g, bool reset,
		      struct kagg_snapshot *snap)
{
	struct kagg_hist_val *vals;
	int err;

	err = session_alloc_hists(s, snap, 1, KAGG_SLOTS);
	if (err)
		return err;
	vals = calloc(s->nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	err = session_hist_fold(s, hist, g, true, reset, vals, &snap->hists[0]);
	free(vals);
	return err;
}

int session_exp_setup(struct kagg_session *s, int scale, struct bpf_map *map,
		      struct kagg_exp_params *p)
{
	/*
	 * the table's units 1, 1e3, 1e6 of ns are the nsecs, usecs and msecs of the unit;
	 * values that are no times (kagg hist) are bucketed as they are, unit 1
	 */
	unsigned int u = s->unit == KAGG_UNIT_NSECS || s->sum != SESSION_SUM_NS ? 0
			 : s->unit == KAGG_UNIT_MSECS				? 2
										: 1;

	if (scale < 0 || scale > KAGG_EXP_MAX_SCALE) {
		session_log(s, KAGG_LOG_WARN, "exp scale %d out of range (0 to %d)", scale,
			    KAGG_EXP_MAX_SCALE);
		return -EINVAL;
	}
	*p = kagg_exp_table[u][scale];
	s->exp_words = KAGG_EXP_SLOTS(scale) + 2;
	s->exp_scale = scale;
	s->exp_base = p->base_index;
	return map ? bpf_map__set_value_size(map, (s->exp_words + KAGG_EXT_WORDS) * sizeof(__u64))
		   : 0;
}

/* session_exp_setup() into a program's rodata exp_params and exp_words. */
static int exp_rodata(struct kagg_session *s, int scale, struct bpf_map *map,
		      volatile struct kagg_exp_params *params, volatile __u32 *words)
{
	struct kagg_exp_params p;
	int err;

	err = session_exp_setup(s, scale, map, &p);
	if (err)
		return err;
	memcpy((void *)params, &p, sizeof(p));
	*words = s->exp_words;
	return 0;
}

int session_exp_cells_setup(struct kagg_session *s, enum kagg_buckets b, int scale,
			    unsigned int max_cells, struct bpf_map *cells,
			    volatile struct kagg_exp_params *params, volatile __u32 *words)
{
	int err;

	if (b != KAGG_BUCKETS_EXP)
		return 0;
	err = exp_rodata(s, scale, NULL, params, words);
	if (err)
		return err;
	s->exp_cells = max_cells ? max_cells : SESSION_EXP_CELLS;
	return bpf_map__set_max_entries(cells, s->exp_cells);
}

struct exp_cell {
	struct kagg_exp_cell_key k;
	uint64_t count, sum;
	__u64 nmin, max;
};

static int cell_cmp(const void *a, const void *b)
{
	const struct kagg_exp_cell_key *x = &((const struct exp_cell *)a)->k;
	const struct kagg_exp_cell_key *y = &((const struct exp_cell *)b)->k;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

int session_alloc_hists(struct kagg_session *s, struct kagg_snapshot *snap, size_t n,
			unsigned int nr_slots)
{
	size_t i;
	int err = snap_alloc_hists(snap, n, nr_slots);

	for (i = 0; !err && i < n; i++)
		snap->hists[i].unit = s->unit;
	return err;
}

int session_read_exp_cells(struct kagg_session *s, struct bpf_map *map, __u32 g, bool reset,
			   size_t nr_ids, struct kagg_snapshot *snap)
{
	unsigned int nr_slots = s->exp_words - 1;
	struct kagg_exp_cell_key key;
	struct exp_cell *cells = NULL;
	size_t n = 0, cap = 0, i, nh = 0;
	struct kagg_exp_cell *vals;
	uint64_t *sums = NULL;
	int err = 0, cpu, nc = session_map_copies(s, map);
	const void *prev;

	vals = calloc(nc, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	/* every cell of generation g, summed over the CPUs (per-CPU map) */
	session_map_for_each_key(map, key, prev)
	{
		if ((key.slot >> 31) != g)
			continue;
		err = GROW_ARRAY(cells, cap, n, 256);
		if (err)
			goto out;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), vals, sizeof(*vals) * nc, 0))
			continue; /* deleted meanwhile */
		cells[n].k = key;
		cells[n].count = cells[n].sum = cells[n].nmin = cells[n].max = 0;
		for (cpu = 0; cpu < nc; cpu++) {
			cells[n].count += vals[cpu].cnt;
			cells[n].sum += vals[cpu].sum;
			kagg_ext_merge(&cells[n].nmin, &cells[n].max, vals[cpu].nmin,
				       vals[cpu].max);
		}
		n++;
	}
	if (n)
		qsort(cells, n, sizeof(*cells), cell_cmp);
	if (nr_ids) {
		nh = nr_ids;
	} else {
		for (i = 0; i < n; i++)
			nh += !i || cells[i].k.id != cells[i - 1].k.id;
	}
	err = session_alloc_hists(s, snap, nh, nr_slots);
	sums = calloc(nh ?: 1, sizeof(*sums));
	if (!err && !sums)
		err = -ENOMEM;
	if (err)
		goto out;
	for (i = 0; i < nh; i++) {
		struct kagg_hist *h = &snap->hists[i];

		h->key.id = i;
		h->has_sum = true;
		h->has_exp = true;
		h->exp_scale = s->exp_scale;
		h->exp_base_index = s->exp_base;
	}
	for (i = 0, nh = 0; i < n; i++) {
		unsigned int slot = cells[i].k.slot & 0x7fffffffU;
		struct kagg_hist *h;

		if (!nr_ids && i && cells[i].k.id != cells[i - 1].k.id)
			nh++;
		if ((nr_ids && cells[i].k.id >= nr_ids) || slot >= nr_slots)
			continue;
		h = &snap->hists[nr_ids ? cells[i].k.id : nh];
		h->key.id = cells[i].k.id;
		((uint64_t *)h->slots)[slot] += cells[i].count;
		h->total += cells[i].count;
		sums[h - snap->hists] += cells[i].sum;
		if (cells[i].count)
			session_ext_fold(s, h, cells[i].nmin, cells[i].max);
	}
	for (i = 0; i < snap->nr_hists; i++)
		snap->hists[i].sum = session_sum(s, sums[i]);
	/* generation g is not written any more: its cells go, which frees them */
	for (i = 0; reset && i < n; i++)
		bpf_map__delete_elem(map, &cells[i].k, sizeof(cells[i].k), 0);
out:
	free(vals);
	free(sums);
	free(cells);
	return err;
}

int session_read_key_exp_hists(struct kagg_session *s, struct bpf_map *key_hist,
			       struct bpf_map *cells, __u32 g, bool reset,
			       struct kagg_snapshot *snap,
			       const char *(*label)(struct kagg_session *s, uint64_t aux))
{
	struct kagg_snapshot tmp = {};
	unsigned int nr_slots = s->exp_words - 1;
	uint64_t *slots;
	size_t i, lo, hi;
	int err;

	err = session_read_key_hists(s, key_hist, g, reset, snap, label)
		      ?: session_read_exp_cells(s, cells, g, reset, 0, &tmp);
	if (err)
		goto out;
	slots = calloc(snap->nr_hists ? snap->nr_hists * nr_slots : 1, sizeof(*slots));
	if (!slots) {
		err = -ENOMEM;
		goto out;
	}
	free(snap->slots);
	snap->slots = slots;
	for (i = 0; i < snap->nr_hists; i++) {
		struct kagg_hist *h = &snap->hists[i];
		/* the cells' id: the thread, the process, or (kagg hist) the key's value */
		uint32_t id = s->key == KAGG_KEY_TID   ? (uint32_t)h->key.tid
			      : s->key == KAGG_KEY_PID ? (uint32_t)h->key.pid
						       : (uint32_t)h->key.id;

		h->slots = slots + i * nr_slots;
		h->nr_slots = nr_slots;
		h->total = 0;
		h->sum = 0;
		h->has_minmax = false; /* the log2 entry counted nothing: the cells did */
		h->has_exp = true;
		h->exp_scale = s->exp_scale;
		h->exp_base_index = s->exp_base;
		/* the cells' histograms are sorted by id */
		for (lo = 0, hi = tmp.nr_hists; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (tmp.hists[mid].key.id < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < tmp.nr_hists && tmp.hists[lo].key.id == id) {
			memcpy(slots + i * nr_slots, tmp.hists[lo].slots,
			       nr_slots * sizeof(*slots));
			h->total = tmp.hists[lo].total;
			h->sum = tmp.hists[lo].sum;
			h->has_minmax = tmp.hists[lo].has_minmax;
			h->min = tmp.hists[lo].min;
			h->max = tmp.hists[lo].max;
		}
	}
out:
	free(tmp.hists);
	free(tmp.slots);
	return err;
}

bool session_no_bpf_atomics;

bool session_has_bpf_atomics(struct kagg_session *s)
{
	int r = s->feat_atomics;

	if (session_no_bpf_atomics)
		return false;
	if (!r) {
		/* *(u64 *)(fp - 8) = 0; r1 = 1; r1 = atomic_fetch_add(fp - 8, r1); r0 = 0 */
		const struct bpf_insn insns[] = {
			{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8 },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
			{ .code = BPF_STX | BPF_ATOMIC | BPF_DW,
			  .dst_reg = BPF_REG_10,
			  .src_reg = BPF_REG_1,
			  .off = -8,
			  .imm = BPF_ADD | BPF_FETCH },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
				       sizeof(insns) / sizeof(insns[0]), NULL);

		r = fd >= 0 ? 1 : -1;
		if (fd >= 0)
			close(fd);
		s->feat_atomics = r;
	}
	return r > 0;
}

int session_atomics_fallback(struct kagg_session *s, struct bpf_object *obj)
{
	struct bpf_program *p;

	if (session_has_bpf_atomics(s))
		return 0;
	bpf_object__for_each_program(p, obj)
	{
		const struct bpf_insn *in = bpf_program__insns(p);
		size_t n = bpf_program__insn_cnt(p), i;
		struct bpf_insn *out;
		int err;

		for (i = 0; i < n; i++)
			if (in[i].code == (BPF_STX | BPF_ATOMIC | BPF_DW) && in[i].imm != BPF_ADD)
				break;
		if (i == n)
			continue;
		out = malloc(n * sizeof(*out));
		if (!out)
			return -ENOMEM;
		memcpy(out, in, n * sizeof(*out));
		for (; i < n; i++) {
			if (out[i].code != (BPF_STX | BPF_ATOMIC | BPF_DW) || out[i].imm == BPF_ADD)
				continue;
			if (out[i].imm != (BPF_ADD | BPF_FETCH) && out[i].imm != BPF_CMPXCHG) {
				free(out);
				session_log(s, KAGG_LOG_WARN,
					    "%s: BPF atomic operation %#x needs a "
					    "kernel with BPF atomics (fetch, cmpxchg)",
					    bpf_program__name(p), out[i].imm);
				return -EOPNOTSUPP;
			}
			/*
			 * r0 = cmpxchg(dst + off, r0, src) becomes *(dst + off) = src with r0
			 * left as expected: the compare-and-swap succeeds as a plain store
			 * (whose imm must be 0: the kernel refuses reserved fields set)
			 */
			if (out[i].imm == BPF_CMPXCHG) {
				out[i].code = BPF_STX | BPF_MEM | BPF_DW;
				out[i].imm = 0;
			} else
				out[i] = (struct bpf_insn){
					.code = BPF_ALU64 | BPF_MOV | BPF_K,
					.dst_reg = out[i].src_reg,
				};
		}
		err = bpf_program__set_insns(p, out, n);
		free(out);
		if (err)
			return err;
	}
	return 0;
}

int session_exp_hot_setup(struct kagg_session *s, struct bpf_map *exp_hist, bool none,
			  volatile __u32 *max)
{
	unsigned int n = none || !s->exp_words
				 ? 0
				 : SESSION_EXP_DENSE_FIT(s->exp_scale, (unsigned int)s->nr_cpus);

	/* the promotion to dense histograms takes an atomic fetch-add and a cmpxchg */
	if (n && !session_has_bpf_atomics(s))
		n = 0;

	*max = n;
	if (!n)
		return bpf_map__set_max_entries(exp_hist, 1);
	return bpf_map__set_value_size(exp_hist, (s->exp_words + KAGG_EXT_WORDS) * sizeof(__u64))
		       ?: bpf_map__set_max_entries(exp_hist, 2 * n);
}

int session_buckets_setup(struct kagg_session *s, enum kagg_buckets b, int scale,
			  struct bpf_map *exp_map, struct bpf_map *log2_map,
			  volatile struct kagg_exp_params *params, volatile __u32 *words)
{
	int err;

	if (b != KAGG_BUCKETS_EXP)
		return bpf_map__set_max_entries(exp_map, 1);
	err = exp_rodata(s, scale, exp_map, params, words);
	return err ?: bpf_map__set_max_entries(log2_map, 1);
}

int session_hists_setup(struct kagg_session *s, const struct session_hist_maps *m, bool keyed,
			enum kagg_buckets b, int scale, unsigned int max_cells)
{
	if (!keyed)
		return bpf_map__set_max_entries(m->key_hist, 1)
			       ?: session_buckets_setup(s, b, scale, m->exp_hist, m->hist,
							m->params, m->words);
	return session_exp_cells_setup(s, b, scale, max_cells, m->exp_cells, m->params, m->words)
		       ?: bpf_map__set_max_entries(m->exp_hist, 1);
}

int session_read_hists(struct kagg_session *s, const struct session_hist_maps *m, bool keyed,
		       __u32 g, bool reset, struct kagg_snapshot *snap,
		       const char *(*label)(struct kagg_session *s, uint64_t aux))
{
	if (keyed && s->exp_words)
		return session_read_key_exp_hists(s, m->key_hist, m->exp_cells, g, reset, snap,
						  label);
	if (keyed)
		return session_read_key_hists(s, m->key_hist, g, reset, snap, label);
	if (s->exp_words)
		return session_read_exp_hist(s, m->exp_hist, g, reset, snap);
	return session_read_hist(s, m->hist, g, reset, snap);
}

int session_exp_hist_get(struct kagg_session *s, struct bpf_map *map, __u32 idx, bool reset,
			 struct kagg_hist *h)
{
	size_t words = s->exp_words, vsz = (words + KAGG_EXT_WORDS) * sizeof(__u64);
	uint64_t *vals, sum = 0, cnt = 0;
	__u64 nmin = 0, max = 0;
	unsigned int k;
	int err, cpu;

	vals = calloc(s->nr_cpus, vsz);
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(map, &idx, sizeof(idx), vals, vsz * s->nr_cpus, 0);
	if (err)
		goto out;
	h->unit = s->unit;
	h->has_exp = true;
	h->exp_scale = s->exp_scale;
	h->exp_base_index = s->exp_base;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		const uint64_t *w = (const uint64_t *)((const char *)vals + (size_t)cpu * vsz);

		for (k = 0; k < words - 1 && k < h->nr_slots; k++) {
			((uint64_t *)h->slots)[k] += w[k];
			cnt += w[k];
		}
		sum += w[words - 1];
		kagg_ext_merge(&nmin, &max, w[words], w[words + 1]);
	}
	h->total += cnt;
	if (cnt)
		session_ext_fold(s, h, nmin, max);
	h->has_sum = true;
	h->sum += session_sum(s, sum);
	if (reset)
		err = session_percpu_zero(map, idx, vals, vsz * s->nr_cpus);
out:
	free(vals);
	return err;
}

int session_read_exp_hist(struct kagg_session *s, struct bpf_map *map, __u32 g, bool reset,
			  struct kagg_snapshot *snap)
{
	return snap_alloc_hists(snap, 1, s->exp_words - 1)
		       ?: session_exp_hist_get(s, map, g, reset, &snap->hists[0]);
}

/* The generation of a key: its first 32 bits (kagg_key.gen, NAME__key.gen of the SDK). */
static __u32 key_gen(const char *k)
{
	__u32 g;

	memcpy(&g, k, sizeof(g));
	return g;
}

/* The keys (ks bytes each) of map m; *keys is malloc'd. */
static int collect_keys(struct bpf_map *m, size_t ks, char **keys, size_t *n)
{
	char *arr = NULL, *tmp, *k = malloc(ks), *prev = NULL;
	size_t cnt = 0, cap = 0;
	int err = 0;

	if (!k)
		return -ENOMEM;
	for (; !bpf_map__get_next_key(m, prev, k, ks); prev = arr + (cnt - 1) * ks) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(arr, cap * ks);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			arr = tmp;
		}
		memcpy(arr + cnt++ * ks, k, ks);
	}
	free(k);
	if (err) {
		free(arr);
		return err;
	}
	*keys = arr;
	*n = cnt;
	return 0;
}

/* Keep the entries of generation g of keys and vals (tot of them), in order; their count. */
static size_t keep_gen(__u32 g, char *keys, size_t ks, char *vals, size_t vsz, size_t tot)
{
	size_t i, out;

	for (i = out = 0; i < tot; i++) {
		if (key_gen(keys + i * ks) != g)
			continue;
		if (out != i) {
			memcpy(keys + out * ks, keys + i * ks, ks);
			if (vals)
				memcpy(vals + out * vsz, vals + i * vsz, vsz);
		}
		out++;
	}
	return out;
}

int session_gen_entries(struct bpf_map *m, __u32 g, size_t ks, size_t vsz, void **keys, void **vals,
			size_t *n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	size_t cap = 0, tot = 0, i, out;
	char *k = NULL, *v = NULL;
	__u32 tok = 0, cnt;
	bool first = true;
	int err;

	for (;;) {
		void *tk, *tv;

		if (cap - tot < 256) {
			cap = cap ? cap * 2 : 1024;
			tk = realloc(k, cap * ks);
			tv = tk ? realloc(v, cap * vsz) : NULL;
			if (tk)
				k = tk;
			if (tv)
				v = tv;
			if (!tk || !tv) {
				err = -ENOMEM;
				goto fail;
			}
		}
		cnt = cap - tot;
		err = bpf_map_lookup_batch(bpf_map__fd(m), first ? NULL : &tok, &tok, k + tot * ks,
					   v + tot * vsz, &cnt, &bo);
		first = false;
		tot += cnt;
		if (err == -ENOENT)
			break;
		if (err)
			goto slow;
	}
	*keys = k;
	*vals = v;
	*n = keep_gen(g, k, ks, v, vsz, tot);
	return 0;
slow:
	/* no batched lookups (or a bucket larger than the batch): a walk, a lookup per key */
	free(k);
	free(v);
	k = NULL;
	err = collect_keys(m, ks, &k, &tot);
	if (err)
		return err;
	tot = keep_gen(g, k, ks, NULL, 0, tot);
	v = malloc((tot ?: 1) * vsz);
	if (!v) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = out = 0; i < tot; i++) {
		/* cannot fail: nothing else deletes retired-generation keys */
		if (bpf_map__lookup_elem(m, k + i * ks, ks, v + out * vsz, vsz, 0))
			continue;
		if (out != i)
			memcpy(k + out * ks, k + i * ks, ks);
		out++;
	}
	*keys = k;
	*vals = v;
	*n = out;
	return 0;
fail:
	free(k);
	free(v);
	return err;
}

void session_gen_delete(struct bpf_map *m, const void *keys, size_t ks, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	__u32 cnt = n;
	size_t i;

	if (!n)
		return;
	if (bpf_map_delete_batch(bpf_map__fd(m), keys, &cnt, &bo))
		for (i = cnt; i < n; i++)
			bpf_map__delete_elem(m, (const char *)keys + i * ks, ks, 0);
}

int session_key_check(struct kagg_session *s, enum kagg_key_mode key, enum kagg_mode mode,
		      enum kagg_buckets buckets)
{
	if (key != KAGG_KEY_COMM && key != KAGG_KEY_CGROUP)
		return 0;
	if (mode != KAGG_MODE_AGG || buckets != KAGG_BUCKETS_LOG2) {
		session_log(
			s, KAGG_LOG_WARN,
			"per-command and per-cgroup histograms are the kernel path's (mode agg), "
			"in log2 buckets");
		return -EINVAL;
	}
	return 0;
}

void session_hist_key(struct kagg_session *s, struct kagg_snapshot *snap, struct kagg_hist *h,
		      const struct kagg_key *k, const char *comm,
		      const char *(*label)(struct kagg_session *s, uint64_t aux))
{
	const char *name = label ? label(s, k->aux) : NULL;

	h->key.mode = s->key;
	h->key.pid = s->key == KAGG_KEY_PID || s->key == KAGG_KEY_TID ? (int)k->tgid : 0;
	h->key.tid = s->key == KAGG_KEY_TID ? (int)k->pid : 0;
	h->key.id = k->aux;
	h->key.label = name ? snap_strdup(snap, name) : NULL;
	if (s->key == KAGG_KEY_COMM)
		comm = k->comm;
	if (s->key != KAGG_KEY_CGROUP)
		memcpy(h->key.comm, comm, strnlen(comm, sizeof(h->key.comm) - 1));
	if (s->key == KAGG_KEY_CGROUP) {
		h->cgroup_id = k->cgroup_lo | (uint64_t)k->cgroup_hi << 32;
		h->cgroup = cg_paths_find(&s->cg, h->cgroup_id);
		if (h->cgroup)
			h->cgroup = snap_strdup(snap, h->cgroup);
	}
}

int session_read_key_hists(struct kagg_session *s, struct bpf_map *m, __u32 g, bool reset,
			   struct kagg_snapshot *snap,
			   const char *(*label)(struct kagg_session *s, uint64_t aux))
{
	int err, cpu, j, nc = session_map_copies(s, m);
	size_t vsz = sizeof(struct kagg_key_hist), n, i, out = 0;
	struct kagg_key_hist *all = NULL;
	struct kagg_key *keys = NULL;

	err = session_gen_entries(m, g, sizeof(*keys), vsz * nc, (void **)&keys, (void **)&all, &n);
	if (err)
		return err;
	s->cg.read = false; /* a cgroup unknown to the last read: scan once more */
	err = session_alloc_hists(s, snap, n, KAGG_SLOTS);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		const struct kagg_key_hist *vals = all + i * nc;
		struct kagg_hist *h = &snap->hists[out];
		uint64_t sum = 0;
		__u64 nmin = 0, max = 0;
		const char *comm = "";

		for (cpu = 0; cpu < nc && !comm[0]; cpu++)
			comm = vals[cpu].comm;
		session_hist_key(s, snap, h, &keys[i], comm, label);
		for (cpu = 0; cpu < nc; cpu++) {
			for (j = 0; j < KAGG_SLOTS; j++) {
				((uint64_t *)h->slots)[j] += vals[cpu].slots[j];
				h->total += vals[cpu].slots[j];
			}
			sum += vals[cpu].sum;
			kagg_ext_merge(&nmin, &max, vals[cpu].nmin, vals[cpu].max);
		}
		if (h->total)
			session_ext_fold(s, h, nmin, max);
		h->has_sum = true;
		h->sum = session_sum(s, sum);
		out++;
	}
	if (reset)
		session_gen_delete(m, keys, sizeof(*keys), n);
	snap->nr_hists = out;
	snap_sort_hists(snap);
out:
	free(all);
	free(keys);
	return err;
}

/*
 * Stack id of a key into r's ips: *err and *lost as the stack shows them.  KAGG_NO_STACK: not
 * captured by design (-ENOENT, not lost); a negative id: the capture failed; an id no longer
 * in the stack map (evicted): -ENOENT, lost.
 */
static void stack_ips(struct bpf_map *stackmap, struct bpf_map *ustacks, int id, uint64_t *ips,
		      unsigned int *n, int *err, bool *lost)
{
	*n = 0;
	*err = 0;
	*lost = false;
	if (id == KAGG_NO_STACK) {
		*err = -ENOENT;
		return;
	}
	*lost = true;
	if (id < 0) {
		*err = id;
		return;
	}
	/* walked with unwind tables: in ustacks (bpf/unwind.bpf.h) */
	if (id >= UNW_STACK_ID_BASE && ustacks)
		stackmap = ustacks;
	if (bpf_map__lookup_elem(stackmap, &id, sizeof(id), ips, KAGG_MAX_STACK * sizeof(*ips),
				 0)) {
		*err = -ENOENT;
		return;
	}
	*lost = false;
	while (*n < KAGG_MAX_STACK && ips[*n])
		(*n)++;
}

/* Delete the table-walked user stacks of generation g, read (ids marked with it). */
static void forget_ustacks(struct bpf_map *ustacks, __u32 g)
{
	__u32 key, next, *prev = NULL;
	bool drop_prev = false;

	while (!bpf_map__get_next_key(ustacks, prev, &next, sizeof(next))) {
		if (drop_prev)
			bpf_map__delete_elem(ustacks, &key, sizeof(key), 0);
		drop_prev = !!(next & UNW_STACK_ID_GEN) == !!(g & 1);
		key = next;
		prev = &key;
	}
	if (drop_prev)
		bpf_map__delete_elem(ustacks, &key, sizeof(key), 0);
}

int session_read_stacks(struct kagg_session *s, struct bpf_map *agg, struct bpf_map *stackmap,
			__u32 g, bool reset, bool from_tracer, struct kagg_snapshot *snap)
{
	uint64_t kips[KAGG_MAX_STACK], uips[KAGG_MAX_STACK];
	size_t vsz = sizeof(struct kagg_stack_val), n, i;
	struct kagg_stack_val *all = NULL;
	struct kagg_key *keys = NULL;
	struct stk_resolver res;
	struct stk b;
	int err, cpu, nc = session_map_copies(s, agg);

	if (!s->syms) {
		s->syms = syms__new();
		if (!s->syms)
			return -errno;
	}
	/* the processes noted since the last poll, while most still live */
	session_drain_notes(s);
	syms__recheck_maps(s->syms);
	stk_syms_resolver(s->syms, &res);
	err = session_gen_entries(agg, g, sizeof(*keys), vsz * nc, (void **)&keys, (void **)&all,
				  &n);
	if (err)
		return err;
	err = stk_init(&b, snap, &res, snap->addrs, from_tracer);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		const struct kagg_stack_val *vals = all + i * nc;
		struct stk_raw r = { .kips = kips, .uips = uips };

		r.pid = keys[i].tgid;
		r.tid = keys[i].pid;
		for (cpu = 0; cpu < nc; cpu++) {
			if (!r.comm[0] && vals[cpu].comm[0])
				memcpy(r.comm, vals[cpu].comm, sizeof(r.comm) - 1);
			r.total_ns += vals[cpu].total_ns;
			r.count += vals[cpu].count;
		}
		stack_ips(stackmap, NULL, keys[i].kstack, kips, &r.nr_kips, &r.kstack_err,
			  &r.klost);
		stack_ips(stackmap, s->ustacks, keys[i].ustack, uips, &r.nr_uips, &r.ustack_err,
			  &r.ulost);
		err = stk_add(&b, &r);
		if (err)
			goto out;
	}
	if (reset)
		session_gen_delete(agg, keys, sizeof(*keys), n);
	err = stk_finish(&b);
	if (!err) {
		struct dbg_stats st;

		syms__dbg_stats(s->syms, &st);
		snap->meta.debuginfod_queries = st.queries;
		snap->meta.debuginfod_not_found = st.failed[DBG_WHY_NOT_FOUND];
		snap->meta.debuginfod_timeouts = st.failed[DBG_WHY_TIMEOUT];
		snap->meta.debuginfod_errors = st.failed[DBG_WHY_ERROR];
		snap->meta.debuginfod_skipped = st.failed[DBG_WHY_SKIPPED];
	}
	if (!err && s->notes_lost) {
		uint64_t lost = __atomic_load_n(s->notes_lost, __ATOMIC_RELAXED);

		snap->meta.notes_lost = lost - s->notes_lost0;
		if (reset)
			s->notes_lost0 = lost;
	}
	if (!err && reset && s->ustacks && s->ustacks_gen)
		forget_ustacks(s->ustacks, g);
	if (!err && reset)
		session_forget_gone(s);
out:
	if (err)
		stk_fini(&b);
	free(all);
	free(keys);
	return err;
}
