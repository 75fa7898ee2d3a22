/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by bpf/syscount.bpf.c and the library (user/syscount.c). */
#ifndef KAGG_BPF_SYSCOUNT_H
#define KAGG_BPF_SYSCOUNT_H

#include "common.h"

/* Syscall numbers counted: [0, SC_NR_MAX).  x86_64 uses < 512 (x32 ones are skipped). */
#define SC_NR_MAX 1024

/* What the programs aggregate (rodata `mode`). */
enum sc_mode {
	SC_MODE_COUNT = 0,	/* calls per syscall (sys_enter) */
	SC_MODE_ERRORS = 1,	/* failed calls per (syscall, errno) (sys_exit) */
	SC_MODE_LATENCY = 2,	/* latency histogram per syscall (sys_enter + sys_exit) */
};

/* Per-CPU counters (array map `counters`, index = enum value). */
enum sc_counter {
	SC_CNT_EVENTS = 0,	/* syscalls seen (entries, or exits in errors mode) */
	SC_CNT_RECORDED,	/* calls aggregated */
	SC_CNT_SKIP_COMPAT,	/* ia32 / x32 syscalls: other numbering, not counted */
	SC_CNT_DROP_STORAGE,	/* latency: entry time not stored (task storage / hash full) */
	SC_CNT_DROP_KEYS_FULL,	/* per-key map full: call not aggregated */
	SC_CNT_MAX,
};

/* Value of the per-key count map (per-CPU). */
struct sc_count {
	char comm[KAGG_COMM_LEN];
	__u64 count;
};
_Static_assert(sizeof(struct sc_count) == 24, "sc_count layout");

/* kagg_key.aux in errors mode: syscall number in the low 32 bits, errno above. */
#define SC_AUX(nr, err) ((__u64)(nr) | ((__u64)(err) << 32))

#endif /* KAGG_BPF_SYSCOUNT_H */
