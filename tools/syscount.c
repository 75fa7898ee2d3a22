// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg syscount: system call counts, failures per errno, or latency
 * histograms per syscall, aggregated in the kernel.  A thin CLI over
 * kagg_syscount__open() and kagg_syscount__print().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/syscount.h>
#include "cli.h"

static const char usage_text[] =
"usage: kagg syscount [OPTIONS]\n"
"\n"
"System calls per syscall (raw_syscalls:sys_enter/sys_exit), counted in the\n"
"kernel; names from the installed <asm/unistd_64.h>, read at run time.\n"
"\n"
"  -P, --per-process      per process and syscall\n"
"      --per-thread       per thread and syscall\n"
"  -p, --pid PID[,PID]    only these processes\n"
"  -x, --errors           count failed calls per syscall and errno\n"
"  -L, --latency          latency histogram per syscall\n"
"      --names-file FILE  syscall names from this unistd_64.h-style header\n"
"      --attach TYPE      auto (default: tp_btf, else raw_tp), tp_btf or raw_tp\n"
"      --mode MODE        agg (default: aggregate in the kernel), stream (one record\n"
"                         per sys_enter/sys_exit to userspace, aggregated there) or\n"
"                         both, side by side with each path's events, drops and cost\n"
"      --print            stream: print the events as they arrive, in the kernel's\n"
"                         trace format (like trace_pipe)\n"
"      --stream-bytes N   BPF ring buffer size (power of two, default 8388608)\n"
CLI_COMMON_HELP
"\n"
"examples:\n"
"  kagg syscount -d 5                # calls per syscall, whole system\n"
"  kagg syscount -P -p 1234 -i 1     # one process, every second\n"
"  kagg syscount -x -d 5             # failures: openat:ENOENT ...\n"
"  kagg syscount -L -p 1234 -d 5     # latency histogram per syscall\n"
"  kagg syscount --mode both --overhead -d 2   # in-kernel vs streamed, and their costs\n";

enum {
	OPT_PER_THREAD = CLI_OPT_TOOL,
	OPT_NAMES,
	OPT_ATTACH,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "per-process", no_argument, NULL, 'P' },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "pid", required_argument, NULL, 'p' },
	{ "errors", no_argument, NULL, 'x' },
	{ "latency", no_argument, NULL, 'L' },
	{ "names-file", required_argument, NULL, OPT_NAMES },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	CLI_STREAM_LONGOPTS,
	{},
};

struct syscount_args {
	struct kagg_syscount_opts o;
	struct cli_common cm;
	struct cli_tasks tk;
	bool errors, latency;
	struct cli_stream st;
};

/* The options that are syscount's alone (cli_parser.opt): -L is --latency here. */
static int syscount_opt(void *args, int c, const char *arg)
{
	struct syscount_args *a = args;

	switch (c) {
	case OPT_PER_THREAD:
		a->tk.key = KAGG_KEY_TID;
		return 0;
	case 'x':
		a->errors = true;
		return 0;
	case 'L':
		a->latency = true;
		return 0;
	case OPT_NAMES:
		a->o.names_file = arg;
		return 0;
	case OPT_ATTACH:
		return cli_parse_attach(arg, &a->o.attach) ? KAGG_EXIT_USAGE : 0;
	}
	return -ENOENT;
}

static int parse_args(int argc, char **argv, struct syscount_args *a)
{
	const struct cli_parser p = {
		.shortopts = CLI_COMMON_SHORTOPTS "Pp:xL",
		.longopts = long_opts,
		.usage = usage_text,
		.opt = syscount_opt,
		.args = a,
		.cm = &a->cm,
		.st = &a->st,
		.tasks = &a->tk,
	};
	int rc = cli_parse(&p, argc, argv);

	if (rc)
		return rc;
	if (a->errors && a->latency)
		return cli_err(KAGG_EXIT_USAGE, "--errors and --latency exclude each other");
	a->o.mode = a->errors ? KAGG_SYSCOUNT_ERRORS
		    : a->latency ? KAGG_SYSCOUNT_LATENCY : KAGG_SYSCOUNT_COUNT;
	a->o.key = a->tk.key;
	a->o.pids = a->tk.pids;
	a->o.nr_pids = a->tk.nr_pids;
	a->o.unit = a->cm.unit;
	a->o.overhead = a->cm.overhead;
	a->o.stream_mode = a->st.mode;
	a->o.stream_bytes = a->st.stream_bytes;
	return 0;
}

static int syscount_main(int argc, char **argv)
{
	struct syscount_args a = {};
	struct kagg_session *s = NULL;
	int ret;

	a.o.sz = sizeof(a.o);
	a.cm.print.sz = sizeof(a.cm.print);
	a.o.log = cli_log;
	if (!cli_start(parse_args(argc, argv, &a), &a.st, &ret))
		goto out;
	s = kagg_syscount__open(&a.o);
	if (!s) {
		ret = cli_open_failed(errno);
		goto out;
	}
	a.cm.printer = kagg_syscount__print; /* a table in count modes */
	ret = cli_stream_run(s, &a.cm, &a.st, "Tracing syscalls");
out:
	kagg_session__destroy(s);
	cli_tasks_free(&a.tk);
	return ret;
}

KAGG_COMMAND(syscount, "syscall counts, errors per errno, latency per syscall", syscount_main);
