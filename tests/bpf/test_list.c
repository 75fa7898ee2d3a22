// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg list, against what the system and the test helper have: a tracepoint
 * with the fields of its tracefs format, kernel functions from
 * available_filter_functions, a binary's functions from its symbol table
 * (funclat_target's, known from its source); a name that matches nothing
 * names the nearest; a mistyped command or option names the nearest one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>

#include "testutil.h"

/* kagg argv's exit status 0, and its stdout in *out. */
static void run_ok(char **argv, char **out)
{
	char *err = NULL;

	*out = NULL;
	assert_int_equal(tu_run_kagg(argv, out, &err, 0, 0), 0);
	assert_string_equal(err ? err : "", "");
	assert_non_null(*out);
	free(err);
}

static void test_tracepoint_and_fields(void **state)
{
	char *exact[] = { "list", "-t", "sched:sched_switch", NULL };
	char *fields[] = { "list", "-v", "-t", "sched:sched_switch", NULL };
	char *word[] = { "list", "-t", "sched_switch", NULL };
	char *out;

	TU_SKIP_UNLESS_ROOT();
	run_ok(exact, &out);
	assert_string_equal(out, "sched:sched_switch\n");
	free(out);
	/* the fields of events/sched/sched_switch/format, common_* left out */
	run_ok(fields, &out);
	assert_non_null(strstr(out, "sched:sched_switch\n"));
	assert_non_null(strstr(out, "\n    pid_t prev_pid\n"));
	assert_non_null(strstr(out, "\n    char next_comm[16]\n"));
	assert_null(strstr(out, "common_pid"));
	free(out);
	/* a word without glob characters matches anywhere, as in perf list */
	run_ok(word, &out);
	assert_non_null(strstr(out, "sched:sched_switch\n"));
	free(out);
}

static void test_kernel_functions(void **state)
{
	char *argv[] = { "list", "-f", "vfs_read", NULL };
	char *out;

	TU_SKIP_UNLESS_ROOT();
	run_ok(argv, &out);
	assert_true(!strncmp(out, "vfs_read\n", 9) || strstr(out, "\nvfs_read\n"));
	assert_null(strstr(out, "sched:"));
	free(out);
}

/* funclat_target defines target_sleep_20ms and target_sleep_5ms (and no other target_sleep_). */
static void test_binary_functions(void **state)
{
	const char *dir = getenv("KAGG_HELPERS");
	char path[PATH_MAX], bin[PATH_MAX], want[2 * PATH_MAX + 64];
	char *argv[] = { "list", "-b", bin, "target_sleep_*", NULL };
	char *out;

	snprintf(path, sizeof(path), "%s/funclat_target",
		 dir && *dir ? dir : "build/tests/helpers");
	assert_non_null(realpath(path, bin));
	run_ok(argv, &out);
	snprintf(want, sizeof(want), "%s:target_sleep_20ms\n%s:target_sleep_5ms\n", bin, bin);
	assert_string_equal(out, want);
	free(out);
}

static void test_did_you_mean(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 1,
		  "nothing matches 'sched_swich'; did you mean sched:sched_switch?",
		  { "list", "sched_swich" } },
		{ 2, "unknown command 'lst'; did you mean 'list'?", { "lst" } },
		{ 2, "unknown command 'ofcpu'; did you mean 'offcpu'?", { "help", "ofcpu" } },
		{ 2,
		  "invalid option '--cgrop=x' (see --help); did you mean --cgroup?",
		  { "runqlat", "--cgrop=x" } },
		{ 2,
		  "invalid option '--foldde' (see --help); did you mean --folded?",
		  { "profile", "--foldde" } },
		/* too far from every option to name one */
		{ 2, "invalid option '--nope' (see --help)\n", { "offcpu", "--nope" } },
		{ 2, "invalid option '--zzzzzz' (see --help)", { "offcpu", "--zzzzzz" } },
		{ 2, "-p goes with -b", { "list", "-p", "1" } },
	};

	TU_SKIP_UNLESS_ROOT();
	tu_expect_errors(cases, TU_NR(cases));
}

TU_MAIN(cmocka_unit_test(test_tracepoint_and_fields), cmocka_unit_test(test_kernel_functions),
	cmocka_unit_test(test_binary_functions), cmocka_unit_test(test_did_you_mean), )
