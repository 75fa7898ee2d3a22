/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by bpf/profile.bpf.c and the library (user/builtin/profile.c).
 */
#ifndef KAGG_BPF_PROFILE_H
#define KAGG_BPF_PROFILE_H

#include "shared/common.h"
#include "shared/unwind.h"

/* Which stacks a sample captures (rodata `stacks`). */
enum profile_stacks {
	PROFILE_STACKS_BOTH = 0,
	PROFILE_STACKS_USER = 1,   /* -U: kernel stack never captured */
	PROFILE_STACKS_KERNEL = 2, /* -K: user stack never captured */
};

/*
 * Per-CPU counters (array map `counters`, index = enum value).  Counter 0 is
 * every run of the program while armed (the session's events_seen).
 */
enum profile_counter {
	PROFILE_CNT_SAMPLES = 0,   /* perf samples seen by the program */
	PROFILE_CNT_RECORDED,	   /* samples aggregated */
	PROFILE_CNT_IDLE,	   /* samples of the idle task (not aggregated, not a loss) */
	PROFILE_CNT_FILTERED,	   /* samples of other processes under -p (not a loss) */
	PROFILE_CNT_KEYS_FULL,	   /* sample lost: stack aggregation map full */
	PROFILE_CNT_KSTACK_EFAULT, /* kernel stack capture failed: -EFAULT (sample kept) */
	PROFILE_CNT_KSTACK_EEXIST, /* kernel stack: -EEXIST, stack map hash collision */
	PROFILE_CNT_KSTACK_OTHER,  /* kernel stack: any other error (-ENOMEM: map full) */
	PROFILE_CNT_USTACK_EFAULT, /* user stack capture failed: -EFAULT (sample kept) */
	PROFILE_CNT_USTACK_EEXIST,
	PROFILE_CNT_USTACK_OTHER,
	PROFILE_CNT_UNW, /* the table walk's counters (enum unw_counter) from here */
	PROFILE_CNT_MAX = PROFILE_CNT_UNW + UNW_CNT_NR,
};

#endif /* KAGG_BPF_PROFILE_H */
