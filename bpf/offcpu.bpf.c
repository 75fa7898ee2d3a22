// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * offcpu: how long tasks stay off-CPU, from sched_switch, aggregated in the
 * kernel.
 *
 * At switch-out the outgoing task (prev) gets a timestamp (and, with stacks,
 * its kernel and user stack ids) in task local storage; at switch-in the
 * incoming task (next) finds it, and the interval goes into a per-CPU log2
 * histogram (this CPU's data only), or a per-key histogram or a stack
 * aggregation in a shared hash with atomic adds (memory that grows with keys,
 * not with CPUs x keys).
 *
 * Exact snapshots: every aggregate is split in two generations (`gen`, a
 * global userspace flips).  Userspace flips gen, waits for an RCU grace
 * period (every program that may still use the old gen has returned: tracing
 * programs run inside RCU read-side sections), then reads and clears the old
 * generation, which no program writes any more.  No interval is lost or
 * counted twice across a read-and-reset.
 *
 * Two programs share the handler: tp_btf/sched_switch (preferred: trusted
 * task pointers, task storage) and raw_tp/sched_switch (fallback: CO-RE probe
 * reads, a tid-keyed hash for start times).  Userspace loads exactly one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "shared/offcpu.h"
#include "agg.bpf.h"
#include "keys.bpf.h"
#include "stream.bpf.h"
#include "filters.bpf.h"
#include "core_fixes.bpf.h"
#include "proc_notes.bpf.h"
#include "unwind.bpf.h"

#define PF_KTHREAD 0x00200000

/* Tunables, set between open and load. */
const volatile __u32 key_mode = KAGG_BPF_KEY_NONE;
const volatile bool user_only = false;
const volatile bool kernel_only = false;
const volatile bool with_stacks = false;
const volatile __u32 state_mask = OFFCPU_ST_ALL;
const volatile __u64 min_ns = 0;
const volatile __u64 max_ns = ~0ULL;
const volatile __u64 unit_ns = 1000;
const volatile __u32 unit_ns_log2 = 9; /* floor(log2(unit_ns)) */

struct start {
	__u64 ts;
	__s32 kstack;
	__s32 ustack;
};

KAGG_START_MAPS(struct start);

KAGG_COUNTERS_MAP(OFFCPU_CNT_MAX);
KAGG_HIST_MAP;
KAGG_EXP_HIST_MAP;
KAGG_KEY_HIST_MAP;
KAGG_EXP_CELLS; /* -P/-L with exp buckets: counts and sums by tgid or tid */

/* Off-CPU time by stack. */
KAGG_STACK_MAPS;

/* Does the outgoing task pass the filters (state excepted)? */
static __always_inline bool prev_filtered_in(struct task_struct *prev, __u32 tgid, __u32 pid,
					     bool btf)
{
	__u32 flags;

	if (user_only || kernel_only) {
		flags = btf ? prev->flags : BPF_CORE_READ(prev, flags);
		if (user_only && (flags & PF_KTHREAD))
			return false;
		if (kernel_only && !(flags & PF_KTHREAD))
			return false;
	}
	if (!kagg_ids_selected(tgid, pid))
		return false;
	/* sched_switch runs in prev's context: current is prev. */
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup, 0) != 1)
		return false;
	return true;
}

/* Is prev's off-CPU interval to be measured?  stbit: its state at switch-out. */
static __always_inline bool state_selected(__u32 stbit)
{
	/* A dead task never runs again: there is no interval to close. */
	if (stbit & (OFFCPU_ST_X | OFFCPU_ST_Z))
		return false;
	return stbit & state_mask;
}

static __always_inline void record_stacks(void *ctx, struct start *s, struct counters *c,
					  struct task_struct *prev, __u32 tgid, bool kthread,
					  const bool btf, const bool table)
{
	s->kstack = bpf_get_stackid(ctx, &stackmap, 0);
	if (s->kstack < 0)
		c->cnt[OFFCPU_CNT_DROP_KSTACK]++;
	if (kthread) {
		s->ustack = KAGG_NO_STACK;
		return;
	}
#if UNW_WALK
	if (table && unwind != UNW_MODE_FP) {
		/* sched_switch runs in prev's context: its user registers, saved at kernel entry */
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

		/* an interval can close generations later: its stack is never deleted */
		s->ustack = unw_stack(ctx, &stackmap, u->ip, u->sp, u->bp, tgid,
				      &c->cnt[OFFCPU_CNT_UNW], 0);
	} else
#endif
		s->ustack = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
	if (s->ustack < 0)
		c->cnt[OFFCPU_CNT_DROP_USTACK]++;
	else
		kagg_note_task(tgid, prev, btf);
}

static __always_inline void hist_add(struct task_struct *next, __u32 tgid, __u32 pid, __u32 slot,
				     __u64 delta, __u32 g, struct counters *c)
{
	struct kagg_key key = { .gen = g };

	if (key_mode == KAGG_BPF_KEY_NONE) {
		KAGG_HIST_ADD(g, slot, delta);
		return;
	}
	kagg_key_task(&key, key_mode, next, tgid, pid);
	kagg_keyed_add(&key_hist, &key, next->comm, slot, delta, &exp_cells, exp_words,
		       key_mode == KAGG_BPF_KEY_TID ? pid : tgid, &exp_params,
		       &c->cnt[OFFCPU_CNT_DROP_KEYS_FULL], &c->cnt[OFFCPU_CNT_DROP_EXP_CELLS]);
}

static __always_inline void stack_add(struct task_struct *next, __u32 tgid, __u32 pid,
				      const struct start *s, __u64 delta, __u32 g,
				      struct counters *c)
{
	struct kagg_key key = {
		.gen = g,
		.tgid = tgid,
		.pid = pid,
		.kstack = s->kstack,
		.ustack = s->ustack,
	};
	struct kagg_stack_val *v = kagg_stack_get(&stack_agg, &key, next->comm);

	if (!v) {
		c->cnt[OFFCPU_CNT_DROP_KEYS_FULL]++;
		return;
	}
	kagg_add(&v->total_ns, delta);
	kagg_add(&v->count, 1);
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, const bool btf, const bool table)
{
	__u32 zero = 0, pid, npid, tgid, g, slot;
	__u64 now, delta;
	struct counters *c;
	struct start *s;

	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c)
		return 0;
	/*
	 * The clock is read only when the switch opens or closes an interval:
	 * with -p/-t/--cgroup most switches do neither.
	 */
	if (!kagg_event_open((__u64)prev, (__u64)next, &now, &g))
		return 0;
	c->cnt[OFFCPU_CNT_SWITCHES]++;

	/*
	 * Switches on one CPU chain: each starts from the task the previous one
	 * went to.  A break means the kernel did not deliver a switch (seen on
	 * a VM whose agent's switches never reach tracepoints): its interval
	 * shows up as switch_in_missed; this counts the cause.
	 */
	pid = btf ? prev->pid : BPF_CORE_READ(prev, pid);
	npid = btf ? next->pid : BPF_CORE_READ(next, pid);
	if (kagg_chain_break(&c->cnt[OFFCPU_CNT_CHAIN], pid, npid))
		c->cnt[OFFCPU_CNT_KERNEL_GAPS]++;

	/* Switch-out: remember when prev left the CPU. */
	tgid = btf ? prev->tgid : BPF_CORE_READ(prev, tgid);
	/*
	 * With no state filter the state matters only to skip dead tasks; task
	 * storage dies with them, so on tp_btf that check (two loads and a
	 * bit scan per event) is left out.  The raw_tp fallback keeps it: its
	 * start hash would fill up with entries of dead tasks.
	 */
	if (pid && prev_filtered_in(prev, tgid, pid, btf) &&
	    ((btf && state_mask == OFFCPU_ST_ALL) ||
	     state_selected(kagg_sched_state_bit(preempt, prev, btf)))) {
		if (btf) {
			s = bpf_task_storage_get(&start_store, prev, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
		} else {
			struct start init = {};

			s = bpf_map_lookup_elem(&start_hash, &pid);
			if (!s) {
				bpf_map_update_elem(&start_hash, &pid, &init, BPF_ANY);
				s = bpf_map_lookup_elem(&start_hash, &pid);
			}
		}
		if (s) {
			/*
			 * Every recorded switch-out is closed by the next switch-in, which
			 * clears ts.  Still set means that switch-in was not seen (the
			 * storage lookup failed or the event did not reach us): an
			 * interval lost, counted.
			 */
			if (s->ts)
				c->cnt[OFFCPU_CNT_DROP_UNCLOSED]++;
			s->ts = kagg_event_now(&now);
			if (with_stacks) {
				__u32 flags = btf ? prev->flags : BPF_CORE_READ(prev, flags);

				record_stacks(ctx, s, c, prev, tgid, flags & PF_KTHREAD, btf,
					      table);
			}
		} else {
			c->cnt[OFFCPU_CNT_DROP_STORAGE]++;
		}
	}

	/* Switch-in: close next's off-CPU interval, if we saw it leave. */
	pid = npid;
	if (!pid)
		return 0;
	if (btf)
		s = bpf_task_storage_get(&start_store, next, 0, 0);
	else
		s = bpf_map_lookup_elem(&start_hash, &pid);
	if (!s || !s->ts)
		return 0;
	delta = kagg_event_now(&now) - s->ts;
	s->ts = 0;
	if (delta < min_ns || delta > max_ns) {
		c->cnt[OFFCPU_CNT_FILTERED_RANGE]++;
		goto out;
	}
	tgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	slot = kagg_log2_div(delta, unit_ns, unit_ns_log2);
	hist_add(next, tgid, pid, slot, delta, g, c);
	if (with_stacks)
		stack_add(next, tgid, pid, s, delta, g, c);
	c->cnt[OFFCPU_CNT_SAMPLES]++;
out:
	if (!btf)
		bpf_map_delete_elem(&start_hash, &pid);
	return 0;
}

/* Stream one record per sched_switch: what userspace needs to rebuild both paths. */
static __always_inline int on_switch_stream(void *ctx, bool preempt, struct task_struct *prev,
					    struct task_struct *next, const bool btf)
{
	struct offcpu_rec *r;
	struct counters *c;
	__u32 zero = 0, pid, tgid, stbit, g;
	__u64 now;

	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c)
		return 0;
	if (!kagg_event_stamp((__u64)prev, (__u64)next, &now, &g, false))
		return 0;
	if (!share_event) /* streaming alone: this program counts the events */
		c->cnt[OFFCPU_CNT_SWITCHES]++;
	r = kagg_rec_reserve(sizeof(*r), now, g);
	if (!r)
		return 0;
	pid = btf ? prev->pid : BPF_CORE_READ(prev, pid);
	tgid = btf ? prev->tgid : BPF_CORE_READ(prev, tgid);
	stbit = kagg_sched_state_bit(preempt, prev, btf);
	r->prev_pid = pid;
	r->prev_tgid = tgid;
	r->next_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	r->next_tgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	r->prev_prio = btf ? prev->prio : BPF_CORE_READ(prev, prio);
	r->next_prio = btf ? next->prio : BPF_CORE_READ(next, prio);
	r->prev_state = kagg_sched_report_state(preempt, stbit);
	r->selected = pid && prev_filtered_in(prev, tgid, pid, btf) && state_selected(stbit);
	r->pad[0] = r->pad[1] = r->pad[2] = 0;
	/* Whole arrays: comm is NUL-padded in the task, so no stale bytes leak out. */
	bpf_probe_read_kernel(r->prev_comm, sizeof(r->prev_comm), prev->comm);
	bpf_probe_read_kernel(r->next_comm, sizeof(r->next_comm), next->comm);
	kagg_rec_submit(r);
	return 0;
}

KAGG_TP_PROGS(offcpu_stream, "sched_switch", on_switch_stream(ctx, preempt, prev, next, btf),
	      bool preempt, struct task_struct *prev, struct task_struct *next);

KAGG_TP_PROGS(offcpu, "sched_switch", on_switch(ctx, preempt, prev, next, btf, false), bool preempt,
	      struct task_struct *prev, struct task_struct *next);

/*
 * With user stacks walked by unwind tables: needs bpf_loop() (5.17) and bpf_task_pt_regs()
 * (5.15), so tp_btf and task storage too.  Userspace loads it in place of offcpu_tp_btf.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_unw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, kagg_has_task_storage(), true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
