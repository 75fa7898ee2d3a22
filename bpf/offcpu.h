/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by bpf/offcpu.bpf.c and the library (user/offcpu.c).
 *
 * Everything that crosses the kernel/user boundary uses fixed-size types,
 * explicit padding and a size assertion.
 */
#ifndef KAGG_BPF_OFFCPU_H
#define KAGG_BPF_OFFCPU_H

#include "common.h"

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

#endif /* KAGG_BPF_OFFCPU_H */
