/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the library's one UTF-8 decoder, and names from outside kagg
 * (command names a process gives itself, symbols of a binary, paths, tool
 * lines) made valid for a format that wants UTF-8.
 *
 * A byte "outside UTF-8" starts no valid sequence: a stray continuation
 * byte, an overlong form (c0 af, e0 80 80), a surrogate (ed a0 80), a code
 * point above U+10FFFF (f4 90 80 80), a sequence cut short, 0xf5..0xff.
 * A control is C0 (U+0000..U+001F), DEL or C1 (U+0080..U+009F).
 *
 * What each format does with them (the callers' loops):
 *	terminal text (text.c)		octal escapes, \ooo
 *	JSON (json.c)			\u00XX
 *	Prometheus label values		U+FFFD; a newline kept, written \n (prom.c)
 *	XML: SVG, HTML (render/)	'?', also for U+FFFE and U+FFFF (not XML 1.0)
 *	pprof strings			U+FFFD, a newline too (utf8_clean)
 */
#ifndef KAGG_UTF8_H
#define KAGG_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The code point utf8_next() gives for a byte outside UTF-8. */
#define UTF8_BAD 0xffffffffu

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * The character at p, of which n >= 1 bytes may be read (a NUL ends a sequence, so a
 * NUL-terminated string may pass SIZE_MAX): its length in bytes, 1 to 4, with its code point
 * in *cp; 1 with *cp = UTF8_BAD for a byte outside UTF-8.
 */
size_t utf8_next(const unsigned char *p, size_t n, uint32_t *cp);

/* C0 controls, DEL and C1 controls. */
static inline bool utf8_is_control(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c < 0xa0);
}

/* utf8_clean() flags: keep newlines (Prometheus label values may hold them, escaped). */
#define UTF8_KEEP_NL 1u

/*
 * s (up to its NUL) with each byte outside UTF-8 and each control (but '\n' with
 * UTF8_KEEP_NL) replaced by U+FFFD, into out (NUL-terminated) unless out is NULL; the length
 * of the result, without its NUL.  At most 3 times strlen(s).
 */
size_t utf8_clean(char *out, const char *s, unsigned int flags);

/* Whether utf8_clean() would leave s as it is. */
bool utf8_is_clean(const char *s, unsigned int flags);

#endif
