/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers shared by the unprivileged unit tests (tests/unit/): a test's
 * main(), and printing into memory to check what a printer wrote.
 * Include after <cmocka.h>.
 */
#ifndef KAGG_UNIT_UTIL_H
#define KAGG_UNIT_UTIL_H

#include <stdio.h>
#include <stdlib.h>

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

/*
 * A memory stream a test prints into: uu_mem_open() gives the FILE to print
 * to, uu_mem_text() closes it and hands over what was written (malloc'd,
 * NUL-terminated; the caller frees it).
 */
struct uu_mem {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *uu_mem_open(struct uu_mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	return m->f;
}

static inline char *uu_mem_text(struct uu_mem *m)
{
	fclose(m->f);
	return m->buf;
}

#endif /* KAGG_UNIT_UTIL_H */
