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
"  -d, --duration SEC     trace for SEC seconds, print, exit\n"
"  -i, --interval SEC     print and reset every SEC seconds (exact snapshots)\n"
"      --unit UNIT        nsecs, usecs (default) or msecs\n"
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
"      --folded           print stacks folded, for flame graphs (implies --stacks)\n"
"      --format FMT       text (default) or json\n"
"      --overhead         report the BPF program's run time per event\n"
"      --attach TYPE      auto (default: tp_btf, else raw_tp), tp_btf or raw_tp\n"
"  -v, --verbose          print libbpf and library messages\n"
"  -h, --help             this text\n"
"\n"
"examples:\n"
"  kagg offcpu -d 5                      # whole system, 5 seconds\n"
"  kagg offcpu -P -p 1234 -d 10          # one process, per-process histogram\n"
"  kagg offcpu --state D -m 1000 -i 1    # uninterruptible sleeps >= 1 ms, every second\n"
"  kagg offcpu --stacks --folded -d 10 > out.folded   # flame graph input\n"
"  kagg offcpu --format json -d 2 --overhead\n";

enum {
	OPT_UNIT = 256,
	OPT_CGROUP,
	OPT_STATE,
	OPT_STACKS,
	OPT_FOLDED,
	OPT_FORMAT,
	OPT_OVERHEAD,
	OPT_ATTACH,
};

static const struct option long_opts[] = {
	{ "duration", required_argument, NULL, 'd' },
	{ "interval", required_argument, NULL, 'i' },
	{ "unit", required_argument, NULL, OPT_UNIT },
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
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "overhead", no_argument, NULL, OPT_OVERHEAD },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

struct offcpu_args {
	struct kagg_offcpu_opts o;
	struct kagg_print_opts print;
	double duration;
	double interval;
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
	while ((c = getopt_long(argc, argv, ":d:i:PLp:t:m:M:ukvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cli_parse_seconds(optarg, &a->duration))
				return cli_err(KAGG_EXIT_USAGE, "invalid duration '%s'", optarg);
			break;
		case 'i':
			if (cli_parse_seconds(optarg, &a->interval))
				return cli_err(KAGG_EXIT_USAGE, "invalid interval '%s'", optarg);
			break;
		case OPT_UNIT:
			if (kagg_unit__parse(optarg, &a->o.unit))
				return cli_err(KAGG_EXIT_USAGE,
					       "invalid unit '%s' (nsecs, usecs or msecs)", optarg);
			break;
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
			a->print.folded = true;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "json"))
				a->print.format = KAGG_FORMAT_JSON;
			else if (!strcmp(optarg, "text"))
				a->print.format = KAGG_FORMAT_TEXT;
			else
				return cli_err(KAGG_EXIT_USAGE, "invalid format '%s' (text or json)",
					       optarg);
			break;
		case OPT_OVERHEAD:
			a->o.overhead = true;
			break;
		case OPT_ATTACH:
			if (!strcmp(optarg, "auto"))
				a->o.attach = KAGG_ATTACH_AUTO;
			else if (!strcmp(optarg, "tp_btf"))
				a->o.attach = KAGG_ATTACH_TP_BTF;
			else if (!strcmp(optarg, "raw_tp"))
				a->o.attach = KAGG_ATTACH_RAW_TP;
			else
				return cli_err(KAGG_EXIT_USAGE,
					       "invalid attach type '%s' (auto, tp_btf, raw_tp)",
					       optarg);
			break;
		case 'v':
			cli_verbose = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return cli_err(KAGG_EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_err(KAGG_EXIT_USAGE, "invalid option '%s' (see --help)",
				       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_err(KAGG_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (a->o.max_ns && a->o.max_ns < a->o.min_ns)
		return cli_err(KAGG_EXIT_USAGE, "--max-us is below --min-us");
	if (a->print.folded && a->print.format == KAGG_FORMAT_JSON)
		return cli_err(KAGG_EXIT_USAGE, "--folded is a text format; drop --format json");
	return 0;
}

/* Map an open failure to an exit code; the library already logged the reason. */
static int open_failed(int err)
{
	if (!cli_logged)
		cli_err(0, "cannot start: %s", strerror(err));
	return err == EINVAL ? KAGG_EXIT_USAGE : KAGG_EXIT_FAIL;
}

static int print_snapshot(struct kagg_session *s, const struct kagg_print_opts *po,
			  unsigned int flags)
{
	struct kagg_snapshot *snap;
	int err;

	snap = kagg_session__snapshot(s, flags);
	if (!snap)
		return cli_err(KAGG_EXIT_FAIL, "reading the aggregates failed: %s",
			       strerror(errno));
	err = kagg_snapshot__print(snap, stdout, po);
	fflush(stdout);
	kagg_snapshot__free(snap);
	if (err)
		return cli_err(KAGG_EXIT_FAIL, "writing output failed: %s", strerror(-err));
	return KAGG_EXIT_OK;
}

static int offcpu_main(int argc, char **argv)
{
	struct offcpu_args a = {};
	struct kagg_session *s = NULL;
	double elapsed = 0;
	int ret;

	a.o.sz = sizeof(a.o);
	a.print.sz = sizeof(a.print);
	a.o.log = cli_log;
	ret = parse_args(argc, argv, &a);
	if (ret) {
		ret = ret < 0 ? KAGG_EXIT_OK : ret;
		goto out;
	}
	cli_setup_signals();
	cli_route_libbpf_log();

	s = kagg_offcpu__open(&a.o);
	if (!s) {
		ret = open_failed(errno);
		goto out;
	}
	ret = kagg_session__attach(s);
	if (ret) {
		ret = KAGG_EXIT_FAIL;
		goto out;
	}
	if (a.print.format == KAGG_FORMAT_TEXT && !a.print.folded)
		fprintf(stderr, "Tracing off-CPU time%s... Hit Ctrl-C to end.\n",
			a.o.stacks ? " and stacks" : "");

	ret = KAGG_EXIT_OK;
	while (!cli_stop) {
		double step = a.interval ? a.interval : a.duration ? a.duration : 1e7;

		if (a.duration && elapsed + step > a.duration)
			step = a.duration - elapsed;
		cli_sleep(step);
		elapsed += step;
		if (cli_stop)
			break;
		if (a.duration && elapsed >= a.duration - 1e-9)
			break;
		if (a.interval) {
			ret = print_snapshot(s, &a.print, KAGG_SNAP_RESET);
			if (ret)
				goto out;
		}
	}
	/* Duration over or Ctrl-C: print what was collected since the last print. */
	ret = print_snapshot(s, &a.print, KAGG_SNAP_RESET);
out:
	kagg_session__destroy(s);
	free(a.pids);
	free(a.tids);
	return ret;
}

KAGG_COMMAND(offcpu, "off-CPU time histograms and stacks (sched_switch)", offcpu_main);
