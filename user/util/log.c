// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Routing libbpf's messages.  libbpf has one print hook for the whole
 * process (libbpf_set_print), so this is the one place where libkagg holds
 * process-wide state, and only when the program asks for it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include <kagg/common.h>
#include "util/log.h"

static kagg_log_fn libbpf_fn;
static void *libbpf_ctx;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum kagg_log_level lvl = level == LIBBPF_WARN	 ? KAGG_LOG_WARN
				  : level == LIBBPF_INFO ? KAGG_LOG_INFO
							 : KAGG_LOG_DEBUG;
	char *buf = NULL, *line, *next;

	if (!libbpf_fn || vasprintf(&buf, fmt, ap) < 0)
		return 0;
	/*
	 * One message a line: a verifier log comes as a single message of
	 * many kilobytes, and its last lines say why the program was refused.
	 * libbpf warnings are details of a failure kagg reports itself.
	 */
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		libbpf_fn(libbpf_ctx, lvl == KAGG_LOG_WARN ? KAGG_LOG_INFO : lvl, line);
	}
	free(buf);
	return 0;
}

void kagg_libbpf_set_log(kagg_log_fn fn, void *ctx)
{
	libbpf_fn = fn;
	libbpf_ctx = ctx;
	libbpf_set_print(libbpf_print);
}

void log_vemit(kagg_log_fn fn, void *ctx, enum kagg_log_level lvl, const char *fmt, va_list ap)
{
	char buf[512];

	if (!fn)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fn(ctx, lvl, buf);
}
