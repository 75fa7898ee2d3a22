/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by bpf/hist.bpf.c and the library (user/builtin/hist.c). */
#ifndef KAGG_BPF_HIST_H
#define KAGG_BPF_HIST_H

#include "shared/common.h"

/* --filter operators (the tunable filter_op). */
enum hist_op {
	HIST_OP_NONE = 0,
	HIST_OP_EQ,
	HIST_OP_NE,
	HIST_OP_LT,
	HIST_OP_LE,
	HIST_OP_GT,
	HIST_OP_GE,
};

/* How the key field is read (the tunable key_kind). */
enum hist_key_kind {
	HIST_KEY_NONE = 0,
	HIST_KEY_INT = 1, /* numeric field: its value */
	HIST_KEY_STR = 2, /* char array: its first 15 characters */
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

#endif /* KAGG_BPF_HIST_H */
