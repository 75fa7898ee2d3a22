// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Terminal-safe text (see text.h): octal escapes for control bytes, bytes
 * that are not UTF-8 and the C1 controls; the rest as it is.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

static bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t text_utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];

	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && cont(p[1]) && !(c == 0xc2 && p[1] < 0xa0) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return n >= 3 && p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return n >= 4 && p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
	}
	return 0;
}

/* Bytes of s[0..n) printed as they are before the first one to escape (stops at NUL). */
static size_t clean_run(const unsigned char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n && s[i]) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\') {
			i++;
			continue;
		}
		if (s[i] < 0x80 || !(k = text_utf8_len(s + i, n - i)))
			break;
		i += k;
	}
	return i;
}

/* Escape s[0..n) (up to its NUL) into out (when not NULL); the escaped length. */
static size_t escape(const unsigned char *s, size_t n, char *out)
{
	size_t i = 0, len = 0;

	while (i < n && s[i]) {
		size_t k = clean_run(s + i, n - i);

		if (out)
			memcpy(out + len, s + i, k);
		len += k;
		i += k;
		if (i < n && s[i]) {
			if (out) {
				out[len] = '\\';
				out[len + 1] = (char)('0' + (s[i] >> 6));
				out[len + 2] = (char)('0' + ((s[i] >> 3) & 7));
				out[len + 3] = (char)('0' + (s[i] & 7));
			}
			len += 4;
			i++;
		}
	}
	return len;
}

int text_fputn(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n && p[i]) {
		size_t k = clean_run(p + i, n - i);

		if (k && fwrite(p + i, 1, k, f) != k)
			return -EIO;
		i += k;
		if (i < n && p[i]) {
			if (fprintf(f, "\\%03o", p[i]) < 0)
				return -EIO;
			i++;
		}
	}
	return 0;
}

const char *text_esc(struct text_esc *e, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strnlen(s, n), out_len;
	char **v, *copy;

	if (clean_run(p, len) == len && len < n)
		return s;
	out_len = escape(p, len, NULL);
	v = realloc(e->v, (e->n + 1) * sizeof(*v));
	if (!v)
		return "?";
	e->v = v;
	copy = malloc(out_len + 1);
	if (!copy)
		return "?";
	escape(p, len, copy);
	copy[out_len] = 0;
	e->v[e->n++] = copy;
	return copy;
}

void text_esc_free(struct text_esc *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	e->v = NULL;
	e->n = 0;
}
