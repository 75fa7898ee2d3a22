/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Aggregation helpers shared by kagg's BPF programs.  Each program defines
 * its own maps with the shapes of common.h and passes them in; after
 * inlining the map pointers are constants, as the verifier wants.
 *
 * Every aggregate is split in two generations: the program reads the
 * generation once per event (kagg_gen) and writes only to it; userspace
 * flips it, waits for an RCU grace period and reads the retired one.
 */
#ifndef KAGG_AGG_BPF_H
#define KAGG_AGG_BPF_H

#include "shared/common.h"
#include "shared/buckets.h"
#include "maps.bpf.h"
#include "core_fixes.bpf.h"

/*
 * The maps of the same shape in every tool (the skeletons and the library
 * find them by these names):
 *   counters   per-CPU array of one struct counters { __u64 cnt[n]; }
 *   hist       per-CPU array of log2 histograms, one per generation
 *              (userspace may size it to generations * histograms)
 *   key_hist   shared hash of per-key histograms (struct kagg_key, key.gen)
 *   stack_agg  shared hash of stack aggregations (struct kagg_key), with
 *   stackmap   their stacks
 */
#define KAGG_COUNTERS_MAP(n)  \
	struct counters {     \
		__u64 cnt[n]; \
	};                    \
	KAGG_PERCPU_ARRAY(counters, 1, struct counters)

/*
 * counters_get(): this CPU's counters, or NULL while the tool is not armed
 * (userspace sets the global `armed`, which must be declared before).
 */
#define KAGG_COUNTERS_GET                                          \
	static __always_inline struct counters *counters_get(void) \
	{                                                          \
		__u32 zero = 0;                                    \
                                                                   \
		if (!*(volatile __u32 *)&armed)                    \
			return NULL;                               \
		return bpf_map_lookup_elem(&counters, &zero);      \
	}

#define KAGG_HIST_MAP KAGG_PERCPU_ARRAY(hist, 2, struct kagg_hist_val)

#define KAGG_KEY_HIST_MAP KAGG_SHARED_HASH(key_hist, 10240, struct kagg_key, struct kagg_key_hist)

#define KAGG_STACK_MAPS                                                             \
	KAGG_SHARED_HASH(stack_agg, 10240, struct kagg_key, struct kagg_stack_val); \
	KAGG_STACKMAP(stackmap)

/*
 * The switches on one CPU chain: each starts from the task the previous one went to.
 * *chain (a per-CPU counter) holds 1 + the pid the last switch went to, 0 before the first.
 * True when this switch (prev_pid -> next_pid) breaks the chain: a switch the kernel did
 * not deliver (counted as kernel_gaps by the scheduler tools).
 */
static __always_inline bool kagg_chain_break(__u64 *chain, __u32 prev_pid, __u32 next_pid)
{
	bool gap = *chain && *chain != (__u64)prev_pid + 1;

	*chain = (__u64)next_pid + 1;
	return gap;
}

/*
 * One tracepoint program in the two flavours userspace chooses between
 * (user/session/session.c: session_tp_autoload): NAME_tp_btf on "tp_btf/TP" and
 * NAME_raw_tp on "raw_tp/TP".  Both take the tracepoint's arguments (the
 * ..., as BPF_PROG takes them) and return CALL, an expression in which
 * `btf` is true in the first and false in the second (a constant, so each
 * flavour keeps only its own reads).  A kernel without BPF task storage
 * (5.10, kagg_has_task_storage()) runs the first with `btf` false: CO-RE
 * reads and per-task state in the hash by thread id, as raw_tp does (the
 * verifier drops the other branch).
 */
#define KAGG_TP_PROGS(NAME, TP, CALL, ...)                \
	SEC("tp_btf/" TP)                                 \
	int BPF_PROG(NAME##_tp_btf, __VA_ARGS__)          \
	{                                                 \
		const bool btf = kagg_has_task_storage(); \
                                                          \
		return CALL;                              \
	}                                                 \
                                                          \
	SEC("raw_tp/" TP)                                 \
	int BPF_PROG(NAME##_raw_tp, __VA_ARGS__)          \
	{                                                 \
		const bool btf = false;                   \
                                                          \
		return CALL;                              \
	}

/*
 * Exponential buckets (--buckets exp:S): the per-CPU array `exp_hist`, one entry per
 * generation, of u64 words: word 0 the zero bucket, word k >= 1 kagg_exp_slot() k - 1,
 * word exp_words - 1 the sum, then the KAGG_EXT_WORDS of the extremes (nmin, max, as in
 * kagg_hist_val).  Userspace sizes the value ((exp_words + KAGG_EXT_WORDS) * 8) before the load
 * and sets exp_words and exp_params in rodata; exp_words 0: log2 buckets, `hist`.  No
 * BTF value type, so that the value size may change.
 */
#define KAGG_EXP_HIST_MAP                                                     \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                      \
		__uint(max_entries, 2);                                       \
		__uint(key_size, 4); /* no BTF key either: both or neither */ \
		__uint(value_size, 8);                                        \
	} exp_hist SEC(".maps");                                              \
	const volatile __u32 exp_words = 0;                                   \
	const volatile struct kagg_exp_params exp_params = {}

/*
 * Count v in generation g's unkeyed histogram, in a program with KAGG_HIST_MAP and
 * KAGG_EXP_HIST_MAP: exp_hist with exp buckets, else log2 slot of hist.
 */
#define KAGG_HIST_ADD(g, slot, v)                                                   \
	do {                                                                        \
		if (exp_words)                                                      \
			kagg_exp_hist_add(&exp_hist, g, v, exp_words, &exp_params); \
		else                                                                \
			kagg_hist_add(&hist, g, slot, v);                           \
	} while (0)

/*
 * Per-key exp histograms (funclat per function, syscount -L per syscall), sparse: a
 * shared hash `exp_cells` of {count, sum, extremes} keyed by (id, generation << 31 |
 * slot), slot as in exp_hist (0 the zero bucket, k >= 1 kagg_exp_slot() k - 1).  Only the
 * buckets that were hit take a cell; userspace caps the cells (max_entries), and a value
 * whose cell cannot be created is not counted (kagg_exp_cell_add() false: the caller
 * counts the drop).  A histogram's sum and extremes are those of its cells, so that a
 * value costs one hash lookup when its cell exists.  exp_words and exp_params as above
 * (KAGG_EXP_CELLS: the map alone, next to KAGG_EXP_HIST_MAP).
 */
#define KAGG_EXP_CELLS \
	KAGG_SHARED_HASH(exp_cells, 1, struct kagg_exp_cell_key, struct kagg_exp_cell)
#define KAGG_EXP_CELLS_MAP                  \
	KAGG_EXP_CELLS;                     \
	const volatile __u32 exp_words = 0; \
	const volatile struct kagg_exp_params exp_params = {}

/* Snapshot generation, flipped by userspace through the mmap'd .bss. */
__u32 gen = 0;

/* XORed into a value before its extremes compare it (common.h): 1 << 63 for signed values. */
const volatile __u64 kagg_ext_flip = 0;

/* Initial value of new keyed histograms (too large for the BPF stack). */
const struct kagg_key_hist kagg_zero_key_hist = {};

static __always_inline __u32 kagg_gen(void)
{
	return *(volatile __u32 *)&gen & 1;
}

static __always_inline __u32 kagg_slot(__u64 val)
{
	__u32 slot = kagg_log2_64(val);

	return slot < KAGG_SLOTS ? slot : KAGG_SLOTS - 1;
}

/* Add v to *p, a counter every CPU may write (shared maps). */
static __always_inline void kagg_add(__u64 *p, __u64 v)
{
	__sync_fetch_and_add(p, v);
}

/* v as its extremes compare it (kagg_ext_put()). */
static __always_inline __u64 kagg_ext_ord(__u64 v)
{
	return v ^ kagg_ext_flip;
}

/* Count value v in slot of the per-CPU array histogram of generation g. */
static __always_inline void kagg_hist_add(void *hist_map, __u32 g, __u32 slot, __u64 v)
{
	struct kagg_hist_val *h = bpf_map_lookup_elem(hist_map, &g);

	if (h && slot < KAGG_SLOTS) {
		h->slots[slot]++;
		h->sum += v;
		kagg_ext_put(&h->nmin, &h->max, kagg_ext_ord(v));
	}
}

/* Count value v in slot of entry idx of a shared array of histograms. */
static __always_inline void kagg_hist_add_shared(void *hist_map, __u32 idx, __u32 slot, __u64 v)
{
	struct kagg_hist_val *h = bpf_map_lookup_elem(hist_map, &idx);

	if (h && slot < KAGG_SLOTS) {
		kagg_add(&h->slots[slot], 1);
		kagg_add(&h->sum, v);
		kagg_ext_put_shared(&h->nmin, &h->max, kagg_ext_ord(v));
	}
}

/*
 * Count v (> 0 in units of the table's u; 0 in the zero bucket) in the exp histogram of
 * generation g (or at index g of a map userspace sized for more); words and p are the
 * program's rodata exp_words and exp_params: words - 1 slots, the sum, then the
 * KAGG_EXT_WORDS of its extremes.  False when there is no such entry.
 */
static __always_inline bool kagg_exp_hist_add(void *map, __u32 g, __u64 v, __u32 words,
					      const volatile struct kagg_exp_params *p)
{
	__u64 *w = bpf_map_lookup_elem(map, &g);
	__u32 k;

	if (!w || words < 2)
		return false;
	k = v ? kagg_exp_slot(v, p) + 1 : 0;
	if (k < words - 1) {
		w[k]++;
		kagg_ext_put(&w[words], &w[words + 1], kagg_ext_ord(v));
	}
	w[words - 1] += v;
	return true;
}

/* The key of v's cell in the sparse exp histogram id of generation g. */
static __always_inline struct kagg_exp_cell_key
kagg_exp_cell_key(__u32 g, __u32 id, __u64 v, const volatile struct kagg_exp_params *p)
{
	struct kagg_exp_cell_key k = {
		.id = id,
		.slot = (g << 31) | (v ? kagg_exp_slot(v, p) + 1 : 0),
	};

	return k;
}

/* Count v in the existing cell k of map (KAGG_EXP_CELLS): the cell, NULL when none. */
static __always_inline struct kagg_exp_cell *
kagg_exp_cell_hit(void *map, const struct kagg_exp_cell_key *k, __u64 v)
{
	struct kagg_exp_cell *c = bpf_map_lookup_elem(map, k);

	if (c) {
		kagg_add(&c->cnt, 1);
		kagg_add(&c->sum, v);
		kagg_ext_put_shared(&c->nmin, &c->max, kagg_ext_ord(v));
	}
	return c;
}

/* Create cell k counting v (after a miss); false: the map is full. */
static __always_inline bool kagg_exp_cell_new(void *map, const struct kagg_exp_cell_key *k, __u64 v)
{
	struct kagg_exp_cell one = {
		.cnt = 1, .sum = v, .nmin = ~kagg_ext_ord(v), .max = kagg_ext_ord(v)
	};

	if (!bpf_map_update_elem(map, k, &one, BPF_NOEXIST))
		return true;
	/* raced with another CPU creating it: count in the cell it made */
	return kagg_exp_cell_hit(map, k, v) != NULL;
}

/* Count v in the sparse exp histogram id of generation g (KAGG_EXP_CELLS_MAP); false: full. */
static __always_inline bool kagg_exp_cell_add(void *map, __u32 g, __u32 id, __u64 v,
					      const volatile struct kagg_exp_params *p)
{
	struct kagg_exp_cell_key k = kagg_exp_cell_key(g, id, v, p);

	return kagg_exp_cell_hit(map, &k, v) || kagg_exp_cell_new(map, &k, v);
}

/*
 * A sparse exp histogram id of generation g (KAGG_EXP_CELLS) that moves to a dense one
 * of hist_map (an exp_hist) when it proves frequent: once one of its cells reaches
 * KAGG_EXP_HOT values, it takes one of the max dense histograms left (*next:
 * those given out) and *dense_id is set to its index + 1; from then on, with *dense_id
 * set, v goes to entry g * max + *dense_id - 1 of hist_map, no hash lookup.  Its
 * histogram is then the sum of its cells and its dense entry.  dense_id NULL or max 0:
 * cells alone.  Two CPUs taking one for id at once: the first to set *dense_id wins,
 * the other's entry stays unused.  False: not counted (cells full; the caller counts it).
 */
#define KAGG_EXP_HOT 256
static __always_inline bool kagg_exp_sparse_add(void *cells, void *hist_map, __u64 *dense_id,
						__u64 *next, __u32 max, __u32 g, __u32 id, __u64 v,
						__u32 words,
						const volatile struct kagg_exp_params *p)
{
	struct kagg_exp_cell_key k;
	struct kagg_exp_cell *c;
	__u64 d, n;

	if (max && dense_id) {
		d = *dense_id;
		if (d)
			return kagg_exp_hist_add(hist_map, g * max + (__u32)d - 1, v, words, p);
	}
	k = kagg_exp_cell_key(g, id, v, p);
	c = kagg_exp_cell_hit(cells, &k, v);
	if (!c)
		return kagg_exp_cell_new(cells, &k, v);
	if (max && dense_id && *(volatile __u64 *)&c->cnt >= KAGG_EXP_HOT &&
	    !*(volatile __u64 *)dense_id && *(volatile __u64 *)next < max) {
		n = __sync_fetch_and_add(next, 1);
		if (n < max)
			__sync_val_compare_and_swap(dense_id, 0, n + 1);
	}
	return true;
}

/* Count value v in slot of keyed histogram kh. */
static __always_inline void kagg_key_hist_add(struct kagg_key_hist *kh, __u32 slot, __u64 v)
{
	if (slot < KAGG_SLOTS) {
		kagg_add(&kh->slots[slot], 1);
		kagg_add(&kh->sum, v);
		kagg_ext_put_shared(&kh->nmin, &kh->max, kagg_ext_ord(v));
	}
}

/*
 * The keyed histogram for key, created (with comm copied from comm_src, a
 * kernel pointer to a task's comm) when missing.  NULL when the map is full.
 */
static __always_inline struct kagg_key_hist *kagg_key_hist_get(void *map, struct kagg_key *key,
							       const char *comm_src)
{
	struct kagg_key_hist *kh = bpf_map_lookup_elem(map, key);

	if (kh)
		return kh;
	bpf_map_update_elem(map, key, &kagg_zero_key_hist, BPF_NOEXIST);
	kh = bpf_map_lookup_elem(map, key);
	if (kh)
		bpf_probe_read_kernel_str(kh->comm, sizeof(kh->comm), comm_src);
	return kh;
}

/*
 * Count v in key's histogram of key_map (created with comm from comm_src, as
 * kagg_key_hist_get()): in log2 slot when words (the program's exp_words) is 0,
 * else in the sparse exp histogram id of generation key->gen (cells and p: the
 * program's exp_cells and exp_params), count and sum in the cell.  With exp
 * buckets a value whose cell exists costs that one lookup: the key's entry (its
 * comm, for the reader) was made with the first of its cells in the generation,
 * and is only looked at, and made when missing, before a cell is created.  False
 * when it could not, counted in *keys_full (key_map full) or *cells_full (no
 * exp cell).
 */
static __always_inline bool kagg_keyed_add(void *key_map, struct kagg_key *key,
					   const char *comm_src, __u32 slot, __u64 v, void *cells,
					   __u32 words, __u32 id,
					   const volatile struct kagg_exp_params *p,
					   __u64 *keys_full, __u64 *cells_full)
{
	struct kagg_exp_cell_key k = {};
	struct kagg_key_hist *kh;

	if (words) {
		k = kagg_exp_cell_key(key->gen, id, v, p);
		if (kagg_exp_cell_hit(cells, &k, v))
			return true;
	}
	kh = kagg_key_hist_get(key_map, key, comm_src);
	if (!kh) {
		(*keys_full)++;
		return false;
	}
	if (!words) {
		kagg_key_hist_add(kh, slot, v);
		return true;
	}
	if (!kagg_exp_cell_new(cells, &k, v)) {
		(*cells_full)++;
		return false;
	}
	return true;
}

/*
 * Task t's value (thread id tid) in the KAGG_START_MAPS store (task storage, tp_btf) or
 * hash (raw_tp), created from init when create; NULL when missing or not created.
 */
static __always_inline void *kagg_start_get(void *store, void *hash, const void *init,
					    struct task_struct *t, __u32 tid, bool create,
					    const bool btf)
{
	void *s;

	if (btf)
		return bpf_task_storage_get(store, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	s = bpf_map_lookup_elem(hash, &tid);
	if (s || !create)
		return s;
	bpf_map_update_elem(hash, &tid, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(hash, &tid);
}

/* The stack aggregation entry for key, created when missing; NULL when full. */
static __always_inline struct kagg_stack_val *kagg_stack_get(void *map, struct kagg_key *key,
							     const char *comm_src)
{
	struct kagg_stack_val *v = bpf_map_lookup_elem(map, key), zero = {};

	if (v)
		return v;
	bpf_probe_read_kernel_str(zero.comm, sizeof(zero.comm), comm_src);
	bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

#endif
