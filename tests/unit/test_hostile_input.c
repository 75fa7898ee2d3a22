// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hostile input: crafted sub-buffer pages, format files, print fmts and
 * trace.dat files that used to make the decoders loop forever, crash, read
 * outside their input, overflow, or take minutes.  Each input here is the
 * smallest one showing its problem; each test states what must happen
 * instead: a clear error with the position of the damage, and everything
 * decodable before it still decoded.  Tests that once hung carry a deadline so
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
#include <sys/time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include <kagg/tracedat.h>
#include "testutil.h"
#include "unit_util.h"

#define PS TU_PAGE

/*
 * SIGPROF kills the test binary once it has used `seconds` of CPU: a hang
 * becomes a failure in seconds instead of hitting the runner's timeout.  CPU
 * time, not wall time, so a loaded machine cannot fail a test that only
 * waited for a CPU.
 */
static void deadline(unsigned int seconds)
{
	struct itimerval it = { .it_value = { .tv_sec = seconds } };

	signal(SIGPROF, SIG_DFL);
	setitimer(ITIMER_PROF, &it, NULL);
}

static void deadline_off(void)
{
	struct itimerval it = { 0 };

	setitimer(ITIMER_PROF, &it, NULL);
}

/* ------------------------------------------------------------------ pages */

static void test_padding_length_that_wraps_the_offset_is_an_error(void **s)
{
	/* 0xfffffffc: the offset came back to itself (endless loop); 0xfffffff8:
	 * it landed 4 GiB away (crash); 0xffffffff: 3 bytes short */
	static const uint32_t lens[] = { 0xfffffffcu, 0xfffffff8u, 0xffffffffu, 2 };
	size_t i;

	deadline(10);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t w[4] = { TU_RB_HDR(KAGG_RB_TYPE_PADDING, 1), lens[i], 0, 0 };
		uint8_t *p = tu_page_of(100, w, 4);
		struct kagg_rb_page_iter it = { .sz = sizeof(it) };
		struct kagg_rb_event ev = { .sz = sizeof(ev) };

		assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
		assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -EBADMSG);
		assert_int_equal(it.off, 0);
		free(p);
	}
}

static void test_data_length_that_wraps_is_an_error(void **s)
{
	/* type-0 record: 4 + 0xfffffffc wraps to 0, which used to pass the end check */
	uint32_t w[4] = { TU_RB_HDR(0, 5), 0xfffffffcu, 0x11111111, 0x22222222 };
	uint8_t *p = tu_page_of(100, w, 4);
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };

	deadline(10);
	assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -EBADMSG);
	assert_int_equal(it.off, 0);
	free(p);
}

static void test_events_before_a_bad_record_still_decode(void **s)
{
	/* an 8-byte event at +7, a time extend, then a record running past the commit */
	uint32_t w[7] = {
		TU_RB_HDR(2, 7), 0xaaaaaaaa, 0xbbbbbbbb, TU_RB_HDR(KAGG_RB_TYPE_TIME_EXTEND, 1), 1,
		TU_RB_HDR(3, 2), 0xcccccccc
	};
	uint8_t *p = tu_page_of(1000, w, 7);
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };

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
		{ TU_RB_HDR(1, 3), 7, TU_RB_HDR(KAGG_RB_TYPE_PADDING, 0), 0 },
		{ TU_RB_HDR(1, 3), 7, 0, 0 },
	};
	size_t i;

	for (i = 0; i < 3; i++) {
		uint8_t *p = tu_page_of(0, ends[i < 2 ? i : 0], i < 2 ? 4 : 2);
		struct kagg_rb_page_iter it = { .sz = sizeof(it) };
		struct kagg_rb_event ev = { .sz = sizeof(ev) };

		assert_int_equal(kagg_rb_page_iter__init(&it, p, PS), 0);
		assert_int_equal(kagg_rb_page_iter__next(&it, &ev), 0);
		assert_int_equal(ev.ts, 3);
		assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -ENOENT);
		free(p);
	}
}

static void test_page_at_any_alignment_decodes(void **s)
{
	uint32_t w[3] = { TU_RB_HDR(2, 9), 0x01020304, 0x05060708 };
	uint8_t *p = tu_page_of(50, w, 3), *buf = malloc(PS + 3);
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };

	memcpy(buf + 3, p, PS);
	assert_int_equal(kagg_rb_page_iter__init(&it, buf + 3, PS), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), 0);
	assert_int_equal(ev.ts, 59);
	assert_memory_equal(ev.data, w + 1, 8);
	assert_int_equal(kagg_rb_page_iter__next(&it, &ev), -ENOENT);
	free(buf);
	free(p);
}

/* ------------------------------------------------------------------ formats */

static int parse(struct kagg_rb_events *evs, const char *text)
{
	return kagg_rb_events__parse(evs, "t", text, strlen(text), NULL);
}

/* A format "e" with ID 7, the common fields, then `field` (a whole "field:" line). */
static int parse_field(struct kagg_rb_events *evs, const char *field)
{
	char text[1024];

	snprintf(text, sizeof(text), "name: e\nID: 7\n" TU_FORMAT_COMMON "%s\nprint fmt: \"\"\n",
		 field);
	return parse(evs, text);
}

static void test_repeated_lines_are_malformed(void **s)
{
	static const char *const texts[] = {
		"name: a\nname: b\nID: 7\n" TU_FORMAT_COMMON,
		"name: a\nID: 7\nID: 8\n" TU_FORMAT_COMMON,
		"name: a\nID: 7\n" TU_FORMAT_COMMON "print fmt: \"x\"\nprint fmt: \"y\"\n",
	};
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		assert_int_equal(parse(evs, texts[i]), -EINVAL);
	assert_int_equal(kagg_rb_events__count(evs), 0);
	kagg_rb_events__free(evs);
}

static void test_ids_outside_common_type_range_are_malformed(void **s)
{
	static const char *const bad[] = { "2147483647",	   "65536", "-1",
					   "99999999999999999999", "12abc", "" };
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *f;
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "name: e\nID: %s\n" TU_FORMAT_COMMON, bad[i]);
		assert_int_equal(parse(evs, text), -EINVAL);
	}
	snprintf(text, sizeof(text), "name: e\nID: 65535\n" TU_FORMAT_COMMON);
	assert_int_equal(kagg_rb_events__parse(evs, "t", text, strlen(text), &f), 0);
	assert_int_equal(kagg_rb_format__id(f), 65535);
	kagg_rb_events__free(evs);
}

static void test_defined_ids_stop_at_int_max(void **s)
{
	KAGG_OPTS(kagg_rb_events_opts, o, .first_id = INT_MAX);
	struct kagg_rb_events *evs = kagg_rb_events__new(&o);
	const struct kagg_rb_format *f;

	assert_int_equal(kagg_rb_events__define(evs, "k", "a", "int x", NULL, &f), 0);
	assert_int_equal(kagg_rb_format__id(f), INT_MAX);
	assert_int_equal(kagg_rb_events__define(evs, "k", "b", "int x", NULL, &f), -EEXIST);
	assert_int_equal(kagg_rb_events__count(evs), 1);
	kagg_rb_events__free(evs);
}

static void test_field_layout_is_validated_at_parse_time(void **s)
{
	static const char *const bad[] = {
		"\tfield:int x;\toffset:-4;\tsize:4;\tsigned:1;",	  /* before the record */
		"\tfield:int x;\toffset:4294967304;\tsize:4;\tsigned:1;", /* wraps to 8 as 32 bits
									   */
		"\tfield:int x;\toffset:1073741822;\tsize:4;\tsigned:1;", /* ends past 2^30 - 1 */
		"\tfield:int x;\toffset:8;\tsize:-4;\tsigned:1;",
		"\tfield:int x;\toffset:eight;\tsize:4;\tsigned:1;",
		"\tfield:int x;\toffset:8;\tsigned:1;",
		"\tfield:int x;\toffset:8;\tsize:0;\tsigned:1;", /* a field of no bytes */
		"\tfield:__data_loc char[] s;\toffset:8;\tsize:8;\tsigned:0;",
		"\tfield:int a[8];\toffset:8;\tsize:4;\tsigned:1;", /* elements of 0 bytes */
		"\tfield:int a[8];\toffset:8;\tsize:33;\tsigned:1;",
		"\tfield:int a[4294967297];\toffset:8;\tsize:4;\tsigned:1;",
		"\tfield:char f[30+];\toffset:8;\tsize:31;\tsigned:1;",
		"\tfield:char f[30+1];\toffset:8;\tsize:30;\tsigned:1;", /* 31 bytes said */
	};
	static const char *const good[] = {
		"\tfield:char comm[TASK_COMM_LEN];\toffset:8;\tsize:16;\tsigned:0;", /* old kernels
										      */
		"\tfield:char buf[];\toffset:8;\tsize:0;\tsigned:0;",
		"\tfield:char func[30+1];\toffset:12;\tsize:31;\tsigned:1;", /* 5.10 ftrace/branch
									      */
		"\tfield:unsigned long args[6];\toffset:8;\tsize:48;\tsigned:0;",
		"\tfield:u64 x;\toffset:1073741815;\tsize:8;\tsigned:0;",
		/* opaque types (6.12's cxl events): bytes, never read as an integer */
		"\tfield:uuid_t hdr_uuid;\toffset:8;\tsize:16;\tsigned:0;",
		"\tfield:int x;\toffset:8;\tsize:3;\tsigned:1;",
	};
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse_field(evs, bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
	}
	assert_int_equal(kagg_rb_events__count(evs), 0);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct kagg_rb_events *one = kagg_rb_events__new(NULL);

		if (parse_field(one, good[i]))
			fail_msg("refused: %s", good[i]);
		kagg_rb_events__free(one);
	}
	kagg_rb_events__free(evs);
}

static void test_too_many_fields_are_malformed(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	size_t cap = 1100 * 64, len;
	char *text = malloc(cap);
	int i;

	len = (size_t)snprintf(text, cap, "name: e\nID: 7\nformat:\n");
	for (i = 0; i < 1100; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"\tfield:char f%d;\toffset:%d;\tsize:1;\tsigned:0;\n", i,
					i);
	assert_int_equal(kagg_rb_events__parse(evs, "t", text, len, NULL), -EINVAL);
	free(text);
	kagg_rb_events__free(evs);
}

/* Make DIR/sys/EV and put the path of its format file in path. */
static void event_dir(char *path, size_t sz, const char *dir, const char *ev)
{
	snprintf(path, sz, "%s/sys/%s", dir, ev);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sz, "%s/sys/%s/format", dir, ev);
}

static void test_format_files_that_are_not_files_are_skipped(void **s)
{
	char dir[] = "/tmp/kagg-hostile-XXXXXX", path[256];
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	int failed = -1;
	FILE *f;

	deadline(10);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sys", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	event_dir(path, sizeof(path), dir, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0); /* reading it would block forever */
	event_dir(path, sizeof(path), dir, "big");
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "name: big\nID: 9\n" TU_FORMAT_COMMON);
	assert_int_equal(fseek(f, 2 << 20, SEEK_SET), 0); /* 2 MiB: a hole of zeros */
	fputc('\n', f);
	fclose(f);
	event_dir(path, sizeof(path), dir, "ok");
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "name: ok\nID: 8\n" TU_FORMAT_COMMON);
	fclose(f);

	assert_int_equal(kagg_rb_events__load_dir(evs, dir, &failed), 1);
	assert_int_equal(failed, 2);
	assert_non_null(kagg_rb_events__find_by_name(evs, "sys", "ok"));

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	kagg_rb_events__free(evs);
}

/* ------------------------------------------------------------------ print fmt */

/*
 * What __format_info prints into buf for record r, n bytes, of event ID 7
 * as text defines it; the helper fills r's common fields.
 */
static void format_record(const char *text, uint8_t *r, size_t n, char *buf, size_t size)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *f;

	assert_int_equal(kagg_rb_events__parse(evs, "t", text, strlen(text), &f), 0);
	kagg_rb_entry__init(r, 7, 0, 0, 1);
	kagg_rb_events__format_info(evs, f, r, n, buf, size);
	kagg_rb_events__free(evs);
}

/*
 * Register event "e" (ID 7: int x at 8, u64 y at 16, char a[6] at 24 as two
 * 3-byte elements) with print fmt pf; return what __format_info prints for
 * x = 1, y = 2, a = "ab".
 */
static char *info_of(const char *pf)
{
	size_t cap = strlen(pf) + 1024;
	char *text = malloc(cap), buf[4096];
	uint8_t *r = calloc(1, 32);
	int64_t y = 2;

	snprintf(text, cap,
		 "name: e\nID: 7\n" TU_FORMAT_COMMON
		 "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n"
		 "\tfield:u64 y;\toffset:16;\tsize:8;\tsigned:0;\n"
		 "\tfield:char a[2];\toffset:24;\tsize:6;\tsigned:0;\n\nprint fmt: %s\n",
		 pf);
	r[8] = 1;
	memcpy(r + 16, &y, 8);
	memcpy(r + 24, "ab", 3);
	format_record(text, r, 32, buf, sizeof(buf));
	free(r);
	free(text);
	return strdup(buf);
}

#define FIELDS "x=1 y=2 a=ab"

static void expect_info(const char *pf, const char *want)
{
	char *got = info_of(pf);

	if (strcmp(got, want))
		fail_msg("print fmt %.60s...: got \"%.80s\", want \"%s\"", pf, got, want);
	free(got);
}

/* "\"%d\", " then n opening parentheses, 1, n closing ones. */
static char *nested(size_t n, char open, char close)
{
	char *pf = malloc(2 * n + 16), *p = pf;

	p += sprintf(p, "\"%%d\", ");
	memset(p, open, n);
	p += n;
	*p++ = '1';
	if (close) {
		memset(p, close, n);
		p += n;
	}
	*p = 0;
	return pf;
}

static void test_deep_nesting_gives_up_instead_of_overflowing_the_stack(void **s)
{
	char *pf;

	pf = nested(20000, '(', ')'); /* used to overflow the stack */
	expect_info(pf, FIELDS);
	free(pf);
	pf = nested(100000, '-', 0); /* unary operators recurse too */
	expect_info(pf, FIELDS);
	free(pf);
	pf = nested(100000, '!', 0);
	expect_info(pf, FIELDS);
	free(pf);
	/* the kernel's deepest print fmt nests 13 parentheses: more than that still works */
	pf = nested(20, '(', ')');
	expect_info(pf, "1");
	free(pf);
	pf = nested(40, '-', 0);
	expect_info(pf, "1");
	free(pf);
	pf = nested(24, '(', ')'); /* depth 50 */
	expect_info(pf, FIELDS);
	free(pf);
}

static void test_huge_print_width_gives_up(void **s)
{
	char want[300];

	/* used to spend ~1.6 s per record formatting a billion spaces */
	expect_info("\"%999999999d\", REC->x", FIELDS);
	expect_info("\"%.999999999d\", REC->x", FIELDS);
	expect_info("\"%1.999999999s\", \"a\"", FIELDS);
	snprintf(want, sizeof(want), "%256d", 1);
	expect_info("\"%256d\", REC->x", want);
}

static void test_integer_overflow_wraps_instead_of_undefined_behaviour(void **s)
{
	/* INT64_MIN / -1 raised SIGFPE */
	expect_info("\"%lld\", (-9223372036854775807 - 1) / -1", "-9223372036854775808");
	expect_info("\"%lld\", (-9223372036854775807 - 1) % -1", "0");
	expect_info("\"%lld\", 3 * 4611686018427387904", "-4611686018427387904");
	expect_info("\"%lld\", 9223372036854775807 + REC->x", "-9223372036854775808");
	expect_info("\"%lld\", -(-9223372036854775807 - REC->x)", "-9223372036854775808");
	expect_info("\"%lld\", (-9223372036854775807 - 1) - REC->x", "9223372036854775807");
}

static void test_array_elements_must_be_integers(void **s)
{
	/* a[] holds two 3-byte elements: no integer to read, fall back */
	expect_info("\"%d\", REC->a[1]", FIELDS);
}

static void test_field_reads_stay_inside_the_field(void **s)
{
	/* a caller-built 3-byte field: only its 3 bytes are read (the buffer ends there) */
	struct kagg_rb_field f = { .sz = sizeof(f), .offset = 1, .size = 3 };
	uint8_t *r = malloc(4);

	memcpy(r, "\x09\x01\x02\x03", 4);
	assert_int_equal(kagg_rb_field__int(&f, r), 0x030201);
	f.size = 0;
	assert_int_equal(kagg_rb_field__int(&f, r), 0);
	free(r);
}

static void test_data_loc_outside_the_record_is_not_read(void **s)
{
	static const char text[] = "name: d\nID: 7\n" TU_FORMAT_COMMON
				   "\tfield:__data_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n\n"
				   "print fmt: \"s=%s\", __get_str(s)\n";
	uint32_t locs[] = { 12u | 100u << 16, 0xffffu | 0xffffu << 16, 12u | 4u << 16 };
	size_t i;
	char buf[256];

	for (i = 0; i < 3; i++) {
		uint8_t *r = malloc(16); /* exactly the record: ASan sees any read past it */

		memcpy(r + 8, &locs[i], 4);
		memcpy(r + 12, "abc", 4);
		format_record(text, r, 16, buf, sizeof(buf));
		assert_string_equal(buf, i < 2 ? "s=" : "s=abc");
		free(r);
	}
}

/* An opaque field (uuid_t, 16 bytes) is printed as its bytes, never read as an integer. */
static void test_opaque_field_prints_as_bytes(void **s)
{
	static const char text[] = "name: u\nID: 7\n" TU_FORMAT_COMMON
				   "\tfield:uuid_t u;\toffset:8;\tsize:16;\tsigned:0;\n\n"
				   "print fmt: \"u=%d\", REC->u\n";
	uint8_t *r = malloc(24); /* exactly the record */
	char buf[256];

	for (int i = 0; i < 16; i++)
		r[8 + i] = (uint8_t)i;
	format_record(text, r, 24, buf, sizeof(buf));
	assert_string_equal(buf, "u=ARRAY[00, 01, 02, 03, 04, 05, 06, 07, 08, 09, 0a, 0b, 0c, 0d, "
				 "0e, 0f]");
	free(r);
}

/* ------------------------------------------------------------------ trace.dat */

static void test_many_saved_cmdlines_load_in_n_log_n(void **s)
{
	const size_t n = 300000; /* descending pids: each insert moved every entry before */
	size_t cap = n * 24, len = 0, i;
	char *cl = malloc(cap), *path = tu_tmp_path();
	struct kagg_tracedat *t;
	FILE *f;

	for (i = 0; i < n; i++)
		len += (size_t)snprintf(cl + len, cap - len, "%zu c%zu\n", n - i, n - i);
	len += (size_t)snprintf(cl + len, cap - len, "5 again\n"); /* the later line wins */
	f = fopen(path, "w");
	tu_tracedat_header(f, NULL, 0, cl, 1);
	tu_put(f, 0, 8);
	tu_put(f, 0, 8);
	fclose(f);

	deadline(20); /* minutes before, 0.1 s now */
	t = kagg_tracedat__open(path, NULL);
	deadline_off();
	assert_non_null(t);
	assert_string_equal(kagg_tracedat__comm(t, 1), "c1");
	assert_string_equal(kagg_tracedat__comm(t, 123456), "c123456");
	assert_string_equal(kagg_tracedat__comm(t, 5), "again");
	kagg_tracedat__free(t);
	unlink(path);
	free(path);
	free(cl);
}

static void test_many_formats_load_in_linear_time(void **s)
{
	const size_t n = 200000; /* every one looked up the registry linearly */
	char **fm = calloc(n, sizeof(*fm)), *path = tu_tmp_path();
	struct kagg_tracedat *t;
	size_t i;
	FILE *f;

	for (i = 0; i < n; i++)
		assert_true(asprintf(&fm[i],
				     "name: e%zu\nID: %zu\nformat:\n"
				     "\tfield:unsigned short "
				     "common_type;\toffset:0;\tsize:2;\tsigned:0;\n",
				     i, i % 65536) > 0);
	f = fopen(path, "w");
	tu_tracedat_header(f, fm, n, "", 1);
	tu_put(f, 0, 8);
	tu_put(f, 0, 8);
	fclose(f);

	deadline(5); /* ~10 s before, 0.3 s now */
	t = kagg_tracedat__open(path, NULL);
	deadline_off();
	assert_non_null(t);
	assert_int_equal(kagg_rb_events__count(kagg_tracedat__events(t)), 65536);
	assert_int_equal(kagg_tracedat__bad_formats(t), n - 65536); /* IDs taken */
	kagg_tracedat__free(t);
	for (i = 0; i < n; i++)
		free(fm[i]);
	free(fm);
	unlink(path);
	free(path);
}

static void test_header_errors_say_where(void **s)
{
	char *path = tu_tmp_path();
	KAGG_OPTS(kagg_tracedat_opts, o, .error_offset = NULL);
	uint64_t where = 0;
	long end;
	FILE *f;

	o.error_offset = &where;
	/* 65536 CPUs announced, none of their 16-byte entries present */
	f = fopen(path, "w");
	tu_tracedat_header(f, NULL, 0, "", 65536);
	end = ftell(f);
	tu_put(f, 0, 8);
	fclose(f);
	assert_null(kagg_tracedat__open(path, &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(where, end);

	/* a header_page length beyond the end of the file: its length field */
	f = fopen(path, "w");
	tu_tracedat_magic(f);
	tu_put(f, 1ULL << 62, 8);
	fwrite("some text", 1, 9, f);
	fclose(f);
	assert_null(kagg_tracedat__open(path, &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(where, 30);

	unlink(path);
	free(path);
}

static void test_damaged_page_reports_offset_after_older_events(void **s)
{
	static const char fmt[] = "name: e\nID: 7\n" TU_FORMAT_COMMON
				  "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\n"
				  "print fmt: \"x=%d\", REC->x\n";
	char *fm[1] = { (char *)fmt }, *path = tu_tmp_path(), *out = NULL;
	/* records: type 3 (12 bytes: common fields + x) */
	uint32_t c0[] = { TU_RB_HDR(3, 10), 7, 0, 1, TU_RB_HDR(3, 10), 7, 0, 2,
			  TU_RB_HDR(3, 10), 7, 0, 3 };
	uint32_t c1[] = { TU_RB_HDR(3, 15), 7, 0, 100, TU_RB_HDR(0, 1), 0xfffffffcu, 7, 0 };
	static const uint64_t sizes[2] = { PS, PS };
	uint64_t off1, size1;
	struct kagg_tracedat *t;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	size_t outlen = 0;
	FILE *f;

	f = fopen(path, "w");
	tu_tracedat_header(f, fm, 1, "", 2);
	tu_tracedat_cpus(f, sizes, 2);
	tu_put_page(f, 0, c0, 12);
	tu_put_page(f, 0, c1, 8);
	fclose(f);

	t = kagg_tracedat__open(path, NULL);
	assert_non_null(t);
	assert_int_equal(kagg_tracedat__error_offset(t), UINT64_MAX);
	assert_int_equal(kagg_tracedat__cpu_data(t, 1, &off1, &size1), 0);
	/* cpu0 at 10, cpu1 at 15, then cpu1's damage before cpu0's 20 and 30 */
	assert_int_equal(kagg_tracedat__next(t, &ev), 0);
	assert_int_equal(ev.ts, 10);
	assert_int_equal(kagg_tracedat__next(t, &ev), 0);
	assert_int_equal(ev.ts, 15);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(kagg_tracedat__next(t, &ev), -EINVAL);
	assert_int_equal(kagg_tracedat__error_offset(t), off1 + KAGG_RB_PAGE_HDR + 16);
	assert_int_equal(kagg_tracedat__next(t, &ev), 0);
	assert_int_equal(ev.ts, 20);
	assert_int_equal(kagg_tracedat__next(t, &ev), 0);
	assert_int_equal(ev.ts, 30);
	assert_int_equal(kagg_tracedat__next(t, &ev), -ENOENT);

	/* printing stops at the damage with what came before it */
	f = open_memstream(&out, &outlen);
	assert_int_equal(kagg_tracedat__fprint(t, f, -1), -EINVAL);
	fclose(f);
	assert_non_null(strstr(out, "e: x=1\n"));
	assert_non_null(strstr(out, "e: x=100\n"));
	assert_null(strstr(out, "x=2"));
	assert_int_equal(kagg_tracedat__error_offset(t), off1 + KAGG_RB_PAGE_HDR + 16);
	free(out);
	kagg_tracedat__free(t);
	unlink(path);
	free(path);
}

static void test_damaged_commit_word_reports_its_offset(void **s)
{
	char *path = tu_tmp_path();
	static const uint64_t size = 2 * PS;
	uint32_t w[] = { TU_RB_HDR(2, 1), 7, 0 };
	uint64_t off0;
	uint8_t *p = tu_page_of(0, w, 3);
	struct kagg_tracedat *t;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	uint64_t commit = PS; /* more than a page can hold after its header */
	FILE *f;

	f = fopen(path, "w");
	tu_tracedat_header(f, NULL, 0, "", 1);
	tu_tracedat_cpus(f, &size, 1);
	fwrite(p, 1, PS, f);
	memcpy(p + 8, &commit, 8);
	fwrite(p, 1, PS, f);
	fclose(f);

	t = kagg_tracedat__open(path, NULL);
	assert_non_null(t);
	assert_int_equal(kagg_tracedat__cpu_data(t, 0, &off0, NULL), 0);
	assert_int_equal(kagg_tracedat__next(t, &ev), 0);
	assert_int_equal(kagg_tracedat__next(t, &ev), -EINVAL);
	assert_int_equal(kagg_tracedat__error_offset(t), off0 + PS + 8);
	assert_int_equal(kagg_tracedat__next(t, &ev), -ENOENT);
	kagg_tracedat__free(t);
	free(p);
	unlink(path);
	free(path);
}

UU_MAIN(cmocka_unit_test(test_padding_length_that_wraps_the_offset_is_an_error),
	cmocka_unit_test(test_data_length_that_wraps_is_an_error),
	cmocka_unit_test(test_events_before_a_bad_record_still_decode),
	cmocka_unit_test(test_clean_ends_of_a_page_are_not_errors),
	cmocka_unit_test(test_page_at_any_alignment_decodes),
	cmocka_unit_test(test_repeated_lines_are_malformed),
	cmocka_unit_test(test_ids_outside_common_type_range_are_malformed),
	cmocka_unit_test(test_defined_ids_stop_at_int_max),
	cmocka_unit_test(test_field_layout_is_validated_at_parse_time),
	cmocka_unit_test(test_too_many_fields_are_malformed),
	cmocka_unit_test(test_format_files_that_are_not_files_are_skipped),
	cmocka_unit_test(test_deep_nesting_gives_up_instead_of_overflowing_the_stack),
	cmocka_unit_test(test_huge_print_width_gives_up),
	cmocka_unit_test(test_integer_overflow_wraps_instead_of_undefined_behaviour),
	cmocka_unit_test(test_array_elements_must_be_integers),
	cmocka_unit_test(test_field_reads_stay_inside_the_field),
	cmocka_unit_test(test_data_loc_outside_the_record_is_not_read),
	cmocka_unit_test(test_opaque_field_prints_as_bytes),
	cmocka_unit_test(test_many_saved_cmdlines_load_in_n_log_n),
	cmocka_unit_test(test_many_formats_load_in_linear_time),
	cmocka_unit_test(test_header_errors_say_where),
	cmocka_unit_test(test_damaged_page_reports_offset_after_older_events),
	cmocka_unit_test(test_damaged_commit_word_reports_its_offset))
