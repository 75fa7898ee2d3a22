// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * funclat: latency of kernel or user functions, aggregated in the kernel as
 * one log2 histogram per function.
 *
 * Entry pushes (now, function id) on the thread's stack of entry times
 * (task local storage); return pops it and adds now - entry to the
 * histogram of that function.  Nested calls of different functions and
 * recursion of one function are both LIFO per thread, so each return finds
 * its own entry: every level of a recursion of depth D is timed on its own.
 *
 *	entry(f)  -> stack: ... [ts, f]          depth++
 *	return(f) -> top is f: delta = now - ts  depth--
 *	             top is not f (its entry or an inner return was missed):
 *	             search down for f; levels above it are discarded (lost_return);
 *	             not found: the entry was never seen (no_entry), nothing popped.
 *
 * Deeper than FUNCLAT_MAX_DEPTH levels, entries are counted but not timed
 * (drop "depth"); depth keeps counting so the levels below stay matched.
 *
 * The function id is the attach cookie (kprobe, kprobe.multi, uprobe,
 * uprobe.multi); fentry/fexit trace one function, id 0.  Histograms live
 * in a per-CPU array indexed by generation * nr_funcs + id: no hashing and
 * no shared atomics on the hot path; when so many functions on so many CPUs
 * would take too much memory, in an array of the same index that the CPUs
 * share (hist_shared, atomic adds).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "shared/funclat.h"
#include "agg.bpf.h"
#include "core_fixes.bpf.h"

const volatile __u32 target_tgid = 0;	   /* 0: every process */
const volatile bool filter_cgroup = false; /* only tasks under the cgroup at index 0 of cgroup */
const volatile __u32 nr_funcs = 1;
const volatile __u64 unit_ns = 1000;
const volatile __u32 unit_ns_log2 = 9; /* floor(log2(unit_ns)) */

/* Set by userspace once every program is attached, cleared before detaching. */
__u32 armed = 0;

KAGG_TASK_STORAGE(stacks, struct funclat_stack);
/*
 * A kernel without task storage (5.10): the stacks in a hash by thread id,
 * sized by userspace, an entry deleted when its thread's depth is back to 0;
 * a thread that finds it full is counted as drop_storage.
 */
KAGG_MAP(stacks_hash, BPF_MAP_TYPE_HASH, 1, __u32, struct funclat_stack);

KAGG_COUNTERS_MAP(FUNCLAT_CNT_MAX);
/* Histogram of function id in generation g at g * nr_funcs + id (sized by userspace). */
KAGG_HIST_MAP;
/* The same, one copy shared by the CPUs, when userspace sets hist_shared (and sizes it). */
const volatile bool hist_shared = false;
KAGG_MAP(hist_all, BPF_MAP_TYPE_ARRAY, 1, __u32, struct kagg_hist_val);
/*
 * --buckets exp:S: counts and sum in exp_hist at the index of hist when userspace sized
 * it for every function (few functions: exp_dense), else sparse in exp_cells by function
 * id, the first exp_hot_max functions found frequent moving to exp_hist entries of their
 * own (kagg_exp_sparse_add(): exp_hot_id by function id, 0 or the entry + 1); hist is
 * not used then.
 */
KAGG_EXP_HIST_MAP;
KAGG_EXP_CELLS;
const volatile bool exp_dense = false;
const volatile __u32 exp_hot_max = 0;
KAGG_MAP(exp_hot_id, BPF_MAP_TYPE_ARRAY, 1, __u32, __u64); /* sized to nr_funcs by userspace */
__u64 exp_hot_next = 0;

KAGG_MAP(cgroup, BPF_MAP_TYPE_CGROUP_ARRAY, 1, __u32, __u32);

static __always_inline bool traced(void)
{
	if (target_tgid && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return false;
	return !filter_cgroup || bpf_current_task_under_cgroup(&cgroup, 0) == 1;
}

static const struct funclat_stack stack_zero;

static __always_inline struct funclat_stack *stack_get(bool create)
{
	struct funclat_stack *st;
	__u32 tid;

	if (kagg_has_task_storage())
		return bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = (__u32)bpf_get_current_pid_tgid();
	st = bpf_map_lookup_elem(&stacks_hash, &tid);
	if (st || !create)
		return st;
	bpf_map_update_elem(&stacks_hash, &tid, &stack_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&stacks_hash, &tid);
}

/* Depth back to 0: the hash's entry goes (task storage lives with the task). */
static __always_inline void stack_idle(struct funclat_stack *st)
{
	__u32 tid;

	if (kagg_has_task_storage() || st->depth)
		return;
	tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_delete_elem(&stacks_hash, &tid);
}

static __always_inline int on_entry(__u64 id)
{
	struct funclat_stack *st;
	struct counters *c;
	__u32 zero = 0, d;

	if (!traced() || !*(volatile __u32 *)&armed)
		return 0;
	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c)
		return 0;
	c->cnt[FUNCLAT_CNT_CALLS]++;
	st = stack_get(true);
	if (!st) {
		c->cnt[FUNCLAT_CNT_DROP_STORAGE]++;
		return 0;
	}
	d = st->depth;
	if (d >= FUNCLAT_MAX_DEPTH) {
		st->depth = d + 1;
		c->cnt[FUNCLAT_CNT_DROP_DEPTH]++;
		return 0;
	}
	st->ts[d] = bpf_ktime_get_ns();
	st->id[d] = id;
	st->depth = d + 1;
	return 0;
}

static __always_inline int on_return(__u64 id)
{
	__u32 zero = 0, d, i, k, g, idx, fid;
	struct kagg_hist_val *h;
	struct funclat_stack *st;
	struct counters *c;
	__u64 now, delta;
	bool found;

	if (!traced())
		return 0;
	now = bpf_ktime_get_ns();
	c = bpf_map_lookup_elem(&counters, &zero);
	if (!c)
		return 0;
	st = stack_get(false);
	if (!st || !st->depth) {
		if (*(volatile __u32 *)&armed)
			c->cnt[FUNCLAT_CNT_NO_ENTRY]++;
		return 0;
	}
	d = st->depth;
	if (d > FUNCLAT_MAX_DEPTH) { /* an untimed level */
		st->depth = d - 1;
		return 0;
	}
	/*
	 * The masks below are no-ops clang would drop (d <= FUNCLAT_MAX_DEPTH
	 * here), leaving the 6.1 and 6.12 verifiers an index they cannot bound
	 * ("unbounded memory access"): barrier_var() keeps them.
	 */
	i = d - 1;
	barrier_var(i);
	i &= FUNCLAT_MAX_DEPTH - 1;
	if (st->id[i] != (__u16)id) {
		found = false;
		for (k = 1; k < FUNCLAT_MAX_DEPTH; k++) {
			if (k >= d)
				break;
			i = d - 1 - k;
			barrier_var(i);
			i &= FUNCLAT_MAX_DEPTH - 1;
			if (st->id[i] == (__u16)id) {
				found = true;
				break;
			}
		}
		if (!found) {
			c->cnt[FUNCLAT_CNT_NO_ENTRY]++;
			return 0;
		}
		c->cnt[FUNCLAT_CNT_LOST_RETURN] += k;
	}
	delta = now - st->ts[i];
	st->depth = i;
	stack_idle(st);
	if (!*(volatile __u32 *)&armed || id >= nr_funcs)
		return 0;
	g = kagg_gen();
	fid = id;
	idx = g * nr_funcs + fid;
	if (!exp_words && hist_shared) {
		kagg_hist_add_shared(&hist_all, idx, kagg_log2_div(delta, unit_ns, unit_ns_log2),
				     delta);
	} else if (!exp_words) {
		h = bpf_map_lookup_elem(&hist, &idx);
		if (!h)
			return 0;
		h->slots[kagg_log2_div(delta, unit_ns, unit_ns_log2)]++;
		h->sum += delta;
		kagg_ext_put(&h->nmin, &h->max, delta);
	} else if (exp_dense) {
		if (!kagg_exp_hist_add(&exp_hist, idx, delta, exp_words, &exp_params))
			return 0;
	} else if (!kagg_exp_sparse_add(&exp_cells, &exp_hist,
					exp_hot_max ? bpf_map_lookup_elem(&exp_hot_id, &fid) : NULL,
					&exp_hot_next, exp_hot_max, g, fid, delta, exp_words,
					&exp_params)) {
		c->cnt[FUNCLAT_CNT_DROP_EXP_CELLS]++;
		return 0;
	}
	c->cnt[FUNCLAT_CNT_RETURNS]++;
	return 0;
}

SEC("fentry")
int BPF_PROG(funclat_fentry)
{
	return on_entry(0);
}

SEC("fexit")
int BPF_PROG(funclat_fexit)
{
	return on_return(0);
}

/*
 * A probe pair by the function's cookie: the entry program (ENTRY_SEC, ENTRY its
 * libbpf wrapper) and the return program.
 */
#define FUNCLAT_PROBES(ENTRY_SEC, ENTRY, ENTRY_NAME, RET_SEC, RET, RET_NAME)                 \
	SEC(ENTRY_SEC)                                                                       \
	int ENTRY(ENTRY_NAME)                                                                \
	{                                                                                    \
		return on_entry(kagg_has_attach_cookie() ? bpf_get_attach_cookie(ctx) : 0);  \
	}                                                                                    \
	SEC(RET_SEC)                                                                         \
	int RET(RET_NAME)                                                                    \
	{                                                                                    \
		return on_return(kagg_has_attach_cookie() ? bpf_get_attach_cookie(ctx) : 0); \
	}

FUNCLAT_PROBES("kprobe", BPF_KPROBE, funclat_kprobe, "kretprobe", BPF_KRETPROBE, funclat_kretprobe)
FUNCLAT_PROBES("kprobe.multi", BPF_KPROBE, funclat_kprobe_multi, "kretprobe.multi", BPF_KRETPROBE,
	       funclat_kretprobe_multi)
FUNCLAT_PROBES("uprobe", BPF_UPROBE, funclat_uprobe, "uretprobe", BPF_URETPROBE, funclat_uretprobe)
FUNCLAT_PROBES("uprobe.multi", BPF_UPROBE, funclat_uprobe_multi, "uretprobe.multi", BPF_URETPROBE,
	       funclat_uretprobe_multi)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
