// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Routing libbpf's messages.  libbpf has one print hook for the whole
 * process (libbpf_set_print), so this is the one place where libkagg holds
 * process-wide state, and only when the program asks for it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include <kagg/common.h>

static kagg_log_fn libbpf_fn;
static void *libbpf_ctx;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum kagg_log_level lvl = level == LIBBPF_WARN	? KAGG_LOG_WARN
				  : level == LIBBPF_INFO ? KAGG_LOG_INFO
							 : KAGG_LOG_DEBUG;
	char buf[1024];
	size_t n;

	if (!libbpf_fn)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	/* libbpf warnings are details of a failure kagg reports itself. */
	libbpf_fn(libbpf_ctx, lvl == KAGG_LOG_WARN ? KAGG_LOG_INFO : lvl, buf);
	return 0;
}

void kagg_libbpf_set_log(kagg_log_fn fn, void *ctx)
{
	libbpf_fn = fn;
	libbpf_ctx = ctx;
	libbpf_set_print(libbpf_print);
}
