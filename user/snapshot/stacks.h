/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * stacks.h - internal: builds the stacks of a snapshot from captured addresses.
 *
 *	struct stk b;
 *	stk_init(&b, snap, &resolver, addrs, from_tracer);
 *	for each captured stack: stk_add(&b, &raw);     // symbolized and named at once
 *	stk_finish(&b);                                  // merged, sorted, handed to snap
 *
 * Each frame is named by function ("ns::C::f(int)", "__schedule") or, with addrs, by address
 * ("ns::C::f(int)+0x1a"); stacks that then read the same (same pid, tid, capture errors and
 * frame names) become one, their counts and times summed, so JSON, text and folded output all
 * show the merged stacks.  Kernel stacks captured by the tracing program itself (from_tracer:
 * a tracepoint program's bpf_get_stackid, not a perf event's registers) start with the
 * program and the glue that ran it ([bpf] symbols, bpf_trace_run*, __bpf_trace_*,
 * __traceiter_*, perf_trace_*, trace_call_bpf): those leading frames are dropped, so the stack
 * starts where the traced event happened.  Frames left unknown are counted by cause in the
 * snapshot's meta.
 */
#ifndef KAGG_STACKS_H
#define KAGG_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot/snapshot_internal.h"
#include "syms/syms.h"

/*
 * Whether sym is a frame of the machinery that ran a BPF program (the program, BPF
 * trampolines, the glue between a tracepoint and its programs): the leading frames of a
 * stack captured by the program itself, which from_tracer drops.
 */
bool stk_tracing_frame(const struct sym *sym);

/* Address -> symbol: syms__kernel/syms__user, or a test's own tables. */
struct stk_resolver {
	int (*kernel)(void *ctx, uint64_t addr, struct sym *out);
	int (*user)(void *ctx, int pid, uint64_t addr, struct sym *out);
	void *ctx;
};

/* One captured stack, innermost frame first. */
struct stk_raw {
	int pid;
	int tid;
	char comm[16];
	uint64_t total_ns;
	uint64_t count;
	int kstack_err; /* as struct kagg_stack shows it: 0, -ENOENT, -errno */
	int ustack_err;
	bool klost; /* the kernel stack was to be captured and is not there */
	bool ulost;
	const uint64_t *kips;
	unsigned int nr_kips;
	const uint64_t *uips;
	unsigned int nr_uips;
};

struct stk_names; /* interned frame names */

struct stk {
	struct kagg_snapshot *snap;
	struct stk_resolver res;
	bool addrs;
	bool from_tracer;
	struct kagg_stack *stacks;
	size_t nr;
	size_t cap;
	struct stk_names *names;
	uint64_t frames, no_maps, no_symbols, lost;
	uint64_t by_src[SYM_SRC_MAX]; /* named frames by where the name came from */
	uint64_t no_symbols_dbg;      /* of no_symbols: debuginfod did not give the file's */
};

/* 0 or -ENOMEM.  A failed init needs no stk_fini. */
int stk_init(struct stk *b, struct kagg_snapshot *snap, const struct stk_resolver *res, bool addrs,
	     bool from_tracer);
/* Symbolize and name r's frames into a new stack (strings and arrays owned by the snapshot). */
int stk_add(struct stk *b, const struct stk_raw *r);
/*
 * Merge the stacks that read the same, sort them (largest total_ns, then count, first), hand
 * them to the snapshot (snap->stacks) and fill its meta's frame counts.  Frees the builder:
 * no stk_fini after it.  Returns 0.
 */
int stk_finish(struct stk *b);
/* Drop what was added (error paths).  NULL-safe. */
void stk_fini(struct stk *b);

/* syms__kernel/syms__user as a resolver over syms. */
void stk_syms_resolver(struct syms *syms, struct stk_resolver *res);

#endif
