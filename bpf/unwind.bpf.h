/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * User stacks walked with unwind tables (bpf/shared/unwind.h), for code built without frame
 * pointers.  unw_user_stack() walks from a task's user registers frame by frame: the pc's
 * mapping (a binary search in the process's unw_procs entry), its file's table (unw_files,
 * by build id), the row covering it (a binary search in unw_rows), then CFA, return address
 * and saved rbp as the row says.  In UNW_MODE_AUTO a frame without a table or row is
 * stepped by frame pointer instead.  The stack goes into ustacks under a hash of its
 * addresses, the id above every stack map id; a different stack already there under that id
 * is a collision, -EEXIST, as bpf_get_stackid() says it.
 *
 * The walk runs in bpf_loop() (one callback verified once, KAGG_MAX_STACK frames at most);
 * its reads of user memory are bpf_probe_read_user() (no fault handling: a page not present
 * stops the walk, counted as UNW_STOP_READ).
 *
 * The walk needs bpf_loop() (5.17) and bpf_task_pt_regs() (5.15): a tool calls it only from
 * its own table program, which userspace loads only where the kernel has both (else the fp
 * program, without them, is loaded alone).  It follows x86-64's registers and PLT rule, so
 * it is compiled for x86-64 only (UNW_WALK); the maps exist everywhere.
 */
#ifndef KAGG_UNWIND_BPF_H
#define KAGG_UNWIND_BPF_H

#include "shared/common.h"
#include "shared/unwind.h"

#define EEXIST_ 17
#define EFAULT_ 14
#define ENOMEM_ 12
/* auto mode, no frame had a table: the caller takes the kernel's frame-pointer walk */
#define UNW_NO_TABLE 2

const volatile __u32 unwind = UNW_MODE_FP;

/* Rows of every file's table, mmap()ed and filled by userspace (max_entries: the cap). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unw_row);
} unw_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct unw_file);
} unw_files SEC(".maps");

/* Live processes with tables: 4 KiB each at most (8 MiB), filled as they show up. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct unw_proc);
} unw_procs SEC(".maps");

struct unw_stack {
	__u64 ips[KAGG_MAX_STACK];
};

/* Table-walked stacks (the kernel's fp walk has its own stackmap): 8 MiB. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct unw_stack);
} ustacks SEC(".maps");

/*
 * The walk's state lives in a per-CPU map value, not on the BPF stack: the verifier knows
 * nothing of a map value's contents, so one pass over each bpf_loop() callback covers every
 * iteration (state on the stack would be tracked value by value, iteration by iteration).
 */
struct unw_walk {
	__u64 pc, sp, bp;
	__u64 hash;
	__u32 n;
	__u32 fp;
	__u32 table;
	__s32 stop; /* enum unw_stop, or -1: the walk reached the outermost frame */
	__u32 bp_ok;
	__u32 differ;
};

/* A binary search, one step per bpf_loop() iteration: the last index in [lo, hi) <= key. */
struct unw_search {
	__u64 key;
	__u32 lo, hi, found, any;
};

struct unw_scratch {
	struct unw_stack st;
	struct unw_walk w;
	struct unw_search q;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unw_scratch);
} unw_scratch SEC(".maps");

#if defined(__TARGET_ARCH_x86)
#define UNW_WALK 1

/* What the callbacks get (on the stack, unchanging): the scratch and the process's maps. */
struct unw_ctx {
	struct unw_scratch *sc;
	struct unw_proc *proc;
	struct unw_stack *old;
	bool maps; /* unw_search_step: over proc's maps, else over unw_rows */
};

static long unw_search_step(__u64 i, void *data)
{
	struct unw_ctx *c = data;
	struct unw_search *q = &c->sc->q;
	__u32 mid;
	__u64 v;

	if (q->lo >= q->hi)
		return 1;
	mid = q->lo + (q->hi - q->lo) / 2;
	if (c->maps) {
		if (!c->proc)
			return 1;
		v = c->proc->maps[mid & (UNW_MAX_MAPS - 1)].start;
	} else {
		struct unw_row *r = bpf_map_lookup_elem(&unw_rows, &mid);

		if (!r)
			return 1;
		v = r->pc;
	}
	if (v <= q->key) {
		q->found = mid;
		q->any = 1;
		q->lo = mid + 1;
	} else {
		q->hi = mid;
	}
	return 0;
}

/* The mapping of the process that holds pc, or NULL. */
static __always_inline struct unw_map *unw_find_map(struct unw_ctx *c, __u64 pc)
{
	struct unw_search *q = &c->sc->q;
	struct unw_map *m;

	if (!c->proc)
		return NULL;
	q->key = pc;
	q->lo = 0;
	q->hi = c->proc->nr;
	q->any = 0;
	if (q->hi > UNW_MAX_MAPS)
		q->hi = UNW_MAX_MAPS;
	c->maps = true;
	bpf_loop(8, unw_search_step, c, 0);
	if (!q->any)
		return NULL;
	m = &c->proc->maps[q->found & (UNW_MAX_MAPS - 1)];
	return pc < m->end ? m : NULL;
}

/* The row of f covering file address pc, or NULL. */
static __always_inline struct unw_row *unw_find_row(struct unw_ctx *c, const struct unw_file *f,
						    __u32 pc)
{
	struct unw_search *q = &c->sc->q;
	__u32 found;

	q->key = pc;
	q->lo = f->first;
	q->hi = f->first + f->nr;
	q->any = 0;
	c->maps = false;
	bpf_loop(32, unw_search_step, c, 0);
	if (!q->any)
		return NULL;
	found = q->found;
	return bpf_map_lookup_elem(&unw_rows, &found);
}

/* One frame by frame pointer: 0 to go on, 1 when the walk ends. */
static __always_inline long unw_fp_step(struct unw_walk *w)
{
	__u64 fr[2];

	if (!w->bp) { /* glibc's _start clears rbp: the outermost frame */
		w->stop = -1;
		return 1;
	}
	if (!w->bp_ok) {
		w->stop = UNW_STOP_NO_RBP;
		return 1;
	}
	if (bpf_probe_read_user(fr, sizeof(fr), (void *)w->bp)) {
		w->stop = UNW_STOP_READ;
		return 1;
	}
	w->sp = w->bp + 16;
	w->bp = fr[0];
	w->pc = fr[1];
	w->fp++;
	return 0;
}

static long unw_step(__u64 i, void *data)
{
	struct unw_ctx *c = data;
	struct unw_walk *w = &c->sc->w;
	const struct unw_file *f = NULL;
	struct unw_map *m;
	struct unw_row *r = NULL;
	__u64 look, cfa, ra, bp;
	__u32 n = w->n;

	if (!w->pc) { /* a zero return address ends the chain */
		w->stop = -1;
		return 1;
	}
	if ((__s64)w->pc < 0) {
		w->stop = UNW_STOP_BAD_PC;
		return 1;
	}
	if (n >= KAGG_MAX_STACK) {
		w->stop = UNW_STOP_DEPTH;
		return 1;
	}
	c->sc->st.ips[n] = w->pc;
	w->n = n + 1;
	w->hash = (w->hash ^ w->pc) * 0x100000001b3ULL;

	/* a return address is after its call: look up the call itself */
	look = i ? w->pc - 1 : w->pc;
	m = unw_find_map(c, look);
	if (m)
		f = bpf_map_lookup_elem(&unw_files, &m->file);
	if (f)
		r = unw_find_row(c, f, (__u32)(look - m->bias));
	if (!r || r->cfa == UNW_CFA_NONE) {
		if (unwind == UNW_MODE_AUTO)
			return unw_fp_step(w);
		w->stop = !m ? UNW_STOP_NO_MAP : !f ? UNW_STOP_NO_TABLE : UNW_STOP_NO_ROW;
		return 1;
	}
	switch (r->cfa) {
	case UNW_CFA_RSP:
		cfa = w->sp + r->cfa_off;
		break;
	case UNW_CFA_RBP:
		if (!w->bp_ok) {
			w->stop = UNW_STOP_NO_RBP;
			return 1;
		}
		cfa = w->bp + r->cfa_off;
		break;
	case UNW_CFA_PLT:
		cfa = w->sp + r->cfa_off + ((w->pc & 15) >= (__u64)r->rbp_off ? 8 : 0);
		break;
	default: /* UNW_CFA_END */
		w->stop = -1;
		return 1;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
		w->stop = UNW_STOP_READ;
		return 1;
	}
	if (r->cfa != UNW_CFA_PLT && r->rbp_off) {
		if (r->rbp_off == UNW_RBP_LOST ||
		    bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + 8 * (__s64)r->rbp_off)))
			w->bp_ok = 0;
		else
			w->bp = bp;
	}
	w->sp = cfa;
	w->pc = ra;
	w->table++;
	return 0;
}

/* The tail of the stack past its n frames zeroed; then compared with the one stored. */
static long unw_zero_step(__u64 i, void *data)
{
	struct unw_ctx *c = data;

	if (i < c->sc->w.n)
		return 0;
	if (i >= KAGG_MAX_STACK)
		return 1;
	c->sc->st.ips[i] = 0;
	return 0;
}

static long unw_cmp_step(__u64 i, void *data)
{
	struct unw_ctx *c = data;

	if (i > c->sc->w.n || i >= KAGG_MAX_STACK || !c->old)
		return 1;
	if (c->sc->st.ips[i] != c->old->ips[i]) {
		c->sc->w.differ = 1;
		return 1;
	}
	return 0;
}

/*
 * Walk the user stack of the current task of process tgid from its user registers (pc, sp,
 * bp) into ustacks: the stack id (UNW_STACK_ID_BASE and up), or -EEXIST (another stack has the
 * id), -ENOMEM (ustacks full, counted), -EFAULT (no scratch), -UNW_NO_TABLE (auto, no frame
 * had a table, unless fp_ok).  cnt: the tool's first unwind counter; gen: the generation the
 * id is marked with (UNW_STACK_ID_GEN), 0 in a tool whose stacks outlive a generation.
 */
static __always_inline int unw_user_stack(__u64 pc, __u64 sp, __u64 bp, __u32 tgid, __u64 *cnt,
					  __u32 gen, const bool fp_ok)
{
	struct unw_ctx c = {};
	struct unw_walk *w;
	__u32 zero = 0, id;
	__u64 h;

	c.sc = bpf_map_lookup_elem(&unw_scratch, &zero);
	if (!c.sc)
		return -EFAULT_;
	w = &c.sc->w;
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->bp_ok = 1;
	w->n = w->fp = w->table = w->differ = 0;
	w->hash = 0xcbf29ce484222325ULL;
	w->stop = UNW_STOP_DEPTH;
	c.proc = bpf_map_lookup_elem(&unw_procs, &tgid);
	bpf_loop(KAGG_MAX_STACK + 1, unw_step, &c, 0);
	if (unwind == UNW_MODE_AUTO && !w->table && !fp_ok) {
		/* nothing the kernel's walk would not do better (its leaf without a frame) */
		bpf_loop(KAGG_MAX_STACK, unw_zero_step, &c, 0);
		return -UNW_NO_TABLE;
	}
	cnt[UNW_CNT_FP] += w->fp;
	cnt[UNW_CNT_TABLE] += w->table;
	if (w->stop >= 0 && w->stop < UNW_STOP_MAX)
		cnt[UNW_CNT_STOP + w->stop]++;
	bpf_loop(KAGG_MAX_STACK, unw_zero_step, &c, 0);
	h = w->hash;
	id = UNW_STACK_ID_BASE | (gen & 1 ? UNW_STACK_ID_GEN : 0) |
	     ((__u32)(h ^ (h >> 32)) & UNW_STACK_ID_MASK);
	c.old = bpf_map_lookup_elem(&ustacks, &id);
	if (c.old) {
		bpf_loop(KAGG_MAX_STACK, unw_cmp_step, &c, 0);
		return w->differ ? -EEXIST_ : id;
	}
	if (bpf_map_update_elem(&ustacks, &id, &c.sc->st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&ustacks, &id)) {
		cnt[UNW_CNT_FULL]++;
		return -ENOMEM_;
	}
	return id;
}

/*
 * The user stack of a tool's table program, from the task's user registers: walked by table
 * (table mode; auto, once userspace loaded the process's tables and some frame has one),
 * else by the kernel's frame-pointer walk into kmap, the tool's stack map.  A stack that
 * kmap refuses for a hash collision (-EEXIST: its bucket holds another stack, every later
 * capture of this stack would be refused too) is walked by frame pointer into ustacks,
 * whose ids are 31 bits of a 64-bit hash.
 */
static __always_inline int unw_stack(void *ctx, void *kmap, __u64 pc, __u64 sp, __u64 bp,
				     __u32 tgid, __u64 *cnt, __u32 gen)
{
	int id = -UNW_NO_TABLE;

	if (unwind != UNW_MODE_AUTO || bpf_map_lookup_elem(&unw_procs, &tgid))
		id = unw_user_stack(pc, sp, bp, tgid, cnt, gen, false);
	if (id != -UNW_NO_TABLE)
		return id;
	id = bpf_get_stackid(ctx, kmap, BPF_F_USER_STACK);
	if (id == -EEXIST_)
		id = unw_user_stack(pc, sp, bp, tgid, cnt, gen, true);
	return id;
}

#else
#define UNW_WALK 0
#endif /* __TARGET_ARCH_x86 */

#endif /* KAGG_UNWIND_BPF_H */
