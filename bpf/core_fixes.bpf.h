/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * CO-RE accessors for kernel fields that were renamed or retyped.  Every
 * tool reads such fields through these helpers, never by comparing kernel
 * versions.
 */
#ifndef KAGG_CORE_FIXES_BPF_H
#define KAGG_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>
#include "shared/buckets.h"

/*
 * task_struct::state became ::__state (unsigned int) in v5.14, commit
 * 2f064a59a11f ("sched: Change task_struct::state").
 */
struct task_struct___pre514 {
	volatile long state;
} __attribute__((preserve_access_index));

/* btf: t is a trusted BTF pointer (tp_btf, fentry): read directly, no helper call. */
static __always_inline __u32 kagg_task_state(struct task_struct *t, const bool btf)
{
	struct task_struct___pre514 *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return btf ? t->__state : BPF_CORE_READ(t, __state);
	return btf ? (__u32)old->state : (__u32)BPF_CORE_READ(old, state);
}

/*
 * The CPU a task is on (task_cpu()): thread_info::cpu where the thread
 * info lives in the task (x86 since v5.16), task_struct::cpu before.
 */
struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __s32 kagg_task_cpu(struct task_struct *t, const bool btf)
{
	struct task_struct___pre516 *old = (void *)t;

	if (bpf_core_field_exists(t->thread_info.cpu))
		return btf ? t->thread_info.cpu : BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(old, cpu);
}

/*
 * Kernel features, from the kernel's own enum of BPF helpers (CO-RE: a
 * helper the kernel does not know relocates to false, and the verifier
 * drops the branch that calls it unvisited):
 * - task local storage for tracing programs and bpf_get_current_task_btf()
 *   (BPF_MAP_TYPE_TASK_STORAGE; absent from 5.10, userspace then does not
 *   create the task storage map and the programs keep a hash by thread id);
 * - attach cookies (bpf_get_attach_cookie()).
 */
#define kagg_has_task_storage() \
	bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_storage_get)
#define kagg_has_attach_cookie() \
	bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_attach_cookie)

/* The system call number in a task's user registers (raw_syscalls tracepoints). */
#if defined(__TARGET_ARCH_arm64)
#define KAGG_REGS_SYSCALL_NR syscallno
#else
#define KAGG_REGS_SYSCALL_NR orig_ax
#endif

/* The current task as a CO-RE read pointer (any program, any kernel). */
static __always_inline struct task_struct *kagg_current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_NOLOAD 0x0400
#define TASK_RTLOCK_WAIT 0x1000
#define TASK_REPORT 0x7f

/*
 * A task's state at switch-out as one bit of the kernel's report letters:
 * bit 0 R (preempted or runnable), then S D T t X Z P as the kernel's
 * TASK_REPORT bits, bit 8 I (TASK_IDLE).  These are OFFCPU_ST_* (offcpu.h).
 */
static __always_inline __u32 kagg_sched_state_bit(bool preempt, struct task_struct *t,
						  const bool btf)
{
	__u32 st, rep;

	if (preempt)
		return 1u << 0;
	st = kagg_task_state(t, btf);
	if (st == (TASK_UNINTERRUPTIBLE | TASK_NOLOAD))
		return 1u << 8;
	if (st & TASK_RTLOCK_WAIT)
		return 1u << 2;
	rep = (st | (__u32)(btf ? t->exit_state : BPF_CORE_READ(t, exit_state))) & TASK_REPORT;
	if (!rep)
		return 1u << 0;
	/* fls(rep) - 1 indexes S D T t X Z P, i.e. bit k -> state bit k + 1. */
	return 1u << (kagg_log2_32(rep) + 1);
}

/* sched_switch's prev_state value for a state bit (0x100 = TASK_REPORT_MAX: preempted). */
static __always_inline __u32 kagg_sched_report_state(bool preempt, __u32 stbit)
{
	return preempt ? 0x100 : stbit >> 1;
}

#endif
