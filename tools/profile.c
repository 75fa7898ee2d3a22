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
	"usage: kagg profile [OPTIONS] [DURATION]\n"
	"\n"
	"Sample what runs on the CPUs at a fixed rate (perf_event_open: hardware cycles\n"
	"when the PMU has them, else the cpu-clock software event) and count samples by\n"
	"kernel + user stack, aggregated in the kernel.  The idle task is left out.\n"
	"Each stack shows its sample count and the CPU time it stands for\n"
	"(samples * 1/HZ, in --unit).  DURATION, as in bcc's profile: sample that many\n"
	"seconds, print once (-d DURATION); without it, until Ctrl-C.\n"
	"\n"
	"  -F, --frequency HZ     samples per second per CPU (default 49)\n"
	"  -p, --pid PID[,PID]    only these processes\n"
	"  -C, --cpu N            only CPU N\n"
	"  -U, --user-stacks-only   capture user stacks only\n"
	"  -K, --kernel-stacks-only capture kernel stacks only\n"
	"      --event EV         auto (default: cycles, else cpu-clock), cycles or "
	"cpu-clock\n" CLI_UNWIND_HELP
	"  -f, --folded           one line per stack, \"comm;frames... COUNT\" (flame graphs),\n"
	"                         once at the end (not with -i); the meta to stderr\n"
	"      --addrs            stack frames by address (func+0x1a), not merged by function\n"
	"      --delimiter        folded: \"--\" between the user and the kernel "
	"frames\n" CLI_COMMON_HELP
	"      --format svg       a flame graph: one interactive SVG (search, zoom, tooltips)\n"
	"      --format html      a one-file report: flame graph and meta\n"
	"      --format pprof     a gzip-compressed pprof profile (go tool pprof, Parca, ...)\n"
	"\n"
	"examples:\n"
	"  kagg profile -F 99 10                    # whole system, 10 seconds\n"
	"  kagg profile -p 1234 -U -d 5             # one process, user stacks\n"
	"  kagg profile -F 99 -d 30 --folded > out.folded   # flame graph input\n"
	"  kagg profile --format json -d 2 --overhead\n"
	"  kagg profile -F 99 -d 10 --format svg > cpu.svg   # open in a browser\n";

enum {
	OPT_EVENT = CLI_OPT_TOOL,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "frequency", required_argument, NULL, 'F' },
	CLI_PID_LONGOPT,
	CLI_CPU_LONGOPT,
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "event", required_argument, NULL, OPT_EVENT },
	CLI_UNWIND_LONGOPT,
	CLI_STACKS_LONGOPTS,
	{},
};

struct profile_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_profile_opts o;
};

/* --folded: sample counts, one line per stack, no meta. */
static int print_folded(const struct kagg_snapshot *snap, FILE *f,
			const struct kagg_print_opts *opts)
{
	return kagg_profile__print_folded_opts(snap, f, opts);
}

/* --event EV; 0 or a usage error. */
static int parse_event(const char *arg, enum kagg_profile_event *ev)
{
	static const char *const names[] = {
		[KAGG_PROFILE_EV_AUTO] = "auto",
		[KAGG_PROFILE_EV_CYCLES] = "cycles",
		[KAGG_PROFILE_EV_CPU_CLOCK] = "cpu-clock",
	};

	return CLI_CHOOSE(arg, names, "event", "auto, cycles or cpu-clock", ev);
}

/* The options that are profile's alone (cli_parser.opt). */
static int profile_opt(struct cli_args *ca, int c, const char *arg)
{
	struct profile_args *a = (struct profile_args *)ca;

	switch (c) {
	case 'F':
		return CLI_RANGE(arg, 1, 1000000, "frequency", false, &a->o.freq);
	case 'C':
	case CLI_OPT_CPU:
		return CLI_RANGE(arg, 0, 65535, "cpu", false, &a->o.cpu);
	case 'U':
	case 'K':
		return CLI_EITHER(c, 'U', 'K', KAGG_PROFILE_USER, KAGG_PROFILE_KERNEL,
				  &a->o.stacks);
	case OPT_EVENT:
		return parse_event(arg, &a->o.event);
	case CLI_OPT_UNWIND:
		return cli_unwind(arg, &a->o.unwind);
	}
	return -ENOENT;
}

/* The checks that span several options; the parsed options into a->o. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct profile_args *a = (struct profile_args *)ca;
	int ret;

	ret = cli_folded_ready(&ca->cm)
		      ?: cli_pictures(&ca->cm,
				      CLI_PIC_BIT(CLI_PIC_SVG) | CLI_PIC_BIT(CLI_PIC_HTML) |
					      CLI_PIC_BIT(CLI_PIC_PPROF),
				      false, true);
	if (ret)
		return ret;
	if (ca->cm.print.folded)
		ca->cm.printer = print_folded;
	a->o.pids = a->c.tk.pids;
	a->o.nr_pids = a->c.tk.nr_pids;
	a->o.overhead = a->c.cm.overhead;
	return 0;
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	return kagg_profile__open(&((struct profile_args *)ca)->o);
}

static const struct cli_parser parser =
	CLI_PARSER(CLI_COMMON_SHORTOPTS "F:p:UKfC:", profile_opt, finish_args, open_session,
		   CLI_TASKS | CLI_PICTURES | CLI_POS_DURATION);

static int profile_main(int argc, char **argv)
{
	struct profile_args a = { .c.banner = "Sampling on-CPU stacks",
				  .o = { .sz = sizeof(a.o), .cpu = -1, .log = cli_log } };

	return cli_session_main(&parser, argc, argv, &a.c);
}

CLI_COMMAND(profile, "CPU samples by stack, aggregated in the kernel (perf_event)", profile_main);
