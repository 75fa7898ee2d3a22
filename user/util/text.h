/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: strings from outside kagg (command names, symbols, paths,
 * fields of a trace.dat someone sent) made safe to print on a terminal.
 *
 * A byte a terminal could act on is written as a backslash and three octal
 * digits, the escape the kernel uses in /proc/mounts and
 * string_escape_mem(ESCAPE_OCTAL): the C0 controls and DEL (ESC is \033, a
 * newline \012), bytes that are not part of valid UTF-8, and the UTF-8 C1
 * controls U+0080..U+009F (\302\233 is CSI).  A backslash is \134, so the
 * output reads back unambiguously.  Everything else, valid UTF-8 included,
 * is printed as it is.
 */
#ifndef KAGG_TEXT_H
#define KAGG_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Length of the UTF-8 sequence at p (at most n bytes) when it is valid and
 * not a C1 control: 2, 3 or 4; 0 for a lead byte that must be escaped.  For
 * bytes >= 0x80 only (ASCII is the caller's).
 */
size_t text_utf8_len(const unsigned char *p, size_t n);

/* Write s, at most n bytes or up to its NUL, escaped.  0 or -EIO. */
int text_fputn(FILE *f, const char *s, size_t n);

static inline int text_fputs(FILE *f, const char *s)
{
	return text_fputn(f, s, SIZE_MAX);
}

/*
 * Escaped copies for printf with a field width.  text_esc() returns s itself
 * when it needs nothing (and ends within n), else a copy held by e until
 * text_esc_free(); "?" when out of memory.
 */
struct text_esc {
	char **v;
	size_t n;
};

const char *text_esc(struct text_esc *e, const char *s, size_t n);
void text_esc_free(struct text_esc *e);

#endif
