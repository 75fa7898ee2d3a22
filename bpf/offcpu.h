/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by bpf/offcpu.bpf.c and the library (user/offcpu.c).
 *
 * Everything that crosses the kernel/user boundary uses fixed-size types,
 * explicit padding and a size assertion.
 */
#ifndef KAGG_BPF_OFFCPU_H
#define KAGG_BPF_OFFCPU_H

#define OFFCPU_MAX_SLOTS 64	/* log2 buckets: slot k holds [2^k, 2^(k+1)-1], slot 0 [0,1] */
#define OFFCPU_COMM_LEN 16
#define OFFCPU_MAX_STACK 127	/* frames per stack (PERF_MAX_STACK_DEPTH) */

/* Keying of per-key histograms (rodata `key_mode`). */
enum offcpu_key_mode {
	OFFCPU_KEY_NONE = 0,	/* one system-wide histogram */
	OFFCPU_KEY_PID = 1,	/* per process (tgid) */
	OFFCPU_KEY_TID = 2,	/* per thread */
};

/* Task states at switch-out, as bits of the `state_mask` filter. */
enum offcpu_state_bit {
	OFFCPU_ST_R = 1 << 0,	/* preempted / runnable */
	OFFCPU_ST_S = 1 << 1,	/* interruptible sleep */
	OFFCPU_ST_D = 1 << 2,	/* uninterruptible sleep */
	OFFCPU_ST_T = 1 << 3,	/* stopped */
	OFFCPU_ST_t = 1 << 4,	/* traced */
	OFFCPU_ST_X = 1 << 5,	/* dead */
	OFFCPU_ST_Z = 1 << 6,	/* zombie */
	OFFCPU_ST_P = 1 << 7,	/* parked */
	OFFCPU_ST_I = 1 << 8,	/* idle (TASK_IDLE) */
	OFFCPU_ST_ALL = (1 << 9) - 1,
};

/*
 * Per-CPU counters (array map `counters`, index = enum value).  Events are
 * counted where they happen; drops by cause are what userspace reports.
 */
enum offcpu_counter {
	OFFCPU_CNT_SWITCHES = 0,	/* sched_switch invocations */
	OFFCPU_CNT_SAMPLES,		/* off-CPU intervals recorded */
	OFFCPU_CNT_FILTERED_RANGE,	/* intervals outside [min, max] (not a loss) */
	OFFCPU_CNT_DROP_STORAGE,	/* task storage / start map could not hold a switch-out */
	OFFCPU_CNT_DROP_KEYS_FULL,	/* per-key map full: interval not recorded */
	OFFCPU_CNT_DROP_KSTACK,		/* kernel stack capture failed (interval kept, stack unknown) */
	OFFCPU_CNT_DROP_USTACK,		/* user stack capture failed (interval kept, stack unknown) */
	OFFCPU_CNT_MAX,
};

/* Histogram value (per-CPU). */
struct offcpu_hist {
	__u64 slots[OFFCPU_MAX_SLOTS];
};

/* Key of per-key histograms and of stack aggregations; gen is the snapshot generation (0/1). */
struct offcpu_key {
	__u32 gen;
	__u32 tgid;
	__u32 pid;
	__s32 kstack;	/* stack map id, or negative errno when capture failed, or -1 unused */
	__s32 ustack;
	__u32 pad;
};

/* Per-key histogram value: comm is written by the CPU that created the entry. */
struct offcpu_key_hist {
	char comm[OFFCPU_COMM_LEN];
	__u64 slots[OFFCPU_MAX_SLOTS];
};

/* Stack aggregation value (per-CPU). */
struct offcpu_stack_val {
	char comm[OFFCPU_COMM_LEN];
	__u64 total_ns;	/* sum of off-CPU time */
	__u64 count;	/* intervals */
};

_Static_assert(sizeof(struct offcpu_key) == 24, "offcpu_key layout");
_Static_assert(sizeof(struct offcpu_key_hist) == 16 + 8 * OFFCPU_MAX_SLOTS, "offcpu_key_hist layout");
_Static_assert(sizeof(struct offcpu_stack_val) == 32, "offcpu_stack_val layout");

#endif /* KAGG_BPF_OFFCPU_H */
