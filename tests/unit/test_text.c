// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Terminal-safe text, unprivileged: what is escaped and how (user/util/text.c),
 * and a `trace` line whose comm and string field hold ESC and friends.
 * The snapshot printers are checked in test_offcpu_output.c, kagg stat's
 * report in test_stat.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "util/text.h"
#include "unit_util.h"

/* A comm as an attacker would set it with prctl(PR_SET_NAME): 15 bytes. */
#define EVIL "a\033[2Jb\n\tc\x7f\xff\\"
#define EVIL_ESC "a\\033[2Jb\\012\\011c\\177\\377\\134"

static char *escaped(const char *s, size_t n)
{
	struct uu_mem m;

	assert_int_equal(text_fputn(uu_mem_open(&m), s, n), 0);
	return uu_mem_text(&m);
}

static void expect(const char *in, const char *want)
{
	char *out = escaped(in, SIZE_MAX);
	struct text_esc e = {};

	if (strcmp(out, want))
		fail_msg("'%s' escaped to '%s', want '%s'", in, out, want);
	assert_string_equal(text_esc(&e, in, SIZE_MAX), want);
	text_esc_free(&e);
	free(out);
}

static void test_what_is_escaped(void **state)
{
	expect("plain comm-1.2_x", "plain comm-1.2_x");
	expect(EVIL, EVIL_ESC);
	expect("\r\a\b\x01\x1f ~", "\\015\\007\\010\\001\\037 ~");
	/* valid UTF-8 is kept: 2, 3 and 4 bytes */
	expect("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x90\xa7",
	       "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x90\xa7");
	/* C1 controls (U+009B is CSI), overlong forms, surrogates, beyond U+10FFFF, cut */
	expect("\xc2\x9b"
	       "1m",
	       "\\302\\2331m");
	expect("\xc2\xa0", "\xc2\xa0"); /* U+00A0, the first one after the C1 range */
	expect("\xc0\xaf\xc1\xbf", "\\300\\257\\301\\277");
	expect("\xe0\x80\xaf", "\\340\\200\\257");
	expect("\xed\xa0\x80", "\\355\\240\\200");
	expect("\xf4\x90\x80\x80", "\\364\\220\\200\\200");
	expect("\xf5\x80", "\\365\\200");
	expect("x\xe6\x97", "x\\346\\227");
	expect("", "");
}

static void test_bounded_and_unterminated(void **state)
{
	char comm[16];
	struct text_esc e = {};
	const char *clean = "abc", *out;
	char *s;

	/* a clean terminated string is returned as it is, no copy */
	assert_ptr_equal(text_esc(&e, clean, SIZE_MAX), clean);
	assert_ptr_equal(text_esc(&e, clean, 4), clean);
	assert_int_equal(e.n, 0);
	/* a full 16-byte array without its NUL is cut at 16, never read past */
	memset(comm, 'x', sizeof(comm));
	out = text_esc(&e, comm, sizeof(comm));
	assert_string_equal(out, "xxxxxxxxxxxxxxxx");
	/* n cuts a UTF-8 sequence: the cut bytes are escaped */
	s = escaped("ab\xe6\x97\xa5", 4);
	assert_string_equal(s, "ab\\346\\227");
	free(s);
	text_esc_free(&e);
	text_esc_free(&e); /* twice is fine */
}

/* A sched_switch line: the comm from the callback and prev_comm from the record. */
static const char *evil_comm(void *ctx, int pid)
{
	(void)ctx;
	return pid == 77 ? EVIL : NULL;
}

static void test_trace_line_escapes_comms(void **state)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	struct uu_wakeup w;
	char *buf, info[256];
	size_t len;

	uu_wakeup_init(&w, evs, 1000000000ULL, 1);
	uu_wakeup_fill(&w, 0, 0, 77, EVIL);
	buf = uu_wakeup_line(evs, &w, evil_comm, NULL, &len);
	assert_string_equal(buf, EVIL_ESC "-77      [001] .....     1.000000: sched_wakeup: "
					  "comm=" EVIL_ESC " pid=5 prio=120 target_cpu=001\n");
	assert_null(memchr(buf, '\033', len));
	/* format_info stays the record's own text */
	kagg_rb_events__format_info(evs, w.f, w.r, 64, info, sizeof(info));
	assert_non_null(strstr(info, "comm=" EVIL " pid=5"));
	free(buf);
	kagg_rb_events__free(evs);
}

UU_MAIN(cmocka_unit_test(test_what_is_escaped), cmocka_unit_test(test_bounded_and_unterminated),
	cmocka_unit_test(test_trace_line_escapes_comms))
