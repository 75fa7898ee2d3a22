// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of the task filters every tool that has them parses
 * alike (-p/--pid, -t/--tid): a list given twice replaces the first one (the
 * last one wins), and a bad second list is a usage error like a bad first
 * one (exit 2, one line), not a crash.  The repeated lists name processes
 * and threads that do not exist, so every run stops at the library's check
 * of the ids, before anything is loaded: the id it names tells which list
 * was kept (a merged list would fail on its first id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"
#include "unit_util.h"

/* The task filters, each tool's; twice: also checked with two good lists. */
static const struct {
	char *tool, *opt;
	bool tid, twice;
} filters[] = {
	{ "offcpu", "-p", false, true },   { "offcpu", "-t", true, true },
	{ "runqlat", "-p", false, true },  { "runqlat", "-t", true, true },
	{ "syscount", "-p", false, true }, { "profile", "-p", false, true },
	{ "record", "-p", false, false },
};

/*
 * Each filter given twice: two good lists (kagg fails on the second one's
 * id, which does not exist), or a good list and a bad one (a usage error).
 */
static void expect_filters(bool bad_second)
{
	size_t i;

	for (i = 0; i < TU_NR(filters); i++) {
		char *t = filters[i].tool, *o = filters[i].opt;
		bool tid = filters[i].tid;
		const struct tu_error_case twice = {
			1,
			tid ? "no such thread: 2147483647" : "no such process: 2147483647",
			{ t, o, "2147483646", o, "2147483647", "-d", "1" }
		};
		const struct tu_error_case bad = { 2,
						   tid ? "invalid tid list 'x'"
						       : "invalid pid list 'x'",
						   { t, o, "1", o, "x" } };

		if (bad_second)
			tu_expect_errors(&bad, 1);
		else if (filters[i].twice)
			tu_expect_errors(&twice, 1);
	}
}

static void test_repeated_list_last_wins(void **state)
{
	expect_filters(false);
}

static void test_bad_second_list_is_a_usage_error(void **state)
{
	expect_filters(true);
}

UU_MAIN(cmocka_unit_test(test_repeated_list_last_wins),
	cmocka_unit_test(test_bad_second_list_is_a_usage_error))
