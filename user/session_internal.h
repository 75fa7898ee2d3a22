/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the generic half of a session, shared by every tool.
 *
 * A tool (user/tools/offcpu.c, ...) opens its skeleton, fills the session's program
 * list, its `gen` pointer and its counters map, and supplies session_ops for
 * what only it knows (reading its aggregates into a snapshot, naming its
 * drops).  The generic half attaches and detaches, keeps the interval
 * baselines, flips generations with an RCU grace period for exact resets,
 * measures BPF run time, and builds the meta block.
 */
#ifndef KAGG_SESSION_INT_H
#define KAGG_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/utsname.h>
#include <time.h>
#include <bpf/libbpf.h>

#include <kagg/session.h>
#include "abi/common.h"
#include "snapshot_internal.h"
#include "u64map.h"

#define SESSION_MAX_PROGS 8
#define SESSION_MAX_COUNTERS 16

struct kagg_session;
struct scons;
struct bpfrb;

struct session_ops {
	const char *tool;
	/* Read generation g into snap (histograms, stacks); clear it when reset. */
	int (*read)(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset);
	/*
	 * Fill events_recorded/events_filtered and the tool's drops from the
	 * counter deltas of the interval (cnt[i] = now - baseline).
	 */
	void (*meta)(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
		     bool reset);
	/* Attach program i yourself (uprobes, perf events); NULL: bpf_program__attach. */
	struct bpf_link *(*attach)(struct kagg_session *s, int i);
	/* Release what the tool state holds (skeleton, fds); the session frees the state. */
	void (*destroy)(struct kagg_session *s);
};

struct kagg_session {
	const struct session_ops *ops;
	void *tool; /* the tool's own state */

	struct bpf_program *progs[SESSION_MAX_PROGS];
	struct bpf_link *links[SESSION_MAX_PROGS];
	int nr_progs;
	int nr_agg_progs;	  /* progs[0, nr_agg_progs) aggregate, the rest stream */
	volatile __u32 *gen;	  /* in the program's mmap'd .bss */
	volatile __u32 *armed;	  /* optional: set once all programs are attached */
	struct bpf_map *counters; /* per-CPU array, one entry of u64[nr_counters]; [0] = events */
	int nr_counters;

	kagg_log_fn log;
	void *log_ctx;
	enum kagg_unit unit;
	enum kagg_key_mode key;
	bool attached;
	bool ever_attached;
	bool exact; /* membarrier(MEMBARRIER_CMD_GLOBAL) available */
	int stats_fd;
	int nr_cpus;
	const char *event;
	const char *clock;
	char attach_type[32];
	char attach_note[192];
	char filters[512];
	struct utsname uts;

	/* Baselines at the start of the current interval. */
	struct timespec t0_real, t0_mono;
	uint64_t cnt0[SESSION_MAX_COUNTERS];
	uint64_t *cpu_events0;
	uint64_t run_cnt0[SESSION_MAX_PROGS], run_time0[SESSION_MAX_PROGS];
	uint64_t recursion0[SESSION_MAX_PROGS];

	struct kagg_syms *syms; /* created by tools that read stacks */
	struct bpfrb *notes;	/* tools with user stacks: processes first seen (proc_notes) */
	struct u64map notes_seen; /* tgid -> mm of the last note handled */
	struct kagg_rb *rb;	/* streaming tools: the reference ftrace ring buffer */
	struct kagg_rb_events *rb_events;
	const char *mode;	/* "agg", "stream", "both" */
	/*
	 * Streaming tools: their consumer and record handler.  The session
	 * polls it (kagg_session__poll) and drains it after a generation flip,
	 * before meta and read.
	 */
	struct scons *stream;
	void (*stream_fn)(void *ctx, const void *data, uint32_t len);
	void *stream_ctx;
};

/* Common part of every tool's open: log, unit, key, overhead, CPU count. */
struct session_init {
	kagg_log_fn log;
	void *log_ctx;
	enum kagg_unit unit;
	enum kagg_key_mode key;
	bool overhead;
	size_t tool_size;	/* the tool's state, zeroed, in s->tool (freed after ops->destroy) */
};

/* "agg", "stream" or "both". */
const char *session_mode_name(enum kagg_mode mode);
/* A streaming tool hands its consumer over once it is set up (see stream). */
void session_set_stream(struct kagg_session *s, struct scons *c,
			void (*fn)(void *ctx, const void *data, uint32_t len), void *ctx);

/* Allocate a session and its tool state; NULL + errno. */
struct kagg_session *session_new(const struct session_ops *ops, const struct session_init *in);
/* Finish opening once the tool has loaded its programs: stats fd, membarrier probe. */
int session_ready(struct kagg_session *s, bool overhead);
/*
 * The end of every opener: err 0 -> session_ready() and s; otherwise (or if
 * that fails) destroy s, set errno from -err and return NULL.
 */
struct kagg_session *session_opened(struct kagg_session *s, int err, bool overhead);

void session_log(struct kagg_session *s, enum kagg_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

bool session_perm_error(int err);
bool session_task_exists(int id);
/*
 * Load a tool's tracepoint programs with the attach type asked for:
 * load(s, opts, true) for tp_btf, load(s, opts, false) for raw_tp; under
 * KAGG_ATTACH_AUTO, tp_btf first and raw_tp when it fails for any reason but
 * privileges (the reason is kept in s->attach_note).  load returns 0 only
 * when the programs are loaded.  @what names them in messages ("the
 * sched_switch program").  Logs why it failed; 0 or -errno.
 */
int session_load_tp(struct kagg_session *s, enum kagg_attach attach, const char *what,
		    int (*load)(struct kagg_session *s, const void *opts, bool btf),
		    const void *opts);
/*
 * The filters tools share.  session_check_tasks: every id names a live task,
 * else logs "no such <what>: ID" and returns -ESRCH.  session_open_cgroup:
 * an fd of a cgroup v2 directory in *fd, or logs why not and returns -errno.
 * session_filter_fill: ids into a hash map of u32 -> u8, and the cgroup fd
 * (when >= 0) at index 0 of a cgroup array.
 */
int session_check_tasks(struct kagg_session *s, const int *ids, size_t n, const char *what);
int session_open_cgroup(struct kagg_session *s, const char *path, int *fd);
int session_filter_fill(struct bpf_map *ids_map, const int *ids, size_t n);
int session_cgroup_fill(struct bpf_map *cgroup_map, int cgroup_fd);

/* Checks /sys/kernel/btf/vmlinux, logs what to do when missing. */
int session_need_btf(struct kagg_session *s);

/* ---- generic readers for the shapes of bpf/abi/common.h ---- */

/* Per-CPU array `hist` entry g summed over CPUs into one histogram appended to snap. */
int session_read_hist(struct kagg_session *s, struct bpf_map *hist, __u32 g, bool reset,
		      struct kagg_snapshot *snap);

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
 * leading frames are the program's and are dropped (see user/stacks.h).
 */
int session_read_stacks(struct kagg_session *s, struct bpf_map *agg, struct bpf_map *stackmap,
			__u32 g, bool reset, bool from_tracer, struct kagg_snapshot *snap);

/*
 * Tools whose programs capture user stacks hand over their `proc_notes` ring (see
 * bpf/proc_notes.bpf.h) after loading: kagg_session__poll() and every stack read then read
 * the maps of each process noted, while it lives.  0 or -errno.
 */
int session_set_notes(struct kagg_session *s, struct bpf_map *ring);
/* Handle the pending notes now (without waiting). */
void session_drain_notes(struct kagg_session *s);

#endif
