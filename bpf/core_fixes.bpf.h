/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * CO-RE accessors for kernel fields that were renamed or retyped.  Every
 * tool reads such fields through these helpers, never by comparing kernel
 * versions.
 */
#ifndef KAGG_CORE_FIXES_BPF_H
#define KAGG_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

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

#endif
