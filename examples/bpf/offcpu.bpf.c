// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Off-CPU time, as `kagg offcpu` measures it: from a task's switch-out to
 * its next switch-in, one log2 histogram in the session's unit.  With no
 * key it is a per-CPU array, and costs what the built-in tool's does.
 *
 *	kagg run offcpu.bpf.o -d 5 [--set tgid=PID] [--set min_ns=N]
 */
#include <kagg/bpf/vmlinux.h>
#include <kagg/bpf/kagg.bpf.h>

const volatile __u32 tgid = 0; /* only this process (0: all) */
const volatile __u64 min_ns = 0;

KAGG_PAIR(off, 32768);
KAGG_HIST_TIME(offcpu, struct kagg_nokey, 1);

static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next,
				     const bool btf)
{
	__u32 ptgid = btf ? prev->tgid : BPF_CORE_READ(prev, tgid);
	__u32 ntgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	__u64 ns;

	if ((btf ? prev->pid : kagg_task_tid(prev)) && (!tgid || ptgid == tgid))
		off__start_of(prev, btf);
	if (!(btf ? next->pid : kagg_task_tid(next)) || (tgid && ntgid != tgid))
		return 0;
	if (!off__stop_of(next, btf, &ns))
		return 0;
	if (ns < min_ns) {
		kagg_filtered();
		return 0;
	}
	offcpu__record(NULL, ns);
	return 0;
}

KAGG_TP(offcpu, "sched_switch", on_switch(prev, next, btf), bool preempt, struct task_struct *prev,
	struct task_struct *next);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
