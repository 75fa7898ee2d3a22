// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hostile input: crafted sub-buffer pages, format files, print fmts and
 * trace.dat files that used to make the decoders loop forever, crash, read
 * outside their input, overflow, or take minutes.  Each input here is the
 * smallest one showing its problem; each test states what must happen
 * instead: a clear error with the position of the damage, and everything
 * decodable before it still decoded.  Tests that once hung carry an alarm so
 * a regression fails in seconds instead of hitting the runner's timeout.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include <kagg/tracedat.h>

#define PS 4096

/* SIGALRM kills the test binary: a hang becomes a failure in `seconds`. */
static void deadline(unsigned int seconds)
{
	signal(SIGALRM, SIG_DFL);
	alarm(seconds);
}

/* ------------------------------------------------------------------ pages */

/* A sub-buffer image: time stamp ts, data = words (n of them), commit = n * 4. */
static uint8_t *page_of(uint64_t ts, const uint32_t *words, size_t n)
{
	uint8_t *p = calloc(1, PS);
	uint64_t commit = n * 4;

	assert_non_null(p);
	memcpy(p, &ts, 8);
	memcpy(p + 8, &commit, 8);
	memcpy(p + KAGG_RB_PAGE_HDR, words, n * 4);
	return p;
}

#define HDR(type, delta) ((uint32_t)(type) | (uint32_t)(delta) << 5)

static void test_padding_length_that_wraps_the_offset_is_an_error(void **s)
{
	/* 0xfffffffc: the offset came back to itself (endless loop); 0xfffffff8:
	 * it landed 4 GiB away (crash); 0xffffffff: 3 bytes short */
	static const uint32_t lens[] = { 0xfffffffcu, 0xfffffff8u, 0xffffffffu, 2 };
	size_t i;

	deadline(10);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t w[4] = { HDR(KAGG_RB_TYPE_PADDING, 1), lens[i], 0, 0 };
		uint8_t *p = page_of(100, w, 4);
		struct kagg_rb_page_iter it;
		struct kagg_rb_event ev;

		assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
		assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -EBADMSG);
		assert_int_equal(it.off, 0);
		free(p);
	}
}

static void test_data_length_that_wraps_is_an_error(void **s)
{
	/* type-0 record: 4 + 0xfffffffc wraps to 0, which used to pass the end check */
	uint32_t w[4] = { HDR(0, 5), 0xfffffffcu, 0x11111111, 0x22222222 };
	uint8_t *p = page_of(100, w, 4);
	struct kagg_rb_page_iter it;
	struct kagg_rb_event ev;

	deadline(10);
	assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -EBADMSG);
	assert_int_equal(it.off, 0);
	free(p);
}

static void test_events_before_a_bad_record_still_decode(void **s)
{
	/* an 8-byte event at +7, a time extend, then a record running past the commit */
	uint32_t w[7] = { HDR(2, 7), 0xaaaaaaaa, 0xbbbbbbbb, HDR(KAGG_RB_TYPE_TIME_EXTEND, 1), 1,
			  HDR(3, 2), 0xcccccccc };
	uint8_t *p = page_of(1000, w, 7);
	struct kagg_rb_page_iter it;
	struct kagg_rb_event ev;

	assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), 0);
	assert_int_equal(ev.ts, 1007);
	assert_int_equal(ev.len, 8);
	assert_ptr_equal(ev.data, p + KAGG_RB_PAGE_HDR + 4);
	/* the damage is reported where it is, and stays reported */
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -EBADMSG);
	assert_int_equal(it.off, 20);
	assert_int_equal(it.ts, 1008 + (1ULL << KAGG_RB_TS_SHIFT));
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -EBADMSG);
	assert_int_equal(it.off, 20);
	free(p);
}

static void test_clean_ends_of_a_page_are_not_errors(void **s)
{
	/* delta-0 padding ("rest empty"), a zeroed tail, the exact commit end */
	static const uint32_t ends[][4] = {
		{ HDR(1, 3), 7, HDR(KAGG_RB_TYPE_PADDING, 0), 0 },
		{ HDR(1, 3), 7, 0, 0 },
	};
	size_t i;

	for (i = 0; i < 3; i++) {
		uint8_t *p = page_of(0, ends[i < 2 ? i : 0], i < 2 ? 4 : 2);
		struct kagg_rb_page_iter it;
		struct kagg_rb_event ev;

		assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
		assert_int_equal(kagg_rb_page_iter__next(&it, &ev), 0);
		assert_int_equal(ev.ts, 3);
		assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -ENOENT);
		free(p);
	}
}

static void test_page_at_any_alignment_decodes(void **s)
{
	uint32_t w[3] = { HDR(2, 9), 0x01020304, 0x05060708 };
	uint8_t *p = page_of(50, w, 3), *buf = malloc(PS + 3);
	struct kagg_rb_page_iter it;
	struct kagg_rb_event ev;

	memcpy(buf + 3, p, PS);
	assert_int_equal(kagg_rb_page_iter__init(&it, buf + 3, PS), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), 0);
	assert_int_equal(ev.ts, 59);
	assert_memory_equal(ev.data, w + 1, 8);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -ENOENT);
	free(buf);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_padding_length_that_wraps_the_offset_is_an_error),
		cmocka_unit_test(test_data_length_that_wraps_is_an_error),
		cmocka_unit_test(test_events_before_a_bad_record_still_decode),
		cmocka_unit_test(test_clean_ends_of_a_page_are_not_errors),
		cmocka_unit_test(test_page_at_any_alignment_decodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
