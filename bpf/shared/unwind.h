/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unwind tables: how to find the caller of a frame without frame pointers (x86-64).
 *
 * Userspace compiles each ELF file's .eh_frame (and .debug_frame) into rows (user/unwind/):
 * from a row's address up to the next row's, the Canonical Frame Address (the caller's stack
 * pointer) is CFA = rsp + off, rbp + off, or the PLT's rsp-based expression; the return
 * address is at CFA - 8; the caller's rbp is at CFA + 8 * rbp_off, or unchanged.  The BPF
 * programs (bpf/unwind.bpf.h) walk user stacks with them, one row lookup per frame.
 */
#ifndef KAGG_BPF_SHARED_UNWIND_H
#define KAGG_BPF_SHARED_UNWIND_H

/* How a row finds the CFA. */
enum unw_cfa {
	UNW_CFA_NONE = 0, /* no CFI covers the address, or a rule the walk cannot follow */
	UNW_CFA_RSP = 1,  /* CFA = rsp + cfa_off */
	UNW_CFA_RBP = 2,  /* CFA = rbp + cfa_off */
	UNW_CFA_PLT = 3,  /* CFA = rsp + cfa_off + ((rip & 15) >= rbp_off ? 8 : 0) (PLT stubs) */
	UNW_CFA_END = 4,  /* the outermost frame: its return address is undefined (_start) */
};

/* rbp_off of a row whose caller's rbp the walk cannot know (kept in another register...). */
#define UNW_RBP_LOST (-128)

/* One row: applies from pc (the file's ELF virtual address, low 32 bits) to the next row. */
struct unw_row {
	__u32 pc;
	__u16 cfa_off;
	__u8 cfa;     /* enum unw_cfa */
	__s8 rbp_off; /* caller's rbp at CFA + 8 * rbp_off; 0: unchanged; UNW_RBP_LOST */
};

/* A file's table: rows [first, first + nr) of the shared row array, sorted by pc. */
struct unw_file {
	__u32 first;
	__u32 nr;
};

#define UNW_MAX_MAPS 128 /* executable mappings of one process the walk knows */

/* One executable mapping of a process: pc in [start, end) is file vaddr pc - bias. */
struct unw_map {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u64 file; /* key of unw_files: the file's build id (first 8 bytes), or a hash */
};

/* A process's executable mappings, sorted by start (map unw_procs, keyed by tgid). */
struct unw_proc {
	__u32 nr;
	__u32 pad;
	struct unw_map maps[UNW_MAX_MAPS];
};

/* How the user stacks are walked (rodata `unwind` of profile and offcpu). */
enum unw_mode {
	UNW_MODE_FP = 0,    /* bpf_get_stackid(): frame pointers only, as before tables */
	UNW_MODE_TABLE = 1, /* unwind tables only: a frame without a row ends the walk */
	UNW_MODE_AUTO = 2,  /* tables where a file has one, frame pointers elsewhere */
};

/* Why a table walk stopped before the outermost frame (per-CPU counters of the tools). */
enum unw_stop {
	UNW_STOP_NO_MAP = 0, /* the pc is in no executable mapping known for the process */
	UNW_STOP_NO_TABLE,   /* its file has no table (not built yet, dropped, no CFI) */
	UNW_STOP_NO_ROW,     /* no row covers the pc, or its rule cannot be followed */
	UNW_STOP_NO_RBP,     /* the CFA is rbp-based but the caller's rbp was lost */
	UNW_STOP_READ,	     /* reading the stack failed (return address or saved rbp) */
	UNW_STOP_DEPTH,	     /* KAGG_MAX_STACK frames and not at the end */
	UNW_STOP_BAD_PC,     /* the return address is 0 or not a user address */
	UNW_STOP_MAX,
};

/*
 * The tools' per-CPU counters of the walk, from their first unwind counter: user frames
 * found by frame pointer, by table, and the walks that stopped early by cause.
 */
enum unw_counter {
	UNW_CNT_FP = 0,
	UNW_CNT_TABLE = 1,
	UNW_CNT_STOP = 2,			    /* + enum unw_stop */
	UNW_CNT_FULL = UNW_CNT_STOP + UNW_STOP_MAX, /* a new stack did not fit in ustacks */
	UNW_CNT_NR,
};

/*
 * Stack ids of table-walked user stacks (map ustacks) are UNW_STACK_ID_BASE and up, above
 * every stack map id (< its max_entries), so kagg_key.ustack tells which map holds a stack.
 * UNW_STACK_ID_GEN: the stack was captured in generation 1 (profile, whose samples and stacks
 * share a generation: userspace deletes a generation's stacks once it has read them).
 */
#define UNW_STACK_ID_BASE 0x40000000
#define UNW_STACK_ID_GEN 0x20000000
#define UNW_STACK_ID_MASK 0x1fffffff

_Static_assert(sizeof(struct unw_row) == 8, "unw_row layout");
_Static_assert(sizeof(struct unw_file) == 8, "unw_file layout");
_Static_assert(sizeof(struct unw_map) == 32, "unw_map layout");
_Static_assert(sizeof(struct unw_proc) == 8 + 32 * UNW_MAX_MAPS, "unw_proc layout");

#endif
