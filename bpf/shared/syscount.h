/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by bpf/syscount.bpf.c and the library (user/builtin/syscount.c). */
#ifndef KAGG_BPF_SYSCOUNT_H
#define KAGG_BPF_SYSCOUNT_H

#include "shared/common.h"
#include "shared/exp_table.h" /* struct kagg_exp_params, in the skeleton's rodata */

/* Syscall numbers counted: [0, SC_NR_MAX).  x86_64 uses < 512 (x32 ones are skipped). */
#define SC_NR_MAX 1024

/* What the programs aggregate (rodata `mode`). */
enum sc_mode {
	SC_MODE_COUNT = 0,   /* calls per syscall (sys_enter) */
	SC_MODE_ERRORS = 1,  /* failed calls per (syscall, errno) (sys_exit) */
	SC_MODE_LATENCY = 2, /* latency histogram per syscall (sys_enter + sys_exit) */
};

/* Per-CPU counters (array map `counters`, index = enum value). */
enum sc_counter {
	SC_CNT_EVENTS = 0,     /* syscalls seen (entries, or exits in errors mode) */
	SC_CNT_RECORDED,       /* calls aggregated */
	SC_CNT_SKIP_COMPAT,    /* ia32 / x32 syscalls: other numbering, not counted */
	SC_CNT_DROP_STORAGE,   /* latency: entry time not stored (task storage / hash full) */
	SC_CNT_DROP_KEYS_FULL, /* per-key map full: call not aggregated */
	SC_CNT_DROP_EXP_CELLS, /* exp buckets: latency not counted, exp_cells full */
	SC_CNT_MAX,
};

enum sc_rec_type {
	SC_REC_ENTER = 0, /* raw_syscalls:sys_enter */
	SC_REC_EXIT = 1,  /* raw_syscalls:sys_exit */
};

/*
 * One streamed raw_syscalls event: enough to rebuild the kernel's sys_enter
 * or sys_exit record and to count, time or classify the call in userspace
 * exactly as the aggregating programs do.  The filters (-p, ia32/x32
 * calls) are decided in BPF and carried in `sel`.
 */
struct sc_rec {
	KAGG_REC_HDR_FIELDS; /* ts, seq, cpu, gen: struct kagg_rec_hdr */
	__u8 type;	     /* enum sc_rec_type */
	__u8 sel;	     /* passes -p, a 64-bit syscall numbered below SC_NR_MAX */
	__u8 pad[2];
	__s32 pid; /* current thread */
	__s32 tgid;
	__u32 pad2;
	__s64 nr;      /* syscall number (exit: regs->orig_ax) */
	__s64 ret;     /* exit: return value */
	__u64 args[6]; /* enter: arguments */
	char comm[KAGG_COMM_LEN];
};
_Static_assert(sizeof(struct sc_rec) == 120, "sc_rec layout");
KAGG_REC_HDR_CHECK(struct sc_rec);

/* Value of the per-key count map (per-CPU). */
struct sc_count {
	char comm[KAGG_COMM_LEN];
	__u64 count;
};
_Static_assert(sizeof(struct sc_count) == 24, "sc_count layout");

/* kagg_key.aux in errors mode: syscall number in the low 32 bits, errno above. */
#define SC_AUX(nr, err) ((__u64)(nr) | ((__u64)(err) << 32))

#endif /* KAGG_BPF_SYSCOUNT_H */
