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
"      --folded           one line per stack, \"comm;frames... COUNT\" (flame graphs)\n"
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
	{},
};

struct profile_args {
	struct kagg_profile_opts o;
	struct cli_common cm;
	bool folded;
	struct cli_tasks tk;
};

/* --event EV; 0 or a usage error. */
static int parse_event(const char *arg, enum kagg_profile_event *ev)
{
	if (!strcmp(arg, "auto"))
		*ev = KAGG_PROFILE_EV_AUTO;
	else if (!strcmp(arg, "cycles"))
		*ev = KAGG_PROFILE_EV_CYCLES;
	else if (!strcmp(arg, "cpu-clock"))
		*ev = KAGG_PROFILE_EV_CPU_CLOCK;
	else
		return cli_err(KAGG_EXIT_USAGE, "invalid event '%s' (auto, cycles or cpu-clock)",
			       arg);
	return 0;
}

/* The options that are profile's alone (cli_parser.opt). */
static int profile_opt(void *args, int c, const char *arg)
{
	struct profile_args *a = args;
	uint64_t v;

	switch (c) {
	case 'F':
		if (cli_parse_u64(arg, &v) || !v || v > 1000000)
			return cli_err(KAGG_EXIT_USAGE, "invalid frequency '%s'", arg);
		a->o.freq = v;
		return 0;
	case OPT_CPU:
		if (cli_parse_u64(arg, &v) || v > 65535)
			return cli_err(KAGG_EXIT_USAGE, "invalid cpu '%s'", arg);
		a->o.cpu = v;
		return 0;
	case 'U':
	case 'K':
		if (a->o.stacks)
			return cli_err(KAGG_EXIT_USAGE, "-U and -K exclude each other");
		a->o.stacks = c == 'U' ? KAGG_PROFILE_USER : KAGG_PROFILE_KERNEL;
		return 0;
	case OPT_EVENT:
		return parse_event(arg, &a->o.event);
	case OPT_FOLDED:
		a->folded = true;
		return 0;
	}
	return -ENOENT;
}

static int parse_args(int argc, char **argv, struct profile_args *a)
{
	const struct cli_parser p = {
		.shortopts = CLI_COMMON_SHORTOPTS "F:p:UK",
		.longopts = long_opts,
		.usage = usage_text,
		.opt = profile_opt,
		.args = a,
		.cm = &a->cm,
		.tasks = &a->tk,
	};
	int rc = cli_parse(&p, argc, argv);

	if (rc)
		return rc;
	if (a->folded && a->cm.print.format == KAGG_FORMAT_JSON)
		return cli_err(KAGG_EXIT_USAGE, "--folded is a text format; drop --format json");
	if (a->folded && a->cm.interval)
		return cli_err(KAGG_EXIT_USAGE, "--folded prints once: drop -i");
	a->o.pids = a->tk.pids;
	a->o.nr_pids = a->tk.nr_pids;
	a->o.overhead = a->cm.overhead;
	return 0;
}

/* Run until -d or a signal (or each -i), then print; folded output has no meta. */
static int run(struct kagg_session *s, struct profile_args *a)
{
	struct kagg_snapshot *snap;
	struct cli_common cm = a->cm;
	int err;

	if (!a->folded)
		return cli_run(s, &a->cm, "Sampling on-CPU stacks");
	if (kagg_session__attach(s))
		return KAGG_EXIT_FAIL;
	cli_sleep(cm.duration ? cm.duration : 1e9);
	kagg_session__detach(s);
	snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
	if (!snap)
		return cli_err(KAGG_EXIT_FAIL, "reading the aggregates failed: %s",
			       strerror(errno));
	err = kagg_profile__print_folded(snap, stdout);
	kagg_snapshot__free(snap);
	return cli_output_done(err);
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
	ret = run(s, &a);
out:
	kagg_session__destroy(s);
	cli_tasks_free(&a.tk);
	return ret;
}

KAGG_COMMAND(profile, "CPU samples by stack, aggregated in the kernel (perf_event)", profile_main);
