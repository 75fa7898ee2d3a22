// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * profile: CPU samples aggregated by kernel + user stack in the kernel.
 *
 * Userspace opens one sampling perf event per CPU (hardware cycles when the
 * PMU has them, else the cpu-clock software event) and attaches this program
 * to each.  Every overflow runs it in the interrupted task's context: it
 * captures the stacks into `stackmap` and adds the sample to a shared hash
 * keyed by (generation, process, kernel stack id, user stack id), with atomic
 * adds: its memory grows with stacks, not with CPUs x stacks.
 *
 * kagg_stack_val: count = samples; total_ns = samples * period_ns, the CPU
 * time the samples stand for at the nominal rate (1e9 / HZ ns per sample).
 *
 * Exact snapshots as in offcpu.bpf.c: two generations flipped by userspace.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "shared/profile.h"
#include "agg.bpf.h"
#include "proc_notes.bpf.h"
#include "unwind.bpf.h"

#define PF_KTHREAD 0x00200000
#define EFAULT 14
#define EEXIST 17

/* Tunables, set between open and load. */
const volatile bool filter_tgid = false;
const volatile __u32 stacks = PROFILE_STACKS_BOTH;
const volatile __u64 period_ns = 0;

/* Set by userspace once every perf event is attached, cleared before detach. */
__u32 armed = 0;

KAGG_ID_SET(tgids);

KAGG_COUNTERS_MAP(PROFILE_CNT_MAX);
KAGG_COUNTERS_GET

KAGG_STACK_MAPS;

/* Count a failed capture by cause: base + 0 EFAULT, + 1 EEXIST, + 2 other. */
static __always_inline void stack_err(struct counters *c, int err, __u32 base)
{
	__u32 i = err == -EFAULT ? 0 : err == -EEXIST ? 1 : 2;

	if (base + i < PROFILE_CNT_MAX)
		c->cnt[base + i]++;
}

/* Was the sample taken in user mode? */
static __always_inline bool sample_in_user(struct bpf_perf_event_data *ctx)
{
	/*
	 * By the interrupted address, not CS: pt_regs::cs changed type in 6.9
	 * (FRED union) and perf_event programs may only load their registers
	 * 8 bytes at a time.  x86_64 user addresses are below 2^47 (2^56 with
	 * 5-level paging), arm64's below 2^52; kernel ones have the top bit set.
	 */
	return (long)PT_REGS_IP(&ctx->regs) >= 0;
}

/*
 * The user stack walked by unwind tables (bpf/unwind.bpf.h), from the sampled registers in
 * user mode, else from those the task saved entering the kernel.
 */
static __always_inline int walk_user(struct bpf_perf_event_data *ctx, __u32 tgid,
				     struct counters *c, __u32 gen)
{
#if UNW_WALK
	struct pt_regs *u;

	if (sample_in_user(ctx))
		return unw_stack(ctx, &stackmap, ctx->regs.ip, ctx->regs.sp, ctx->regs.bp, tgid,
				 &c->cnt[PROFILE_CNT_UNW], gen);
	u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return unw_stack(ctx, &stackmap, u->ip, u->sp, u->bp, tgid, &c->cnt[PROFILE_CNT_UNW], gen);
#else
	return bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
#endif
}

/* table: the table program (userspace loads one of the two, see profile_sample_unw). */
static __always_inline int sample(struct bpf_perf_event_data *ctx, const bool table)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, pid = (__u32)id;
	struct kagg_key key = { .kstack = KAGG_NO_STACK, .ustack = KAGG_NO_STACK };
	struct kagg_stack_val *v;
	struct counters *c;

	c = counters_get();
	if (!c)
		return 0;
	c->cnt[PROFILE_CNT_SAMPLES]++;
	if (!pid) {
		c->cnt[PROFILE_CNT_IDLE]++;
		return 0;
	}
	if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid)) {
		c->cnt[PROFILE_CNT_FILTERED]++;
		return 0;
	}
	key.gen = kagg_gen();
	key.tgid = tgid;
	key.pid = tgid; /* aggregated per process */

	/* A sample taken in user mode has no kernel frames: nothing to capture. */
	if (stacks != PROFILE_STACKS_USER && !sample_in_user(ctx)) {
		key.kstack = bpf_get_stackid(ctx, &stackmap, 0);
		if (key.kstack < 0)
			stack_err(c, key.kstack, PROFILE_CNT_KSTACK_EFAULT);
	}
	/* bpf_get_current_task_btf() where the kernel has it, CO-RE reads before (5.10) */
	if (stacks != PROFILE_STACKS_KERNEL &&
	    !((kagg_has_task_storage() ? bpf_get_current_task_btf()->flags
				       : BPF_CORE_READ(kagg_current_task(), flags)) &
	      PF_KTHREAD)) {
		if (table && unwind != UNW_MODE_FP)
			key.ustack = walk_user(ctx, tgid, c, key.gen);
		else
			key.ustack = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
		if (key.ustack < 0)
			stack_err(c, key.ustack, PROFILE_CNT_USTACK_EFAULT);
		else if (kagg_has_task_storage())
			kagg_note_task(tgid, bpf_get_current_task_btf(), true);
		else
			kagg_note_task(tgid, kagg_current_task(), false);
	}

	v = bpf_map_lookup_elem(&stack_agg, &key);
	if (!v) {
		struct kagg_stack_val init = {};

		bpf_get_current_comm(init.comm, sizeof(init.comm));
		bpf_map_update_elem(&stack_agg, &key, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&stack_agg, &key);
		if (!v) {
			c->cnt[PROFILE_CNT_KEYS_FULL]++;
			return 0;
		}
	}
	kagg_add(&v->count, 1);
	kagg_add(&v->total_ns, period_ns);
	c->cnt[PROFILE_CNT_RECORDED]++;
	return 0;
}

/* User stacks by the kernel's frame-pointer walk: every kernel. */
SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}

/* User stacks by unwind tables: needs bpf_loop() (5.17), bpf_task_pt_regs() (5.15). */
SEC("perf_event")
int profile_sample_unw(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
