/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by bpf/offcpu.bpf.c and the library (user/builtin/offcpu.c).
 *
 * Everything that crosses the kernel/user boundary uses fixed-size types,
 * explicit padding and a size assertion.
 */
#ifndef KAGG_BPF_OFFCPU_H
#define KAGG_BPF_OFFCPU_H

#include "shared/common.h"
#include "shared/unwind.h"
#include "shared/exp_table.h" /* struct kagg_exp_params, in the skeleton's rodata */

/* Task states at switch-out, as bits of the `state_mask` filter. */
enum offcpu_state_bit {
	OFFCPU_ST_R = 1 << 0, /* preempted / runnable */
	OFFCPU_ST_S = 1 << 1, /* interruptible sleep */
	OFFCPU_ST_D = 1 << 2, /* uninterruptible sleep */
	OFFCPU_ST_T = 1 << 3, /* stopped */
	OFFCPU_ST_t = 1 << 4, /* traced */
	OFFCPU_ST_X = 1 << 5, /* dead */
	OFFCPU_ST_Z = 1 << 6, /* zombie */
	OFFCPU_ST_P = 1 << 7, /* parked */
	OFFCPU_ST_I = 1 << 8, /* idle (TASK_IDLE) */
	OFFCPU_ST_ALL = (1 << 9) - 1,
};

/*
 * Per-CPU counters (array map `counters`, index = enum value).  Events are
 * counted where they happen; drops by cause are what userspace reports.
 */
enum offcpu_counter {
	OFFCPU_CNT_SWITCHES = 0,   /* sched_switch invocations */
	OFFCPU_CNT_SAMPLES,	   /* off-CPU intervals recorded */
	OFFCPU_CNT_FILTERED_RANGE, /* intervals outside [min, max] (not a loss) */
	OFFCPU_CNT_DROP_STORAGE,   /* task storage / start map could not hold a switch-out */
	OFFCPU_CNT_DROP_KEYS_FULL, /* per-key map full: interval not recorded */
	OFFCPU_CNT_DROP_KSTACK,	   /* kernel stack capture failed (interval kept, stack unknown) */
	OFFCPU_CNT_DROP_USTACK,	   /* user stack capture failed (interval kept, stack unknown) */
	OFFCPU_CNT_DROP_UNCLOSED,  /* a switch-out found the previous interval still open:
				    * its switch-in was not seen */
	OFFCPU_CNT_KERNEL_GAPS,	   /* a CPU's switch did not start from the task its
				    * previous switch went to: the kernel did not
				    * deliver a switch (not a loss of ours) */
	OFFCPU_CNT_CHAIN,	   /* not a counter: next_pid + 1 of this CPU's last
				    * switch (0: none yet) */
	OFFCPU_CNT_DROP_EXP_CELLS, /* -P/-L exp buckets: interval not counted, exp_cells full */
	OFFCPU_CNT_UNW,		   /* the table walk's counters (enum unw_counter) from here */
	OFFCPU_CNT_MAX = OFFCPU_CNT_UNW + UNW_CNT_NR,
};

/*
 * One streamed sched_switch event.  Enough to rebuild the kernel's
 * sched/sched_switch record and to compute off-CPU intervals in userspace
 * exactly as the aggregating program does.
 */
struct offcpu_rec {
	KAGG_REC_HDR_FIELDS; /* ts, seq, cpu, gen: struct kagg_rec_hdr */
	__s32 prev_pid;
	__s32 prev_tgid;
	__s32 next_pid;
	__s32 next_tgid;
	__s32 prev_prio;
	__s32 next_prio;
	__u32 prev_state; /* as sched_switch reports it: 0x100 preempted, else 1 << (index-1) */
	__u8 selected;	  /* prev passed the filters at switch-out */
	__u8 pad[3];
	char prev_comm[KAGG_COMM_LEN];
	char next_comm[KAGG_COMM_LEN];
};
_Static_assert(sizeof(struct offcpu_rec) == 88, "offcpu_rec layout");
KAGG_REC_HDR_CHECK(struct offcpu_rec);

#endif /* KAGG_BPF_OFFCPU_H */
