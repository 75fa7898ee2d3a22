/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The library's own messages: one line each, through the caller's kagg_log_fn. */
#ifndef KAGG_LOG_INTERNAL_H
#define KAGG_LOG_INTERNAL_H

#include <stdarg.h>

#include <kagg/common.h>

/* fmt with ap (cut at 511 bytes) handed to fn at lvl; nothing when fn is NULL. */
void log_vemit(kagg_log_fn fn, void *ctx, enum kagg_log_level lvl, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif
