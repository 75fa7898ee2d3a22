/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by bpf/runqlat.bpf.c and the library (user/builtin/runqlat.c). */
#ifndef KAGG_BPF_RUNQLAT_H
#define KAGG_BPF_RUNQLAT_H

#include "shared/common.h"
#include "shared/exp_table.h" /* struct kagg_exp_params, in the skeleton's rodata */

/* Per-CPU counters (array map `counters`, index = enum value). */
enum runqlat_counter {
	RUNQLAT_CNT_EVENTS = 0,	    /* sched_switch runs (wakeups are not counted) */
	RUNQLAT_CNT_SAMPLES,	    /* run-queue latencies recorded */
	RUNQLAT_CNT_FILTERED_CPU,   /* latencies ended on a CPU other than --cpu (not a loss) */
	RUNQLAT_CNT_DROP_STORAGE,   /* enqueue not recorded: task storage / start hash full */
	RUNQLAT_CNT_DROP_KEYS_FULL, /* latency not aggregated: per-key map full */
	RUNQLAT_CNT_DROP_EXP_CELLS, /* -P/-L exp buckets: latency not counted, exp_cells full */
	RUNQLAT_CNT_CHAIN,	    /* 1 + the pid this CPU's last switch went to; 0: none yet */
	RUNQLAT_CNT_KERNEL_GAPS,    /* switches the kernel did not deliver (chain breaks) */
	RUNQLAT_CNT_DROP_SWITCH_IN, /* latency lost: a selected task's switch-in not delivered */
	RUNQLAT_CNT_MAX,
};

/* Record types; 1 << type is the matching KAGG_RUNQLAT_EV_* bit of kagg/runqlat.h. */
enum runqlat_rec_type {
	RUNQLAT_REC_WAKEUP = 0,	    /* sched_wakeup of `pid` */
	RUNQLAT_REC_WAKEUP_NEW = 1, /* sched_wakeup_new of `pid` */
	RUNQLAT_REC_SWITCH = 2,	    /* sched_switch from `pid` to `next_pid` */
};

/*
 * One streamed scheduler event: enough to rebuild the kernel's sched_wakeup,
 * sched_wakeup_new or sched_switch record, and to compute run-queue latency
 * in userspace exactly as the aggregating programs do.  The filters are
 * decided in BPF (they need the task and the cgroup) and carried in `enq`.
 */
struct runqlat_rec {
	KAGG_REC_HDR_FIELDS; /* ts, seq, cpu, gen: struct kagg_rec_hdr */
	__u8 type;	     /* enum runqlat_rec_type */
	__u8 enq;	     /* `pid` enters a run queue now and passes the filters */
	__u8 sel;	     /* switches: prev passes the filters (-p/-t/--cgroup) */
	__u8 pad;
	__s32 pid; /* the woken task, or prev */
	__s32 tgid;
	__s32 prio;
	__s32 target_cpu; /* wakeups: the CPU it was queued on */
	__u32 prev_state; /* switches: as sched_switch reports it (0x100 preempted) */
	__s32 next_pid;
	__s32 next_tgid;
	__s32 next_prio;
	char comm[KAGG_COMM_LEN];
	char next_comm[KAGG_COMM_LEN];
	__s32 cur_pid; /* the thread the event ran in (the kernel's common_pid) */
};
_Static_assert(sizeof(struct runqlat_rec) == 96, "runqlat_rec layout");
KAGG_REC_HDR_CHECK(struct runqlat_rec);

#endif /* KAGG_BPF_RUNQLAT_H */
