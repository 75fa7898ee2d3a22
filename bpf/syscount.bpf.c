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
 * closes the interval.  System-wide aggregates are per-CPU arrays indexed by
 * generation * SC_NR_MAX + syscall number; per-process ones per-CPU hashes.
 *
 * Compat (ia32) syscalls have their own numbering: they are skipped and
 * counted as such, never reported under a 64-bit name.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "syscount.h"
#include "agg.bpf.h"

#define TS_COMPAT 0x0002	/* thread_info.status: in an ia32 syscall */
#define X32_SYSCALL_BIT 0x40000000
#define MAX_ERRNO 4095

const volatile __u32 mode = SC_MODE_COUNT;
const volatile __u32 key_mode = KAGG_BPF_KEY_NONE;
const volatile bool filter_tgid = false;
const volatile __u64 unit_ns = 1000;
const volatile __u32 unit_log2 = 9;	/* floor(log2(unit_ns)) */

__u32 armed = 0;

struct start {
	__u64 ts;
	__u64 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct start);
} start_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

KAGG_COUNTERS_MAP(SC_CNT_MAX);

/* Calls per syscall: index gen * SC_NR_MAX + nr. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * SC_NR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* Calls per key (-P, --errors). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct kagg_key);
	__type(value, struct sc_count);
} key_counts SEC(".maps");

/* Latency per syscall: index gen * SC_NR_MAX + nr. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * SC_NR_MAX);
	__type(key, __u32);
	__type(value, struct kagg_hist_val);
} lat SEC(".maps");

KAGG_KEY_HIST_MAP;

static __always_inline struct counters *counters_get(void)
{
	__u32 zero = 0;

	if (!*(volatile __u32 *)&armed)
		return NULL;
	return bpf_map_lookup_elem(&counters, &zero);
}

/* Is current (task, from bpf_get_current_task_btf() when btf) in an ia32 syscall? */
static __always_inline bool in_compat(struct task_struct *task, const bool btf)
{
	struct task_struct *t;

	if (btf)
		return task->thread_info.status & TS_COMPAT;
	t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, thread_info.status) & TS_COMPAT;
}

/* Filters and number check; false when the call is not to be counted. */
static __always_inline bool selected(struct counters *c, __u64 nr, __u64 id,
				     struct task_struct *task, const bool btf)
{
	__u32 tgid;

	if (filter_tgid) {
		tgid = id >> 32;
		if (!bpf_map_lookup_elem(&tgids, &tgid))
			return false;
	}
	if (nr >= SC_NR_MAX || in_compat(task, btf)) {
		c->cnt[SC_CNT_SKIP_COMPAT]++;
		return false;
	}
	return true;
}

static __always_inline void key_fill(struct kagg_key *key, __u64 id, __u64 aux)
{
	key->gen = kagg_gen();
	key->kstack = KAGG_NO_STACK;
	key->ustack = KAGG_NO_STACK;
	key->aux = aux;
	if (key_mode != KAGG_BPF_KEY_NONE)
		key->tgid = id >> 32;
	if (key_mode == KAGG_BPF_KEY_TID)
		key->pid = (__u32)id;
}

static __always_inline void count_key(struct counters *c, __u64 id, __u64 aux)
{
	struct kagg_key key = {};
	struct sc_count *v, zero = {};

	key_fill(&key, id, aux);
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
	v->count++;
	c->cnt[SC_CNT_RECORDED]++;
}

static __always_inline struct start *start_get(struct task_struct *task, __u32 tid, bool create,
					       const bool btf)
{
	struct start init = {}, *s;

	if (btf)
		return bpf_task_storage_get(&start_store, task, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	s = bpf_map_lookup_elem(&start_hash, &tid);
	if (s || !create)
		return s;
	bpf_map_update_elem(&start_hash, &tid, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&start_hash, &tid);
}

static __always_inline int on_enter(long nr, const bool btf)
{
	struct counters *c = counters_get();
	struct task_struct *task = NULL;
	struct start *s;
	__u64 *v, id = 0;
	__u32 idx;

	if (!c)
		return 0;
	c->cnt[SC_CNT_EVENTS]++;
	/* The ids cost a helper call: only fetched when something needs them. */
	if (filter_tgid || key_mode != KAGG_BPF_KEY_NONE || !btf)
		id = bpf_get_current_pid_tgid();
	if (btf)
		task = bpf_get_current_task_btf();	/* one call for both uses */
	if (!selected(c, (__u64)nr, id, task, btf))
		return 0;
	if (mode == SC_MODE_LATENCY) {
		s = start_get(task, (__u32)id, true, btf);
		if (!s) {
			c->cnt[SC_CNT_DROP_STORAGE]++;
			return 0;
		}
		s->nr = nr;
		s->ts = bpf_ktime_get_ns();
		return 0;
	}
	if (key_mode != KAGG_BPF_KEY_NONE) {
		count_key(c, id, nr);
		return 0;
	}
	idx = kagg_gen() * SC_NR_MAX + (__u32)nr;
	v = bpf_map_lookup_elem(&counts, &idx);
	if (v) {
		(*v)++;
		c->cnt[SC_CNT_RECORDED]++;
	}
	return 0;
}

static __always_inline __u64 regs_nr(struct pt_regs *regs, const bool btf)
{
	return btf ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
}

static __always_inline void latency_add(struct counters *c, __u64 id, __u64 nr, __u64 delta)
{
	struct kagg_key key = {};
	struct kagg_key_hist *kh;
	__u32 slot = kagg_log2_div(delta, unit_ns, unit_log2), idx;
	struct task_struct *t;

	if (key_mode == KAGG_BPF_KEY_NONE) {
		idx = kagg_gen() * SC_NR_MAX + (__u32)(nr & (SC_NR_MAX - 1));
		kagg_hist_add(&lat, idx, slot);
		c->cnt[SC_CNT_RECORDED]++;
		return;
	}
	key_fill(&key, id, nr);
	t = (struct task_struct *)bpf_get_current_task();
	kh = kagg_key_hist_get(&key_hist, &key, t->comm);
	if (!kh) {
		c->cnt[SC_CNT_DROP_KEYS_FULL]++;
		return;
	}
	kh->slots[slot]++;
	c->cnt[SC_CNT_RECORDED]++;
}

static __always_inline int on_exit(struct pt_regs *regs, long ret, const bool btf)
{
	struct counters *c;
	__u64 id, now;
	struct start *s;

	if (mode == SC_MODE_ERRORS) {
		if (ret >= 0 || ret < -MAX_ERRNO)
			return 0;
		c = counters_get();
		if (!c)
			return 0;
		c->cnt[SC_CNT_EVENTS]++;
		id = bpf_get_current_pid_tgid();
		if (!selected(c, regs_nr(regs, btf), id, btf ? bpf_get_current_task_btf() : NULL,
			      btf))
			return 0;
		count_key(c, id, SC_AUX(regs_nr(regs, btf), -ret));
		return 0;
	}
	/* Latency. */
	id = key_mode != KAGG_BPF_KEY_NONE || !btf ? bpf_get_current_pid_tgid() : 0;
	s = start_get(btf ? bpf_get_current_task_btf() : NULL, (__u32)id, false, btf);
	if (!s || !s->ts)
		return 0;
	now = bpf_ktime_get_ns();
	c = counters_get();
	if (c)
		latency_add(c, id, s->nr, now - s->ts);
	s->ts = 0;
	if (!btf) {
		__u32 tid = (__u32)id;

		bpf_map_delete_elem(&start_hash, &tid);
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(syscount_enter_tp_btf, struct pt_regs *regs, long nr)
{
	return on_enter(nr, true);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(syscount_exit_tp_btf, struct pt_regs *regs, long ret)
{
	return on_exit(regs, ret, true);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(syscount_enter_raw_tp, struct pt_regs *regs, long nr)
{
	return on_enter(nr, false);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(syscount_exit_raw_tp, struct pt_regs *regs, long ret)
{
	return on_exit(regs, ret, false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
