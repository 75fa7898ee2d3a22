/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * table.h - internal: compile an ELF file's call frame information into unwind rows
 * (bpf/shared/unwind.h) for the BPF stack walk.
 *
 *	struct unw_table t = {};
 *	err = unw_build_elf(elf, &t);     // .eh_frame, then .debug_frame for what it lacks
 *	... t.rows[0 .. t.nr) ...
 *	unw_table_free(&t);
 *
 * libdw interprets the CFI (dwarf_cfi_addrframe: the rules in force at an address and the
 * range they hold for); this only turns each range's rules into a row: the CFA as rsp or
 * rbp plus an offset (or the PLT's expression), the return address at CFA - 8 (any other
 * rule makes an UNW_CFA_NONE row), the caller's rbp saved at CFA + N or unchanged.  Ranges
 * no CFI covers get UNW_CFA_NONE rows; neighbours with the same rules become one row.
 */
#ifndef KAGG_UNWIND_TABLE_H
#define KAGG_UNWIND_TABLE_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "shared/unwind.h"

/* A range of addresses and its rules, as the CFI gave them (before unw_finish()). */
struct unw_range {
	uint64_t start;
	uint64_t end;
	struct unw_row row;
};

struct unw_table {
	struct unw_row *rows; /* sorted by pc, after unw_finish() */
	size_t nr;
	struct unw_range *rg; /* while building */
	size_t nrg;
	size_t caprg;
	/* what the compiler saw */
	uint64_t ranges;      /* CFI ranges read (one per row before merging) */
	uint64_t unsupported; /* of them: rules the walk cannot follow (UNW_CFA_NONE) */
	uint64_t lookups;     /* dwarf_cfi_addrframe calls */
};

/*
 * Append the rows of cfi over the ELF virtual addresses [lo, hi) to t (cfi from
 * dwarf_getcfi_elf() or dwarf_getcfi()); addresses cfi does not cover get no rows here.
 * 0 or -ENOMEM.
 */
int unw_build_cfi(Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, struct unw_table *t);

/*
 * The table of elf's executable segments: .eh_frame's rows, then .debug_frame's where
 * .eh_frame has none; gaps become UNW_CFA_NONE rows; sorted, equal neighbours merged.
 * 0, -ENOENT (no CFI at all), -EFBIG (addresses past 4 GiB), -ENOMEM.
 */
int unw_build_elf(Elf *elf, struct unw_table *t);

/* Sort rows, fill the gaps between ranges with UNW_CFA_NONE rows and merge equal neighbours. */
int unw_finish(struct unw_table *t);

/* The row covering pc, or NULL (before the first row). */
const struct unw_row *unw_find(const struct unw_table *t, uint32_t pc);

void unw_table_free(struct unw_table *t);

#endif
