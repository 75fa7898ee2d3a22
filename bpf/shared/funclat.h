/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by bpf/funclat.bpf.c and the library (user/builtin/funclat.c).
 */
#ifndef KAGG_BPF_FUNCLAT_H
#define KAGG_BPF_FUNCLAT_H

#include "shared/common.h"
#include "shared/exp_table.h" /* struct kagg_exp_params, in the skeleton's rodata */

#define FUNCLAT_MAX_FUNCS 1024 /* functions per session (histograms per generation) */
/* Per-CPU log2 histograms while they take at most this (kagg_funclat_opts.percpu_max_bytes) */
#define FUNCLAT_PERCPU_MAX_BYTES (4 << 20)
#define FUNCLAT_MAX_DEPTH 32 /* timed nesting levels per thread */

/*
 * Per-CPU counters (array map `counters`, index = enum value).  Counter 0 is
 * the session's "events seen": function entries of the traced tasks.
 */
enum funclat_counter {
	FUNCLAT_CNT_CALLS = 0,	    /* entries seen (after the pid filter) */
	FUNCLAT_CNT_RETURNS,	    /* latencies recorded */
	FUNCLAT_CNT_DROP_DEPTH,	    /* entry nested deeper than FUNCLAT_MAX_DEPTH: not timed */
	FUNCLAT_CNT_DROP_STORAGE,   /* task storage unavailable at entry or return */
	FUNCLAT_CNT_NO_ENTRY,	    /* return whose entry was not seen (began before attach) */
	FUNCLAT_CNT_LOST_RETURN,    /* entries discarded: their return was never seen */
	FUNCLAT_CNT_DROP_EXP_CELLS, /* exp buckets: latency not counted, exp_cells full */
	FUNCLAT_CNT_MAX,
};

/*
 * Per-thread stack of entry times (task local storage).  Returns pop in LIFO
 * order; id[] lets a return whose entry was missed find its own level.
 */
struct funclat_stack {
	__u64 ts[FUNCLAT_MAX_DEPTH];
	__u16 id[FUNCLAT_MAX_DEPTH];
	__u32 depth; /* calls in progress, may exceed FUNCLAT_MAX_DEPTH (untimed levels) */
	__u32 pad;
};
_Static_assert(sizeof(struct funclat_stack) == 8 * 32 + 2 * 32 + 8, "funclat_stack layout");

#endif /* KAGG_BPF_FUNCLAT_H */
