// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The JSON writer (util/json.h): a document written as it is walked, straight
 * to a FILE, with no tree in memory.  jw keeps one flag per depth (a member
 * already written), so commas, the ": " after keys and indentation are its
 * business; the printers only say what comes next.
 *
 *   jw_obj_begin(w, NULL)          {
 *     jw_str(w, "tool", "offcpu")    "tool": "offcpu",
 *     jw_arr_begin(w, "slots")       "slots": [
 *       jw_u64(w, NULL, 3)             3
 *     jw_arr_end(w)                  ]
 *   jw_obj_end(w); jw_finish(w)    }\n
 *
 * What it guarantees:
 * - Strings are valid JSON and valid UTF-8 whatever bytes they hold: quote,
 *   backslash, \n, \t, \r as two characters; other C0 controls, DEL and
 *   C1 controls as \u00XX; valid UTF-8 as it is; a byte that is not UTF-8 as
 *   \u00XX, read as Latin-1.  NULL is written null.
 * - Numbers: integers exactly; doubles with '.' whatever LC_NUMERIC the
 *   embedding program set (no locale is changed: no process-wide state), never
 *   grouped; NaN, infinities and a number too long to print are written null.
 * - One line, no spaces (jw_init, pretty false), one line spaced for people
 *   (jw_init_spaced), or one member a line, indented (pretty).
 *
 * What it does not do:
 * - Check the caller: a key inside an array, no key inside an object, an
 *   end without its begin or a begin without its end write invalid JSON.
 * - Nest past JW_MAX_DEPTH - 1 levels: deeper, the depth stops growing and
 *   the commas go wrong.
 * - Round-trip every byte: a string is cut at its first NUL, and a byte that
 *   is not UTF-8 reads back as the Latin-1 character of that value.
 * - Report errors: the caller checks ferror() on the FILE.
 */
#include <locale.h>
#include <math.h>
#include <inttypes.h>
#include <string.h>

#include "util/json.h"
#include "util/text.h"

void jw_init(struct jw *w, FILE *f, bool pretty)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = true;
	w->pretty = pretty;
	w->spaced = false;
}

void jw_init_spaced(struct jw *w, FILE *f)
{
	jw_init(w, f, false);
	w->spaced = true;
}

static void jw_indent(struct jw *w)
{
	int i;

	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* The characters JSON escapes as a backslash and a letter, and the letters. */
static const char esc_char[] = "\"\\\n\t\r", esc_letter[] = "\"\\ntr";

static void jw_raw_str(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	const char *e;

	fputc('"', w->f);
	for (; *p; p++) {
		e = strchr(esc_char, *p);
		if (e) {
			fprintf(w->f, "\\%c", esc_letter[e - esc_char]);
		} else if (*p >= 0x80) {
			/* valid UTF-8 as it is; C1 controls and other bytes escaped */
			size_t k = text_utf8_len(p, strnlen((const char *)p, 4));

			if (k) {
				fwrite(p, 1, k, w->f);
				p += k - 1;
			} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) {
				fprintf(w->f, "\\u%04x", p[1]); /* a C1 control */
				p++;
			} else {
				/* not UTF-8: the byte read as Latin-1 */
				fprintf(w->f, "\\u%04x", *p);
			}
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(w->f, "\\u%04x", *p);
		} else {
			fputc(*p, w->f);
		}
	}
	fputc('"', w->f);
}

/* Separator, indentation and key before a value. */
static void jw_member(struct jw *w, const char *key)
{
	if (!w->first[w->depth])
		fputs(w->spaced ? ", " : ",", w->f);
	w->first[w->depth] = false;
	if (w->depth)
		jw_indent(w);
	if (key) {
		jw_raw_str(w, key);
		fputs(w->pretty || w->spaced ? ": " : ":", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_member(w, key);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void jw_close(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth)
		w->depth--;
	if (!empty)
		jw_indent(w);
	fputc(c, w->f);
}

void jw_obj_begin(struct jw *w, const char *key)
{
	jw_open(w, key, '{');
}

void jw_obj_end(struct jw *w)
{
	jw_close(w, '}');
}

void jw_arr_begin(struct jw *w, const char *key)
{
	jw_open(w, key, '[');
}

void jw_arr_end(struct jw *w)
{
	jw_close(w, ']');
}

void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_member(w, key);
	if (s)
		jw_raw_str(w, s);
	else
		fputs("null", w->f);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_member(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_member(w, key);
	fprintf(w->f, "%" PRId64, v);
}

/*
 * A double as JSON wants it, whatever LC_NUMERIC the embedding program
 * set: printed, then the locale's decimal point (this thread's, as printf
 * used it) written as '.'.  No locale object is kept: the library holds
 * no process-wide state.  %f and %g never group thousands.
 */
static void jw_number(struct jw *w, const char *fmt, int decimals, double v)
{
	const char *dp = localeconv()->decimal_point;
	char buf[512], *p;
	int n;

	n = decimals >= 0 ? snprintf(buf, sizeof(buf), fmt, decimals, v)
			  : snprintf(buf, sizeof(buf), fmt, v);
	if (n < 0 || n >= (int)sizeof(buf)) {
		fputs("null", w->f);
		return;
	}
	if (dp && *dp && strcmp(dp, ".") && (p = strstr(buf, dp))) {
		size_t dl = strlen(dp);

		*p = '.';
		memmove(p + 1, p + dl, strlen(p + dl) + 1);
	}
	fputs(buf, w->f);
}

void jw_double(struct jw *w, const char *key, double v, int decimals)
{
	jw_member(w, key);
	if (isfinite(v))
		jw_number(w, "%.*f", decimals < 0 ? 0 : decimals, v);
	else
		fputs("null", w->f);
}

void jw_double_g(struct jw *w, const char *key, double v)
{
	jw_member(w, key);
	if (isfinite(v))
		jw_number(w, "%g", -1, v);
	else
		fputs("null", w->f);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_finish(struct jw *w)
{
	fputc('\n', w->f);
}
