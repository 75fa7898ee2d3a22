/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Shared CLI plumbing for kagg subcommands: registration, errors, option
 * value parsing, signal handling.  Written once here, used by every tool.
 *
 * A subcommand is one file in tools/ that ends with
 *	KAGG_COMMAND(name, "one-line summary", name_main);
 * The dispatcher (tools/kagg.c) finds it through a linker section, so adding
 * a tool touches no other file.
 *
 * Exit codes: 0 success, 1 runtime failure (privileges, missing kernel
 * feature, unknown pid...), 2 usage error.
 */
#ifndef KAGG_CLI_H
#define KAGG_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <kagg/common.h>

#define KAGG_EXIT_OK 0
#define KAGG_EXIT_FAIL 1
#define KAGG_EXIT_USAGE 2

struct kagg_cmd {
	const char *name;
	const char *summary;
	int (*main)(int argc, char **argv);
};

#define KAGG_COMMAND(NAME, SUMMARY, FN)                                        \
	static const struct kagg_cmd kagg_cmd_##NAME                           \
		__attribute__((used, section("kagg_cmds"), aligned(8))) = {    \
			.name = #NAME, .summary = SUMMARY, .main = FN,         \
		}

/* Print "kagg CMD: <msg>" on stderr (one line). Returns code, for `return cli_err(...)`. */
int cli_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Program name for messages, "kagg offcpu"; set by the dispatcher. */
extern const char *cli_prog;

/* Parse helpers: return 0 or -EINVAL (the caller reports a usage error). */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_seconds(const char *s, double *out); /* > 0, decimals allowed */
/* Comma separated list of positive ints; *out is malloc'd. */
int cli_parse_int_list(const char *s, int **out, size_t *n);

/*
 * Install SIGINT/SIGTERM handlers that set cli_stop (and SIGPIPE ignored).
 * The handler does nothing else: tools poll cli_stop and exit through their
 * normal cleanup path so no BPF object stays loaded.
 */
extern volatile sig_atomic_t cli_stop;
void cli_setup_signals(void);

/* Sleep up to `seconds`, returning early when cli_stop is set. */
void cli_sleep(double seconds);

/* Log callback for libkagg handles: prints warnings (all with -v) to stderr. */
void cli_log(void *ctx, enum kagg_log_level level, const char *msg);
extern int cli_verbose;
/* Set once cli_log printed a warning: the failure was explained already. */
extern int cli_logged;
/* Send libbpf's (process-wide) messages through cli_log. */
void cli_route_libbpf_log(void);

#endif
