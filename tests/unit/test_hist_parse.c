// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg hist's --filter syntax, unprivileged: what parses, into what, and
 * what is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "builtin/hist_parse.h"
#include "unit_util.h"

static void ok_filter(const char *str, const char *field, enum hist_op op, const char *val)
{
	char f[64] = "";
	enum hist_op o = HIST_OP_NONE;
	const char *v = NULL;

	if (hist_parse_filter(str, f, sizeof(f), &o, &v))
		fail_msg("'%s' refused", str);
	assert_string_equal(f, field);
	assert_int_equal(o, op);
	assert_string_equal(v, val);
}

static void bad_filter(const char *str)
{
	char f[8];
	enum hist_op o;
	const char *v;

	if (!hist_parse_filter(str, f, sizeof(f), &o, &v))
		fail_msg("'%s' accepted", str);
}

static void test_filters(void **state)
{
	ok_filter("prev_prio == 120", "prev_prio", HIST_OP_EQ, "120");
	ok_filter("  pid>=0x10 ", "pid", HIST_OP_GE, "0x10 ");
	ok_filter("a!=-1", "a", HIST_OP_NE, "-1");
	ok_filter("x <= 5", "x", HIST_OP_LE, "5");
	ok_filter("x<5", "x", HIST_OP_LT, "5");
	ok_filter("x > 5", "x", HIST_OP_GT, "5");
	bad_filter("== 3");  /* no field */
	bad_filter("x ~ 3"); /* no such operator */
	bad_filter("x =");   /* = alone is not == */
	bad_filter("x ==");  /* no value */
	bad_filter("x ==   ");
	bad_filter("");
	bad_filter("much_too_long_a_field == 1"); /* does not fit the buffer: refused, not cut */
}

static void test_values(void **state)
{
	__u64 v;

	assert_int_equal(hist_parse_value("42", false, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(hist_parse_value("0x1f", false, &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(hist_parse_value("-5", true, &v), 0);
	assert_int_equal((int64_t)v, -5);
	assert_int_equal(hist_parse_value("7 ", true, &v), 0); /* trailing blanks ok */
	assert_int_equal(v, 7);
	assert_int_equal(hist_parse_value("18446744073709551615", false, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_not_equal(hist_parse_value("-5", false, &v), 0); /* unsigned field */
	assert_int_not_equal(hist_parse_value("12abc", false, &v), 0);
	assert_int_not_equal(hist_parse_value("", false, &v), 0);
	assert_int_not_equal(hist_parse_value("18446744073709551616", false, &v), 0);
	assert_int_not_equal(hist_parse_value("9223372036854775808", true, &v), 0);
}

/* A value the field cannot hold is refused, whatever its size and signedness. */
static void test_value_fits_field(void **state)
{
	static const struct {
		const char *val;
		bool is_signed;
		unsigned int size;
		bool fits;
	} c[] = {
		{ "255", false, 1, true },
		{ "256", false, 1, false },
		{ "127", true, 1, true },
		{ "128", true, 1, false },
		{ "-128", true, 1, true },
		{ "-129", true, 1, false },
		{ "65535", false, 2, true },
		{ "0x10000", false, 2, false },
		{ "-32768", true, 2, true },
		{ "32768", true, 2, false },
		{ "4294967295", false, 4, true },
		{ "4294967296", false, 4, false },
		{ "2147483647", true, 4, true },
		{ "2147483648", true, 4, false },
		{ "-2147483648", true, 4, true },
		{ "-2147483649", true, 4, false },
		{ "18446744073709551615", false, 8, true },
		{ "-9223372036854775808", true, 8, true },
		{ "0", false, 3, false }, /* not a field size */
	};
	size_t i;
	__u64 v;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(hist_parse_value(c[i].val, c[i].is_signed, &v), 0);
		if (hist_value_fits(v, c[i].is_signed, c[i].size) != c[i].fits)
			fail_msg("'%s' in a %u-byte %s field: expected %s", c[i].val, c[i].size,
				 c[i].is_signed ? "signed" : "unsigned",
				 c[i].fits ? "to fit" : "refused");
	}
}

UU_MAIN(cmocka_unit_test(test_filters), cmocka_unit_test(test_values),
	cmocka_unit_test(test_value_fits_field))
