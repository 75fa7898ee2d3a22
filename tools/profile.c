// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg profile: CPU samples by kernel + user stack, aggregated in the kernel.
 * A thin CLI over kagg_profile__open() and kagg_session__snapshot().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/profile.h>
#include "cli.h"

static const char usage_text[] =
"usage: kagg profile [OPTIONS]\n"
"\n"
"Sample what runs on the CPUs at a fixed rate (perf_event_open: hardware cycles\n"
"when the PMU has them, else the cpu-clock software event) and count samples by\n"
"kernel + user stack, aggregated in the kernel.  The idle task is left out.\n"
"Each stack shows its sample count and the CPU time it stands for\n"
"(samples * 1/HZ, in --unit).\n"
"\n"
"  -F, --frequency HZ     samples per second per CPU (default 49)\n"
"  -p, --pid PID[,PID]    only these processes\n"
"      --cpu N            only CPU N\n"
"  -U, --user-stacks-only   capture user stacks only\n"
"  -K, --kernel-stacks-only capture kernel stacks only\n"
"      --event EV         auto (default: cycles, else cpu-clock), cycles or cpu-clock\n"
"      --folded           one line per stack, \"comm;frames... COUNT\" (flame graphs),\n"
"                         once at the end (not with -i)\n"
"      --addrs            stack frames by address (func+0x1a), not merged by function\n"
CLI_COMMON_HELP
"\n"
"examples:\n"
"  kagg profile -F 99 -d 10                 # whole system, 10 seconds\n"
"  kagg profile -p 1234 -U -d 5             # one process, user stacks\n"
"  kagg profile -F 99 -d 30 --folded > out.folded   # flame graph input\n"
"  kagg profile --format json -d 2 --overhead\n";

enum {
	OPT_CPU = CLI_OPT_TOOL,
	OPT_EVENT,
	OPT_FOLDED,
	OPT_ADDRS,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "frequency", required_argument, NULL, 'F' },
	{ "pid", required_argument, NULL, 'p' },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "addrs", no_argument, NULL, OPT_ADDRS },
	{},
};

struct profile_args {
	struct kagg_profile_opts o;
	struct cli_common cm;
	int *pids;
};

/* --folded: sample counts, one line per stack, no meta. */
static int print_folded(const struct kagg_snapshot *snap, FILE *f,
			const struct kagg_print_opts *opts)
{
	return kagg_profile__print_folded(snap, f);
}

static int parse_args(int argc, char **argv, struct profile_args *a)
{
	uint64_t v;
	size_t n;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "F:p:UK", long_opts, NULL)) !=
	       -1) {
		int rc = cli_common_opt(c, optarg, &a->cm);

		if (rc != -ENOENT) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'F':
			if (cli_parse_u64(optarg, &v) || !v || v > 1000000)
				return cli_err(KAGG_EXIT_USAGE, "invalid frequency '%s'", optarg);
			a->o.freq = v;
			break;
		case 'p':
			free(a->pids);
			a->pids = NULL;
			if (cli_parse_int_list(optarg, &a->pids, &n))
				return cli_err(KAGG_EXIT_USAGE, "invalid pid list '%s'", optarg);
			a->o.pids = a->pids;
			a->o.nr_pids = n;
			break;
		case OPT_CPU:
			if (cli_parse_u64(optarg, &v) || v > 65535)
				return cli_err(KAGG_EXIT_USAGE, "invalid cpu '%s'", optarg);
			a->o.cpu = v;
			break;
		case 'U':
		case 'K':
			if (a->o.stacks)
				return cli_err(KAGG_EXIT_USAGE, "-U and -K exclude each other");
			a->o.stacks = c == 'U' ? KAGG_PROFILE_USER : KAGG_PROFILE_KERNEL;
			break;
		case OPT_EVENT:
			if (!strcmp(optarg, "auto"))
				a->o.event = KAGG_PROFILE_EV_AUTO;
			else if (!strcmp(optarg, "cycles"))
				a->o.event = KAGG_PROFILE_EV_CYCLES;
			else if (!strcmp(optarg, "cpu-clock"))
				a->o.event = KAGG_PROFILE_EV_CPU_CLOCK;
			else
				return cli_err(KAGG_EXIT_USAGE,
					       "invalid event '%s' (auto, cycles or cpu-clock)", optarg);
			break;
		case OPT_FOLDED:
			a->cm.print.folded = true;
			a->cm.printer = print_folded;
			break;
		case OPT_ADDRS:
			a->cm.addrs = true;
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
	if (a->cm.print.folded && a->cm.print.format == KAGG_FORMAT_JSON)
		return cli_err(KAGG_EXIT_USAGE, "--folded is a text format; drop --format json");
	if (a->cm.print.folded && a->cm.interval)
		return cli_err(KAGG_EXIT_USAGE, "--folded prints once: drop -i");
	a->o.overhead = a->cm.overhead;
	return 0;
}

static int profile_main(int argc, char **argv)
{
	struct profile_args a = {};
	struct kagg_session *s = NULL;
	int ret;

	a.o.sz = sizeof(a.o);
	a.o.cpu = -1;
	a.cm.print.sz = sizeof(a.cm.print);
	a.o.log = cli_log;
	if (!cli_start(parse_args(argc, argv, &a), NULL, &ret))
		goto out;
	s = kagg_profile__open(&a.o);
	if (!s) {
		ret = cli_open_failed(errno);
		goto out;
	}
	ret = cli_run(s, &a.cm, "Sampling on-CPU stacks");
out:
	kagg_session__destroy(s);
	free(a.pids);
	return ret;
}

KAGG_COMMAND(profile, "CPU samples by stack, aggregated in the kernel (perf_event)", profile_main);
