// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offcpu sessions: load bpf/offcpu.bpf.c (embedded as a skeleton), attach
 * it to sched_switch, and read its aggregates as exact snapshots.
 *
 * Exact read-and-reset (see the BPF side's design comment): flip the
 * program's `gen`, wait for an RCU grace period with
 * membarrier(MEMBARRIER_CMD_GLOBAL) -- the kernel implements it as
 * synchronize_rcu(), and BPF tracing programs run inside RCU read-side
 * sections -- then read and clear the retired generation.  Where membarrier
 * is unavailable (nohz_full kernels refuse it) snapshots fall back to a
 * short sleep and every snapshot's meta says it is not exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/session.h>
#include "offcpu.h"
#include "offcpu.skel.h"
#include "opts.h"
#include "snapshot.h"
#include "syms.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

struct kagg_session {
	struct offcpu_bpf *skel;
	struct bpf_program *prog; /* the one loaded program */
	struct bpf_link *link;
	kagg_log_fn log;
	void *log_ctx;

	enum kagg_unit unit;
	enum kagg_key_mode key;
	bool stacks;
	bool ever_attached;
	bool exact;		/* membarrier(GLOBAL) available */
	int stats_fd;		/* BPF_ENABLE_STATS, -1 when off */
	int cgroup_fd;
	int nr_cpus;

	char attach[16];
	char attach_note[160];
	char filters[512];
	struct utsname uts;

	/* Baselines at the start of the current interval. */
	struct timespec t0_real, t0_mono;
	uint64_t cnt0[OFFCPU_CNT_MAX];
	uint64_t *cpu_switches0; /* per CPU */
	uint64_t run_cnt0, run_time0, recursion0;

	struct kagg_syms *syms;
};

static void slog(struct kagg_session *s, enum kagg_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void slog(struct kagg_session *s, enum kagg_log_level lvl, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s->log(s->log_ctx, lvl, buf);
}

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

static bool task_exists(int id)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", id);
	return id > 0 && access(path, F_OK) == 0;
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
static int load_skel(struct kagg_session *s, const struct kagg_offcpu_opts *o, bool btf,
		     __u32 state_mask)
{
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
	skel->rodata->state_mask = state_mask;
	skel->rodata->min_ns = o->min_ns;
	skel->rodata->max_ns = o->max_ns ? o->max_ns : ~0ULL;
	skel->rodata->unit_ns = unit_ns(s->unit);

	bpf_program__set_autoload(skel->progs.offcpu_tp_btf, btf);
	bpf_program__set_autoload(skel->progs.offcpu_raw_tp, !btf);
	/* Size what this configuration does not use down to nothing. */
	if (btf)
		bpf_map__set_max_entries(skel->maps.start_hash, 1);
	else
		bpf_map__set_autocreate(skel->maps.start_store, false);
	if (s->key == KAGG_KEY_NONE)
		bpf_map__set_max_entries(skel->maps.key_hist, 1);
	if (!o->stacks) {
		bpf_map__set_max_entries(skel->maps.stack_agg, 1);
		bpf_map__set_max_entries(skel->maps.stackmap, 1);
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
	s->skel = skel;
	s->prog = btf ? skel->progs.offcpu_tp_btf : skel->progs.offcpu_raw_tp;
	snprintf(s->attach, sizeof(s->attach), "%s", btf ? "tp_btf" : "raw_tp");
	return 0;
}

static int fill_filters(struct kagg_session *s, const struct kagg_offcpu_opts *o)
{
	__u8 one = 1;
	__u32 zero = 0;
	size_t i;
	int err;

	for (i = 0; i < o->nr_pids; i++) {
		__u32 id = o->pids[i];

		err = bpf_map__update_elem(s->skel->maps.tgids, &id, sizeof(id), &one, 1, BPF_ANY);
		if (err)
			return err;
	}
	for (i = 0; i < o->nr_tids; i++) {
		__u32 id = o->tids[i];

		err = bpf_map__update_elem(s->skel->maps.tids, &id, sizeof(id), &one, 1, BPF_ANY);
		if (err)
			return err;
	}
	if (s->cgroup_fd >= 0) {
		__u32 fd = s->cgroup_fd;

		err = bpf_map__update_elem(s->skel->maps.cgroup, &zero, sizeof(zero), &fd,
					   sizeof(fd), BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

static int validate(const struct kagg_offcpu_opts *o, struct kagg_session *s, __u32 *state_mask)
{
	size_t i;

	if ((unsigned int)o->unit > KAGG_UNIT_MSECS || (unsigned int)o->key > KAGG_KEY_TID ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP ||
	    (unsigned int)o->threads > KAGG_THREADS_KERNEL ||
	    (o->nr_pids && !o->pids) || (o->nr_tids && !o->tids) ||
	    (o->max_ns && o->max_ns < o->min_ns)) {
		slog(s, KAGG_LOG_WARN, "invalid offcpu options");
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
	for (i = 0; i < o->nr_pids; i++) {
		if (!task_exists(o->pids[i])) {
			slog(s, KAGG_LOG_WARN, "no such process: %d", o->pids[i]);
			return -ESRCH;
		}
	}
	for (i = 0; i < o->nr_tids; i++) {
		if (!task_exists(o->tids[i])) {
			slog(s, KAGG_LOG_WARN, "no such thread: %d", o->tids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

static int open_cgroup(struct kagg_session *s, const char *path)
{
	struct statfs sfs;
	int fd, err;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		slog(s, KAGG_LOG_WARN, "cannot open cgroup %s: %s", path, strerror(errno));
		return err;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		slog(s, KAGG_LOG_WARN, "%s is not a cgroup v2 directory", path);
		return -EINVAL;
	}
	s->cgroup_fd = fd;
	return 0;
}

static bool is_perm_error(int err)
{
	return err == -EPERM || err == -EACCES;
}

struct kagg_session *kagg_offcpu__open(const struct kagg_offcpu_opts *opts)
{
	struct kagg_offcpu_opts o = {};
	struct kagg_session *s;
	__u32 state_mask;
	int err, ret;

	if (!opts || !kagg_opts_valid(opts, sizeof(o))) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));

	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->log = o.log;
	s->log_ctx = o.log_ctx;
	s->stats_fd = -1;
	s->cgroup_fd = -1;
	s->unit = o.unit;
	s->key = o.key;
	s->stacks = o.stacks;
	uname(&s->uts);

	err = validate(&o, s, &state_mask);
	if (err)
		goto fail;
	describe_filters(s, &o);
	if (o.cgroup) {
		err = open_cgroup(s, o.cgroup);
		if (err)
			goto fail;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		slog(s, KAGG_LOG_WARN, "kernel BTF not found at /sys/kernel/btf/vmlinux: "
				       "kagg needs a kernel built with CONFIG_DEBUG_INFO_BTF");
		err = -EOPNOTSUPP;
		goto fail;
	}
	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0) {
		err = s->nr_cpus ? s->nr_cpus : -EINVAL;
		goto fail;
	}
	s->cpu_switches0 = calloc(s->nr_cpus, sizeof(uint64_t));
	if (!s->cpu_switches0) {
		err = -ENOMEM;
		goto fail;
	}

	err = -EOPNOTSUPP;
	if (o.attach != KAGG_ATTACH_RAW_TP) {
		err = load_skel(s, &o, true, state_mask);
		if (err && o.attach == KAGG_ATTACH_AUTO && !is_perm_error(err)) {
			snprintf(s->attach_note, sizeof(s->attach_note),
				 "tp_btf/sched_switch failed to load: %s", strerror(-err));
			slog(s, KAGG_LOG_INFO, "%s; falling back to raw_tp", s->attach_note);
		}
	}
	if (!s->skel && o.attach != KAGG_ATTACH_TP_BTF && !is_perm_error(err))
		err = load_skel(s, &o, false, state_mask);
	if (err) {
		if (is_perm_error(err))
			slog(s, KAGG_LOG_WARN, "loading BPF programs: %s: run as root or with "
					       "CAP_BPF and CAP_PERFMON", strerror(-err));
		else
			slog(s, KAGG_LOG_WARN, "loading the sched_switch program failed: %s",
			     strerror(-err));
		goto fail;
	}
	err = fill_filters(s, &o);
	if (err)
		goto fail;

	ret = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	s->exact = ret > 0 && (ret & MEMBARRIER_CMD_GLOBAL);
	if (!s->exact)
		slog(s, KAGG_LOG_WARN, "membarrier(MEMBARRIER_CMD_GLOBAL) unavailable: interval "
				       "snapshots are not exact");
	if (o.overhead) {
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (s->stats_fd < 0) {
			err = -errno;
			slog(s, KAGG_LOG_WARN, "BPF_ENABLE_STATS failed: %s", strerror(errno));
			goto fail;
		}
	}
	if (o.stacks) {
		s->syms = kagg_syms__new();
		if (!s->syms) {
			err = -errno;
			goto fail;
		}
	}
	return s;
fail:
	kagg_session__destroy(s);
	errno = -err;
	return NULL;
}

static int read_prog_stats(struct kagg_session *s, uint64_t *cnt, uint64_t *time_ns,
			   uint64_t *recursion)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err;

	err = bpf_prog_get_info_by_fd(bpf_program__fd(s->prog), &info, &len);
	if (err)
		return err;
	*cnt = info.run_cnt;
	*time_ns = info.run_time_ns;
	*recursion = info.recursion_misses;
	return 0;
}

/* Sum the per-CPU counters; per-CPU switch counts into cpu_sw when non-NULL. */
static int read_counters(struct kagg_session *s, uint64_t *sum, uint64_t *cpu_sw)
{
	size_t vsz = sizeof(uint64_t) * OFFCPU_CNT_MAX;
	uint64_t *vals;
	__u32 zero = 0;
	int err, cpu, i;

	vals = calloc(s->nr_cpus, vsz);
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(s->skel->maps.counters, &zero, sizeof(zero), vals,
				   vsz * s->nr_cpus, 0);
	if (!err) {
		memset(sum, 0, vsz);
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			for (i = 0; i < OFFCPU_CNT_MAX; i++)
				sum[i] += vals[cpu * OFFCPU_CNT_MAX + i];
			if (cpu_sw)
				cpu_sw[cpu] = vals[cpu * OFFCPU_CNT_MAX + OFFCPU_CNT_SWITCHES];
		}
	}
	free(vals);
	return err;
}

static void set_baseline(struct kagg_session *s)
{
	clock_gettime(CLOCK_REALTIME, &s->t0_real);
	clock_gettime(CLOCK_MONOTONIC, &s->t0_mono);
	read_counters(s, s->cnt0, s->cpu_switches0);
	read_prog_stats(s, &s->run_cnt0, &s->run_time0, &s->recursion0);
}

int kagg_session__attach(struct kagg_session *s)
{
	int err;

	if (!s)
		return -EINVAL;
	if (s->link)
		return -EALREADY;
	s->link = bpf_program__attach(s->prog);
	if (!s->link) {
		err = -errno;
		slog(s, KAGG_LOG_WARN, "attaching %s/sched_switch failed: %s", s->attach,
		     strerror(errno));
		return err;
	}
	if (!s->ever_attached)
		set_baseline(s);
	s->ever_attached = true;
	return 0;
}

int kagg_session__detach(struct kagg_session *s)
{
	if (!s)
		return -EINVAL;
	bpf_link__destroy(s->link);
	s->link = NULL;
	return 0;
}

void kagg_session__destroy(struct kagg_session *s)
{
	if (!s)
		return;
	bpf_link__destroy(s->link);
	offcpu_bpf__destroy(s->skel);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	kagg_syms__free(s->syms);
	free(s->cpu_switches0);
	free(s);
}

/* ------------------------------------------------------------ reading */

/* Retire the current generation; returns the one to read. */
static __u32 flip_generation(struct kagg_session *s)
{
	volatile __u32 *gen = &s->skel->bss->gen;
	__u32 old = *gen & 1;
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	*gen = old ^ 1;
	if (!s->exact || syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0)) {
		s->exact = false;
		nanosleep(&ts, NULL);
	}
	return old;
}

static int read_system_hist(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g,
			    bool reset)
{
	size_t vsz = sizeof(struct offcpu_hist);
	struct offcpu_hist *vals;
	struct kagg_hist *h;
	int err, cpu, i;

	err = snap_alloc_hists(snap, 1, OFFCPU_MAX_SLOTS);
	if (err)
		return err;
	vals = calloc(s->nr_cpus, vsz);
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(s->skel->maps.hist, &g, sizeof(g), vals, vsz * s->nr_cpus, 0);
	if (err)
		goto out;
	h = &snap->hists[0];
	h->unit = s->unit;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		for (i = 0; i < OFFCPU_MAX_SLOTS; i++) {
			((uint64_t *)h->slots)[i] += vals[cpu].slots[i];
			h->total += vals[cpu].slots[i];
		}
	}
	if (reset) {
		memset(vals, 0, vsz * s->nr_cpus);
		err = bpf_map__update_elem(s->skel->maps.hist, &g, sizeof(g), vals,
					   vsz * s->nr_cpus, BPF_ANY);
	}
out:
	free(vals);
	return err;
}

/* Keys of generation g in map m; *keys is malloc'd. */
static int collect_keys(struct bpf_map *m, __u32 g, struct offcpu_key **keys, size_t *n)
{
	struct offcpu_key k, next, *arr = NULL, *tmp;
	size_t cnt = 0, cap = 0;
	void *prev = NULL;

	while (!bpf_map__get_next_key(m, prev, &next, sizeof(next))) {
		k = next;
		prev = &k;
		if (next.gen != g)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(arr, cap * sizeof(*arr));
			if (!tmp) {
				free(arr);
				return -ENOMEM;
			}
			arr = tmp;
		}
		arr[cnt++] = next;
	}
	*keys = arr;
	*n = cnt;
	return 0;
}

static int cmp_hist(const void *a, const void *b)
{
	const struct kagg_hist *x = a, *y = b;

	if (x->key.pid != y->key.pid)
		return x->key.pid < y->key.pid ? -1 : 1;
	return x->key.tid < y->key.tid ? -1 : x->key.tid > y->key.tid;
}

static int read_key_hists(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g,
			  bool reset)
{
	size_t vsz = sizeof(struct offcpu_key_hist), n, i, out = 0;
	struct offcpu_key_hist *vals = NULL;
	struct offcpu_key *keys = NULL;
	struct bpf_map *m = s->skel->maps.key_hist;
	int err, cpu, j;

	err = collect_keys(m, g, &keys, &n);
	if (err)
		return err;
	err = snap_alloc_hists(snap, n, OFFCPU_MAX_SLOTS);
	vals = calloc(s->nr_cpus, vsz);
	if (err || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct kagg_hist *h = &snap->hists[out];

		if (bpf_map__lookup_elem(m, &keys[i], sizeof(keys[i]), vals, vsz * s->nr_cpus, 0))
			continue; /* cannot happen: nobody else deletes old-generation keys */
		h->unit = s->unit;
		h->key.mode = s->key;
		h->key.pid = keys[i].tgid;
		h->key.tid = s->key == KAGG_KEY_TID ? (int)keys[i].pid : 0;
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			if (!h->key.comm[0] && vals[cpu].comm[0])
				memcpy(h->key.comm, vals[cpu].comm, sizeof(h->key.comm) - 1);
			for (j = 0; j < OFFCPU_MAX_SLOTS; j++) {
				((uint64_t *)h->slots)[j] += vals[cpu].slots[j];
				h->total += vals[cpu].slots[j];
			}
		}
		out++;
		if (reset)
			bpf_map__delete_elem(m, &keys[i], sizeof(keys[i]), 0);
	}
	snap->nr_hists = out;
	qsort(snap->hists, out, sizeof(*snap->hists), cmp_hist);
out:
	free(vals);
	free(keys);
	return err;
}

/* Read stack id `id` and symbolize its frames into an array owned by snap. */
static int read_frames(struct kagg_session *s, struct kagg_snapshot *snap, int id, int pid,
		       bool user, const struct kagg_frame **out, unsigned int *nr)
{
	__u64 ips[OFFCPU_MAX_STACK] = {};
	struct kagg_frame *fr;
	unsigned int n = 0, i;
	char buf[256];

	*out = NULL;
	*nr = 0;
	if (id < 0)
		return id;
	if (bpf_map__lookup_elem(s->skel->maps.stackmap, &id, sizeof(id), ips, sizeof(ips), 0))
		return -ENOENT;
	while (n < OFFCPU_MAX_STACK && ips[n])
		n++;
	fr = snap_own(snap, calloc(n ? n : 1, sizeof(*fr)));
	if (!fr)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct kagg_sym sym = {};
		int err;

		err = user ? kagg_syms__user(s->syms, pid, ips[i], &sym)
			   : kagg_syms__kernel(s->syms, ips[i], &sym);
		if (err && err != -ENOENT) /* ENOENT still names the module */
			memset(&sym, 0, sizeof(sym));
		fr[i].ip = ips[i];
		fr[i].sym = snap_strdup(snap, kagg_sym__format(&sym, ips[i], buf, sizeof(buf)));
		if (!fr[i].sym)
			return -ENOMEM;
	}
	*out = fr;
	*nr = n;
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct kagg_stack *x = a, *y = b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static int read_stacks(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	size_t vsz = sizeof(struct offcpu_stack_val), n, i, out = 0;
	struct bpf_map *m = s->skel->maps.stack_agg;
	struct offcpu_stack_val *vals = NULL;
	struct offcpu_key *keys = NULL;
	int err, cpu;

	err = collect_keys(m, g, &keys, &n);
	if (err)
		return err;
	snap->stacks = calloc(n ? n : 1, sizeof(*snap->stacks));
	vals = calloc(s->nr_cpus, vsz);
	if (!snap->stacks || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct kagg_stack *st = &snap->stacks[out];

		if (bpf_map__lookup_elem(m, &keys[i], sizeof(keys[i]), vals, vsz * s->nr_cpus, 0))
			continue;
		st->pid = keys[i].tgid;
		st->tid = keys[i].pid;
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			if (!st->comm[0] && vals[cpu].comm[0])
				memcpy(st->comm, vals[cpu].comm, sizeof(st->comm) - 1);
			st->total_ns += vals[cpu].total_ns;
			st->count += vals[cpu].count;
		}
		st->kstack_err = read_frames(s, snap, keys[i].kstack, st->pid, false,
					     &st->kframes, &st->nr_kframes);
		/* ustack -1 marks a kernel thread: no user stack by design. */
		if (keys[i].ustack == -1)
			st->ustack_err = -ENOENT;
		else
			st->ustack_err = read_frames(s, snap, keys[i].ustack, st->pid, true,
						     &st->uframes, &st->nr_uframes);
		if (st->kstack_err == -ENOMEM || st->ustack_err == -ENOMEM) {
			err = -ENOMEM;
			goto out;
		}
		out++;
		if (reset)
			bpf_map__delete_elem(m, &keys[i], sizeof(keys[i]), 0);
	}
	snap->nr_stacks = out;
	qsort(snap->stacks, out, sizeof(*snap->stacks), cmp_stack);
out:
	free(vals);
	free(keys);
	return err;
}

static void fill_meta(struct kagg_session *s, struct kagg_snapshot *snap, bool reset)
{
	struct kagg_meta *m = &snap->meta;
	uint64_t cnt[OFFCPU_CNT_MAX] = {}, *cpu_sw, rc = 0, rt = 0, rec = 0;
	struct timespec now_mono;
	int cpu;

	m->tool = "offcpu";
	m->event = "sched:sched_switch";
	m->attach = s->attach;
	m->attach_note = s->attach_note[0] ? snap_strdup(snap, s->attach_note) : NULL;
	m->kernel = snap_strdup(snap, s->uts.release);
	m->kernel_build = snap_strdup(snap, s->uts.version);
	m->clock = "CLOCK_MONOTONIC (bpf_ktime_get_ns)";
	m->filters = snap_strdup(snap, s->filters);
	m->unit = kagg_unit__name(s->unit);
	m->nr_cpus = s->nr_cpus;
	m->start = s->t0_real;
	clock_gettime(CLOCK_REALTIME, &m->end);
	clock_gettime(CLOCK_MONOTONIC, &now_mono);
	m->duration_s = (now_mono.tv_sec - s->t0_mono.tv_sec) +
			(now_mono.tv_nsec - s->t0_mono.tv_nsec) / 1e9;

	cpu_sw = calloc(s->nr_cpus, sizeof(uint64_t));
	if (cpu_sw && !read_counters(s, cnt, cpu_sw)) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			m->cpus_observed += cpu_sw[cpu] > s->cpu_switches0[cpu];
	}
	read_prog_stats(s, &rc, &rt, &rec);

	m->events_seen = cnt[OFFCPU_CNT_SWITCHES] - s->cnt0[OFFCPU_CNT_SWITCHES];
	m->events_recorded = cnt[OFFCPU_CNT_SAMPLES] - s->cnt0[OFFCPU_CNT_SAMPLES];
	m->events_filtered = cnt[OFFCPU_CNT_FILTERED_RANGE] - s->cnt0[OFFCPU_CNT_FILTERED_RANGE];
	snap_add_drop(snap, "task_storage", "switch-out not recorded: task storage busy or full",
		      cnt[OFFCPU_CNT_DROP_STORAGE] - s->cnt0[OFFCPU_CNT_DROP_STORAGE], true);
	snap_add_drop(snap, "keys_full", "interval not aggregated: per-key map full",
		      cnt[OFFCPU_CNT_DROP_KEYS_FULL] - s->cnt0[OFFCPU_CNT_DROP_KEYS_FULL], true);
	snap_add_drop(snap, "prog_recursion", "sched_switch not seen: program busy on this CPU",
		      rec - s->recursion0, true);
	if (s->stacks) {
		snap_add_drop(snap, "kstack", "kernel stack not captured (interval kept)",
			      cnt[OFFCPU_CNT_DROP_KSTACK] - s->cnt0[OFFCPU_CNT_DROP_KSTACK],
			      false);
		snap_add_drop(snap, "ustack", "user stack not captured (interval kept)",
			      cnt[OFFCPU_CNT_DROP_USTACK] - s->cnt0[OFFCPU_CNT_DROP_USTACK],
			      false);
	}
	m->snapshot_exact = s->exact;
	m->snapshot_note = s->exact ? NULL
				    : "not exact: membarrier(MEMBARRIER_CMD_GLOBAL) unavailable";
	if (s->stats_fd >= 0) {
		struct kagg_prog_cost *pc = &snap->progs[0];

		m->has_overhead = true;
		m->nr_progs = 1;
		m->progs = snap->progs;
		pc->prog = bpf_program__name(s->prog);
		pc->run_cnt = rc - s->run_cnt0;
		pc->run_time_ns = rt - s->run_time0;
		pc->ns_per_run = pc->run_cnt ? (double)pc->run_time_ns / pc->run_cnt : 0;
	}
	if (reset && cpu_sw) {
		memcpy(s->cnt0, cnt, sizeof(cnt));
		memcpy(s->cpu_switches0, cpu_sw, s->nr_cpus * sizeof(uint64_t));
		s->run_cnt0 = rc;
		s->run_time0 = rt;
		s->recursion0 = rec;
		s->t0_real = m->end;
		s->t0_mono = now_mono;
	}
	free(cpu_sw);
}

struct kagg_snapshot *kagg_session__snapshot(struct kagg_session *s, unsigned int flags)
{
	bool reset = flags & KAGG_SNAP_RESET;
	struct kagg_snapshot *snap;
	__u32 g;
	int err;

	if (!s || (flags & ~KAGG_SNAP_RESET)) {
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
	g = reset ? flip_generation(s) : s->skel->bss->gen & 1;
	/* Counters and times are read after the flip, so the interval boundary matches it. */
	fill_meta(s, snap, reset);
	if (s->key == KAGG_KEY_NONE)
		err = read_system_hist(s, snap, g, reset);
	else
		err = read_key_hists(s, snap, g, reset);
	if (!err && s->stacks)
		err = read_stacks(s, snap, g, reset);
	if (err) {
		kagg_snapshot__free(snap);
		errno = -err;
		return NULL;
	}
	return snap;
}
