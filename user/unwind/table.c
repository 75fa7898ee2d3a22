// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * table.c - call frame information to unwind rows (table.h).
 *
 * For each executable segment, addresses are visited in order: dwarf_cfi_addrframe() gives
 * the rules in force at one address and the range [start, end) they hold for, which becomes
 * one range; the next visit starts at end.  An address no CFI covers is stepped over byte by
 * byte (padding between functions, mostly; the bench prints how many lookups a file took).
 *
 * Rules, as libdw hands them over (libdw.h): the CFA as one DW_OP_bregx (register, offset)
 * or DW_OP_bregN, or an expression; a register's save slot as DW_OP_call_frame_cfa followed
 * by DW_OP_plus_uconst N (N two's complement), "undefined" as no ops at ops_mem, "same
 * value" as no ops at NULL.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/table.h"
#include "util/array.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

static int add_range(struct unw_table *t, uint64_t start, uint64_t end, const struct unw_row *r)
{
	struct unw_range *n;

	if (t->nrg == t->caprg) {
		size_t cap = t->caprg ? t->caprg * 2 : 1024;

		n = realloc(t->rg, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->rg = n;
		t->caprg = cap;
	}
	n = &t->rg[t->nrg++];
	n->start = start;
	n->end = end;
	n->row = *r;
	return 0;
}

/* Is ops the CFA expression of x86-64 PLT stubs, rsp + 8 + ((rip & 15) >= K) << 3?  K or 0. */
static int plt_expr(const Dwarf_Op *ops, size_t n)
{
	if (n != 9 || ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[1].number != 0 || ops[2].atom != DW_OP_lit15 ||
	    ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return 0;
	return ops[4].atom - DW_OP_lit0;
}

/* The register and offset of a CFA rule "register + offset": 0, or -1 when it is not one. */
static int cfa_reg(const Dwarf_Op *ops, size_t n, int *reg, int64_t *off)
{
	if (n != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (int)ops[0].number;
		*off = (int64_t)ops[0].number2;
		return 0;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
		return 0;
	}
	return -1;
}

/* Where register regno of the caller is saved: 1 and *off (from the CFA), 0 unchanged, -1 other. */
static int saved_at(Dwarf_Frame *f, int regno, int64_t *off, bool *undefined)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	*undefined = false;
	if (dwarf_frame_register(f, regno, mem, &ops, &n))
		return -1;
	if (!n) {
		*undefined = ops != NULL;
		return ops ? -1 : 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (n == 1) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return -1;
}

/* The row of frame f: its rules made into what the BPF walk follows. */
static void frame_row(Dwarf_Frame *f, struct unw_row *r, struct unw_table *t)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t off, ra_off, rbp_off;
	bool undef;
	int reg, k;

	memset(r, 0, sizeof(*r));
	t->ranges++;
	if (dwarf_frame_cfa(f, &ops, &n) || !n)
		goto unsupported;
	k = saved_at(f, REG_RA, &ra_off, &undef);
	if (k < 0 && undef) {
		r->cfa = UNW_CFA_END;
		return;
	}
	if (k != 1 || ra_off != -8)
		goto unsupported;
	if (!cfa_reg(ops, n, &reg, &off)) {
		if ((reg != REG_RSP && reg != REG_RBP) || off < 0 || off > UINT16_MAX)
			goto unsupported;
		r->cfa = reg == REG_RSP ? UNW_CFA_RSP : UNW_CFA_RBP;
		r->cfa_off = (uint16_t)off;
	} else if ((k = plt_expr(ops, n))) {
		r->cfa = UNW_CFA_PLT;
		r->cfa_off = 8;
		r->rbp_off = (int8_t)k;
		return; /* PLT stubs leave rbp alone */
	} else {
		goto unsupported;
	}
	k = saved_at(f, REG_RBP, &rbp_off, &undef);
	if (k == 0)
		r->rbp_off = 0;
	else if (k == 1 && rbp_off < 0 && !(rbp_off & 7) && rbp_off / 8 > UNW_RBP_LOST)
		r->rbp_off = (int8_t)(rbp_off / 8);
	else
		r->rbp_off = UNW_RBP_LOST;
	return;
unsupported:
	memset(r, 0, sizeof(*r));
	t->unsupported++;
}

/* Visit [lo, hi) through the first of the n CFIs that covers each address. */
static int build_cfis(Dwarf_CFI *const *cfis, int n, uint64_t lo, uint64_t hi, struct unw_table *t)
{
	Dwarf_Addr start, end;
	Dwarf_Frame *f;
	struct unw_row r;
	uint64_t a = lo;
	int err, i;

	while (a < hi) {
		for (i = 0; i < n; i++) {
			t->lookups++;
			if (!dwarf_cfi_addrframe(cfis[i], a, &f))
				break;
		}
		if (i == n) {
			a++;
			continue;
		}
		dwarf_frame_info(f, &start, &end, NULL);
		frame_row(f, &r, t);
		free(f);
		if (end <= a) { /* never go backwards */
			a++;
			continue;
		}
		if (start < a)
			start = a;
		if (end > hi)
			end = hi;
		err = add_range(t, start, end, &r);
		if (err)
			return err;
		a = end;
	}
	return 0;
}

int unw_build_cfi(Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, struct unw_table *t)
{
	return build_cfis(&cfi, 1, lo, hi, t);
}

static int range_cmp(const void *x, const void *y)
{
	const struct unw_range *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static bool row_same(const struct unw_row *a, const struct unw_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

/* Append row r at pc unless it repeats the last one. */
static void push_row(struct unw_table *t, uint64_t pc, const struct unw_row *r)
{
	if (t->nr && row_same(&t->rows[t->nr - 1], r))
		return;
	if (t->nr && t->rows[t->nr - 1].pc == (uint32_t)pc) {
		t->rows[t->nr - 1] = *r; /* an empty range before it: replaced */
		t->rows[t->nr - 1].pc = (uint32_t)pc;
		return;
	}
	t->rows[t->nr] = *r;
	t->rows[t->nr].pc = (uint32_t)pc;
	t->nr++;
}

int unw_finish(struct unw_table *t)
{
	static const struct unw_row none;
	uint64_t covered = 0;
	size_t i;

	free(t->rows);
	t->rows = NULL;
	t->nr = 0;
	if (!t->nrg)
		return 0;
	qsort(t->rg, t->nrg, sizeof(*t->rg), range_cmp);
	/* at most a row and a gap row per range */
	t->rows = malloc(2 * t->nrg * sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	for (i = 0; i < t->nrg; i++) {
		const struct unw_range *g = &t->rg[i];

		if (g->end <= covered)
			continue; /* inside what an earlier range covers */
		if (i && g->start > covered)
			push_row(t, covered, &none);
		push_row(t, g->start > covered ? g->start : covered, &g->row);
		covered = g->end;
	}
	push_row(t, covered, &none); /* past the last range */
	free(t->rg);
	t->rg = NULL;
	t->nrg = t->caprg = 0;
	return 0;
}

int unw_build_elf(Elf *elf, struct unw_table *t)
{
	Dwarf_CFI *eh = dwarf_getcfi_elf(elf), *dbg_cfi = NULL, *cfis[2];
	Dwarf *dw = NULL;
	GElf_Phdr ph;
	int err = 0, nc = 0;
	size_t i, n;

	/* .debug_frame, when the file has one (libdw reads it through the Dwarf) */
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw)
		dbg_cfi = dwarf_getcfi(dw);
	if (eh)
		cfis[nc++] = eh;
	if (dbg_cfi)
		cfis[nc++] = dbg_cfi;
	if (!nc) {
		err = -ENOENT;
		goto cleanup;
	}
	if (elf_getphdrnum(elf, &n)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_vaddr + ph.p_memsz > UINT32_MAX) {
			err = -EFBIG;
			goto cleanup;
		}
		err = build_cfis(cfis, nc, ph.p_vaddr, ph.p_vaddr + ph.p_memsz, t);
		if (err)
			goto cleanup;
	}
	err = unw_finish(t);
cleanup:
	if (eh)
		dwarf_cfi_end(eh);
	dwarf_end(dw);
	return err;
}

const struct unw_row *unw_find(const struct unw_table *t, uint32_t pc)
{
	size_t lo = ARRAY_UPPER(t->rows, t->nr, pc, pc);

	return lo ? &t->rows[lo - 1] : NULL;
}

void unw_table_free(struct unw_table *t)
{
	free(t->rows);
	free(t->rg);
	memset(t, 0, sizeof(*t));
}
