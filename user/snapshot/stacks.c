// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stacks.c - the stacks of a snapshot, from captured addresses (see stacks.h).
 *
 *   stk_add:    ips --resolver--> kagg_sym --sym__format--> name --intern--> frame
 *               (leading kernel frames of the tracing machinery dropped first)
 *   stk_finish: sort by (pid, tid, errors, frame names), merge equal neighbours,
 *               sort by total_ns, count, then pid, tid and names for a stable order.
 *
 * Names are interned per snapshot, one copy per distinct string, so two stacks read the same
 * exactly when their frame pointers are equal: merging compares pointers, never strings.
 * A merged frame keeps the ip of the first stack merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "snapshot/stacks.h"

#define STK_NAME_MAX 1100 /* a readable name (up to 1024) and its "+0x..." */

struct stk_names {
	const char **slots; /* open addressing, NULL = empty; strings owned by the snapshot */
	size_t cap;	    /* power of two */
	size_t len;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int names_grow(struct stk_names *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, j;
	const char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->slots[i])
			continue;
		for (j = name_hash(t->slots[i]) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The snapshot's one copy of name; NULL on ENOMEM. */
static const char *names_intern(struct stk_names *t, struct kagg_snapshot *snap, const char *name)
{
	size_t i;

	if (t->len * 2 >= t->cap && names_grow(t))
		return NULL;
	for (i = name_hash(name) & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->slots[i], name))
			return t->slots[i];
	t->slots[i] = snap_strdup(snap, name);
	if (!t->slots[i])
		return NULL;
	t->len++;
	return t->slots[i];
}

static int res_kernel(void *ctx, uint64_t addr, struct sym *out)
{
	return syms__kernel(ctx, addr, out);
}

static int res_user(void *ctx, int pid, uint64_t addr, struct sym *out)
{
	return syms__user(ctx, pid, addr, out);
}

void stk_syms_resolver(struct syms *syms, struct stk_resolver *res)
{
	res->kernel = res_kernel;
	res->user = res_user;
	res->ctx = syms;
}

int stk_init(struct stk *b, struct kagg_snapshot *snap, const struct stk_resolver *res, bool addrs,
	     bool from_tracer)
{
	memset(b, 0, sizeof(*b));
	b->names = calloc(1, sizeof(*b->names));
	if (!b->names)
		return -ENOMEM;
	b->snap = snap;
	b->res = *res;
	b->addrs = addrs;
	b->from_tracer = from_tracer;
	return 0;
}

void stk_fini(struct stk *b)
{
	if (!b)
		return;
	if (b->names)
		free(b->names->slots);
	free(b->names);
	free(b->stacks);
	b->names = NULL;
	b->stacks = NULL;
	b->nr = b->cap = 0;
}

/*
 * A frame of the machinery that ran the BPF program, above the traced event: the program
 * itself, BPF trampolines and dispatchers (all in kallsyms module [bpf]), and the glue between
 * a tracepoint and its programs (raw_tp and tp_btf: __traceiter_EVENT, __bpf_trace_EVENT,
 * bpf_trace_runN; tracepoint: perf_trace_EVENT, perf_trace_run_bpf_submit, trace_call_bpf).
 * Which of these show, and how many, depends on the attach type and on the kernel's inlining
 * (6.18 with tp_btf or raw_tp: bpf_trace_run4 and the program), so they are recognised by name
 * rather than skipped by a fixed count in bpf_get_stackid's flags, which would cut a frame
 * of the workload wherever the count is one too many.
 */
bool stk_tracing_frame(const struct sym *sym)
{
	static const char *const prefixes[] = {
		"bpf_trace_run", "__bpf_trace_",   "__traceiter_",
		"perf_trace_",	 "trace_call_bpf", "bpf_trampoline_"
	};
	size_t i;

	if (sym->module && !strcmp(sym->module, "bpf"))
		return true;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(sym->name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* Name the n frames of ips into a snapshot-owned array; counts unknown frames by cause. */
static int stk_frames(struct stk *b, const uint64_t *ips, unsigned int n, bool user, int pid,
		      const struct kagg_frame *const **out, unsigned int *nr)
{
	unsigned int i, k = 0;
	struct kagg_frame *fr;
	char buf[STK_NAME_MAX];
	bool top = !user && b->from_tracer;

	*out = NULL;
	*nr = 0;
	fr = snap_frames(b->snap, n, out);
	if (!fr)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct sym sym = {};
		int err;

		err = user ? b->res.user(b->res.ctx, pid, ips[i], &sym)
			   : b->res.kernel(b->res.ctx, ips[i], &sym);
		if (top && !err && stk_tracing_frame(&sym))
			continue;
		top = false;
		b->frames++;
		if (err && (!user || !(err == -ENOENT && sym.module)))
			memset(&sym, 0, sizeof(sym)); /* -ENOENT with a module still names it */
		if (!sym.name) {
			if (user && !sym.module) {
				b->no_maps++;
			} else {
				b->no_symbols++;
				b->no_symbols_dbg += sym.dbg_why != 0;
			}
		} else if (sym.src > SYM_SRC_NONE && sym.src < SYM_SRC_MAX) {
			b->by_src[sym.src]++;
		}
		fr[k].ip = ips[i];
		sym__format(&sym, ips[i], b->addrs ? SYM_ADDRS : 0, buf, sizeof(buf));
		fr[k].sym = names_intern(b->names, b->snap, buf);
		if (!fr[k].sym)
			return -ENOMEM;
		if (sym.module) {
			fr[k].module = names_intern(b->names, b->snap, sym.module);
			if (!fr[k].module)
				return -ENOMEM;
		}
		k++;
	}
	*nr = k;
	return 0;
}

int stk_add(struct stk *b, const struct stk_raw *r)
{
	struct kagg_stack *st;
	int err;

	if (GROW_ARRAY(b->stacks, b->cap, b->nr, 64))
		return -ENOMEM;
	st = &b->stacks[b->nr];
	memset(st, 0, sizeof(*st));
	st->sz = sizeof(*st);
	st->pid = r->pid;
	st->tid = r->tid;
	memcpy(st->comm, r->comm, sizeof(st->comm));
	st->comm[sizeof(st->comm) - 1] = '\0';
	st->total_ns = r->total_ns;
	st->count = r->count;
	st->kstack_err = r->kstack_err;
	st->ustack_err = r->ustack_err;
	b->lost += r->klost + r->ulost;
	err = stk_frames(b, r->kips, r->nr_kips, false, r->pid, &st->kframes, &st->nr_kframes);
	if (!err)
		err = stk_frames(b, r->uips, r->nr_uips, true, r->pid, &st->uframes,
				 &st->nr_uframes);
	if (err)
		return err;
	b->nr++;
	return 0;
}

static int cmp_frames(const struct kagg_frame *const *x, const struct kagg_frame *const *y,
		      unsigned int n, bool by_ptr)
{
	unsigned int i;
	int c;

	for (i = 0; i < n; i++) {
		if (x[i]->sym == y[i]->sym)
			continue;
		if (by_ptr)
			return (uintptr_t)x[i]->sym < (uintptr_t)y[i]->sym ? -1 : 1;
		c = strcmp(x[i]->sym, y[i]->sym);
		if (c)
			return c;
	}
	return 0;
}

/* Who, capture errors, then frames: equal means "the same stack". */
static int cmp_same(const struct kagg_stack *x, const struct kagg_stack *y, bool by_ptr)
{
	int c;

#define CMP_FIELD(f)                                 \
	do {                                         \
		if (x->f != y->f)                    \
			return x->f < y->f ? -1 : 1; \
	} while (0)
	CMP_FIELD(pid);
	CMP_FIELD(tid);
	CMP_FIELD(kstack_err);
	CMP_FIELD(ustack_err);
	CMP_FIELD(nr_kframes);
	CMP_FIELD(nr_uframes);
#undef CMP_FIELD
	c = cmp_frames(x->kframes, y->kframes, x->nr_kframes, by_ptr);
	return c ? c : cmp_frames(x->uframes, y->uframes, x->nr_uframes, by_ptr);
}

static int cmp_merge(const void *a, const void *b)
{
	return cmp_same(a, b, true);
}

static int cmp_order(const void *a, const void *b)
{
	const struct kagg_stack *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return cmp_same(x, y, false);
}

int stk_finish(struct stk *b)
{
	struct kagg_meta *m = &b->snap->meta;
	size_t i, n = 0;

	if (b->nr)
		qsort(b->stacks, b->nr, sizeof(*b->stacks), cmp_merge);
	for (i = 0; i < b->nr; i++) {
		struct kagg_stack *st = &b->stacks[i];

		if (n && !cmp_same(&b->stacks[n - 1], st, true)) {
			b->stacks[n - 1].total_ns += st->total_ns;
			b->stacks[n - 1].count += st->count;
			if (!b->stacks[n - 1].comm[0])
				memcpy(b->stacks[n - 1].comm, st->comm, sizeof(st->comm));
			continue;
		}
		b->stacks[n++] = *st;
	}
	if (n)
		qsort(b->stacks, n, sizeof(*b->stacks), cmp_order);
	free(b->snap->stacks);
	b->snap->stacks = n ? b->stacks : NULL;
	b->snap->nr_stacks = n;
	if (!n)
		free(b->stacks);
	b->stacks = NULL;
	m->has_frames = true;
	m->frames = b->frames;
	m->frames_no_maps = b->no_maps;
	m->frames_no_symbols = b->no_symbols;
	m->stacks_lost = b->lost;
	m->frames_kallsyms = b->by_src[SYM_SRC_KALLSYMS];
	m->frames_symtab = b->by_src[SYM_SRC_SYMTAB];
	m->frames_dynsym = b->by_src[SYM_SRC_DYNSYM];
	m->frames_minidebuginfo = b->by_src[SYM_SRC_MINIDEBUG];
	m->frames_debugfile = b->by_src[SYM_SRC_DEBUGFILE];
	m->frames_debuginfod = b->by_src[SYM_SRC_DEBUGINFOD];
	m->frames_perfmap = b->by_src[SYM_SRC_PERFMAP];
	m->frames_debuginfod_failed = b->no_symbols_dbg;
	stk_fini(b);
	return 0;
}
