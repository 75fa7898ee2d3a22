/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A tiny streaming JSON writer: objects, arrays, strings (escaped), numbers.
 * Commas and indentation are handled here so printers only say what to write.
 */
#ifndef KAGG_JSON_H
#define KAGG_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

struct jw {
	FILE *f;
	int depth;
	bool first[JW_MAX_DEPTH]; /* no member written yet at this depth */
	bool pretty;
	bool spaced; /* one line, a space after each ',' and ':' */
};

/* pretty: one member a line, indented; else all on one line, no spaces. */
void jw_init(struct jw *w, FILE *f, bool pretty);
/* All on one line, read by people too: {"a": 1, "b": [2, 3]}. */
void jw_init_spaced(struct jw *w, FILE *f);
/* Key for the next value inside an object; NULL inside arrays. */
void jw_obj_begin(struct jw *w, const char *key);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *s); /* NULL -> null */
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_double(struct jw *w, const char *key, double v, int decimals);
/* Up to 6 significant digits, no trailing zeros (printf's %g): 1, 0.25, 1e-07. */
void jw_double_g(struct jw *w, const char *key, double v);
void jw_bool(struct jw *w, const char *key, bool v);
/* End the document with a newline. */
void jw_finish(struct jw *w);

#endif
