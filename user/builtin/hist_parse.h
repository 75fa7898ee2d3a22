/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg hist's --filter syntax, internal to libkagg (unit-tested on its own):
 *
 *   hist_parse_filter("prev_prio >= 100", field, sz, &op, &val)
 *	-> field "prev_prio", op HIST_OP_GE, val "100"; -EINVAL when not
 *	   FIELD OP VALUE (FIELD [A-Za-z0-9_]+ shorter than sz, OP one of
 *	   == != < <= > >=, a non-empty VALUE)
 *   hist_parse_value(val, is_signed, &out)
 *	-> decimal, 0x hex or 0 octal; negative only when is_signed; -EINVAL
 *	   on trailing text or a value out of range
 *   hist_value_fits(v, is_signed, size)
 *	-> whether v, as hist_parse_value() gave it, is in the range of a
 *	   field of size bytes (1, 2, 4 or 8; any other size: false)
 */
#ifndef KAGG_HIST_PARSE_H
#define KAGG_HIST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "shared/hist.h"

int hist_parse_filter(const char *str, char *field, size_t fsz, enum hist_op *op, const char **val);
int hist_parse_value(const char *str, bool is_signed, __u64 *out);
bool hist_value_fits(__u64 v, bool is_signed, unsigned int size);

#endif
