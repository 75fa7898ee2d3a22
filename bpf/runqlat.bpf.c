// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * runqlat: run-queue latency, the time a runnable task waits for a CPU,
 * aggregated in the kernel as log2 histograms.
 *
 * A task becomes runnable when it is woken (sched_wakeup, sched_wakeup_new)
 * or when it leaves the CPU still runnable (sched_switch with prev
 * preempted or in TASK_RUNNING: it goes straight back on the run queue).
 * That instant goes into the task's local storage; at the task's next
 * switch-in the difference is the latency, counted on the switch-in CPU
 * (its run queue), so --cpu selects a run queue.
 *
 *	wakeup(p) / switch-out(prev runnable)      switch-in(next)
 *	       storage(p).ts = now  ---------------->  now - storage(next).ts
 *
 * Filters (-p, -t, --cgroup) are applied when a task is enqueued: a task
 * that does not pass them gets no timestamp, and its switch-ins find none.
 * The cgroup of a woken task cannot be asked for directly (the helper tests
 * `current`, which is the waker), so every switch-out records whether prev
 * (then current) is in the cgroup and wakeups read that mark; new tasks take
 * their parent's (current at sched_wakeup_new).  A task that slept since
 * before the session started is counted from its second wakeup on.
 *
 * Exact snapshots as in offcpu.bpf.c (two generations, `gen`).  Programs:
 * tp_btf (preferred, task local storage) or raw_tp (fallback, CO-RE reads
 * and a tid-keyed hash); userspace loads one set.
 *
 * Streaming (--mode stream|both): a second set of programs sends one record
 * per event (struct runqlat_rec) with the filter decisions made here, where
 * the task and its cgroup can be asked, and userspace computes the same
 * latencies (user/builtin/runqlat_stream.c).  With both sets attached each event is
 * stamped once for both (stream.bpf.h), so the histograms are identical
 * when no record is lost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "shared/runqlat.h"
#include "agg.bpf.h"
#include "keys.bpf.h"
#include "stream.bpf.h"
#include "filters.bpf.h"
#include "core_fixes.bpf.h"

#define TASK_DEAD_STATE 0x0080

const volatile __u32 key_mode = KAGG_BPF_KEY_NONE;
const volatile __s32 target_cpu = -1;
const volatile __u64 unit_ns = 1000;
const volatile __u32 unit_log2 = 9; /* floor(log2(unit_ns)) */

struct start {
	__u64 ts;    /* enqueue time, 0 when not queued (or not selected) */
	__u32 in_cg; /* --cgroup: the task was in the cgroup at its last switch-out */
	__u32 pad;
};

KAGG_START_MAPS(struct start);

KAGG_COUNTERS_MAP(RUNQLAT_CNT_MAX);
KAGG_HIST_MAP;
KAGG_EXP_HIST_MAP;
KAGG_KEY_HIST_MAP;
KAGG_EXP_CELLS; /* -P/-L with exp buckets: counts and sums by tgid or tid */

static __always_inline struct start *start_get(struct task_struct *t, __u32 pid, bool create,
					       const bool btf)
{
	struct start init = {};

	return kagg_start_get(&start_store, &start_hash, &init, t, pid, create, btf);
}

static __always_inline bool ids_selected(struct task_struct *t, __u32 pid, const bool btf)
{
	__u32 tgid;

	if (filter_tid && !bpf_map_lookup_elem(&tids, &pid))
		return false;
	if (filter_tgid) {
		tgid = btf ? t->tgid : BPF_CORE_READ(t, tgid);
		if (!bpf_map_lookup_elem(&tgids, &tgid))
			return false;
	}
	return true;
}

/* Event keys of the shared stamp: (task, type) for wakeups, (prev, next) for switches. */
#define STAMP_WAKEUP 1
#define STAMP_WAKEUP_NEW 2

/*
 * Task p was woken: it is on a run queue from now.  Wakeups are not counted
 * as events (the counters map is touched only to count a drop): events_seen
 * is the number of context switches, one map access less per wakeup.
 */
static __always_inline void on_wakeup(struct task_struct *p, bool new_task, const bool btf)
{
	struct counters *c;
	struct start *s;
	__u32 pid, zero = 0, g;
	__u64 now = 0;

	if (share_event) {
		if (!kagg_event_stamp((__u64)p, new_task ? STAMP_WAKEUP_NEW : STAMP_WAKEUP, &now,
				      &g, true))
			return;
	} else if (!*(volatile __u32 *)&armed) {
		return;
	}
	pid = btf ? p->pid : BPF_CORE_READ(p, pid);
	if (!pid || !ids_selected(p, pid, btf))
		return;
	/* current is the waker; for a new task, its parent (same cgroup unless CLONE_INTO_CGROUP).
	 */
	if (filter_cgroup && new_task && bpf_current_task_under_cgroup(&cgroup, 0) != 1)
		return;
	s = start_get(p, pid, !filter_cgroup || new_task, btf);
	if (!s) {
		c = bpf_map_lookup_elem(&counters, &zero);
		if (c && (!filter_cgroup || new_task))
			c->cnt[RUNQLAT_CNT_DROP_STORAGE]++;
		return;
	}
	if (filter_cgroup && !new_task && !s->in_cg)
		return;
	s->ts = kagg_event_now(&now);
}

static __always_inline void hist_add(struct task_struct *next, __u32 pid, __u32 slot, __u64 delta,
				     __u32 g, struct counters *c, const bool btf)
{
	struct kagg_key key = { .gen = g };
	__u32 tgid;

	if (key_mode == KAGG_BPF_KEY_NONE) {
		KAGG_HIST_ADD(g, slot, delta);
		c->cnt[RUNQLAT_CNT_SAMPLES]++;
		return;
	}
	tgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	kagg_key_task(&key, key_mode, next, tgid, pid);
	if (kagg_keyed_add(&key_hist, &key, next->comm, slot, delta, &exp_cells, exp_words,
			   key_mode == KAGG_BPF_KEY_TID ? pid : tgid, &exp_params,
			   &c->cnt[RUNQLAT_CNT_DROP_KEYS_FULL],
			   &c->cnt[RUNQLAT_CNT_DROP_EXP_CELLS]))
		c->cnt[RUNQLAT_CNT_SAMPLES]++;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, const bool btf)
{
	__u32 pid, state, in_cg = 1, zero = 0, g;
	struct counters *c;
	struct start *s;
	__u64 now, delta;
	bool gap;

	c = bpf_map_lookup_elem(&counters, &zero);
	/*
	 * The clock is read only when this switch starts or ends a wait (a
	 * task blocking into idle needs none).
	 */
	if (!c || !kagg_event_open((__u64)prev, (__u64)next, &now, &g))
		return 0;
	c->cnt[RUNQLAT_CNT_EVENTS]++;

	/*
	 * Switches on one CPU chain: each starts from the task the previous one went to.  A
	 * break is a switch the kernel did not deliver (a VM whose agent's switches never
	 * reach tracepoints): prev got this CPU unseen, its wake-up often unseen too, and the
	 * wait it ended is lost to every tracer.  Counted as a loss when prev passes the
	 * filters (switch_in_missed), and its start, if any, is cleared.
	 */
	pid = btf ? prev->pid : BPF_CORE_READ(prev, pid);
	gap = kagg_chain_break(&c->cnt[RUNQLAT_CNT_CHAIN], pid,
			       btf ? next->pid : BPF_CORE_READ(next, pid));
	if (gap)
		c->cnt[RUNQLAT_CNT_KERNEL_GAPS]++;

	/* Switch-out: prev goes back on the run queue when it is still runnable. */
	if (pid) {
		state = kagg_task_state(prev, btf);
		/* sched_switch runs in prev's context: current is prev. */
		if (filter_cgroup)
			in_cg = bpf_current_task_under_cgroup(&cgroup, 0) == 1;
		if (gap && in_cg && ids_selected(prev, pid, btf) &&
		    (target_cpu < 0 || bpf_get_smp_processor_id() == (__u32)target_cpu)) {
			c->cnt[RUNQLAT_CNT_DROP_SWITCH_IN]++;
			/* as the switch-in would have: the raw_tp hash keeps no idle entry */
			if (!btf && !filter_cgroup)
				bpf_map_delete_elem(&start_hash, &pid);
			else if ((s = start_get(prev, pid, false, btf)))
				s->ts = 0;
		}
		if ((preempt || !state || (filter_cgroup && !(state & TASK_DEAD_STATE))) &&
		    ids_selected(prev, pid, btf)) {
			s = start_get(prev, pid, true, btf);
			if (s) {
				s->in_cg = in_cg;
				if ((preempt || !state) && in_cg)
					s->ts = kagg_event_now(&now);
			} else {
				c->cnt[RUNQLAT_CNT_DROP_STORAGE]++;
			}
		} else if (!btf && filter_cgroup && (state & TASK_DEAD_STATE)) {
			/* The last switch-out of an exiting task: its cgroup mark goes. */
			bpf_map_delete_elem(&start_hash, &pid);
		}
	}

	/* Switch-in: next leaves its run queue. */
	pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	if (!pid)
		return 0;
	s = start_get(next, pid, false, btf);
	if (!s || !s->ts)
		return 0;
	delta = kagg_event_now(&now) - s->ts;
	s->ts = 0;
	if (!btf && !filter_cgroup)
		bpf_map_delete_elem(&start_hash, &pid);
	if (target_cpu >= 0 && bpf_get_smp_processor_id() != (__u32)target_cpu) {
		c->cnt[RUNQLAT_CNT_FILTERED_CPU]++;
		return 0;
	}
	hist_add(next, pid, kagg_log2_div(delta, unit_ns, unit_log2), delta, g, c, btf);
	return 0;
}

/* ---------------------------------------------------------------- streaming */

/* Does a woken task pass the filters: what on_wakeup() decides, without its storage. */
static __always_inline bool wakeup_selected(struct task_struct *p, __u32 pid, bool new_task,
					    const bool btf)
{
	struct start *s;

	if (!pid || !ids_selected(p, pid, btf))
		return false;
	if (!filter_cgroup)
		return true;
	if (new_task)
		return bpf_current_task_under_cgroup(&cgroup, 0) == 1;
	s = start_get(p, pid, false, btf);
	return s && s->in_cg;
}

/*
 * Does prev go back on a run queue, passing the filters: what on_switch()
 * decides; *sel whether it passes them (a switch_in_missed at a chain break).
 * Keeps the cgroup marks itself (same values as on_switch(), which
 * may run for the same event: whichever writes second writes the same).
 */
static __always_inline bool prev_requeued(bool preempt, struct task_struct *prev, __u32 pid,
					  __u32 state, struct counters *c, __u8 *sel,
					  const bool btf)
{
	__u32 in_cg = 1;
	struct start *s;
	bool ids;

	*sel = 0;
	if (!pid)
		return false;
	ids = ids_selected(prev, pid, btf);
	if (filter_cgroup) {
		in_cg = bpf_current_task_under_cgroup(&cgroup, 0) == 1;
		if (!(state & TASK_DEAD_STATE) && ids) {
			s = start_get(prev, pid, true, btf);
			if (s)
				s->in_cg = in_cg;
			else if (!share_event) /* else on_switch() counts it */
				c->cnt[RUNQLAT_CNT_DROP_STORAGE]++;
		} else if (!btf && (state & TASK_DEAD_STATE)) {
			bpf_map_delete_elem(&start_hash, &pid);
		}
	}
	*sel = in_cg && ids;
	return (preempt || !state) && *sel;
}

/* A record's head and the fields every type has; NULL when the ring is full (counted). */
static __always_inline struct runqlat_rec *rec_begin(__u64 now, __u32 g, __u8 type)
{
	struct runqlat_rec *r;

	r = kagg_rec_reserve(sizeof(*r), now, g);
	if (!r)
		return NULL;
	r->type = type;
	r->sel = 0;
	r->pad = 0;
	r->cur_pid = (__u32)bpf_get_current_pid_tgid();
	return r;
}

static __always_inline void on_wakeup_stream(struct task_struct *p, bool new_task, const bool btf)
{
	struct runqlat_rec *r;
	__u32 g, pid;
	__u64 now;

	if (!kagg_event_stamp((__u64)p, new_task ? STAMP_WAKEUP_NEW : STAMP_WAKEUP, &now, &g,
			      false))
		return;
	r = rec_begin(now, g, new_task ? RUNQLAT_REC_WAKEUP_NEW : RUNQLAT_REC_WAKEUP);
	if (!r)
		return;
	pid = btf ? p->pid : BPF_CORE_READ(p, pid);
	r->pid = pid;
	r->tgid = btf ? p->tgid : BPF_CORE_READ(p, tgid);
	r->prio = btf ? p->prio : BPF_CORE_READ(p, prio);
	r->target_cpu = kagg_task_cpu(p, btf);
	r->enq = wakeup_selected(p, pid, new_task, btf);
	r->prev_state = 0;
	r->next_pid = r->next_tgid = r->next_prio = 0;
	bpf_probe_read_kernel(r->comm, sizeof(r->comm), p->comm);
	__builtin_memset(r->next_comm, 0, sizeof(r->next_comm));
	kagg_rec_submit(r);
}

static __always_inline int on_switch_stream(bool preempt, struct task_struct *prev,
					    struct task_struct *next, const bool btf)
{
	struct runqlat_rec *r;
	struct counters *c;
	__u32 zero = 0, g, pid, state;
	__u8 sel;
	bool enq;
	__u64 now;

	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c || !kagg_event_stamp((__u64)prev, (__u64)next, &now, &g, false))
		return 0;
	if (!share_event) /* streaming alone: this program counts the events */
		c->cnt[RUNQLAT_CNT_EVENTS]++;
	pid = btf ? prev->pid : BPF_CORE_READ(prev, pid);
	state = kagg_task_state(prev, btf);
	/* before the reserve: it may count a storage drop, the record must not wait */
	enq = prev_requeued(preempt, prev, pid, state, c, &sel, btf);
	r = rec_begin(now, g, RUNQLAT_REC_SWITCH);
	if (!r)
		return 0;
	r->enq = enq;
	r->sel = sel;
	r->pid = pid;
	r->tgid = btf ? prev->tgid : BPF_CORE_READ(prev, tgid);
	r->prio = btf ? prev->prio : BPF_CORE_READ(prev, prio);
	r->target_cpu = 0;
	r->prev_state = kagg_sched_report_state(preempt, kagg_sched_state_bit(preempt, prev, btf));
	r->next_pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	r->next_tgid = btf ? next->tgid : BPF_CORE_READ(next, tgid);
	r->next_prio = btf ? next->prio : BPF_CORE_READ(next, prio);
	bpf_probe_read_kernel(r->comm, sizeof(r->comm), prev->comm);
	bpf_probe_read_kernel(r->next_comm, sizeof(r->next_comm), next->comm);
	kagg_rec_submit(r);
	return 0;
}

KAGG_TP_PROGS(runqlat_stream_wakeup, "sched_wakeup", (on_wakeup_stream(p, false, btf), 0),
	      struct task_struct *p);
KAGG_TP_PROGS(runqlat_stream_wakeup_new, "sched_wakeup_new", (on_wakeup_stream(p, true, btf), 0),
	      struct task_struct *p);
KAGG_TP_PROGS(runqlat_stream_switch, "sched_switch", on_switch_stream(preempt, prev, next, btf),
	      bool preempt, struct task_struct *prev, struct task_struct *next);

/* ---------------------------------------------------------------- aggregating */

KAGG_TP_PROGS(runqlat_wakeup, "sched_wakeup", (on_wakeup(p, false, btf), 0), struct task_struct *p);
KAGG_TP_PROGS(runqlat_wakeup_new, "sched_wakeup_new", (on_wakeup(p, true, btf), 0),
	      struct task_struct *p);
KAGG_TP_PROGS(runqlat_switch, "sched_switch", on_switch(preempt, prev, next, btf), bool preempt,
	      struct task_struct *prev, struct task_struct *next);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
