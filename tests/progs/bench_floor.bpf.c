// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Benchmark only: floors, programs that do the part of a tool's work no
 * implementation can avoid and nothing else, measured next to kagg and its
 * peer in the same run (tests/bench/bench_floor.c loads one of them).
 *
 * stack_floor (tests/bench/offcpu.sh): on each sched_switch, the outgoing
 * task's kernel stack and, for user tasks, its user stack into a stack map --
 * exactly the two bpf_get_stackid() calls `kagg offcpu --stacks` and
 * offcputime both make per switch-out -- and no start time, no aggregation.
 *
 * empty_sys_enter / empty_sys_exit (tests/bench/syscount.sh): programs that
 * return at once, the price of being attached to raw_syscalls at all.
 *
 * lat_enter / lat_exit (tests/bench/syscount.sh, latency): the least a
 * per-syscall latency needs -- a clock read into the thread's storage at
 * entry, a clock read and the difference at exit -- and no aggregation.
 * ulat_enter / ulat_exit do the same from a user function's uprobe and
 * uretprobe (tests/bench/funclat.sh).
 *
 * switch_floor (tests/bench/offcpu.sh): the least an off-CPU histogram needs
 * on each sched_switch -- one clock read, the outgoing task's start time into
 * its storage, the incoming task's start time taken back and the difference
 * -- and no aggregation, no filters, no counters.
 *
 * perf_floor (tests/bench/profile.sh): on each cpu-clock sample of a task,
 * the walks a sampling profiler cannot skip -- the kernel stack when the
 * sample interrupted the kernel, the user stack of a user task -- and no
 * aggregation.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "shared/common.h"
#include "maps.bpf.h"

#define PF_KTHREAD 0x00200000

KAGG_STACKMAP(floor_stacks);

/* Failed captures, so a floor made of failures shows as such. */
__u64 failed;

SEC("tp_btf/sched_switch")
int BPF_PROG(stack_floor, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (!prev->pid)
		return 0;
	if (bpf_get_stackid(ctx, &floor_stacks, 0) < 0)
		__sync_fetch_and_add(&failed, 1);
	if (!(prev->flags & PF_KTHREAD) &&
	    bpf_get_stackid(ctx, &floor_stacks, BPF_F_USER_STACK) < 0)
		__sync_fetch_and_add(&failed, 1);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(empty_sys_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(empty_sys_exit, struct pt_regs *regs, long ret)
{
	return 0;
}

struct lat_start {
	__u64 ts;
};

KAGG_TASK_STORAGE(lat_store, struct lat_start);

/* The last difference, so the exit program's work is not optimized away. */
__u64 lat_last;

/* Start task t's interval at now. */
static __always_inline void lat_start(struct task_struct *t, __u64 now)
{
	struct lat_start *s =
		bpf_task_storage_get(&lat_store, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (s)
		s->ts = now;
}

/* End task t's interval, if one was started, at now (0: read the clock then). */
static __always_inline void lat_end(struct task_struct *t, __u64 now)
{
	struct lat_start *s = bpf_task_storage_get(&lat_store, t, 0, 0);

	if (s && s->ts) {
		lat_last = (now ? now : bpf_ktime_get_ns()) - s->ts;
		s->ts = 0;
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(lat_enter, struct pt_regs *regs, long id)
{
	lat_start(bpf_get_current_task_btf(), bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(lat_exit, struct pt_regs *regs, long ret)
{
	lat_end(bpf_get_current_task_btf(), 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_floor, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	if (prev->pid)
		lat_start(prev, now);
	if (next->pid)
		lat_end(next, now);
	return 0;
}

/* The same for a user function (tests/bench/funclat.sh): entry and return probes. */
SEC("uprobe")
int BPF_UPROBE(ulat_enter)
{
	lat_start(bpf_get_current_task_btf(), bpf_ktime_get_ns());
	return 0;
}

SEC("uretprobe")
int BPF_URETPROBE(ulat_exit)
{
	lat_end(bpf_get_current_task_btf(), 0);
	return 0;
}

SEC("perf_event")
int perf_floor(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!task->pid)
		return 0;
	if ((long)PT_REGS_IP(&ctx->regs) < 0 && bpf_get_stackid(ctx, &floor_stacks, 0) < 0)
		__sync_fetch_and_add(&failed, 1);
	if (!(task->flags & PF_KTHREAD) &&
	    bpf_get_stackid(ctx, &floor_stacks, BPF_F_USER_STACK) < 0)
		__sync_fetch_and_add(&failed, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
