// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg funclat: function latency histograms (kernel or user functions),
 * aggregated in the kernel.  A thin CLI over kagg_funclat__open().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/funclat.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg funclat [OPTIONS] FUNC [INTERVAL [COUNT]]\n"
	"\n"
	"Time from entry to return of a function, one log2 histogram per function,\n"
	"aggregated in the kernel.  Nested and recursive calls are timed per level.\n"
	"\n"
	"FUNC is a kernel function (vfs_read), LIB:FUNC (c:malloc, libc is found\n"
	"through the process's maps, /etc/ld.so.cache or the library directories) or\n"
	"PATH:FUNC (/usr/bin/bash:readline, or a program name in $PATH's absolute\n"
	"directories).  FUNC may be a glob (vfs_*, c:str*): one histogram per\n"
	"matching function.  INTERVAL [COUNT] after FUNC, as runqlat's: print every\n"
	"INTERVAL seconds (-i), COUNT times.\n"
	"\n"
	"  -p, --pid PID          only this process\n"
	"  -c, --cgroup PATH      only tasks in this cgroup v2 directory (or below it)\n"
	"  -m, --milliseconds     as --unit msecs (libbpf-tools' funclatency -m)\n"
	"  -u, --microseconds     as --unit usecs (libbpf-tools' funclatency -u)\n"
	"      --attach TYPE      auto (default), fentry, kprobe, kprobe.multi, uprobe,\n"
	"                         uprobe.multi\n"
	"      --max-funcs N      refuse patterns matching more than N functions (1024)\n"
	"      --buckets B        log2 (default) or exp:S, exponential buckets of scale S\n"
	"                         (0..5: 2^(2^-S) - 1 wide, 9% at S=3)\n" CLI_COMMON_HELP_U(
		"nsecs (default, as funclatency's), usecs or msecs") "      --format heatmap   "
								     "with -i: a latency heatmap "
								     "SVG (time across, buckets "
								     "up)\n"
								     "      --format html      a "
								     "one-file report: histograms, "
								     "percentiles, meta\n"
								     "\n"
								     "attach paths: kernel "
								     "functions use fentry/fexit "
								     "(one function) or "
								     "kprobe.multi\n"
								     "(a glob), else one "
								     "kprobe/kretprobe per "
								     "function; user functions "
								     "uprobe.multi,\n"
								     "else one uprobe/uretprobe "
								     "per function.  The meta "
								     "block names the path used\n"
								     "and why others failed.\n"
								     "\n"
								     "examples:\n"
								     "  kagg funclat vfs_read -d "
								     "5\n"
								     "  kagg funclat 'vfs_*' -i 1\n"
								     "  kagg funclat c:malloc -p "
								     "1234 -u -d 10   # in "
								     "microseconds\n"
								     "  kagg funclat "
								     "'/usr/bin/bash:*line*' "
								     "--format json -d 5 "
								     "--overhead\n";

enum {
	OPT_ATTACH = CLI_OPT_TOOL,
	OPT_MAX_FUNCS,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	CLI_PID_LONGOPT,
	{ "cgroup", required_argument, NULL, 'c' },
	CLI_MSECS_LONGOPT,
	{ "microseconds", no_argument, NULL, 'u' },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "max-funcs", required_argument, NULL, OPT_MAX_FUNCS },
	CLI_BUCKETS_LONGOPT,
	{},
};

/* --attach TYPE; 0 or a usage error. */
static int parse_attach(const char *arg, enum kagg_funclat_attach *out)
{
	static const char *const attach[] = { "auto",	      "fentry", "kprobe",
					      "kprobe.multi", "uprobe", "uprobe.multi" };
	static const enum kagg_funclat_attach attach_val[] = {
		KAGG_FUNCLAT_AUTO,	   KAGG_FUNCLAT_FENTRY, KAGG_FUNCLAT_KPROBE,
		KAGG_FUNCLAT_KPROBE_MULTI, KAGG_FUNCLAT_UPROBE, KAGG_FUNCLAT_UPROBE_MULTI,
	};
	int i, ret = CLI_CHOOSE(arg, attach, "attach type",
				"auto, fentry, kprobe, kprobe.multi, uprobe, uprobe.multi", &i);

	if (!ret)
		*out = attach_val[i];
	return ret;
}

struct funclat_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_funclat_opts o;
	char banner[512];
};

/* The options that are funclat's alone (cli_parser.opt). */
static int funclat_opt(struct cli_args *ca, int c, const char *arg)
{
	struct kagg_funclat_opts *o = &((struct funclat_args *)ca)->o;

	switch (c) {
	case 'u':
		ca->cm.unit = KAGG_UNIT_USECS;
		ca->cm.unit_given = true;
		return 0;
	case 'p':
		return CLI_RANGE(arg, 1, INT32_MAX, "pid", false, &o->pid);
	case 'c':
		o->cgroup = arg;
		return 0;
	case OPT_ATTACH:
		return parse_attach(arg, &o->attach);
	case OPT_MAX_FUNCS:
		return CLI_RANGE(arg, 1, 1024, "--max-funcs", true, &o->max_funcs);
	case CLI_OPT_BUCKETS:
		return cli_parse_buckets(arg, &o->buckets, &o->exp_scale);
	}
	return -ENOENT;
}

/* FUNC, the one operand, and the parsed options into a->o. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct funclat_args *a = (struct funclat_args *)ca;

	if (optind >= argc)
		return cli_err(CLI_EXIT_USAGE, "missing FUNC (kernel function, LIB:FUNC or "
					       "PATH:FUNC); see --help");
	if (optind + 1 < argc) {
		int ret = cli_positional_interval(argc - optind - 1, argv + optind + 1, &ca->cm);

		if (ret)
			return ret;
	}
	a->o.pattern = argv[optind];
	/* funclatency's default: calls of a few hundred ns show their distribution */
	if (!ca->cm.unit_given)
		ca->cm.unit = KAGG_UNIT_NSECS;
	a->o.unit = a->c.cm.unit;
	a->o.overhead = a->c.cm.overhead;
	return cli_pictures(&a->c.cm, CLI_PIC_BIT(CLI_PIC_HEATMAP) | CLI_PIC_BIT(CLI_PIC_HTML),
			    false, false);
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	struct funclat_args *a = (struct funclat_args *)ca;

	snprintf(a->banner, sizeof(a->banner), "Tracing latency of %s", a->o.pattern);
	ca->banner = a->banner;
	return kagg_funclat__open(&a->o);
}

static const struct cli_parser parser =
	CLI_PARSER(CLI_COMMON_SHORTOPTS "p:c:mu", funclat_opt, finish_args, open_session,
		   CLI_OPERANDS | CLI_PICTURES | CLI_MSECS);

static int funclat_main(int argc, char **argv)
{
	struct funclat_args a = { .o = { .sz = sizeof(a.o), .log = cli_log } };

	return cli_session_main(&parser, argc, argv, &a.c);
}

CLI_COMMAND(funclat, "function latency histograms (kernel or user functions)", funclat_main);
