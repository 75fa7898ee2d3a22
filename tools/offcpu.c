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
"usage: kagg offcpu [OPTIONS]\n"
"\n"
"Off-CPU time (blocked or preempted) per interval between a task's switch-out\n"
"and its next switch-in (sched_switch), as a log2 histogram aggregated in the\n"
"kernel.\n"
"\n"
"  -P, --per-process      one histogram per process\n"
"  -L, --per-thread       one histogram per thread\n"
"  -p, --pid PID[,PID]    only these processes\n"
"  -t, --tid TID[,TID]    only these threads\n"
"      --cgroup PATH      only tasks in this cgroup v2 directory\n"
"      --state LETTERS    only intervals that began in these states (R S D T t P I)\n"
"  -m, --min-us US        ignore intervals shorter than US microseconds\n"
"  -M, --max-us US        ignore intervals longer than US microseconds\n"
"  -u, --user-threads     user threads only\n"
"  -k, --kernel-threads   kernel threads only\n"
"      --stacks           also aggregate off-CPU time by kernel + user stack\n"
"      --folded           print stacks folded, for flame graphs, once at the end\n"
"                         (implies --stacks; not with -i)\n"
"      --addrs            stack frames by address (func+0x1a), not merged by function\n"
"                         (implies --stacks)\n"
"      --attach TYPE      auto (default: tp_btf, else raw_tp), tp_btf or raw_tp\n"
"      --mode MODE        agg (default: aggregate in the kernel), stream (one record\n"
"                         per event to userspace, aggregated there) or both, side by\n"
"                         side with each path's events, drops and cost\n"
"      --print            stream: print events as they arrive, in the kernel's trace\n"
"                         format (like trace_pipe); a slow terminal loses the oldest\n"
"                         buffered events (counted), never stalls the kernel side\n"
"      --stream-bytes N   BPF ring buffer size (power of two, default 8388608)\n"
"      --wake POLICY      watermark (default), adaptive, timer or every\n"
"      --rb-subbufs N     sub-buffers per CPU of the reference ftrace buffer (128)\n"
"      --rb-consume       reference buffer in producer/consumer mode (drop newest)\n"
CLI_COMMON_HELP
"\n"
"examples:\n"
"  kagg offcpu -d 5                      # whole system, 5 seconds\n"
"  kagg offcpu -P -p 1234 -d 10          # one process, per-process histogram\n"
"  kagg offcpu --state D -m 1000 -i 1    # uninterruptible sleeps >= 1 ms, every second\n"
"  kagg offcpu --stacks --folded -d 10 > out.folded   # flame graph input\n"
"  kagg offcpu --format json -d 2 --overhead\n"
"  kagg offcpu --mode both --overhead -d 5   # in-kernel vs streamed, side by side\n"
"  kagg offcpu --mode stream --print -d 2    # live sched_switch lines\n";

enum {
	OPT_CGROUP = CLI_OPT_TOOL,
	OPT_STATE,
	OPT_STACKS,
	OPT_FOLDED,
	OPT_ADDRS,
	OPT_ATTACH,
	OPT_WAKE,
	OPT_RB_SUBBUFS,
	OPT_RB_CONSUME,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "per-process", no_argument, NULL, 'P' },
	{ "per-thread", no_argument, NULL, 'L' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "min-us", required_argument, NULL, 'm' },
	{ "max-us", required_argument, NULL, 'M' },
	{ "user-threads", no_argument, NULL, 'u' },
	{ "kernel-threads", no_argument, NULL, 'k' },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "addrs", no_argument, NULL, OPT_ADDRS },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	CLI_STREAM_LONGOPTS,
	{ "wake", required_argument, NULL, OPT_WAKE },
	{ "rb-subbufs", required_argument, NULL, OPT_RB_SUBBUFS },
	{ "rb-consume", no_argument, NULL, OPT_RB_CONSUME },
	{},
};

struct offcpu_args {
	struct kagg_offcpu_opts o;
	struct cli_common cm;
	struct cli_stream st;
	int *pids;
	int *tids;
};

/* Parse argv into args; 0, or an exit code (2 usage, 0 for --help). */
static int parse_args(int argc, char **argv, struct offcpu_args *a)
{
	uint64_t us;
	size_t n;
	int c;

	optind = 1;
	opterr = 0; /* our one-line errors instead of getopt's */
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "PLp:t:m:M:uk", long_opts,
				NULL)) != -1) {
		int rc = cli_common_opt(c, optarg, &a->cm);

		if (rc == -ENOENT)
			rc = cli_stream_opt(c, optarg, &a->st);
		if (rc != -ENOENT) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'P':
			a->o.key = KAGG_KEY_PID;
			break;
		case 'L':
			a->o.key = KAGG_KEY_TID;
			break;
		case 'p':
			free(a->pids);
			if (cli_parse_int_list(optarg, &a->pids, &n))
				return cli_err(KAGG_EXIT_USAGE, "invalid pid list '%s'", optarg);
			a->o.pids = a->pids;
			a->o.nr_pids = n;
			break;
		case 't':
			free(a->tids);
			if (cli_parse_int_list(optarg, &a->tids, &n))
				return cli_err(KAGG_EXIT_USAGE, "invalid tid list '%s'", optarg);
			a->o.tids = a->tids;
			a->o.nr_tids = n;
			break;
		case OPT_CGROUP:
			a->o.cgroup = optarg;
			break;
		case OPT_STATE:
			if (!*optarg || strspn(optarg, "RSDTtPI,") != strlen(optarg))
				return cli_err(KAGG_EXIT_USAGE,
					       "invalid state '%s' (letters of R S D T t P I)",
					       optarg);
			a->o.states = optarg;
			break;
		case 'm':
			if (cli_parse_u64(optarg, &us) || us > UINT64_MAX / 1000)
				return cli_err(KAGG_EXIT_USAGE, "invalid --min-us '%s'", optarg);
			a->o.min_ns = us * 1000;
			break;
		case 'M':
			if (cli_parse_u64(optarg, &us) || !us || us > UINT64_MAX / 1000)
				return cli_err(KAGG_EXIT_USAGE, "invalid --max-us '%s'", optarg);
			a->o.max_ns = us * 1000;
			break;
		case 'u':
		case 'k':
			if (a->o.threads)
				return cli_err(KAGG_EXIT_USAGE, "-u and -k exclude each other");
			a->o.threads = c == 'u' ? KAGG_THREADS_USER : KAGG_THREADS_KERNEL;
			break;
		case OPT_STACKS:
			a->o.stacks = true;
			break;
		case OPT_FOLDED:
			a->o.stacks = true;
			a->cm.print.folded = true;
			break;
		case OPT_ADDRS:
			a->o.stacks = true;
			a->cm.addrs = true;
			break;
		case OPT_ATTACH:
			if (cli_parse_attach(optarg, &a->o.attach))
				return KAGG_EXIT_USAGE;
			break;
		case OPT_WAKE: {
			static const char *const names[] = { "watermark", "adaptive", "timer", "every" };
			size_t i;

			for (i = 0; i < 4 && strcmp(optarg, names[i]); i++)
				;
			if (i == 4)
				return cli_err(KAGG_EXIT_USAGE,
					       "invalid --wake '%s' (watermark, adaptive, timer, every)",
					       optarg);
			a->o.wake = (enum kagg_wake)i;
			break;
		}
		case OPT_RB_SUBBUFS:
			if (cli_parse_u64(optarg, &us) || us < 2 || us > 65536)
				return cli_err(KAGG_EXIT_USAGE, "invalid --rb-subbufs '%s' (2 to 65536)",
					       optarg);
			a->o.rb_subbufs = us;
			break;
		case OPT_RB_CONSUME:
			a->o.rb_consume = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default:
			return cli_bad_opt(c, argv);
		}
	}
	if (optind < argc)
		return cli_err(KAGG_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (a->o.max_ns && a->o.max_ns < a->o.min_ns)
		return cli_err(KAGG_EXIT_USAGE, "--max-us is below --min-us");
	a->o.unit = a->cm.unit;
	a->o.overhead = a->cm.overhead;
	a->o.mode = a->st.mode;
	a->o.stream_bytes = a->st.stream_bytes;
	if (a->o.stacks && a->o.mode == KAGG_MODE_STREAM)
		return cli_err(KAGG_EXIT_USAGE, "--stacks needs the kernel path (--mode agg or both)");
	if (a->cm.print.folded && a->cm.print.format == KAGG_FORMAT_JSON)
		return cli_err(KAGG_EXIT_USAGE, "--folded is a text format; drop --format json");
	if (a->cm.print.folded && a->cm.interval)
		return cli_err(KAGG_EXIT_USAGE, "--folded prints once: drop -i");
	return 0;
}

static int offcpu_main(int argc, char **argv)
{
	struct offcpu_args a = {};
	struct kagg_session *s = NULL;
	int ret;

	a.o.sz = sizeof(a.o);
	a.cm.print.sz = sizeof(a.cm.print);
	a.o.log = cli_log;
	if (!cli_start(parse_args(argc, argv, &a), &a.st, &ret))
		goto out;
	s = kagg_offcpu__open(&a.o);
	if (!s) {
		ret = cli_open_failed(errno);
		goto out;
	}
	ret = cli_stream_run(s, &a.cm, &a.st, a.o.stacks ? "Tracing off-CPU time and stacks"
							  : "Tracing off-CPU time");
out:
	kagg_session__destroy(s);
	free(a.pids);
	free(a.tids);
	return ret;
}

KAGG_COMMAND(offcpu, "off-CPU time histograms and stacks (sched_switch)", offcpu_main);
