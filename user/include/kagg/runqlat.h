/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/runqlat.h - run-queue latency sessions: the time from a task
 * becoming runnable (woken, or switched out still runnable) to its
 * switch-in, as log2 histograms aggregated in the kernel, or computed in
 * userspace from streamed events, or both side by side.
 *
 *	KAGG_OPTS(kagg_runqlat_opts, o, .key = KAGG_KEY_PID, .filter_cpu = true, .cpu = 1);
 *	struct kagg_session *s = kagg_runqlat__open(&o);
 *	kagg_session__attach(s);  ...  kagg_session__snapshot(s, KAGG_SNAP_RESET);
 */
#ifndef KAGG_RUNQLAT_H
#define KAGG_RUNQLAT_H

#include <kagg/common.h>
#include <kagg/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_runqlat_opts {
	size_t sz;
	enum kagg_unit unit;
	enum kagg_key_mode key; /* one histogram, per process or per thread */
	/* Only these processes / threads (NULL or 0 entries: all).  Each must exist at open. */
	const int *pids;
	size_t nr_pids;
	const int *tids;
	size_t nr_tids;
	/* Only tasks in this cgroup v2 directory (or below it). */
	const char *cgroup;
	/* With filter_cpu: only latencies ending on run queue (CPU) `cpu`. */
	bool filter_cpu;
	unsigned int cpu;
	enum kagg_attach attach;
	/* Measure the BPF programs' own run time (BPF_ENABLE_STATS). */
	bool overhead;
	kagg_log_fn log;
	void *log_ctx;
	/*
	 * --- streaming (appended in 0.1) ---
	 * KAGG_MODE_STREAM: one record per sched_wakeup, sched_wakeup_new and
	 * sched_switch through a BPF ring buffer; the histograms are computed
	 * in userspace and the records land in the session's reference ftrace
	 * buffer (kagg_session__ringbuf()) as the kernel's events.
	 * KAGG_MODE_BOTH: both paths on the same events; the streamed
	 * histograms are kagg_snapshot__stream().
	 */
	enum kagg_mode mode;
	size_t stream_bytes; /* BPF ring buffer size, power of 2 >= 4096; 0: 8 MiB */
	/* Directory holding sched/<event>/format; NULL: /sys/kernel/tracing/events,
	 * falling back to a built-in copy of the kernel's layouts. */
	const char *events_dir;
	/* Reference ftrace ring buffer: sub-buffers per CPU (0: 128); producer/consumer mode. */
	size_t rb_subbufs;
	bool rb_consume;
	/* Which streamed events land in it (KAGG_RUNQLAT_EV_* bits; 0: all three).
	 * The streamed histograms use every event either way. */
	unsigned int land_events;
	/* Appended after 0.1: buckets, as kagg_offcpu_opts has them (both paths). */
	enum kagg_buckets buckets;
	int exp_scale;
	/*
	 * Appended after 0.1: with -P/-L (key) and KAGG_BUCKETS_EXP, the exp buckets are
	 * sparse, at most exp_cells (process or thread, bucket) cells (0: 16384); a latency
	 * whose cell cannot be made is dropped, counted as "exp_cells".
	 */
	unsigned int exp_cells;
};
#define kagg_runqlat_opts__last_field exp_cells

enum kagg_runqlat_event {
	KAGG_RUNQLAT_EV_WAKEUP = 1 << 0,     /* sched:sched_wakeup */
	KAGG_RUNQLAT_EV_WAKEUP_NEW = 1 << 1, /* sched:sched_wakeup_new */
	KAGG_RUNQLAT_EV_SWITCH = 1 << 2,     /* sched:sched_switch */
};

/*
 * Open and load the runqlat programs (sched_wakeup, sched_wakeup_new,
 * sched_switch); nothing is attached yet.
 * errno: EINVAL bad opts (cpu not a possible CPU), ESRCH a pid/tid does not
 * exist, ENOENT/ENOTDIR cgroup path, EPERM/EACCES no privileges,
 * EOPNOTSUPP kernel lacks what is needed (the log callback says what).
 */
KAGG_API struct kagg_session *kagg_runqlat__open(const struct kagg_runqlat_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_RUNQLAT_H */
