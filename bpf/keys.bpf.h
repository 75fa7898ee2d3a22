/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The task part of a keyed histogram's struct kagg_key, by the program's key mode
 * (enum kagg_bpf_key_mode): process, thread, command name or cgroup v2.
 */
#ifndef KAGG_KEYS_BPF_H
#define KAGG_KEYS_BPF_H

#include "shared/common.h"

/*
 * Fill key (zeroed but for gen and aux) for task t, of thread pid in process tgid, in key
 * mode mode: tgid (and pid per thread) with no stacks; t's comm; or the id of t's cgroup v2
 * (its kernfs node's, as bpf_get_current_cgroup_id() returns for the current task).
 */
static __always_inline void kagg_key_task(struct kagg_key *key, __u32 mode, struct task_struct *t,
					  __u32 tgid, __u32 pid)
{
	__u64 cg;

	if (mode == KAGG_BPF_KEY_COMM) {
		bpf_probe_read_kernel_str(key->comm, sizeof(key->comm), t->comm);
		return;
	}
	if (mode == KAGG_BPF_KEY_CGROUP) {
		cg = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
		key->cgroup_lo = (__u32)cg;
		key->cgroup_hi = cg >> 32;
		return;
	}
	key->tgid = tgid;
	key->kstack = KAGG_NO_STACK;
	key->ustack = KAGG_NO_STACK;
	if (mode == KAGG_BPF_KEY_TID)
		key->pid = pid;
}

#endif /* KAGG_KEYS_BPF_H */
