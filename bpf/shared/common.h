/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Aggregate shapes shared by every kagg BPF program and the library's
 * generic readers (user/session/session.c): log2 histograms, keyed histograms and
 * stack aggregations, each split in two generations for exact snapshots.
 */
#ifndef KAGG_BPF_COMMON_H
#define KAGG_BPF_COMMON_H

#include "shared/bucket_math.h" /* kagg_ext_put(), kagg_ext_merge() */

#define KAGG_SLOTS 64 /* log2 buckets: slot k holds [2^k, 2^(k+1)-1], slot 0 [0,1] */
#define KAGG_COMM_LEN 16
#define KAGG_MAX_STACK 127	 /* frames per stack (PERF_MAX_STACK_DEPTH) */
#define KAGG_NO_STACK (-1000000) /* kagg_key.kstack/ustack: not captured by design */

/* Keying of per-key aggregates (rodata `key_mode` of each program). */
enum kagg_bpf_key_mode {
	KAGG_BPF_KEY_NONE = 0,	 /* one histogram (per generation) */
	KAGG_BPF_KEY_PID = 1,	 /* per process (tgid) */
	KAGG_BPF_KEY_TID = 2,	 /* per thread */
	KAGG_BPF_KEY_COMM = 3,	 /* per command name (kagg_key.comm) */
	KAGG_BPF_KEY_CGROUP = 4, /* per cgroup v2 (kagg_key.cgroup_lo, cgroup_hi) */
};

/* Value of a per-CPU array `hist` indexed by generation. */
/* Wakeup policy of a streaming program (rodata `wake_mode`; values of enum kagg_wake). */
enum kagg_bpf_wake {
	KAGG_BPF_WAKE_WATERMARK = 0, /* no wakeup until wake_bytes are pending */
	KAGG_BPF_WAKE_ADAPTIVE = 1,  /* kernel default: wake when the consumer caught up */
	KAGG_BPF_WAKE_NONE = 2,	     /* never wake: the consumer polls on a timer */
	KAGG_BPF_WAKE_EVERY = 3,     /* force a wakeup per record */
};

struct kagg_hist_val {
	__u64 slots[KAGG_SLOTS];
	__u64 sum; /* of the values counted (ns for times), modulo 2^64; count = sum of slots */
	__u64 nmin, max; /* the extremes, as kagg_ext_put() keeps them */
};

/*
 * Key of keyed histograms and stack aggregations.  gen must stay first: the
 * library's readers select a generation by it.  aux is a tool-defined id
 * (syscall number, function index, field value...), 0 when unused.  A keyed
 * histogram per command (KAGG_BPF_KEY_COMM) has the task's comm, NUL-padded,
 * in place of tgid to ustack; one per cgroup (KAGG_BPF_KEY_CGROUP) the cgroup
 * v2 id's low and high halves in tgid and pid (cgroup_lo, cgroup_hi), kstack
 * and ustack 0.
 */
struct kagg_key {
	__u32 gen;
	union {
		struct {
			__u32 tgid;
			__u32 pid;
			__s32 kstack; /* stack map id, negative errno when capture failed, or
				       * KAGG_NO_STACK */
			__s32 ustack;
		};
		struct {
			__u32 cgroup_lo;
			__u32 cgroup_hi;
		};
		char comm[KAGG_COMM_LEN];
	};
	__u32 pad;
	__u64 aux;
};

/* Keyed histogram value (per-CPU): comm is written by the CPU that created the entry. */
struct kagg_key_hist {
	char comm[KAGG_COMM_LEN];
	__u64 slots[KAGG_SLOTS];
	__u64 sum;	 /* as in kagg_hist_val */
	__u64 nmin, max; /* as in kagg_hist_val */
};

/* Stack aggregation value (per-CPU). */
struct kagg_stack_val {
	char comm[KAGG_COMM_LEN];
	__u64 total_ns; /* sum of the measured time (or samples for profiles) */
	__u64 count;	/* events */
};

_Static_assert(sizeof(struct kagg_key) == 32, "kagg_key layout");
_Static_assert(sizeof(struct kagg_key_hist) == 16 + 8 * KAGG_SLOTS + 24, "kagg_key_hist layout");
_Static_assert(sizeof(struct kagg_stack_val) == 32, "kagg_stack_val layout");

/*
 * A process seen in a stack for the first time (on this CPU, with this address space and
 * this much executable memory): the record of the `proc_notes` ring buffer of
 * bpf/proc_notes.bpf.h.  Userspace reads the process's maps when it gets one, so its frames
 * can be symbolized after it exits.
 */
struct kagg_proc_note {
	__u32 tgid;
	__u32 exec_pages; /* mm->exec_vm, low 32 bits: grows as the program and its libraries map */
	__u64 mm;	  /* the task's mm_struct address: a new one after an exec */
};

_Static_assert(sizeof(struct kagg_proc_note) == 16, "kagg_proc_note layout");

/*
 * The head every streamed record starts with (offcpu_rec, runqlat_rec,
 * sc_rec): filled by kagg_rec_reserve() in stream.bpf.h.  The records declare
 * it first through KAGG_REC_HDR_FIELDS, so their fields keep their names:
 * ts is bpf_ktime_get_ns (shared with the aggregating program), seq the
 * per-CPU number of this event (gaps = lost records), gen the snapshot
 * generation of this event.
 */
#define KAGG_REC_HDR_FIELDS \
	__u64 ts;           \
	__u64 seq;          \
	__u32 cpu;          \
	__u32 gen

struct kagg_rec_hdr {
	KAGG_REC_HDR_FIELDS;
};
/*
 * Streamed-record counters, one per-CPU entry per snapshot generation
 * (stream.bpf.h's stream_cnt): a program run counts its event and the
 * outcome, sent or dropped, in the entry of the event's generation.
 */
struct kagg_stream_cnt {
	__u64 seen;    /* events the streaming programs ran for */
	__u64 sent;    /* records submitted to the BPF ring buffer */
	__u64 dropped; /* records lost: BPF ring buffer full */
};

#define KAGG_REC_HDR_CHECK(T)                                                                      \
	_Static_assert(__builtin_offsetof(T, ts) == __builtin_offsetof(struct kagg_rec_hdr, ts) && \
			       __builtin_offsetof(T, seq) ==                                       \
				       __builtin_offsetof(struct kagg_rec_hdr, seq) &&             \
			       __builtin_offsetof(T, cpu) ==                                       \
				       __builtin_offsetof(struct kagg_rec_hdr, cpu) &&             \
			       __builtin_offsetof(T, gen) ==                                       \
				       __builtin_offsetof(struct kagg_rec_hdr, gen),               \
		       #T " starts like struct kagg_rec_hdr")

/* A cell of a sparse exp histogram (KAGG_EXP_CELLS_MAP in agg.bpf.h). */
struct kagg_exp_cell_key {
	__u32 id;   /* the histogram: function id, syscall number */
	__u32 slot; /* generation << 31 | exp slot (0: the zero bucket) */
};

/* Its value: the values counted in the bucket, their sum and extremes (as kagg_hist_val's). */
struct kagg_exp_cell {
	__u64 cnt;
	__u64 sum;
	__u64 nmin, max;
};

#endif /* KAGG_BPF_COMMON_H */
