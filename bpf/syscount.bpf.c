// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * syscount: system calls counted per syscall (and process), failures per
 * errno, or latency histograms per syscall, aggregated in the kernel from
 * raw_syscalls:sys_enter / sys_exit.
 *
 * Counting uses sys_enter alone: the syscall number is an argument there,
 * and exit_group/execve are counted even though they do not return.
 * Failures (--errors) need the return value: sys_exit alone, the number
 * read from regs->orig_ax.  Latency uses both: the entry time and number go
 * into task local storage (raw_tp fallback: a tid-keyed hash) and the exit
 * closes the interval.  System-wide counts are a per-CPU array indexed by
 * generation * SC_NR_MAX + syscall number; latencies by syscall a shared array
 * indexed the same way, per-key aggregates (process, thread, command name or
 * cgroup) shared hashes (atomic adds: their memory grows with keys, not with
 * CPUs x keys).
 *
 * Compat (ia32) syscalls have their own numbering: they are skipped and
 * counted as such, never reported under a 64-bit name.
 *
 * Streaming (--mode stream|both): a second set of programs on the same
 * tracepoints (sys_enter for counts, sys_exit for errors, both for latency)
 * sends one struct sc_rec per event of the processes selected (-p), with the
 * rest of the filter decision made here;
 * userspace counts, classifies and times the calls alike
 * (user/builtin/syscount_stream.c).  With both sets attached each event is stamped
 * once for both (stream.bpf.h); the aggregating programs only pay for the
 * stamp in that mode.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "shared/syscount.h"
#include "agg.bpf.h"
#include "keys.bpf.h"
#include "stream.bpf.h"

#define TS_COMPAT 0x0002   /* thread_info.status: in an ia32 syscall */
#define TIF_32BIT_ARM64 22 /* arm64 thread_info.flags: an AArch32 task */
#define X32_SYSCALL_BIT 0x40000000
#define MAX_ERRNO 4095

const volatile __u32 mode = SC_MODE_COUNT;
const volatile __u32 key_mode = KAGG_BPF_KEY_NONE;
const volatile bool filter_tgid = false;
const volatile __u64 unit_ns = 1000;
const volatile __u32 unit_log2 = 9; /* floor(log2(unit_ns)) */

struct start {
	__u64 ts;
	__u64 nr;
};

KAGG_START_MAPS(struct start);

KAGG_ID_SET(tgids);

KAGG_COUNTERS_MAP(SC_CNT_MAX);

/* Calls per syscall: index gen * SC_NR_MAX + nr. */
KAGG_PERCPU_ARRAY(counts, 2 * SC_NR_MAX, __u64);

/* Calls per key (-P, --per-thread, -N, --per-cgroup; --errors). */
KAGG_SHARED_HASH(key_counts, 10240, struct kagg_key, struct sc_count);

/* Latency per syscall: index gen * SC_NR_MAX + nr. */
KAGG_SHARED_ARRAY(lat, 2 * SC_NR_MAX, struct kagg_hist_val);

KAGG_KEY_HIST_MAP;
/*
 * --buckets exp:S (lat unused): latencies in exp_cells by syscall, and the first
 * exp_dense_max syscalls found frequent get a dense histogram each from then on, index
 * gen * exp_dense_max + exp_dense_id[nr] - 1 of exp_hist (kagg_exp_sparse_add()).
 * exp_dense_max 0: exp_cells alone.
 */
KAGG_EXP_HIST_MAP;
KAGG_EXP_CELLS;
const volatile __u32 exp_dense_max = 0;
__u64 exp_dense_id[SC_NR_MAX]; /* 64 bits: the atomics of BPF ISA v2 */
__u64 exp_dense_next = 0;

KAGG_COUNTERS_GET

/* Shared stamp keys: (current task, entry or exit). */
#define STAMP_ENTER 1
#define STAMP_EXIT 2

/*
 * --mode both: stamp the event for both paths (time, generation, armed);
 * false when not armed.  Otherwise the aggregating programs read the armed
 * flag, clock and generation themselves, only where they need them.
 */
static __always_inline bool sc_stamp(__u64 type, __u64 *now, __u32 *g, const bool first)
{
	return kagg_event_stamp((__u64)bpf_get_current_task(), type, now, g, first);
}

/* Is current (task, from bpf_get_current_task_btf() when btf) in an ia32 syscall? */
static __always_inline bool in_compat(struct task_struct *task, const bool btf)
{
	struct task_struct *t;

#if defined(__TARGET_ARCH_arm64)
	/* an AArch32 task: TIF_32BIT in its thread_info flags */
	if (btf)
		return task->thread_info.flags & (1UL << TIF_32BIT_ARM64);
	t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, thread_info.flags) & (1UL << TIF_32BIT_ARM64);
#else
	if (btf)
		return task->thread_info.status & TS_COMPAT;
	t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, thread_info.status) & TS_COMPAT;
#endif
}

/* The tgid filter (-p): whether the process of id (pid_tgid) is one it takes. */
static __always_inline bool tgid_selected(__u64 id)
{
	__u32 tgid = id >> 32;

	return !filter_tgid || bpf_map_lookup_elem(&tgids, &tgid);
}

/* The number check: false (compat calls counted in c, when given) for a call not counted. */
static __always_inline bool nr_selected(struct counters *c, __u64 nr, struct task_struct *task,
					const bool btf)
{
	if (nr >= SC_NR_MAX || in_compat(task, btf)) {
		if (c)
			c->cnt[SC_CNT_SKIP_COMPAT]++;
		return false;
	}
	return true;
}

/* Filters and number check; false when the call is not to be counted. */
static __always_inline bool selected(struct counters *c, __u64 nr, __u64 id,
				     struct task_struct *task, const bool btf)
{
	return tgid_selected(id) && nr_selected(c, nr, task, btf);
}

/* key (zeroed) of the current task, of pid_tgid id, for the syscall of aux in generation g. */
static __always_inline void key_fill(struct kagg_key *key, __u64 id, __u64 aux, __u32 g)
{
	key->gen = g;
	key->aux = aux;
	if (key_mode == KAGG_BPF_KEY_NONE) {
		key->kstack = KAGG_NO_STACK;
		key->ustack = KAGG_NO_STACK;
		return;
	}
	kagg_key_task(key, key_mode, (struct task_struct *)bpf_get_current_task(), id >> 32,
		      (__u32)id);
}

static __always_inline void count_key(struct counters *c, __u64 id, __u64 aux, __u32 g)
{
	struct kagg_key key = {};
	struct sc_count *v, zero = {};

	key_fill(&key, id, aux, g);
	v = bpf_map_lookup_elem(&key_counts, &key);
	if (!v) {
		bpf_get_current_comm(zero.comm, sizeof(zero.comm));
		bpf_map_update_elem(&key_counts, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&key_counts, &key);
		if (!v) {
			c->cnt[SC_CNT_DROP_KEYS_FULL]++;
			return;
		}
	}
	kagg_add(&v->count, 1);
	c->cnt[SC_CNT_RECORDED]++;
}

static __always_inline struct start *start_get(struct task_struct *task, __u32 tid, bool create,
					       const bool btf)
{
	struct start init = {};

	return kagg_start_get(&start_store, &start_hash, &init, task, tid, create, btf);
}

static __always_inline int on_enter(long nr, const bool btf)
{
	struct task_struct *task = NULL;
	struct counters *c;
	struct start *s;
	__u64 *v, id = 0, now = 0;
	__u32 idx, zero = 0, g = 0;

	if (share_event) {
		c = bpf_map_lookup_elem(&counters, &zero);
		if (!c || !sc_stamp(STAMP_ENTER, &now, &g, true))
			return 0;
	} else {
		c = counters_get();
		if (!c)
			return 0;
	}
	c->cnt[SC_CNT_EVENTS]++;
	/* The ids cost a helper call: only fetched when something needs them. */
	if (filter_tgid || key_mode != KAGG_BPF_KEY_NONE || !btf)
		id = bpf_get_current_pid_tgid();
	if (btf)
		task = bpf_get_current_task_btf(); /* one call for both uses */
	if (!selected(c, (__u64)nr, id, task, btf))
		return 0;
	if (mode == SC_MODE_LATENCY) {
		s = start_get(task, (__u32)id, true, btf);
		if (!s) {
			c->cnt[SC_CNT_DROP_STORAGE]++;
			return 0;
		}
		s->nr = nr;
		s->ts = share_event ? now : bpf_ktime_get_ns();
		return 0;
	}
	if (!share_event)
		g = kagg_gen();
	if (key_mode != KAGG_BPF_KEY_NONE) {
		count_key(c, id, nr, g);
		return 0;
	}
	idx = g * SC_NR_MAX + (__u32)nr;
	v = bpf_map_lookup_elem(&counts, &idx);
	if (v) {
		(*v)++;
		c->cnt[SC_CNT_RECORDED]++;
	}
	return 0;
}

static __always_inline __u64 regs_nr(struct pt_regs *regs, const bool btf)
{
	return btf ? (__u64)regs->KAGG_REGS_SYSCALL_NR
		   : (__u64)BPF_CORE_READ(regs, KAGG_REGS_SYSCALL_NR);
}

static __always_inline void latency_add(struct counters *c, __u64 id, __u64 nr, __u64 delta,
					__u32 g)
{
	struct kagg_key key = {};
	struct kagg_key_hist *kh;
	__u32 idx;
	struct task_struct *t;

	if (key_mode == KAGG_BPF_KEY_NONE) {
		idx = g * SC_NR_MAX + (__u32)(nr & (SC_NR_MAX - 1));
		if (exp_words) {
			/* exp_dense_max 0: exp_hist too small to be verified, never used */
			if (!kagg_exp_sparse_add(
				    &exp_cells, &exp_hist, &exp_dense_id[nr & (SC_NR_MAX - 1)],
				    &exp_dense_next, exp_dense_max, g,
				    (__u32)(nr & (SC_NR_MAX - 1)), delta, exp_words, &exp_params)) {
				c->cnt[SC_CNT_DROP_EXP_CELLS]++;
				return;
			}
		} else {
			kagg_hist_add_shared(&lat, idx, kagg_log2_div(delta, unit_ns, unit_log2),
					     delta);
		}
		c->cnt[SC_CNT_RECORDED]++;
		return;
	}
	key_fill(&key, id, nr, g);
	t = (struct task_struct *)bpf_get_current_task();
	kh = kagg_key_hist_get(&key_hist, &key, t->comm);
	if (!kh) {
		c->cnt[SC_CNT_DROP_KEYS_FULL]++;
		return;
	}
	kagg_key_hist_add(kh, kagg_log2_div(delta, unit_ns, unit_log2), delta);
	c->cnt[SC_CNT_RECORDED]++;
}

static __always_inline int on_exit(struct pt_regs *regs, long ret, const bool btf)
{
	struct counters *c = NULL;
	__u64 id, now = 0;
	__u32 zero = 0, g = 0;
	struct start *s;
	bool on = true;

	if (share_event) /* first: both paths take this event's stamp, whatever it is */
		on = sc_stamp(STAMP_EXIT, &now, &g, true);
	if (mode == SC_MODE_ERRORS) {
		if (ret >= 0 || ret < -MAX_ERRNO)
			return 0;
		c = share_event ? (on ? bpf_map_lookup_elem(&counters, &zero) : NULL)
				: counters_get();
		if (!c)
			return 0;
		c->cnt[SC_CNT_EVENTS]++;
		id = bpf_get_current_pid_tgid();
		if (!selected(c, regs_nr(regs, btf), id, btf ? bpf_get_current_task_btf() : NULL,
			      btf))
			return 0;
		count_key(c, id, SC_AUX(regs_nr(regs, btf), -ret), share_event ? g : kagg_gen());
		return 0;
	}
	/* Latency. */
	id = key_mode != KAGG_BPF_KEY_NONE || !btf ? bpf_get_current_pid_tgid() : 0;
	s = start_get(btf ? bpf_get_current_task_btf() : NULL, (__u32)id, false, btf);
	if (!s || !s->ts)
		return 0;
	if (share_event) {
		c = on ? bpf_map_lookup_elem(&counters, &zero) : NULL;
	} else {
		now = bpf_ktime_get_ns();
		c = counters_get();
		g = kagg_gen();
	}
	if (c)
		latency_add(c, id, s->nr, now - s->ts, g);
	s->ts = 0;
	if (!btf) {
		__u32 tid = (__u32)id;

		bpf_map_delete_elem(&start_hash, &tid);
	}
	return 0;
}

/* ---------------------------------------------------------------- streaming */

/* The six argument registers of a system call's regs into r->args, with PT_REGS_PARMn_HOW. */
#define SC_READ_ARGS(r, regs, HOW)                        \
	do {                                              \
		(r)->args[0] = PT_REGS_PARM1_##HOW(regs); \
		(r)->args[1] = PT_REGS_PARM2_##HOW(regs); \
		(r)->args[2] = PT_REGS_PARM3_##HOW(regs); \
		(r)->args[3] = PT_REGS_PARM4_##HOW(regs); \
		(r)->args[4] = PT_REGS_PARM5_##HOW(regs); \
		(r)->args[5] = PT_REGS_PARM6_##HOW(regs); \
	} while (0)

/*
 * A record's head and the fields both types have (id: the current task's
 * pid_tgid); NULL when the ring is full (counted).
 */
static __always_inline struct sc_rec *rec_begin(__u64 now, __u32 g, __u8 type, bool sel, __u64 id,
						__u64 nr, long ret)
{
	struct sc_rec *r;

	r = kagg_rec_reserve(sizeof(*r), now, g);
	if (!r)
		return NULL;
	r->type = type;
	r->pad[0] = r->pad[1] = 0;
	r->pad2 = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->sel = sel;
	r->pid = (__u32)id;
	r->tgid = id >> 32;
	r->nr = nr;
	r->ret = ret;
	return r;
}

static __always_inline int enter_stream(struct pt_regs *regs, long nr, const bool btf)
{
	struct sc_rec *r;
	struct counters *c;
	__u32 zero = 0, g;
	__u64 now, id;
	bool sel;

	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c || !sc_stamp(STAMP_ENTER, &now, &g, false))
		return 0;
	if (!share_event) /* streaming alone: this program counts the events */
		c->cnt[SC_CNT_EVENTS]++;
	id = bpf_get_current_pid_tgid();
	/*
	 * A call of a process the tgid filter leaves out is no record: nothing of it is counted
	 * or landed (the aggregating programs likewise only count it among the events), and a
	 * system flooding calls elsewhere cannot fill the ring buffer the selected ones need.
	 */
	if (!tgid_selected(id))
		return 0;
	/* with both paths, the aggregating program counts the skipped calls */
	sel = nr_selected(share_event ? NULL : c, (__u64)nr,
			  btf ? bpf_get_current_task_btf() : NULL, btf);
	r = rec_begin(now, g, SC_REC_ENTER, sel, id, nr, 0);
	if (!r)
		return 0;
	/* the system call's own argument registers (bpf_tracing.h, per architecture) */
	if (btf)
		SC_READ_ARGS(r, regs, SYSCALL);
	else
		SC_READ_ARGS(r, regs, CORE_SYSCALL);
	kagg_rec_submit(r);
	return 0;
}

static __always_inline int exit_stream(struct pt_regs *regs, long ret, const bool btf)
{
	struct sc_rec *r;
	struct counters *c;
	__u32 zero = 0, g;
	__u64 now, id, nr;
	bool sel;

	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c || !sc_stamp(STAMP_EXIT, &now, &g, false))
		return 0;
	if (!share_event && mode == SC_MODE_ERRORS && ret < 0 && ret >= -MAX_ERRNO)
		c->cnt[SC_CNT_EVENTS]++;
	id = bpf_get_current_pid_tgid();
	if (!tgid_selected(id)) /* no record, as in enter_stream() */
		return 0;
	nr = regs_nr(regs, btf);
	/* errors mode counts skipped calls among the failed ones only, as on_exit() does */
	sel = nr_selected(
		share_event || mode != SC_MODE_ERRORS || ret >= 0 || ret < -MAX_ERRNO ? NULL : c,
		nr, btf ? bpf_get_current_task_btf() : NULL, btf);
	r = rec_begin(now, g, SC_REC_EXIT, sel, id, nr, ret);
	if (!r)
		return 0;
	r->args[0] = r->args[1] = r->args[2] = r->args[3] = r->args[4] = r->args[5] = 0;
	kagg_rec_submit(r);
	return 0;
}

KAGG_TP_PROGS(syscount_stream_enter, "sys_enter", enter_stream(regs, nr, btf), struct pt_regs *regs,
	      long nr);
KAGG_TP_PROGS(syscount_stream_exit, "sys_exit", exit_stream(regs, ret, btf), struct pt_regs *regs,
	      long ret);

/* ---------------------------------------------------------------- aggregating */

KAGG_TP_PROGS(syscount_enter, "sys_enter", on_enter(nr, btf), struct pt_regs *regs, long nr);
KAGG_TP_PROGS(syscount_exit, "sys_exit", on_exit(regs, ret, btf), struct pt_regs *regs, long ret);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
