// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * JSON a script can trust whatever the embedding program did to its locale:
 * with LC_NUMERIC set to a locale whose decimal point is ',' (printf itself
 * then writes "1,5"), the JSON writer still writes 1.5; and a comm the
 * kernel cut at 15 bytes inside a UTF-8 character comes out as valid
 * JSON, the dangling byte escaped.
 *
 * The comma locale is de_DE.UTF-8 when the system has it, else one built
 * for the test with localedef (glibc's locale compiler) from a source that
 * defines LC_NUMERIC only; without either the test is skipped, saying so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "util/json.h"
#include "unit_util.h"

static char locdir[] = "/tmp/kagg-test-locale-XXXXXX";

/* A locale with a ',' decimal point set for LC_NUMERIC: true, or false (none). */
static bool set_comma_locale(void)
{
	char src[128], out[128], cmd[512];
	FILE *f;

	if (setlocale(LC_NUMERIC, "de_DE.UTF-8"))
		return true;
	if (!mkdtemp(locdir))
		return false;
	snprintf(src, sizeof(src), "%s/src", locdir);
	snprintf(out, sizeof(out), "%s/kagg_TEST.UTF-8", locdir);
	f = fopen(src, "w");
	if (!f)
		return false;
	fputs("LC_NUMERIC\ndecimal_point \",\"\nthousands_sep \".\"\ngrouping 3;3\n"
	      "END LC_NUMERIC\n",
	      f);
	fclose(f);
	/* -c: write it although the other categories are not defined (exit 1, warnings). */
	snprintf(cmd, sizeof(cmd), "localedef -c -f UTF-8 -i %s %s >/dev/null 2>&1", src, out);
	if (system(cmd) == -1)
		return false;
	setenv("LOCPATH", locdir, 1);
	return setlocale(LC_NUMERIC, "kagg_TEST.UTF-8") != NULL;
}

static void remove_locale(void)
{
	char cmd[128];

	if (strcmp(locdir + strlen(locdir) - 6, "XXXXXX")) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", locdir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", locdir);
	}
}

static char *write_doc(void (*fn)(struct jw *w), bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw w;

	assert_non_null(f);
	jw_init(&w, f, pretty);
	jw_obj_begin(&w, NULL);
	fn(&w);
	jw_obj_end(&w);
	fclose(f);
	return buf;
}

static void numbers(struct jw *w)
{
	jw_double(w, "a", 1.5, 1);
	jw_double_g(w, "b", 0.25);
	jw_double(w, "c", 1234567.125, 3);
}

static void test_numbers_ignore_lc_numeric(void **state)
{
	char probe[16], *doc;

	if (!set_comma_locale()) {
		printf("  no locale with a ',' decimal point (no de_DE.UTF-8, localedef failed)\n");
		remove_locale();
		skip();
	}
	/* The locale is in effect: printf itself writes a comma. */
	snprintf(probe, sizeof(probe), "%.1f", 1.5);
	assert_string_equal(probe, "1,5");
	doc = write_doc(numbers, false);
	assert_string_equal(doc, "{\"a\":1.5,\"b\":0.25,\"c\":1234567.125}");
	free(doc);
	/* The program's own printf keeps its locale after the writer ran. */
	snprintf(probe, sizeof(probe), "%.1f", 2.5);
	assert_string_equal(probe, "2,5");
	setlocale(LC_NUMERIC, "C");
	remove_locale();
}

static void cut_comm(struct jw *w)
{
	/* 15 bytes as the kernel keeps them: "abcdefghijklm" then the first byte of "é". */
	jw_str(w, "comm", "abcdefghijklm\xc3");
	jw_str(w, "whole", "caf\xc3\xa9");
}

static void test_comm_cut_in_utf8_char_is_escaped(void **state)
{
	char *doc = write_doc(cut_comm, false);

	assert_string_equal(doc, "{\"comm\":\"abcdefghijklm\\u00c3\",\"whole\":\"caf\xc3\xa9\"}");
	free(doc);
}

UU_MAIN(cmocka_unit_test(test_numbers_ignore_lc_numeric),
	cmocka_unit_test(test_comm_cut_in_utf8_char_is_escaped))
