// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg runqlat: run-queue latency histograms aggregated in the kernel.
 * A thin CLI over kagg_runqlat__open() and kagg_session__snapshot().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/runqlat.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg runqlat [OPTIONS] [INTERVAL [COUNT]]\n"
	"\n"
	"Run-queue latency: time from a task becoming runnable (sched_wakeup,\n"
	"sched_wakeup_new, or switched out while still runnable) to its switch-in,\n"
	"as a log2 histogram aggregated in the kernel (or computed in userspace from\n"
	"streamed events, or both side by side).\n"
	"\n" CLI_TASKS_HELP "  -c, --cgroup PATH      only tasks in this cgroup v2 directory\n"
	"      --cpu N            only latencies ending on CPU N's run queue\n"
	"  -m, --milliseconds     as --unit msecs (libbpf-tools' runqlat -m)\n"
	"      --attach TYPE      auto (default: tp_btf, else raw_tp), tp_btf or raw_tp\n"
	"      --buckets B        log2 (default) or exp:S, exponential buckets of scale S\n"
	"                         (0..5: 2^(2^-S) - 1 wide, 9% at S=3)\n"
	"      --mode MODE        agg (default: aggregate in the kernel), stream (one record\n"
	"                         per wakeup and switch to userspace, aggregated there) or\n"
	"                         both, side by side with each path's events, drops and cost\n"
	"      --print            stream: print the events as they arrive, in the kernel's\n"
	"                         trace format (like trace_pipe)\n"
	"      --stream-bytes N   BPF ring buffer size (power of two, default "
	"8388608)\n" CLI_COMMON_HELP
	"      --format heatmap   with -i: a latency heatmap SVG (time across, buckets up)\n"
	"      --format html      a one-file report: histograms, percentiles, meta\n"
	"\n"
	"examples:\n"
	"  kagg runqlat -d 5                 # whole system, 5 seconds\n"
	"  kagg runqlat -P -p 1234 -i 1      # one process, every second\n"
	"  kagg runqlat --cpu 1 --format json -d 2 --overhead\n"
	"  kagg runqlat --mode both --overhead -d 5    # in-kernel vs streamed, side by side\n";

enum {
	OPT_PIDNSS = CLI_OPT_TOOL,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	CLI_TASKS_LONGOPTS,
	CLI_MSECS_LONGOPT,
	{ "cgroup", required_argument, NULL, 'c' },
	CLI_CPU_LONGOPT,
	{ "pidnss", no_argument, NULL, OPT_PIDNSS }, /* libbpf-tools': refused, with a hint */
	CLI_STREAM_LONGOPTS,
	{},
};

struct runqlat_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_runqlat_opts o;
};

/* The options that are runqlat's alone (cli_parser.opt). */
static int runqlat_opt(struct cli_args *ca, int c, const char *arg)
{
	struct runqlat_args *a = (struct runqlat_args *)ca;

	switch (c) {
	case 'c': /* libbpf-tools' runqlat -c CG */
		a->o.cgroup = arg;
		return 0;
	case OPT_PIDNSS:
		return cli_err(CLI_EXIT_USAGE, "--pidnss (a histogram per pid namespace) is not "
					       "taken: -P gives one per process");
	case CLI_OPT_CPU:
		if (CLI_RANGE(arg, 0, 65535, "CPU", false, &a->o.cpu))
			return CLI_EXIT_USAGE;
		a->o.filter_cpu = true;
		return 0;
	}
	return -ENOENT;
}

/* The parsed options into a->o. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct runqlat_args *a = (struct runqlat_args *)ca;

	CLI_TASKS_INTO(a->o, ca->tk);
	CLI_STREAM_INTO(a->o, *ca, mode);
	return cli_pictures(&ca->cm, CLI_PIC_BIT(CLI_PIC_HEATMAP) | CLI_PIC_BIT(CLI_PIC_HTML),
			    false, false);
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	return kagg_runqlat__open(&((struct runqlat_args *)ca)->o);
}

static const struct cli_parser parser =
	CLI_PARSER(CLI_COMMON_SHORTOPTS CLI_TASKS_SHORTOPTS "c:m", runqlat_opt, finish_args,
		   open_session, CLI_STREAMS | CLI_TASKS | CLI_PICTURES | CLI_MSECS);

static int runqlat_main(int argc, char **argv)
{
	struct runqlat_args a = { .c.banner = "Tracing run queue latency",
				  .o = { .sz = sizeof(a.o), .log = cli_log } };

	return cli_session_main(&parser, argc, argv, &a.c);
}

CLI_COMMAND(runqlat, "run-queue latency histograms (sched_wakeup to switch-in)", runqlat_main);
