// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The unwind table compiler on hand-made CFI (tests/helpers/cfi/cfi_cases.S, whose .cfi
 * directives spell each function's rules out): the row at each labelled instruction is the
 * one its directives say, gaps without CFI end the walk, rules the walk cannot follow make
 * UNW_CFA_NONE rows.  Then real files (libc, this binary): every row sorted, and the table's
 * size and build time printed, never asserted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "unwind/table.h"

struct cases {
	int fd;
	Elf *elf;
	struct unw_table t;
};

/* The value of symbol name in elf's .symtab (fails the test when absent). */
static uint64_t sym(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym s;
	Elf_Data *d;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, i, &s) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name))
				return s.st_value;
	}
	fail_msg("no symbol %s", name);
	return 0;
}

static int setup(void **state)
{
	struct cases *c = calloc(1, sizeof(*c));
	char path[512];

	elf_version(EV_CURRENT);
	c->fd = open(tu_helper("libcfi_cases.so", path, sizeof(path)), O_RDONLY);
	if (c->fd < 0)
		return -1;
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf || unw_build_elf(c->elf, &c->t))
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct cases *c = *state;

	unw_table_free(&c->t);
	elf_end(c->elf);
	close(c->fd);
	free(c);
	return 0;
}

/* The row at label + delta is (cfa, cfa_off, rbp_off). */
static void expect_row(struct cases *c, const char *label, int delta, int cfa, int cfa_off,
		       int rbp_off)
{
	uint64_t pc = sym(c->elf, label) + delta;
	const struct unw_row *r = unw_find(&c->t, (uint32_t)pc);

	assert_non_null(r);
	if (r->cfa != cfa || r->cfa_off != cfa_off || r->rbp_off != rbp_off)
		fail_msg("%s+%d (0x%lx): row cfa %d off %d rbp %d, want cfa %d off %d rbp %d",
			 label, delta, (unsigned long)pc, r->cfa, r->cfa_off, r->rbp_off, cfa,
			 cfa_off, rbp_off);
}

static void test_frame_pointer_function(void **state)
{
	struct cases *c = *state;

	expect_row(c, "cfi_fp", 0, UNW_CFA_RSP, 8, 0);		/* at entry: unchanged rbp */
	expect_row(c, "cfi_fp_pushed", 0, UNW_CFA_RSP, 16, -2); /* rbp saved at CFA - 16 */
	expect_row(c, "cfi_fp_body", 0, UNW_CFA_RBP, 16, -2);
	expect_row(c, "cfi_fp_body", 1, UNW_CFA_RBP, 16, -2);
	expect_row(c, "cfi_fp_popped", 0, UNW_CFA_RSP, 8, -2);
}

static void test_no_frame_pointer(void **state)
{
	struct cases *c = *state;

	expect_row(c, "cfi_nofp", 0, UNW_CFA_RSP, 8, 0);
	expect_row(c, "cfi_nofp_pushed", 0, UNW_CFA_RSP, 16, 0); /* rbx saved, rbp untouched */
	expect_row(c, "cfi_nofp_body", 0, UNW_CFA_RSP, 4112, 0);
}

/* Code no FDE covers: a NONE row from the end of the FDE before it. */
static void test_gap(void **state)
{
	struct cases *c = *state;

	expect_row(c, "cfi_gap", 0, UNW_CFA_NONE, 0, 0);
	expect_row(c, "cfi_gap", 3, UNW_CFA_NONE, 0, 0);
	/* and past the last FDE */
	expect_row(c, "cfi_odd", 0x100, UNW_CFA_NONE, 0, 0);
}

static void test_outermost(void **state)
{
	expect_row(*state, "cfi_outermost", 1, UNW_CFA_END, 0, 0);
}

/* The PLT expression, its threshold (11) in rbp_off. */
static void test_plt(void **state)
{
	expect_row(*state, "cfi_plt", 0, UNW_CFA_PLT, 8, 11);
}

static void test_unsupported_rules(void **state)
{
	struct cases *c = *state;

	expect_row(c, "cfi_odd", 1, UNW_CFA_RSP, 16, UNW_RBP_LOST); /* rbp in rbx: lost */
	expect_row(c, "cfi_odd_cfa", 0, UNW_CFA_NONE, 0, 0);	    /* CFA from rbx */
	expect_row(c, "cfi_odd_ra", 0, UNW_CFA_NONE, 0, 0);	    /* RA at CFA - 16 */
	assert_int_equal(c->t.unsupported, 2);
}

/* Rows strictly sorted, no two equal neighbours; sizes and times printed. */
static void check_file(const char *path)
{
	struct unw_table t = {};
	struct timespec a, b;
	int fd = open(path, O_RDONLY);
	size_t i, none = 0;
	Elf *e;

	if (fd < 0) {
		print_message("skip %s: not found\n", path);
		return;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(unw_build_elf(e, &t), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(t.nr > 10);
	for (i = 0; i < t.nr; i++) {
		none += t.rows[i].cfa == UNW_CFA_NONE;
		if (i && t.rows[i].pc <= t.rows[i - 1].pc)
			fail_msg("%s: row %zu pc 0x%x after 0x%x", path, i, t.rows[i].pc,
				 t.rows[i - 1].pc);
	}
	assert_int_equal(t.rows[t.nr - 1].cfa, UNW_CFA_NONE);
	print_message("%s: %zu rows (%zu KiB), %zu gaps, %lu unsupported, %lu lookups, "
		      "%.1f ms\n",
		      path, t.nr, t.nr * sizeof(*t.rows) / 1024, none, (unsigned long)t.unsupported,
		      (unsigned long)t.lookups,
		      (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	unw_table_free(&t);
	elf_end(e);
	close(fd);
}

static void test_real_files(void **state)
{
	check_file("/proc/self/exe");
	check_file("/lib/x86_64-linux-gnu/libc.so.6");
}

#if !defined(__x86_64__)
/* The tables are x86-64's (rsp, rbp, the PLT rule): elsewhere user stacks are fp-walked. */
static void test_x86_64_only(void **state)
{
	(void)state;
	skip();
}

TU_MAIN(cmocka_unit_test(test_x86_64_only))
#else
KT_MAIN_GROUP(setup, teardown, cmocka_unit_test(test_frame_pointer_function),
	      cmocka_unit_test(test_no_frame_pointer), cmocka_unit_test(test_gap),
	      cmocka_unit_test(test_outermost), cmocka_unit_test(test_plt),
	      cmocka_unit_test(test_unsupported_rules), cmocka_unit_test(test_real_files))
#endif
