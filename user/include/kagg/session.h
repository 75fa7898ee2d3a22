/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/session.h - a measurement session: one tool's BPF programs opened,
 * loaded, attached, read as exact snapshots, and torn down.
 *
 *	KAGG_OPTS(kagg_offcpu_opts, o, .unit = KAGG_UNIT_USECS);
 *	struct kagg_session *s = kagg_offcpu__open(&o);     // loads, does not attach
 *	kagg_session__attach(s);
 *	...
 *	struct kagg_snapshot *snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *	kagg_snapshot__print(snap, stdout, NULL);
 *	kagg_snapshot__free(snap);
 *	kagg_session__destroy(s);                             // detaches, unloads everything
 *
 * Thread-safety: a session is not thread-safe; use one thread per session or
 * serialise calls.  Different sessions are independent and may be used from
 * different threads at once.  A snapshot is immutable once returned and may
 * be read from any thread.
 */
#ifndef KAGG_SESSION_H
#define KAGG_SESSION_H

#include <stdio.h>
#include <time.h>
#include <kagg/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kagg_unit {
	KAGG_UNIT_USECS = 0,
	KAGG_UNIT_NSECS = 1,
	KAGG_UNIT_MSECS = 2,
};

/* What one histogram stands for. */
enum kagg_key_mode {
	KAGG_KEY_NONE = 0, /* one system-wide (or filter-wide) histogram */
	KAGG_KEY_PID = 1,  /* one per process */
	KAGG_KEY_TID = 2,  /* one per thread */
};

enum kagg_attach {
	KAGG_ATTACH_AUTO = 0,	/* tp_btf, falling back to raw_tp when it cannot load */
	KAGG_ATTACH_TP_BTF = 1,
	KAGG_ATTACH_RAW_TP = 2,
};

enum kagg_threads {
	KAGG_THREADS_ALL = 0,
	KAGG_THREADS_USER = 1,	 /* user threads only */
	KAGG_THREADS_KERNEL = 2, /* kernel threads only */
};

/* Unit name ("usecs"...), NULL for an unknown value. */
KAGG_API const char *kagg_unit__name(enum kagg_unit unit);
/* Parse "nsecs"/"usecs"/"msecs" (also "ns", "us", "ms"); 0 or -EINVAL. */
KAGG_API int kagg_unit__parse(const char *s, enum kagg_unit *unit);

/* How a source is consumed. */
enum kagg_mode {
	KAGG_MODE_AGG = 0,	/* aggregate in the kernel (maps) */
	KAGG_MODE_STREAM = 1,	/* stream one record per event, aggregate in userspace */
	KAGG_MODE_BOTH = 2,	/* both at once, on the same events, side by side */
};

/* Wakeup policy of streaming programs. */
enum kagg_wake {
	KAGG_WAKE_WATERMARK = 0, /* wake when wake_bytes are pending (and poll every 100 ms) */
	KAGG_WAKE_ADAPTIVE = 1,	 /* the kernel wakes the consumer whenever it has caught up */
	KAGG_WAKE_TIMER = 2,	 /* never woken: the consumer polls every poll interval */
	KAGG_WAKE_EVERY = 3,	 /* a wakeup per record */
};

/* One streamed sched_switch, as handed to kagg_offcpu_opts.on_switch. */
struct kagg_sched_switch {
	uint64_t ts; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
	int cpu;
	int prev_pid, prev_tgid, prev_prio;
	int next_pid, next_tgid, next_prio;
	uint32_t prev_state; /* sched_switch's value: 0x100 preempted, else 1 << (state index - 1) */
	bool selected;	     /* prev passed the session's filters */
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
	size_t stream_bytes;	 /* BPF ring buffer size, power of 2 >= 4096; 0: 8 MiB */
	enum kagg_wake wake;
	size_t wake_bytes;	 /* KAGG_WAKE_WATERMARK threshold; 0: stream_bytes / 4 */
	/* Reference ftrace ring buffer the records land in: sub-buffers per CPU (0: 128). */
	size_t rb_subbufs;
	bool rb_consume;	 /* producer/consumer mode (newest refused) instead of overwrite */
	/* Called from kagg_session__poll() for every streamed record. */
	kagg_switch_fn on_switch;
	void *on_switch_ctx;
	/* Directory holding sched/sched_switch/format; NULL: /sys/kernel/tracing/events,
	 * falling back to a built-in copy of the kernel's layout. */
	const char *events_dir;
};

struct kagg_session;

/*
 * Open and load the offcpu programs; nothing is attached yet.
 * errno: EINVAL bad opts, ESRCH a pid/tid does not exist, ENOENT cgroup path,
 * EPERM/EACCES no privileges (CAP_BPF + CAP_PERFMON or root needed),
 * EOPNOTSUPP kernel lacks what is needed (the log callback says what).
 */
KAGG_API struct kagg_session *kagg_offcpu__open(const struct kagg_offcpu_opts *opts);

/* Attach the loaded programs.  0 or -errno; -EALREADY when attached. */
KAGG_API int kagg_session__attach(struct kagg_session *s);

/*
 * Consume streamed records (calling on_switch, feeding the userspace
 * histograms and the reference ring buffer), waiting up to timeout_ms for
 * some to arrive.  Returns the number consumed or -errno (-EINTR on a
 * signal).  For sessions that do not stream it just waits.  Call it often
 * enough that the BPF ring buffer does not fill up (losses are counted).
 * Sessions with user stacks (offcpu --stacks, profile) also read here the
 * mappings of each process as it first shows up in a stack, so that it is
 * symbolized even if it exits before the snapshot: call it while they run
 * (every 100 ms or so) rather than sleeping.
 */
KAGG_API int kagg_session__poll(struct kagg_session *s, int timeout_ms);

struct kagg_rb;
struct kagg_rb_events;
/* The reference ftrace ring buffer streamed records land in (NULL when not streaming). */
KAGG_API struct kagg_rb *kagg_session__ringbuf(struct kagg_session *s);
/* The event formats of the records in that buffer (sched/sched_switch). */
KAGG_API const struct kagg_rb_events *kagg_session__events(struct kagg_session *s);

/* Detach (programs and maps stay loaded, data is kept).  0 or -errno. */
KAGG_API int kagg_session__detach(struct kagg_session *s);

/* Detach, unload and free everything.  NULL-safe. */
KAGG_API void kagg_session__destroy(struct kagg_session *s);

/* ------------------------------------------------------------ snapshots */

#define KAGG_SNAP_RESET (1u << 0)	/* start a new interval: the next snapshot counts from here */
#define KAGG_SNAP_ADDRS (1u << 1)	/* stack frames by address ("f+0x1a"), see kagg_frame */

struct kagg_snapshot;

/*
 * Read what was aggregated since attach (or since the last KAGG_SNAP_RESET).
 * With KAGG_SNAP_RESET the read is exact: every event lands in exactly one
 * snapshot (see meta->snapshot_exact).  Without it, later snapshots keep
 * accumulating.  KAGG_SNAP_ADDRS: stack frames by address (see kagg_frame).
 * NULL + errno: EINVAL (NULL session, unknown flag), ENOTCONN (never attached),
 * ENOMEM, or a map read error.
 */
KAGG_API struct kagg_snapshot *kagg_session__snapshot(struct kagg_session *s, unsigned int flags);

KAGG_API void kagg_snapshot__free(struct kagg_snapshot *snap);

/* A histogram key: which process/thread the histogram is for. */
struct kagg_hist_key {
	enum kagg_key_mode mode; /* KAGG_KEY_NONE: pid/tid/comm unused */
	int pid;
	int tid;		 /* KAGG_KEY_TID only */
	char comm[16];
	uint64_t id;		 /* tool-defined id (syscall number, function...), 0 unused */
	const char *label;	 /* name of id ("read", "vfs_read"...), NULL when none */
};

/* One log2 histogram: slot k counts values in [2^k, 2^(k+1)-1] (slot 0: [0, 1]). */
struct kagg_hist {
	struct kagg_hist_key key;
	enum kagg_unit unit;
	unsigned int nr_slots;
	const uint64_t *slots;
	uint64_t total; /* sum of slots */
	/* Since 0.1: what is counted when not a time in unit (kagg hist: the field's name). */
	const char *value;
	/* lin_step > 0: linear slot k is [lin_min + k*lin_step, lin_min + (k+1)*lin_step - 1]. */
	int64_t lin_min;
	uint64_t lin_step;
};

/* Bounds of log2 slot k, inclusive; k < 64. */
KAGG_API void kagg_log2_bounds(unsigned int k, uint64_t *low, uint64_t *high);

/*
 * In KAGG_MODE_BOTH, the streaming path's histograms (read them with the
 * same accessors); NULL otherwise.  Owned by snap.
 */
KAGG_API const struct kagg_snapshot *kagg_snapshot__stream(const struct kagg_snapshot *snap);

KAGG_API size_t kagg_snapshot__hist_cnt(const struct kagg_snapshot *snap);
/* Histogram i (sorted by key), NULL + EINVAL when out of range. Owned by snap. */
KAGG_API const struct kagg_hist *kagg_snapshot__hist(const struct kagg_snapshot *snap, size_t i);

/*
 * One aggregated stack (offcpu --stacks, profile), frames innermost first, already symbolized.
 * A frame is named by its function: C++ and Rust names demangled ("ns::Class::func(int)"),
 * symbol versions left out ("clock_nanosleep", not "clock_nanosleep@@GLIBC_2.17"); a frame
 * with no symbol is "[file]" (the mapped file's base name) or "[unknown]".  Stacks that then
 * read the same are one stack, their counts and times summed.  With KAGG_SNAP_ADDRS frames
 * are "func+0x1a", "/path/file+0x1a" or "[unknown] 0xADDR" and only stacks captured alike
 * are merged.  Kernel stacks start at the traced event: the BPF program and the tracing glue
 * that ran it are left out.
 */
struct kagg_frame {
	uint64_t ip;	 /* the address (of the first stack merged into this one) */
	const char *sym; /* the frame's name, as above; owned by the snapshot */
};

struct kagg_stack {
	int pid;
	int tid;
	char comm[16];
	uint64_t total_ns;
	uint64_t count;
	int kstack_err; /* 0, -ENOENT when not captured by design, or the capture's negative errno */
	int ustack_err; /* 0, -ENOENT for kernel threads, or the capture's negative errno */
	unsigned int nr_kframes;
	unsigned int nr_uframes;
	const struct kagg_frame *kframes;
	const struct kagg_frame *uframes;
};

KAGG_API size_t kagg_snapshot__stack_cnt(const struct kagg_snapshot *snap);
/* Stack i, sorted by total time (largest first). Owned by snap. */
KAGG_API const struct kagg_stack *kagg_snapshot__stack(const struct kagg_snapshot *snap, size_t i);

/* ------------------------------------------------------------ meta */

/* A drop (or a capture failure) by cause.  Zero counts are listed too. */
struct kagg_drop {
	const char *cause;	/* short name, e.g. "task_storage" */
	const char *what;	/* one line: what was lost */
	uint64_t count;
};

/* BPF_ENABLE_STATS figures of one program, over the snapshot's interval. */
struct kagg_prog_cost {
	const char *prog;
	uint64_t run_cnt;
	uint64_t run_time_ns;
	double ns_per_run; /* run_time_ns / run_cnt, 0 when run_cnt is 0 */
};

/*
 * What a snapshot measured.  Owned by the snapshot; read-only.  New fields
 * are only appended.
 */
struct kagg_meta {
	const char *tool;	 /* "offcpu" */
	const char *event;	 /* "sched:sched_switch" */
	const char *attach;	 /* attach type used: "tp_btf" or "raw_tp" */
	const char *attach_note; /* why a fallback was used, or NULL */
	const char *kernel;	 /* uname -r */
	const char *kernel_build;/* uname -v */
	const char *clock;	 /* clock of the BPF timestamps */
	const char *filters;	 /* human-readable filters, "none" when none */
	const char *unit;
	int nr_cpus;		 /* possible CPUs */
	int cpus_observed;	 /* CPUs on which the program ran in this interval */
	struct timespec start;	 /* CLOCK_REALTIME, interval start */
	struct timespec end;	 /* CLOCK_REALTIME, interval end */
	double duration_s;
	uint64_t events_seen;	  /* program runs (sched_switch events) */
	uint64_t events_recorded; /* intervals aggregated */
	/* left out by the tool's filters (offcpu -m/-M, runqlat --cpu, hist --filter): not lost */
	uint64_t events_filtered;
	size_t nr_drops;
	const struct kagg_drop *drops;
	uint64_t drops_total;	  /* sum of drops that lost an interval (capture failures excluded) */
	bool snapshot_exact;	  /* reset reads are exact (see kagg_session__snapshot) */
	const char *snapshot_note;
	bool has_overhead;
	size_t nr_progs;
	const struct kagg_prog_cost *progs;
	/* Streaming (mode "stream" or "both"). */
	const char *mode;	   /* "agg", "stream" or "both" */
	bool has_stream;
	uint64_t stream_seen;	   /* events the streaming program ran for */
	uint64_t stream_sent;	   /* records it submitted */
	uint64_t stream_delivered; /* records consumed in userspace */
	uint64_t stream_dropped;   /* records lost: BPF ring buffer full */
	uint64_t stream_bytes;	   /* bytes moved to userspace (records + headers) */
	double consumer_cpu_s;	   /* CPU time spent consuming */
	const char *stream_format; /* where the sched_switch format came from */
	uint64_t rb_overrun;	   /* records overwritten in the reference ring buffer */
	uint64_t rb_dropped;	   /* records refused by it (producer/consumer mode) */
	/*
	 * With overhead and a stream: each path's BPF run time per event
	 * (events_seen), summed over its programs; 0 for a path not running.
	 */
	double agg_ns_per_event;
	double stream_ns_per_event;
	/*
	 * Stacks (offcpu --stacks, profile): the frames of the captured stacks (each distinct
	 * capture once, before the stacks that read the same are merged) and those left
	 * unknown, by cause.  has_frames is false for snapshots without stacks.
	 */
	bool has_frames;
	uint64_t frames;
	uint64_t frames_no_maps;    /* user address in no file mapping known for its process:
				     * it exited before its mappings could be read, or the code
				     * is anonymous memory (JIT) */
	uint64_t frames_no_symbols; /* inside a known file or the kernel, no symbol covers it */
	uint64_t stacks_lost;	    /* stacks that were to be captured and are not there */
};

KAGG_API const struct kagg_meta *kagg_snapshot__meta(const struct kagg_snapshot *snap);

/* ------------------------------------------------------------ printing */

enum kagg_format {
	KAGG_FORMAT_TEXT = 0,
	KAGG_FORMAT_JSON = 1,
};

struct kagg_print_opts {
	size_t sz;
	enum kagg_format format;
	bool no_meta;	/* text: leave out the "# ..." header lines */
	bool folded;	/* stacks as folded lines "comm;frame;frame count" (text only) */
};

/*
 * Print a snapshot: text (BCC-style histograms, meta header, stacks) or one
 * JSON document {"meta": {...}, "histograms": [...], "stacks": [...]}.
 * 0 or -errno (EINVAL bad args, EIO write error).
 */
KAGG_API int kagg_snapshot__print(const struct kagg_snapshot *snap, FILE *f,
				  const struct kagg_print_opts *opts);

/* Print one histogram in BCC text form (header line, then "low -> high : count |***|"). */
KAGG_API int kagg_hist__print_text(const struct kagg_hist *h, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_SESSION_H */
