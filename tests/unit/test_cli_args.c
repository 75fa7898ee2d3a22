// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of the arguments people type from other tools' habits:
 * `kagg help TOOL` prints that tool's help (not the global list) and exits
 * 0, for every tool the dispatcher knows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static const char *const tools[] = {
	"funclat", "hist", "offcpu", "profile", "rb", "record",
	"report", "runqlat", "stat", "syscount",
};

static void test_help_tool_prints_its_help(void **state)
{
	size_t i;

	for (i = 0; i < TU_NR(tools); i++) {
		char *hargv[] = { "help", (char *)tools[i], NULL };
		char *dargv[] = { (char *)tools[i], "--help", NULL };
		char *out = NULL, *err = NULL, *dout = NULL, want[64];

		snprintf(want, sizeof(want), "usage: kagg %s ", tools[i]);
		assert_int_equal(tu_run_kagg(hargv, &out, &err, 0, 0), 0);
		assert_non_null(out);
		if (strncmp(out, want, strlen(want)))
			printf("  kagg help %s: '%.60s'\n", tools[i], out);
		assert_int_equal(strncmp(out, want, strlen(want)), 0);
		assert_string_equal(err ? err : "", "");
		/* The same text as `kagg TOOL --help`. */
		assert_int_equal(tu_run_kagg(dargv, &dout, NULL, 0, 0), 0);
		assert_string_equal(out, dout);
		free(out);
		free(err);
		free(dout);
	}
}

static void test_help_unknown_tool(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "unknown command 'nosuch'", { "help", "nosuch" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_tool_prints_its_help),
		cmocka_unit_test(test_help_unknown_tool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
