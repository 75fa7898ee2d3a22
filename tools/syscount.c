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
	"usage: kagg syscount [OPTIONS] [INTERVAL [COUNT]]\n"
	"\n"
	"System calls per syscall (raw_syscalls:sys_enter/sys_exit), counted in the\n"
	"kernel; names built in (the kernel's UAPI table), the installed\n"
	"<asm/unistd_64.h> overriding them.\n"
	"\n"
	"  -P, --per-process      per process and syscall\n"
	"      --per-thread       per thread and syscall\n"
	"  -N, --per-comm         per command name and syscall\n"
	"      --per-cgroup       per cgroup v2 (by its path) and syscall\n"
	"  -p, --pid PID[,PID]    only these processes\n"
	"  -x, --errors           count failed calls per syscall and errno\n"
	"  -m, --milliseconds     as --unit msecs (libbpf-tools' syscount -m)\n"
	"  -L, --latency          latency histogram per syscall\n"
	"      --names-file FILE  syscall names from this unistd_64.h-style header\n"
	"      --attach TYPE      auto (default: tp_btf, else raw_tp), tp_btf or raw_tp\n"
	"      --buckets B        -L: log2 (default) or exp:S, exponential buckets of scale\n"
	"                         S (0..5: 2^(2^-S) - 1 wide, 9% at S=3; per syscall only)\n"
	"      --mode MODE        agg (default: aggregate in the kernel), stream (one record\n"
	"                         per sys_enter/sys_exit to userspace, aggregated there) or\n"
	"                         both, side by side with each path's events, drops and cost\n"
	"      --print            stream: print the events as they arrive, in the kernel's\n"
	"                         trace format (like trace_pipe)\n"
	"      --stream-bytes N   BPF ring buffer size (power of two, default "
	"8388608)\n" CLI_COMMON_HELP_T(
		"   ", "-T,", "10, as syscount's; 0: all",
		"nsecs, usecs or msecs (default usecs; -L: nsecs)") "\n"
								    "examples:\n"
								    "  kagg syscount -d 5          "
								    "      # calls per syscall, "
								    "whole system\n"
								    "  kagg syscount -P -p 1234 -i "
								    "1     # one process, every "
								    "second\n"
								    "  kagg syscount -x -d 5       "
								    "      # failures: "
								    "openat:ENOENT ...\n"
								    "  kagg syscount -L -p 1234 -d "
								    "5     # latency histogram per "
								    "syscall\n"
								    "  kagg syscount --mode both "
								    "--overhead -d 2   # in-kernel "
								    "vs streamed, and their "
								    "costs\n";

enum {
	OPT_PER_THREAD = CLI_OPT_TOOL,
	OPT_NAMES,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "per-process", no_argument, NULL, 'P' },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "per-comm", no_argument, NULL, 'N' },
	{ "per-cgroup", no_argument, NULL, CLI_OPT_PER_CGROUP },
	CLI_PID_LONGOPT,
	CLI_MSECS_LONGOPT,
	{ "errors", no_argument, NULL, 'x' },
	{ "latency", no_argument, NULL, 'L' },
	{ "names-file", required_argument, NULL, OPT_NAMES },
	CLI_STREAM_LONGOPTS,
	{},
};

struct syscount_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_syscount_opts o;
	bool errors, latency;
};

/* The options that are syscount's alone (cli_parser.opt): -L is --latency here. */
static int syscount_opt(struct cli_args *ca, int c, const char *arg)
{
	struct syscount_args *a = (struct syscount_args *)ca;

	switch (c) {
	case OPT_PER_THREAD: /* -L is --latency here */
		a->c.tk.thread_opt = "--per-thread";
		return cli_tasks_opt('L', arg, &a->c.tk);
	case 'x':
		a->errors = true;
		return 0;
	case 'L':
		a->latency = true;
		return 0;
	case 'T': /* libbpf-tools' top N, not the shared -T (timestamps: --timestamp) */
		return cli_common_opt(CLI_OPT_TOP, arg, &ca->cm);
	case OPT_NAMES:
		a->o.names_file = arg;
		return 0;
	/* libbpf-tools' syscount letters kagg has no twin for: say what is nearest */
	case 'e':
		return cli_err(CLI_EXIT_USAGE,
			       "-e ERRNO (libbpf-tools' errno filter) is not "
			       "taken: -x counts failed calls per syscall and errno");
	case 'l':
		return cli_err(CLI_EXIT_USAGE,
			       "-l (libbpf-tools' syscall list) is not taken: the "
			       "names are <asm/unistd_64.h>'s, or --names-file FILE's");
	case 'c':
		return cli_err(CLI_EXIT_USAGE, "-c CG (libbpf-tools' cgroup filter) is not taken: "
					       "kagg syscount filters by -p PID");
	}
	return -ENOENT;
}

/* The parsed options into a->o: one mode of three. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct syscount_args *a = (struct syscount_args *)ca;

	if (a->errors && a->latency)
		return cli_err(CLI_EXIT_USAGE, "--errors and --latency exclude each other");
	if (a->c.st.buckets == KAGG_BUCKETS_EXP && !a->latency)
		return cli_err(CLI_EXIT_USAGE, "--buckets goes with --latency (-L)");
	/* -L draws distributions: most syscalls take under a microsecond */
	if (a->latency && !a->c.cm.unit_given)
		a->c.cm.unit = KAGG_UNIT_NSECS;
	a->o.mode = a->errors	 ? KAGG_SYSCOUNT_ERRORS
		    : a->latency ? KAGG_SYSCOUNT_LATENCY
				 : KAGG_SYSCOUNT_COUNT;
	a->o.key = a->c.tk.key;
	a->o.pids = a->c.tk.pids;
	a->o.nr_pids = a->c.tk.nr_pids;
	CLI_STREAM_INTO(a->o, a->c, stream_mode);
	/* a table in the count modes */
	a->c.cm.printer = kagg_syscount__print;
	return 0;
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	return kagg_syscount__open(&((struct syscount_args *)ca)->o);
}

/* The common short options but -T, which takes a value here (top N). */
static const struct cli_parser parser =
	CLI_PARSER(":d:i:vhPNp:xLmT:e:lc:", syscount_opt, finish_args, open_session,
		   CLI_STREAMS | CLI_TASKS | CLI_MSECS);

static int syscount_main(int argc, char **argv)
{
	struct syscount_args a = { .c.banner = "Tracing syscalls",
				   .c.cm.print.top = 10,
				   .o = { .sz = sizeof(a.o), .log = cli_log } };

	return cli_session_main(&parser, argc, argv, &a.c);
}

CLI_COMMAND(syscount, "syscall counts, errors per errno, latency per syscall", syscount_main);
