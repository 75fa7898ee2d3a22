/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The main() every cmocka test program ends with, root (tests/bpf/) and
 * unit (tests/unit/) alike.  Include after <cmocka.h>.
 */
#ifndef KAGG_TESTS_TEST_MAIN_H
#define KAGG_TESTS_TEST_MAIN_H

#include <stdlib.h>

/*
 * main() running the cmocka tests listed (a trailing comma allowed), in
 * order, as one group with SETUP and TEARDOWN (NULL for none).
 * KAGG_TEST_FILTER=PATTERN runs only the tests whose names match it
 * (cmocka's wildcards).
 */
#define KT_MAIN_GROUP(SETUP, TEARDOWN, ...)                            \
	int main(void)                                                 \
	{                                                              \
		const struct CMUnitTest tests[] = { __VA_ARGS__ };     \
		const char *kt_filter = getenv("KAGG_TEST_FILTER");    \
                                                                       \
		if (kt_filter && *kt_filter)                           \
			cmocka_set_test_filter(kt_filter);             \
		return cmocka_run_group_tests(tests, SETUP, TEARDOWN); \
	}

/* Test fn, run between its file's setup() and teardown() (a fixture of its own). */
#define KT_TEST_FIXTURE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

#endif /* KAGG_TESTS_TEST_MAIN_H */
