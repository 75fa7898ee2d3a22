// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg offcpu: off-CPU time histograms (and stacks) aggregated in the kernel.
 * A thin CLI over kagg_offcpu__open() and kagg_session__snapshot().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg offcpu [OPTIONS] [DURATION]\n"
	"\n"
	"Off-CPU time (blocked or preempted) per interval between a task's switch-out\n"
	"and its next switch-in (sched_switch), as a log2 histogram aggregated in the\n"
	"kernel.  DURATION, as in offcputime: trace that many seconds, print once\n"
	"(-d DURATION); without it, until Ctrl-C.\n"
	"\n" CLI_TASKS_HELP "      --cgroup PATH      only tasks in this cgroup v2 directory\n"
	"      --state LETTERS    only intervals that began in these states (R S D T t P I)\n"
	"  -m, --min-us US        ignore intervals shorter than US microseconds\n"
	"  -M, --max-us US        ignore intervals longer than US microseconds\n"
	"  -u, --user-threads     user threads only\n"
	"  -k, --kernel-threads   kernel threads only\n"
	"      --stacks           also aggregate off-CPU time by kernel + user "
	"stack\n" CLI_UNWIND_HELP
	"  -f, --folded           print stacks folded, for flame graphs, once at the end\n"
	"                         (implies --stacks; not with -i); the meta to stderr\n"
	"      --addrs            stack frames by address (func+0x1a), not merged by function\n"
	"      --delimiter        folded: \"--\" between the user and the kernel frames\n"
	"                         (implies --stacks)\n"
	"      --attach TYPE      auto (default: tp_btf, else raw_tp), tp_btf or raw_tp\n"
	"      --buckets B        log2 (default) or exp:S, exponential buckets of scale S\n"
	"                         (0..5: 2^(2^-S) - 1 wide, 9% at S=3)\n"
	"      --mode MODE        agg (default: aggregate in the kernel), stream (one record\n"
	"                         per event to userspace, aggregated there) or both, side by\n"
	"                         side with each path's events, drops and cost\n"
	"      --print            stream: print events as they arrive, in the kernel's trace\n"
	"                         format (like trace_pipe); a slow terminal loses the oldest\n"
	"                         buffered events (counted), never stalls the kernel side\n"
	"      --stream-bytes N   BPF ring buffer size (power of two, default 8388608)\n"
	"      --wake POLICY      watermark (default), adaptive, timer or every\n"
	"      --rb-subbufs N     sub-buffers per CPU of the reference ftrace buffer (128)\n"
	"      --rb-consume       reference buffer in producer/consumer mode (drop "
	"newest)\n" CLI_COMMON_HELP
	"      --format svg       with --stacks: an off-CPU flame graph, one interactive SVG\n"
	"      --format html      a one-file report: histograms, percentiles, flame graph, meta\n"
	"      --format heatmap   with -i: a latency heatmap SVG (time across, buckets up)\n"
	"      --format pprof     with --stacks: a gzip-compressed pprof profile of off-CPU time\n"
	"\n"
	"examples:\n"
	"  kagg offcpu 5                         # whole system, 5 seconds\n"
	"  kagg offcpu -P -p 1234 -d 10          # one process, per-process histogram\n"
	"  kagg offcpu --state D -m 1000 -i 1    # uninterruptible sleeps >= 1 ms, every second\n"
	"  kagg offcpu --stacks --folded -d 10 > out.folded   # flame graph input\n"
	"  kagg offcpu --stacks -d 10 --format svg > off.svg   # open in a browser\n"
	"  kagg offcpu --format json -d 2 --overhead\n"
	"  kagg offcpu --mode both --overhead -d 5   # in-kernel vs streamed, side by side\n"
	"  kagg offcpu --mode stream --print -d 2    # live sched_switch lines\n";

enum {
	OPT_CGROUP = CLI_OPT_TOOL,
	OPT_STATE,
	OPT_STACKS,
	OPT_WAKE,
	OPT_RB_SUBBUFS,
	OPT_RB_CONSUME,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	CLI_TASKS_LONGOPTS,
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "min-us", required_argument, NULL, 'm' },
	{ "max-us", required_argument, NULL, 'M' },
	{ "user-threads", no_argument, NULL, 'u' },
	{ "kernel-threads", no_argument, NULL, 'k' },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	CLI_UNWIND_LONGOPT,
	CLI_STACKS_LONGOPTS,
	CLI_STREAM_LONGOPTS,
	{ "wake", required_argument, NULL, OPT_WAKE },
	{ "rb-subbufs", required_argument, NULL, OPT_RB_SUBBUFS },
	{ "rb-consume", no_argument, NULL, OPT_RB_CONSUME },
	{},
};

struct offcpu_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_offcpu_opts o;
};

/* -m/--min-us or -M/--max-us (not 0) into nanoseconds; 0 or a usage error. */
static int parse_us(const char *arg, const char *name, bool nonzero, uint64_t *ns)
{
	uint64_t us;

	if (cli_parse_u64(arg, &us) || (nonzero && !us) || us > UINT64_MAX / 1000)
		return cli_err(CLI_EXIT_USAGE, "invalid --%s '%s'", name, arg);
	*ns = us * 1000;
	return 0;
}

/* --wake POLICY; 0 or a usage error. */
static int parse_wake(const char *arg, enum kagg_wake *wake)
{
	static const char *const names[] = {
		[KAGG_WAKE_WATERMARK] = "watermark",
		[KAGG_WAKE_ADAPTIVE] = "adaptive",
		[KAGG_WAKE_TIMER] = "timer",
		[KAGG_WAKE_EVERY] = "every",
	};

	return CLI_CHOOSE(arg, names, "--wake", "watermark, adaptive, timer, every", wake);
}

/* The options that are offcpu's alone (cli_parser.opt). */
static int offcpu_opt(struct cli_args *ca, int c, const char *arg)
{
	struct offcpu_args *a = (struct offcpu_args *)ca;

	switch (c) {
	case OPT_CGROUP:
		a->o.cgroup = arg;
		return 0;
	case OPT_STATE:
		if (!*arg || strspn(arg, "RSDTtPI,") != strlen(arg))
			return cli_err(CLI_EXIT_USAGE,
				       "invalid state '%s' (letters of R S D T t P I)", arg);
		a->o.states = arg;
		return 0;
	case 'm':
		return parse_us(arg, "min-us", false, &a->o.min_ns);
	case 'M':
		return parse_us(arg, "max-us", true, &a->o.max_ns);
	case 'u':
	case 'k':
		return CLI_EITHER(c, 'u', 'k', KAGG_THREADS_USER, KAGG_THREADS_KERNEL,
				  &a->o.threads);
	case CLI_OPT_UNWIND:
		return cli_unwind(arg, &a->o.unwind);
	case OPT_STACKS:
		a->o.stacks = true;
		return 0;
	case OPT_WAKE:
		return parse_wake(arg, &a->o.wake);
	case OPT_RB_SUBBUFS:
		return CLI_RANGE(arg, 2, 65536, "--rb-subbufs", true, &a->o.rb_subbufs);
	case OPT_RB_CONSUME:
		a->o.rb_consume = true;
		return 0;
	}
	return -ENOENT;
}

/* The parsed options into a->o, and the checks that span several of them. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct offcpu_args *a = (struct offcpu_args *)ca;

	if (a->o.max_ns && a->o.max_ns < a->o.min_ns)
		return cli_err(CLI_EXIT_USAGE, "--max-us is below --min-us");
	CLI_TASKS_INTO(a->o, a->c.tk);
	CLI_STREAM_INTO(a->o, a->c, mode);
	a->o.stacks |= ca->cm.print.folded || ca->cm.addrs; /* both imply --stacks */
	if (a->o.stacks && a->o.mode == KAGG_MODE_STREAM)
		return cli_err(CLI_EXIT_USAGE,
			       "--stacks needs the kernel path (--mode agg or both)");
	return cli_folded_ready(&ca->cm)
		       ?: cli_pictures(&a->c.cm,
				       CLI_PIC_BIT(CLI_PIC_HTML) | CLI_PIC_BIT(CLI_PIC_HEATMAP) |
					       (a->o.stacks ? CLI_PIC_BIT(CLI_PIC_SVG) |
								      CLI_PIC_BIT(CLI_PIC_PPROF)
							    : 0),
				       true, false);
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	struct offcpu_args *a = (struct offcpu_args *)ca;

	ca->banner = a->o.stacks ? "Tracing off-CPU time and stacks" : "Tracing off-CPU time";
	return kagg_offcpu__open(&a->o);
}

static const struct cli_parser parser =
	CLI_PARSER(CLI_COMMON_SHORTOPTS CLI_TASKS_SHORTOPTS "m:M:ukf", offcpu_opt, finish_args,
		   open_session, CLI_STREAMS | CLI_TASKS | CLI_PICTURES | CLI_POS_DURATION);

static int offcpu_main(int argc, char **argv)
{
	struct offcpu_args a = { .o = { .sz = sizeof(a.o), .log = cli_log } };

	return cli_session_main(&parser, argc, argv, &a.c);
}

CLI_COMMAND(offcpu, "off-CPU time histograms and stacks (sched_switch)", offcpu_main);
