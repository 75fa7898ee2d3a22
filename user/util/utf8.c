// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The UTF-8 decoder every output format uses (see utf8.h): strict (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), one character at a time.
 */
#include <string.h>

#include "util/utf8.h"

static bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t utf8_next(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char c = p[0];

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf && n >= 2 && cont(p[1])) {
		*cp = (uint32_t)(c & 0x1f) << 6 | (p[1] & 0x3f);
		return 2;
	}
	if (c >= 0xe0 && c <= 0xef) {
		/* e0: no overlong form below U+0800; ed: no surrogate */
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		if (n >= 3 && p[1] >= lo && p[1] <= hi && cont(p[2])) {
			*cp = (uint32_t)(c & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 |
			      (p[2] & 0x3f);
			return 3;
		}
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* f0: no overlong form below U+10000; f4: nothing above U+10FFFF */
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		if (n >= 4 && p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3])) {
			*cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
			      (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
			return 4;
		}
	}
	*cp = UTF8_BAD;
	return 1;
}

/* Whether the character c (UTF8_BAD included) becomes U+FFFD under flags. */
static bool replaced(uint32_t c, unsigned int flags)
{
	return c == UTF8_BAD || (utf8_is_control(c) && !(c == '\n' && (flags & UTF8_KEEP_NL)));
}

size_t utf8_clean(char *out, const char *s, unsigned int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0, k;
	uint32_t c;

	for (; *p; p += k) {
		k = utf8_next(p, SIZE_MAX, &c);
		if (replaced(c, flags)) {
			if (out)
				memcpy(out + len, UTF8_REPLACEMENT, 3);
			len += 3;
		} else {
			if (out)
				memcpy(out + len, p, k);
			len += k;
		}
	}
	if (out)
		out[len] = 0;
	return len;
}

bool utf8_is_clean(const char *s, unsigned int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c;

	while (*p) {
		p += utf8_next(p, SIZE_MAX, &c);
		if (replaced(c, flags))
			return false;
	}
	return true;
}
