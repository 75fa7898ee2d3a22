/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers shared by the unprivileged unit tests (tests/unit/): a test's
 * main().  Include after <cmocka.h>.
 */
#ifndef KAGG_UNIT_UTIL_H
#define KAGG_UNIT_UTIL_H

/*
 * main() running the cmocka tests listed, in order, with the group's SETUP
 * and TEARDOWN (NULL for none):
 *	UU_MAIN_GROUP(setup, teardown,
 *		      cmocka_unit_test(test_a),
 *		      cmocka_unit_test(test_b))
 */
#define UU_MAIN_GROUP(SETUP, TEARDOWN, ...)					\
	int main(void)								\
	{									\
		const struct CMUnitTest tests[] = { __VA_ARGS__ };		\
										\
		return cmocka_run_group_tests(tests, SETUP, TEARDOWN);		\
	}

/* main() running the cmocka tests listed, without group setup. */
#define UU_MAIN(...) UU_MAIN_GROUP(NULL, NULL, __VA_ARGS__)

#endif /* KAGG_UNIT_UTIL_H */
