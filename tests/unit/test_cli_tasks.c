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

#define TWICE(tool, opt) { tool, opt, "2147483646", opt, "2147483647", "-d", "1" }
#define BAD_SECOND(tool, opt) { tool, opt, "1", opt, "x" }

static void test_repeated_list_last_wins(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 1, "no such process: 2147483647", TWICE("offcpu", "-p") },
		{ 1, "no such thread: 2147483647", TWICE("offcpu", "-t") },
		{ 1, "no such process: 2147483647", TWICE("runqlat", "-p") },
		{ 1, "no such thread: 2147483647", TWICE("runqlat", "-t") },
		{ 1, "no such process: 2147483647", TWICE("syscount", "-p") },
		{ 1, "no such process: 2147483647", TWICE("profile", "-p") },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

static void test_bad_second_list_is_a_usage_error(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "invalid pid list 'x'", BAD_SECOND("offcpu", "-p") },
		{ 2, "invalid tid list 'x'", BAD_SECOND("offcpu", "-t") },
		{ 2, "invalid pid list 'x'", BAD_SECOND("runqlat", "-p") },
		{ 2, "invalid tid list 'x'", BAD_SECOND("runqlat", "-t") },
		{ 2, "invalid pid list 'x'", BAD_SECOND("syscount", "-p") },
		{ 2, "invalid pid list 'x'", BAD_SECOND("profile", "-p") },
		{ 2, "invalid pid list 'x'", BAD_SECOND("record", "-p") },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

UU_MAIN(
	cmocka_unit_test(test_repeated_list_last_wins),
	cmocka_unit_test(test_bad_second_list_is_a_usage_error)
)
