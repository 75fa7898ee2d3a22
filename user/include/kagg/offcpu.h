/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/offcpu.h - off-CPU time sessions: how long tasks stay switched out,
 * from sched_switch, as log2 histograms (optionally per process or thread,
 * and by kernel + user stack) aggregated in the kernel, or computed in
 * userspace from streamed events, or both side by side.
 *
 *	KAGG_OPTS(kagg_offcpu_opts, o, .unit = KAGG_UNIT_USECS, .key = KAGG_KEY_PID);
 *	struct kagg_session *s = kagg_offcpu__open(&o);
 *	kagg_session__attach(s);  ...  kagg_session__snapshot(s, KAGG_SNAP_RESET);
 */
#ifndef KAGG_OFFCPU_H
#define KAGG_OFFCPU_H

#include <kagg/common.h>
#include <kagg/session.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which tasks are measured. */
enum kagg_threads {
	KAGG_THREADS_ALL = 0,
	KAGG_THREADS_USER = 1,	 /* user threads only */
	KAGG_THREADS_KERNEL = 2, /* kernel threads only */
};

/*
 * One streamed sched_switch, as handed to kagg_offcpu_opts.on_switch; valid
 * during the call only.  The library sets sz to the size it filled: the
 * record carries its size so that fields can be appended (read one added
 * after your library's release only when KAGG_HAS_FIELD(ev, kagg_sched_switch, f)).
 */
struct kagg_sched_switch {
	size_t sz;
	uint64_t ts; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	int cpu;
	int prev_pid, prev_tgid, prev_prio;
	int next_pid, next_tgid, next_prio;
	uint32_t
		prev_state; /* sched_switch's value: 0x100 preempted, else 1 << (state index - 1) */
	bool selected;	    /* prev passed the session's filters */
	char prev_comm[16];
	char next_comm[16];
};

typedef void (*kagg_switch_fn)(void *ctx, const struct kagg_sched_switch *ev);

struct kagg_offcpu_opts {
	size_t sz;
	enum kagg_unit unit;
	enum kagg_key_mode key;
	/* Only these processes / threads (NULL or 0 entries: all).  Each must exist at open. */
	const int *pids;
	size_t nr_pids;
	const int *tids;
	size_t nr_tids;
	/* Only tasks in this cgroup v2 directory (or below it). */
	const char *cgroup;
	/* Task states at switch-out to keep, as the kernel's letters "RSDTtPI"; NULL: all. */
	const char *states;
	/* Keep off-CPU intervals within [min_ns, max_ns]; max_ns 0 means no upper bound. */
	uint64_t min_ns;
	uint64_t max_ns;
	enum kagg_threads threads;
	/* Also aggregate off-CPU time by kernel + user stack. */
	bool stacks;
	enum kagg_attach attach;
	/* Measure the BPF programs' own run time (BPF_ENABLE_STATS) for this session. */
	bool overhead;
	kagg_log_fn log;
	void *log_ctx;
	/* --- streaming (KAGG_MODE_STREAM / KAGG_MODE_BOTH) --- */
	enum kagg_mode mode;
	size_t stream_bytes; /* BPF ring buffer size, power of 2 >= 4096; 0: 8 MiB */
	enum kagg_wake wake;
	size_t wake_bytes; /* KAGG_WAKE_WATERMARK threshold; 0: stream_bytes / 4 */
	/* Reference ftrace ring buffer the records land in: sub-buffers per CPU (0: 128). */
	size_t rb_subbufs;
	bool rb_consume; /* producer/consumer mode (newest refused) instead of overwrite */
	/* Called from kagg_session__poll() for every streamed record. */
	kagg_switch_fn on_switch;
	void *on_switch_ctx;
	/* Directory holding sched/sched_switch/format; NULL: /sys/kernel/tracing/events,
	 * falling back to a built-in copy of the kernel's layout. */
	const char *events_dir;
	/*
	 * Appended after 0.1: KAGG_BUCKETS_EXP buckets the times exponentially, scale
	 * exp_scale 0..5 (kagg_hist.has_exp), on both paths; with a key, sparse: at most 16384
	 * (process or thread, bucket) cells, an interval whose cell cannot be made is dropped,
	 * counted as "exp_cells".
	 */
	enum kagg_buckets buckets;
	int exp_scale;
	/* Appended after 0.2: with stacks, how user stacks are walked, and the unwind tables'
	 * cap in rows (8 bytes each, all files together; 0: 1572864, 12 MiB). */
	enum kagg_unwind unwind;
	size_t unwind_rows;
};
#define kagg_offcpu_opts__last_field unwind_rows

/*
 * Open and load the offcpu programs; nothing is attached yet.
 * errno: EINVAL bad opts, ESRCH a pid/tid does not exist, ENOENT cgroup path,
 * EPERM/EACCES no privileges (CAP_BPF + CAP_PERFMON or root needed),
 * EOPNOTSUPP kernel lacks what is needed (the log callback says what).
 */
KAGG_API struct kagg_session *kagg_offcpu__open(const struct kagg_offcpu_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_OFFCPU_H */
