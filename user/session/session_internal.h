/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the generic half of a session, shared by every tool.
 *
 * A tool (user/builtin/offcpu.c, ...) opens its skeleton, fills the session's program
 * list, its `gen` pointer and its counters map, and supplies session_ops for
 * what only it knows (reading its aggregates into a snapshot, naming its
 * drops).  The generic half attaches and detaches, keeps the interval
 * baselines, flips generations with an RCU grace period for exact resets,
 * measures BPF run time, and builds the meta block.
 */
#ifndef KAGG_SESSION_INT_H
#define KAGG_SESSION_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/utsname.h>
#include <time.h>
#include <bpf/libbpf.h>

#include <kagg/session.h>
#include "shared/common.h"
#include "snapshot/snapshot_internal.h"
#include "util/cgroup.h"
#include "util/opts.h"
#include "util/u64map.h"

#define SESSION_MAX_PROGS 8
#define SESSION_MAX_COUNTERS 32

/*
 * The "kernel_gaps" cause of the scheduler tools: not a loss of theirs, what the kernel did
 * not deliver (a tool counts what it lost by it under a cause of its own).
 */
#define SESSION_KERNEL_GAPS_WHAT                                                               \
	"switches the kernel did not deliver: a CPU's switch did not start from the task its " \
	"previous one went to (not counted in the drops)"

struct kagg_session;
struct scons;
struct bpfrb;
struct schain;

struct session_ops {
	const char *tool;
	size_t opts_size;  /* sizeof the tool's public opts struct */
	size_t opts_known; /* up to the end of its last field (OPTS_END) */
	/* where that struct keeps the fields every tool's opts have */
	size_t opts_log, opts_log_ctx, opts_overhead;
	size_t tool_size; /* the tool's state, zeroed, in s->tool (freed after destroy) */
	/*
	 * The tool's part of session_open(), on its own copy of the caller's
	 * opts (s->log, log_ctx and overhead already taken from it): check
	 * the opts and load the programs (s->progs, gen, counters, event,
	 * attach_type...).  0 or -errno; on an error the session is destroyed
	 * (destroy included).
	 */
	int (*open)(struct kagg_session *s, void *opts);
	/* Read generation g into snap (histograms, stacks); clear it when reset. */
	int (*read)(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset);
	/* Streaming tools: the same of the streamed path (read alone in path stream). */
	int (*read_stream)(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset);
	/*
	 * Streaming tools, when the session streams: after open, start the
	 * consumer on the same opts (session_stream_started).  0 or -errno.
	 */
	int (*stream_init)(struct kagg_session *s, const void *opts);
	/*
	 * Fill events_recorded/events_filtered and the tool's drops from the
	 * counter deltas of the interval (cnt[i] = now - baseline); the
	 * stream's part (scons_meta) is already filled when the session streams.
	 */
	void (*meta)(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
		     bool reset);
	/* Attach program i yourself (uprobes, perf events); NULL: bpf_program__attach. */
	struct bpf_link *(*attach)(struct kagg_session *s, int i);
	/* Release what the tool state holds (skeleton, fds); the session frees the state. */
	void (*destroy)(struct kagg_session *s);
	/* Optional: at each kagg_session__poll(), before it waits. */
	void (*poll)(struct kagg_session *s);
	/*
	 * Optional: at kagg_session__attach() after a detach, before the programs attach
	 * again: forget what was known of the events before (the scheduler tools' chains of
	 * switches, session_chain_forget()), which the events missed meanwhile make stale.
	 */
	void (*reattach)(struct kagg_session *s);
};

/* A process's last handled note (bpf/proc_notes.bpf.h): what its maps were read for. */
struct note_seen {
	uint64_t mm;
	uint32_t exec_pages;
	uint32_t reads; /* of this mm's maps: capped (NOTE_MAX_READS) */
	uint32_t tgid;
};

struct kagg_session {
	const struct session_ops *ops;
	void *tool;	      /* the tool's own state */
	const void *open_arg; /* session_open_arg()'s arg, for ops->open only */
	/* kernel features, probed on first use: 1 has it, -1 lacks it, 0 not probed yet */
	int feat_task_storage, feat_attach_cookie, feat_atomics, feat_loop, feat_task_regs;

	struct bpf_program *progs[SESSION_MAX_PROGS];
	struct bpf_link *links[SESSION_MAX_PROGS];
	int nr_progs;
	int nr_agg_progs;	  /* progs[0, nr_agg_progs) aggregate, the rest stream */
	volatile __u32 *gen;	  /* in the program's mmap'd .bss */
	__u32 snap_gen;		  /* the generation the snapshot being taken reads */
	volatile __u32 *armed;	  /* optional: set once all programs are attached */
	struct bpf_map *counters; /* per-CPU array, one entry of u64[nr_counters]; [0] = events */
	int nr_counters;

	kagg_log_fn log;
	void *log_ctx;
	enum kagg_unit unit;
	enum kagg_key_mode key;
	/* What the BPF histograms' sums add: ns (shown in unit), or kagg hist's raw values. */
	enum session_sum { SESSION_SUM_NS, SESSION_SUM_U64, SESSION_SUM_S64 } sum;
	/* Exp buckets (session_exp_setup): words of an exp_hist value, 0 for log2 buckets. */
	unsigned int exp_words;
	int exp_scale;
	int64_t exp_base;
	unsigned int exp_cells; /* cap of a KAGG_EXP_CELLS_MAP, 0 when none */
	bool overhead;		/* measure the programs' run time (BPF_ENABLE_STATS) */
	bool attached;
	bool ever_attached;
	bool exact; /* membarrier(MEMBARRIER_CMD_GLOBAL) available */
	int stats_fd;
	int cgroup_fd;	    /* session_tasks_open(): the cgroup filter's directory, or -1 */
	struct cg_paths cg; /* KAGG_KEY_CGROUP: the paths of the ids read */
	int nr_cpus;
	const char *event;
	const char *clock;
	char attach_type[32];
	char attach_note[320];
	char filters[512];
	size_t filters_len; /* what session_filters_add() wrote, or would have */
	struct utsname uts;

	/* Baselines at the start of the current interval. */
	struct timespec t0_real, t0_mono;
	uint64_t cnt0[SESSION_MAX_COUNTERS];
	uint64_t *cpu_events0;
	uint64_t run_cnt0[SESSION_MAX_PROGS], run_time0[SESSION_MAX_PROGS];
	uint64_t recursion0[SESSION_MAX_PROGS];
	/*
	 * Set by ops->meta: of the aggregating programs' run time in the interval, the ns
	 * they spent streaming (a program that does both, --mode both with overhead).
	 */
	uint64_t stream_part_ns;

	struct syms *syms;	 /* created by tools that read stacks */
	struct bpfrb *notes;	 /* tools with user stacks: processes first seen (proc_notes) */
	struct unwl *unw;	 /* unwind tables of the processes noted */
	const char *unwind_mode; /* "fp", "table", "auto"; NULL without user stacks */
	/* The thread loading tables (user/session/unwind.c), and what it has still to load */
	pthread_t unw_thread;
	bool unw_thread_on, unw_quit;
	pthread_mutex_t unw_mu; /* of unw_pending*, unw_quit */
	pthread_cond_t unw_cv;
	int *unw_pending; /* processes noted, [unw_pending_head, unw_pending_n) to load */
	size_t unw_pending_head, unw_pending_n, unw_pending_cap;
	struct bpf_map *ustacks;     /* table-walked user stacks (bpf/unwind.bpf.h) */
	bool ustacks_gen;	     /* their ids carry the generation: deleted once it is read */
	uint64_t unw_full0;	     /* unwind_table_full at the start of the interval */
	uint64_t unw_procs_full0;    /* unwind_procs_full likewise */
	struct u64map notes_seen;    /* tgid -> its entry of notes_arr */
	struct note_seen *notes_arr; /* per process: the last note handled */
	size_t notes_n, notes_cap;
	uint64_t forgot_ns; /* CLOCK_MONOTONIC of the last session_forget_gone() pass */
	const volatile __u64 *notes_lost; /* the BPF object's proc_notes_lost */
	uint64_t notes_lost0;		  /* its value at the start of the interval */
	struct kagg_rb *rb;		  /* streaming tools: the reference ftrace ring buffer */
	struct kagg_rb_events *rb_events;
	enum kagg_mode path; /* where events go: agg (the default), stream or both */
	/*
	 * Streaming tools: their consumer and record handler.  The session
	 * polls it (kagg_session__poll) and drains it after a generation flip,
	 * before meta and read.
	 */
	struct scons *stream;
	void (*stream_fn)(void *ctx, const void *data, uint32_t len);
	void *stream_ctx;
};

/*
 * A streaming tool's path, where its events go (agg, stream or both; not
 * checked), and its BPF ring's size (*bytes: 0 becomes STREAM_DEFAULT_BYTES).
 */
void session_use_path(struct kagg_session *s, enum kagg_mode mode, size_t *bytes);
/*
 * A streaming tool's open, first: the session's unit, key and traced events
 * (as the meta names them), then its path (session_use_path).
 */
void session_open_stream(struct kagg_session *s, enum kagg_unit unit, enum kagg_key_mode key,
			 const char *event, enum kagg_mode mode, size_t *bytes);

/* The session's events go to the stream (path stream or both). */
static inline bool session_streams(const struct kagg_session *s)
{
	return s->path != KAGG_MODE_AGG;
}

/*
 * Whether mode is a path (agg, stream or both) and bytes a BPF ring size: 0 (the
 * default) or a power of two >= 4096.
 */
static inline bool session_stream_opts_ok(enum kagg_mode mode, size_t bytes)
{
	return (unsigned int)mode <= KAGG_MODE_BOTH &&
	       (!bytes || (bytes >= 4096 && !(bytes & (bytes - 1))));
}

/* session_stream_opts_ok(), or -EINVAL with the reason logged. */
int session_check_stream(struct kagg_session *s, enum kagg_mode mode, size_t bytes);

/* "agg", "stream" or "both". */
const char *session_mode_name(enum kagg_mode mode);
/*
 * A streaming tool's consumer c, once its init returned err (0, or -errno
 * with the reason in msg): handed to the session with its record handler
 * (the session polls it and drains it after a generation flip), or the
 * reason logged.  Returns err.
 */
int session_stream_started(struct kagg_session *s, int err, const char *msg, struct scons *c,
			   void (*fn)(void *ctx, const void *data, uint32_t len), void *ctx);
/*
 * session_stream_started() for a tool's consumer ST (a struct with its
 * struct scons core), set up from CFG by INIT(ST, CFG, msg, msg_len) and
 * fed records by ON_RECORD(ST, data, len).  Evaluates to 0 or -errno.
 */
#define SESSION_STREAM_START(s, INIT, ST, CFG, ON_RECORD)                                    \
	({                                                                                   \
		char ss_msg_[256] = "";                                                      \
		int ss_err_ = INIT((ST), (CFG), ss_msg_, sizeof(ss_msg_));                   \
                                                                                             \
		session_stream_started((s), ss_err_, ss_msg_, &(ST)->core, ON_RECORD, (ST)); \
	})
/*
 * The consumer configuration every streaming tool shares, from its skeleton
 * (maps events and stream_cnt) and its opts o (stream_bytes, events_dir);
 * more designated fields (.rb_subbufs = ...) may follow.
 */
#define SESSION_SCONS_CFG(s, skel, o, ...)                                   \
	((struct scons_cfg){ .map_fd = bpf_map__fd((skel)->maps.events),     \
			     .cnt_fd = bpf_map__fd((skel)->maps.stream_cnt), \
			     .map_bytes = (o)->stream_bytes,                 \
			     .nr_cpus = (s)->nr_cpus,                        \
			     .events_dir = (o)->events_dir,                  \
			     __VA_ARGS__ })

/*
 * Every tool's kagg_TOOL__open(): check the caller's opts (opts_copy:
 * NULL or unknown trailing bytes -> EINVAL), allocate a session with the
 * tool's state, run ops->open on a copy of the opts, then get the session
 * ready (stats fd with overhead, membarrier probe).  The session, or NULL
 * with errno set (the session destroyed).
 */
struct kagg_session *session_open(const struct session_ops *ops, const void *opts);
/* session_open() that hands ops->open one more argument, as s->open_arg (NULL after). */
struct kagg_session *session_open_arg(const struct session_ops *ops, const void *opts,
				      const void *arg);
/*
 * A tool's session_ops, NAME_ops, and its public kagg_NAME__open(): the tool
 * writes NAME_open, NAME_read, NAME_meta and NAME_destroy (see session_ops)
 * and its state STATE; the optional hooks (.attach, .read_stream) follow.
 */
#define SESSION_TOOL(NAME, STATE, ...) SESSION_TOOL_API(NAME, NAME, STATE, __VA_ARGS__)

/* SESSION_TOOL for a tool whose API object is named apart: kagg_API__open() opens tool NAME. */
#define SESSION_TOOL_API(API, NAME, STATE, ...)                                       \
	static const struct session_ops NAME##_ops = {                                \
		.tool = #NAME,                                                        \
		.opts_size = sizeof(struct kagg_##API##_opts),                        \
		.opts_known = OPTS_END(kagg_##API##_opts),                            \
		.opts_log = offsetof(struct kagg_##API##_opts, log),                  \
		.opts_log_ctx = offsetof(struct kagg_##API##_opts, log_ctx),          \
		.opts_overhead = offsetof(struct kagg_##API##_opts, overhead),        \
		.tool_size = sizeof(STATE),                                           \
		.open = NAME##_open,                                                  \
		.read = NAME##_read,                                                  \
		.meta = NAME##_meta,                                                  \
		.destroy = NAME##_destroy,                                            \
		__VA_ARGS__                                                           \
	};                                                                            \
	struct kagg_session *kagg_##API##__open(const struct kagg_##API##_opts *opts) \
	{                                                                             \
		return session_open(&NAME##_ops, opts);                               \
	}

/*
 * s->filters, as the meta prints it: session_filters_add() appends (as
 * printf), session_filters_ids() appends "NAME=ID,ID " when there are ids,
 * session_filters_end() drops a trailing space ("none" when empty).
 */
void session_filters_add(struct kagg_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void session_filters_ids(struct kagg_session *s, const char *name, const int *ids, size_t n);
void session_filters_end(struct kagg_session *s);

/*
 * Hand the session a loaded skeleton's shared parts: its generation and
 * armed flags (in .bss) and its counters map of nr_counters u64s, and name
 * the attach type.
 */
void session_bind(struct kagg_session *s, volatile __u32 *gen, volatile __u32 *armed,
		  struct bpf_map *counters, int nr_counters, const char *attach_type);

/*
 * While detached, before attaching again: the switches missed meanwhile leave each CPU's
 * chain of the scheduler tools unknown, not broken.  Counter idx of the counters map (the
 * chain kagg_chain_break() keeps) set to 0 on every CPU, a failure logged (a false kernel
 * gap per CPU may follow); when streaming, the records sent before the detach consumed,
 * then the stream's chains forgotten.
 */
void session_chain_forget(struct kagg_session *s, int idx, struct schain *stream);

void session_log(struct kagg_session *s, enum kagg_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

bool session_perm_error(int err);
/*
 * Log why loading failed: privileges (how to get them), else "loading
 * @what failed: reason".  Returns err.
 */
int session_load_failed(struct kagg_session *s, int err, const char *what);
/*
 * One tracepoint program of a tool, in its two flavours: the kernel path's
 * or the stream's, used or not in the session's configuration.
 */
struct session_tp_prog {
	struct bpf_program *tp_btf, *raw_tp;
	bool stream;
	bool used;
};

/*
 * Before load: load the tp_btf (btf) or raw_tp flavour of each program used
 * on the session's path, nothing else.  After load, session_tp_bind: those
 * programs into s->progs, the kernel path's first (s->nr_agg_progs of them:
 * the meta's per-path costs rely on it), then session_bind() with the
 * flavour loaded as the attach type.
 */
void session_tp_autoload(struct kagg_session *s, const struct session_tp_prog *p, int n, bool btf);
void session_tp_bind(struct kagg_session *s, const struct session_tp_prog *p, int n, bool btf,
		     volatile __u32 *gen, volatile __u32 *armed, struct bpf_map *counters,
		     int nr_counters);

/*
 * Load a tool's tracepoint programs with the attach type asked for:
 * load(s, opts, true) for tp_btf, load(s, opts, false) for raw_tp; under
 * KAGG_ATTACH_AUTO, tp_btf first and raw_tp when it fails for any reason but
 * privileges (the reason is kept in s->attach_note).  load returns 0 only
 * when the programs are loaded.  @what names them in messages ("the
 * sched_switch program").  Checks for kernel BTF first (session_need_btf).
 * Logs why it failed; 0 or -errno.
 */
int session_load_tp(struct kagg_session *s, enum kagg_attach attach, const char *what,
		    int (*load)(struct kagg_session *s, const void *opts, bool btf),
		    const void *opts);
/*
 * The task filters tools share, as their opts name them: processes,
 * threads (NULL, 0 for tools without) and a cgroup v2 directory (NULL:
 * none, or a tool without).
 */
struct session_tasks {
	const int *pids;
	size_t nr_pids;
	const int *tids;
	size_t nr_tids;
	const char *cgroup;
};

/* The session_tasks of the opts o of a tool that has them all, or processes alone. */
#define SESSION_TASKS(o) \
	((struct session_tasks){ (o)->pids, (o)->nr_pids, (o)->tids, (o)->nr_tids, (o)->cgroup })
#define SESSION_PIDS(o) ((struct session_tasks){ .pids = (o)->pids, .nr_pids = (o)->nr_pids })

/*
 * Every id names a live task (else logs "no such process: ID" or "no such
 * thread: ID" and returns -ESRCH); describe the filters in s->filters; open
 * the cgroup (s->cgroup_fd; else logs why and returns -errno).  0 or -errno.
 */
int session_tasks_open(struct kagg_session *s, const struct session_tasks *tk);
/* Before load: size the id maps (NULL: the tool has none) down to one entry when unused. */
void session_tasks_size(const struct session_tasks *tk, struct bpf_map *tgids,
			struct bpf_map *tids);
/* After load: the ids into tgids/tids (u32 -> u8), the cgroup at index 0 of cgroup. */
int session_tasks_fill(struct kagg_session *s, const struct session_tasks *tk,
		       struct bpf_map *tgids, struct bpf_map *tids, struct bpf_map *cgroup);
bool session_task_exists(int id);

/* Checks /sys/kernel/btf/vmlinux, logs what to do when missing. */
int session_need_btf(struct kagg_session *s);

/*
 * Kernel features probed once per session (libbpf's probes, never the
 * release): BPF task local storage (BPF_MAP_TYPE_TASK_STORAGE, absent from
 * 5.10) and attach cookies (bpf_get_attach_cookie).
 */
bool session_has_task_storage(struct kagg_session *s);
bool session_has_attach_cookie(struct kagg_session *s);
/* The unwind-table walk's helpers: NULL when the kernel has them, else the first missing. */
const char *session_lacks_unwind_helpers(struct kagg_session *s);
/*
 * A tracing program (btf: tp_btf, fentry) keeps per-task state in task
 * storage: true when btf and the kernel has it.  When btf and it does not,
 * the programs keep it in a hash by thread id, and the meta's attach note
 * says so (once per session).
 */
bool session_task_storage(struct kagg_session *s, bool btf);
/*
 * BPF atomic fetch and cmpxchg instructions (5.12; absent from 5.10), probed
 * by loading one.  The programs use them in two places: promoting a frequent
 * sparse exp histogram to a dense one (kagg_exp_sparse_add), which
 * session_exp_hot_setup turns off without them, and raising the extremes of
 * shared histograms (kagg_max_shared).  The kernel refuses a program holding
 * such an instruction, even unreachable, so session_atomics_fallback (between
 * open and load; every program with shared histograms goes through it) turns
 * a fetch-add into "register = 0" and a cmpxchg into a plain store of its new
 * value that leaves r0 as expected, i.e. a swap that succeeds; any other
 * atomic operation refuses the load.
 */
bool session_has_bpf_atomics(struct kagg_session *s);
/* Tests: take BPF atomics as missing on any kernel, so that 5.10's fallback runs. */
extern bool session_no_bpf_atomics;
/* Tests: take BPF task storage as missing on any kernel, as on 5.10. */
extern bool session_no_task_storage;
int session_atomics_fallback(struct kagg_session *s, struct bpf_object *obj);

/* ---- generic readers for the shapes of bpf/shared/common.h ---- */

/*
 * For each key of map into key (a variable of the map's key size), prev a
 * const void * the walk keeps: the key before, or NULL for the first.
 */
/*
 * Copies of each value a lookup of map returns: one per possible CPU for the per-CPU
 * types, else one (the shared maps the programs add to atomically).
 */
static inline int session_map_copies(const struct kagg_session *s, const struct bpf_map *map)
{
	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
		return s->nr_cpus;
	default:
		return 1;
	}
}

#define session_map_for_each_key(map, key, prev) \
	for (prev = NULL; !bpf_map__get_next_key(map, prev, &(key), sizeof(key)); prev = &(key))

/* Zero entry key of a per-CPU array: vals (bytes long, all CPUs) zeroed and written. */
int session_percpu_zero(struct bpf_map *map, __u32 key, void *vals, size_t bytes);
/* snap_alloc_hists, each histogram in the session's unit.  0 or -ENOMEM. */
int session_alloc_hists(struct kagg_session *s, struct kagg_snapshot *snap, size_t n,
			unsigned int nr_slots);

/*
 * Exp buckets of scale (0..KAGG_EXP_MAX_SCALE) for times in s->unit: the thresholds the BPF
 * program's rodata exp_params take (*p), s->exp_* set, and map (exp_hist) sized.  -EINVAL.
 */
struct kagg_exp_params;
int session_exp_setup(struct kagg_session *s, int scale, struct bpf_map *map,
		      struct kagg_exp_params *p);
/*
 * The buckets b of a program with KAGG_EXP_HIST_MAP (bpf/agg.bpf.h), before its load: exp
 * sets up exp_map and the rodata *params and *words, and shrinks log2_map to one entry;
 * log2 shrinks exp_map.  0 or -EINVAL.
 */
int session_buckets_setup(struct kagg_session *s, enum kagg_buckets b, int scale,
			  struct bpf_map *exp_map, struct bpf_map *log2_map,
			  volatile struct kagg_exp_params *params, volatile __u32 *words);
/*
 * Sparse per-key exp histograms (KAGG_EXP_CELLS_MAP, bpf/agg.bpf.h): for b exp, the
 * rodata *params and *words set and the cells map capped at max_cells (0:
 * SESSION_EXP_CELLS); log2 leaves everything as it is.  0 or -EINVAL.
 */
#define SESSION_EXP_CELLS 16384
/*
 * Tools with one exp histogram per function or syscall keep them dense (an exp_hist
 * entry each, two generations) while they take at most SESSION_EXP_DENSE_BYTES per CPU
 * and SESSION_EXP_DENSE_TOTAL over the possible CPUs: SESSION_EXP_DENSE_FIT(scale,
 * cpus) of them (31 at scale 3 up to 32 CPUs, 3 with 256).
 */
#define SESSION_EXP_DENSE_BYTES (256 * 1024)
#define SESSION_EXP_DENSE_TOTAL (8 * 1024 * 1024)
#define SESSION_EXP_DENSE_FIT(scale, cpus)                           \
	((SESSION_EXP_DENSE_TOTAL / (cpus) < SESSION_EXP_DENSE_BYTES \
		  ? SESSION_EXP_DENSE_TOTAL / (cpus)                 \
		  : SESSION_EXP_DENSE_BYTES) /                       \
	 (2 * 8 * (KAGG_EXP_SLOTS(scale) + 2U)))
int session_exp_cells_setup(struct kagg_session *s, enum kagg_buckets b, int scale,
			    unsigned int max_cells, struct bpf_map *cells,
			    volatile struct kagg_exp_params *params, volatile __u32 *words);
/*
 * The cells of generation g as exp histograms of snap: nr_ids > 0, one per id 0 ..
 * nr_ids - 1 (hists[id]); 0, one per id that has cells, ascending.  key.id and the sum
 * set, label left to the caller.  reset deletes the cells read.
 */
int session_read_exp_cells(struct kagg_session *s, struct bpf_map *map, __u32 g, bool reset,
			   size_t nr_ids, struct kagg_snapshot *snap);
/*
 * Per-key exp histograms: the keys and comms of key_hist (KAGG_KEY_HIST_MAP) with the
 * buckets and sums of the cells (KAGG_EXP_CELLS) whose id is the key's tid (KAGG_KEY_TID)
 * or tgid; label as session_read_key_hists() takes it.
 */
int session_read_key_exp_hists(struct kagg_session *s, struct bpf_map *key_hist,
			       struct bpf_map *cells, __u32 g, bool reset,
			       struct kagg_snapshot *snap,
			       const char *(*label)(struct kagg_session *s, uint64_t aux));
/*
 * The dense histograms of kagg_exp_sparse_add() (bpf/agg.bpf.h), after
 * session_exp_cells_setup(): *max (the program's rodata) as many as fit in
 * SESSION_EXP_DENSE_BYTES per CPU, exp_hist sized for them; none (exp_hist shrunk) when
 * none is true or the buckets are not exp.  0 or -errno.
 */
int session_exp_hot_setup(struct kagg_session *s, struct bpf_map *exp_hist, bool none,
			  volatile __u32 *max);
/* Entry idx of an exp_hist map summed over CPUs, added into h (of exp_words - 1 slots). */
int session_exp_hist_get(struct kagg_session *s, struct bpf_map *map, __u32 idx, bool reset,
			 struct kagg_hist *h);
/* The exp_hist entry g (bpf/agg.bpf.h) summed over CPUs into one histogram of snap. */
int session_read_exp_hist(struct kagg_session *s, struct bpf_map *map, __u32 g, bool reset,
			  struct kagg_snapshot *snap);

/*
 * The histogram maps of a tool that keeps them as bpf/agg.bpf.h lays them out: unkeyed,
 * one log2 (hist) or exp (exp_hist) histogram; keyed, log2 histograms per key (key_hist)
 * and, with exp buckets, those keys' sparse cells (exp_cells).  params and words: the
 * program's rodata exp_params and exp_words.
 */
struct session_hist_maps {
	struct bpf_map *hist, *exp_hist, *key_hist, *exp_cells;
	volatile struct kagg_exp_params *params;
	volatile __u32 *words;
};
#define SESSION_HIST_MAPS(skel)                                                     \
	((struct session_hist_maps){ (skel)->maps.hist, (skel)->maps.exp_hist,      \
				     (skel)->maps.key_hist, (skel)->maps.exp_cells, \
				     &(skel)->rodata->exp_params, &(skel)->rodata->exp_words })
/*
 * Before the load: the maps m of a keyed or unkeyed tool sized for buckets b (exp of
 * scale, at most max_cells cells; 0: SESSION_EXP_CELLS), what it does not use shrunk to
 * one entry.  0 or -errno.
 */
int session_hists_setup(struct kagg_session *s, const struct session_hist_maps *m, bool keyed,
			enum kagg_buckets b, int scale, unsigned int max_cells);
/*
 * After it: generation g's histograms into snap, one unkeyed or one per key (label as
 * session_read_key_hists() takes it).
 */
int session_read_hists(struct kagg_session *s, const struct session_hist_maps *m, bool keyed,
		       __u32 g, bool reset, struct kagg_snapshot *snap,
		       const char *(*label)(struct kagg_session *s, uint64_t aux));

/* A BPF histogram's sum (kagg_hist_val.sum) as kagg_hist.sum shows it. */
double session_sum(const struct kagg_session *s, uint64_t raw);
/*
 * The extremes nmin, max (as kagg_ext_put() keeps them, merged over copies with
 * kagg_ext_merge()) of part of h that counted values, into h's min and max.
 */
void session_ext_fold(const struct kagg_session *s, struct kagg_hist *h, uint64_t nmin,
		      uint64_t max);
/* Extremes min <= max, in h's unit, into h's (set when it had none). */
void session_minmax_add(struct kagg_hist *h, double min, double max);

/*
 * Entry key of a per-CPU kagg_hist_val map summed over CPUs (or of an array the CPUs
 * share) into h: its log2 slots (when slots), its sum and extremes; the entry is cleared
 * when reset.  vals: room for s->nr_cpus.
 */
int session_hist_fold(struct kagg_session *s, struct bpf_map *map, __u32 key, bool slots,
		      bool reset, struct kagg_hist_val *vals, struct kagg_hist *h);

/* Per-CPU array `hist` entry g summed over CPUs into one histogram appended to snap. */
int session_read_hist(struct kagg_session *s, struct bpf_map *hist, __u32 g, bool reset,
		      struct kagg_snapshot *snap);

/*
 * Whether key mode key goes with mode and buckets: per command and per cgroup keys are the
 * kernel path's, in log2 buckets (else logs why).  0 or -EINVAL.
 */
int session_key_check(struct kagg_session *s, enum kagg_key_mode key, enum kagg_mode mode,
		      enum kagg_buckets buckets);

/*
 * h's key (h zeroed) from the kernel's key k in the session's key mode: pid and tid; the
 * command name (k's with KAGG_KEY_COMM, else comm, the value's, NUL-terminated); with
 * KAGG_KEY_CGROUP the cgroup's id and path (h->cgroup_id, h->cgroup); the tool's id k->aux,
 * named label(s, aux) when label is given.  Strings are copied into snap.
 */
void session_hist_key(struct kagg_session *s, struct kagg_snapshot *snap, struct kagg_hist *h,
		      const struct kagg_key *k, const char *comm,
		      const char *(*label)(struct kagg_session *s, uint64_t aux));

/*
 * The entries of generation g (the key's first 32 bits) of hash map m: keys of ks bytes,
 * values of vsz bytes (every copy of a per-CPU map: session_map_copies() times the value),
 * into *keys and *vals (malloc'd, *n of them).  Batched lookups where the kernel has them
 * (5.6): a few system calls for the whole map whatever the CPU count; else a walk and a
 * lookup per key.  0 or -ENOMEM.
 */
int session_gen_entries(struct bpf_map *m, __u32 g, size_t ks, size_t vsz, void **keys, void **vals,
			size_t *n);
/* Delete keys[0 .. n - 1] (ks bytes each) of m: batched (5.6), else one by one. */
void session_gen_delete(struct bpf_map *m, const void *keys, size_t ks, size_t n);

/*
 * Keyed histograms (per-CPU hash of kagg_key -> kagg_key_hist) of generation
 * g, one per key, sorted by (pid, tid, id).  label(s, key) may name the key's
 * aux id (NULL: no label).
 */
int session_read_key_hists(struct kagg_session *s, struct bpf_map *map, __u32 g, bool reset,
			   struct kagg_snapshot *snap,
			   const char *(*label)(struct kagg_session *s, uint64_t aux));

/*
 * Stack aggregations (per-CPU hash kagg_key -> kagg_stack_val) of generation g, symbolized and
 * merged as struct kagg_frame says (by function, or by address with KAGG_SNAP_ADDRS).
 * from_tracer: the kernel stacks were captured from inside the tracing program (tracepoint
 * programs; not perf_event ones, whose stacks start at the sampled registers), so their
 * leading frames are the program's and are dropped (see user/snapshot/stacks.h).
 */
int session_read_stacks(struct kagg_session *s, struct bpf_map *agg, struct bpf_map *stackmap,
			__u32 g, bool reset, bool from_tracer, struct kagg_snapshot *snap);

/*
 * Tools whose programs capture user stacks hand over their `proc_notes` ring (see
 * bpf/proc_notes.bpf.h) and its loss counter (proc_notes_lost, in the object's .bss) after
 * loading: kagg_session__poll() and every stack read then read the maps of each process
 * noted, while it lives, and the meta counts the notes lost.  0 or -errno.
 */
int session_set_notes(struct kagg_session *s, struct bpf_map *ring, const volatile __u64 *lost);
/* The unwind maps of a program including bpf/unwind.bpf.h (user/session/unwind.c). */
struct session_unw_maps {
	struct bpf_map *rows, *files, *procs, *ustacks, *scratch;
};
#define UNW_MAPS(skel)                                                             \
	((struct session_unw_maps){ (skel)->maps.unw_rows, (skel)->maps.unw_files, \
				    (skel)->maps.unw_procs, (skel)->maps.ustacks,  \
				    (skel)->maps.unw_scratch })

/*
 * Between open and load: set the program's rodata unwind (*mode_rodata) from mode, and size
 * the maps (to one entry each when user stacks are not table-walked: with_user false,
 * KAGG_UNWIND_FP, or no walk here).  can_walk: the tool's table program can load (else
 * "tp_btf" is what is missing).  KAGG_UNWIND_AUTO without the walk falls back to fp, said
 * in the attach note; KAGG_UNWIND_TABLE without it is -EINVAL, logged in one line naming
 * what is missing.  *table: load the tool's table program.  max_rows 0: the default cap.
 */
int session_unwind_size(struct kagg_session *s, const struct session_unw_maps *m,
			volatile __u32 *mode_rodata, enum kagg_unwind mode, bool with_user,
			size_t max_rows, bool can_walk, bool *table);
/* Before loading: -EINVAL (logged in one line) when mode is table and the walk is missing. */
int session_unwind_check(struct kagg_session *s, enum kagg_unwind mode, bool with_user);
/*
 * After load: start the table loader (owned by the session from then on), load the tables
 * of the pids given now, and start the thread that loads those of the processes noted
 * later (session_unwind_queue()).  0 or -errno.
 */
int session_unwind_start(struct kagg_session *s, const struct session_unw_maps *m, const int *pids,
			 size_t nr_pids);
/*
 * Have the loading thread load pid's tables (a no-op without one).  Building a table takes
 * from milliseconds to seconds (libc's, a large C++ library's, under emulation): off the
 * poll loop, it never delays the reading of another process's maps while it lives.
 */
void session_unwind_queue(struct kagg_session *s, int pid);
/* Stop the loading thread (what it has still to load is not loaded). */
void session_unwind_stop(struct kagg_session *s);
/*
 * The meta's unwind part: the method, frames by method and table stats; the walks that
 * stopped early as drops unwind_* (not losses).  cnt: the tool's first unwind counter.
 */
void session_unwind_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			 bool reset);
/* Handle the pending notes now (without waiting). */
void session_drain_notes(struct kagg_session *s);

#endif
