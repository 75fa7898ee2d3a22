/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by bpf/hist.bpf.c and the library (user/builtin/hist.c). */
#ifndef KAGG_BPF_HIST_H
#define KAGG_BPF_HIST_H

#include "shared/common.h"
#include "shared/exp_table.h" /* struct kagg_exp_params, in the skeleton's rodata */

/* Per-CPU counters (array map `counters`); counter 0 = events seen. */
enum hist_counter {
	HIST_CNT_EVENTS = 0,	 /* tracepoint hits while armed */
	HIST_CNT_RECORDED,	 /* values added to a histogram */
	HIST_CNT_FILTERED,	 /* events the --filter rejected (not a loss) */
	HIST_CNT_NEGATIVE,	 /* signed values below 0: no log2 bucket (not recorded) */
	HIST_CNT_DROP_READ,	 /* field could not be read */
	HIST_CNT_DROP_KEYS_FULL, /* per-key map full */
	HIST_CNT_BELOW,		 /* linear: value below lin_min (not recorded) */
	HIST_CNT_ABOVE,		 /* linear: value past the last linear bucket (not recorded) */
	HIST_CNT_DROP_EXP_CELLS, /* --key with exp buckets: value not counted, exp_cells full */
	HIST_CNT_DROP_EXP_KEY,	 /* --key with exp buckets: key wider than 32 bits, not counted */
	HIST_CNT_MAX,
};

/* --filter operators (rodata filter_op). */
enum hist_op {
	HIST_OP_NONE = 0,
	HIST_OP_EQ,
	HIST_OP_NE,
	HIST_OP_LT,
	HIST_OP_LE,
	HIST_OP_GT,
	HIST_OP_GE,
};

/* How the key field is read (rodata key_kind). */
enum hist_key_kind {
	HIST_KEY_NONE = 0,
	HIST_KEY_INT = 1, /* numeric field: key.aux = value */
	HIST_KEY_STR = 2, /* char array: key.aux = hash, comm = the first 15 chars */
};

/* Where a field's value comes from. */
enum hist_src {
	HIST_SRC_RECORD = 0, /* the raw record, at off */
	/*
	 * The current thread id.  common_pid is not in the record a BPF program
	 * sees: perf fills the common fields only for perf's own buffers, and
	 * syscall events put a pt_regs pointer over them.
	 */
	HIST_SRC_TID = 1,
};

/* Where a field sits in the raw record (from the event's format file). */
struct hist_field {
	__u32 off;
	__u32 size; /* 1, 2, 4 or 8 (string keys: bytes to read) */
	__u32 is_signed;
	__u32 src; /* enum hist_src */
};
_Static_assert(sizeof(struct hist_field) == 16, "hist_field layout");

#endif /* KAGG_BPF_HIST_H */
