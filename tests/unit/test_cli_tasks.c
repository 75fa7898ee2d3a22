// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of the task filters every tool that has them parses
 * alike (-p/--pid, -t/--tid): a list given twice replaces the first one (the
 * last one wins), and a bad second list is a usage error like a bad first
 * one (exit 2, one line), not a crash.  The repeated lists name processes
 * and threads that do not exist, so every run stops at the library's check
 * of the ids, before anything is loaded; which id it names tells which list
 * was kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

/* The tools that take -p, and those that also take -t. */
static const char *const pid_tools[] = { "offcpu", "runqlat", "syscount", "profile" };
static const char *const tid_tools[] = { "offcpu", "runqlat" };

#define NR(a) (sizeof(a) / sizeof((a)[0]))

/* -p/-t given twice: the last list is the one checked, the first is gone. */
static void expect_last_wins(const char *tool, const char *opt, const char *what)
{
	char *argv[] = { (char *)tool, (char *)opt, "2147483646", (char *)opt, "2147483647",
			 "-d", "1", NULL };
	char needle[64];
	char *err = NULL;

	snprintf(needle, sizeof(needle), "no such %s: 2147483647", what);
	tu_expect_error(argv, 1, needle);
	/* The first list's id is not checked at all. */
	assert_int_equal(tu_run_kagg(argv, NULL, &err, 0, 0), 1);
	assert_null(strstr(err, "2147483646"));
	free(err);
}

static void test_repeated_list_last_wins(void **state)
{
	size_t i;

	for (i = 0; i < NR(pid_tools); i++)
		expect_last_wins(pid_tools[i], "-p", "process");
	for (i = 0; i < NR(tid_tools); i++)
		expect_last_wins(tid_tools[i], "-t", "thread");
}

/* A good list, then a bad one: a usage error naming the bad one. */
static void expect_bad_second_list(const char *tool, const char *opt, const char *needle)
{
	char *argv[] = { (char *)tool, (char *)opt, "1", (char *)opt, "x", NULL };

	tu_expect_error(argv, 2, needle);
}

static void test_bad_second_list_is_a_usage_error(void **state)
{
	size_t i;

	for (i = 0; i < NR(pid_tools); i++)
		expect_bad_second_list(pid_tools[i], "-p", "invalid pid list 'x'");
	for (i = 0; i < NR(tid_tools); i++)
		expect_bad_second_list(tid_tools[i], "-t", "invalid tid list 'x'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated_list_last_wins),
		cmocka_unit_test(test_bad_second_list_is_a_usage_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
