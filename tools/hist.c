// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg hist: a log2 or linear histogram of any tracepoint's numeric field.
 * A thin CLI over kagg_field_hist__open().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/field_hist.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg hist [OPTIONS] SYSTEM:EVENT FIELD\n"
	"\n"
	"A histogram of a numeric field of any tracepoint, aggregated in the\n"
	"kernel.  The field's offset, size and signedness are read from the event's\n"
	"tracefs format file (/sys/kernel/tracing/events/SYSTEM/EVENT/format; tracefs\n"
	"is mounted when it is not).\n"
	"\n"
	"      --key FIELD        one histogram per value of FIELD (numeric: labelled\n"
	"                         with the value; char array such as a comm: with the\n"
	"                         string, its first 15 characters)\n"
	"      --filter EXPR      only events where 'FIELD OP VALUE' holds, OP one of\n"
	"                         == != < <= > >= (numeric fields, VALUE decimal or 0x..)\n"
	"      --linear           64 linear buckets instead of log2: [MIN, MIN+STEP-1],\n"
	"                         [MIN+STEP, ...]; values outside are counted in the meta\n"
	"      --min N            first linear bucket's low bound (default 0)\n"
	"      --step N           linear bucket width (default 1)\n"
	"      --buckets B        log2 (default), exp:S (exponential buckets of scale S,\n"
	"                         0..5: 2^(2^-S) - 1 wide, 9% at S=3; numeric --key) or\n"
	"                         linear:MIN:STEP (as --linear --min MIN --step STEP)\n"
	"  -d, --duration SEC     run for SEC seconds, print, exit\n"
	"  -i, --interval SEC     print and reset every SEC >= 0.001 s (exact snapshots)\n"
	"  -T, --timestamp        print the local time, HH:MM:SS, before each output\n"
	"                         (JSON: \"timestamp\" in the meta)\n"
	"      --top N            only the N heaviest keys (default all); text lists keys by\n"
	"                         total, heaviest first\n"
	"      --format FMT       text (default), json, or ndjson (one line each)\n"
	"      --format heatmap   with -i: a heatmap SVG (time across, buckets up)\n"
	"      --format html      a one-file report: histograms, percentiles, meta\n"
	"      --overhead         report the BPF program's run time per event\n"
	"      --quiet            text: no '#' meta lines (and no banner on stderr)\n"
	"  -v, --verbose          print libbpf and library messages\n"
	"  -h, --help             this text\n"
	"\n"
	"Signed values below 0 have no log2 bucket: they are counted in the meta\n"
	"(\"negative\") and not in the histogram; linear buckets take them.\n"
	"\n"
	"examples:\n"
	"  kagg hist block:block_rq_issue bytes -d 10\n"
	"  kagg hist sched:sched_switch prev_prio --linear --min 100 --step 1 -d 5\n"
	"  kagg hist block:block_rq_issue bytes --buckets exp:3 -d 10\n"
	"  kagg hist sched:sched_switch prev_pid --key prev_comm -d 5\n"
	"  kagg hist raw_syscalls:sys_enter id --filter 'common_pid == 1234' -d 5\n";

enum {
	OPT_KEY = CLI_OPT_TOOL,
	OPT_FILTER,
	OPT_LINEAR,
	OPT_MIN,
	OPT_STEP,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "key", required_argument, NULL, OPT_KEY },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "linear", no_argument, NULL, OPT_LINEAR },
	{ "min", required_argument, NULL, OPT_MIN },
	{ "step", required_argument, NULL, OPT_STEP },
	CLI_BUCKETS_LONGOPT,
	{},
};

struct hist_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_field_hist_opts o;
	bool linear, min_set; /* --linear's bounds, before they go into o */
	uint64_t step;
	bool buckets_lin; /* --buckets linear:MIN:STEP */
	char banner[300];
};

/* The options that are hist's alone (cli_parser.opt). */
static int hist_opt(struct cli_args *ca, int c, const char *arg)
{
	struct hist_args *a = (struct hist_args *)ca;
	uint64_t step = 0;
	int64_t min = 0;
	char *end;
	int err;

	switch (c) {
	case CLI_OPT_BUCKETS:
		err = cli_parse_buckets_lin(arg, &a->o.buckets, &a->o.exp_scale, &min, &step);
		if (err)
			return err;
		a->buckets_lin = step > 0;
		if (step) {
			a->o.lin_min = min;
			a->step = step;
		}
		return 0;
	case OPT_KEY:
		a->o.key_field = arg;
		return 0;
	case OPT_FILTER:
		a->o.filter = arg;
		return 0;
	case OPT_LINEAR:
		a->linear = true;
		return 0;
	case OPT_MIN:
		errno = 0;
		a->o.lin_min = strtoll(arg, &end, 0);
		if (errno || end == arg || *end)
			return cli_err(CLI_EXIT_USAGE, "invalid --min '%s'", arg);
		a->min_set = true;
		return 0;
	case OPT_STEP:
		if (cli_parse_u64(arg, &a->step) || !a->step)
			return cli_err(CLI_EXIT_USAGE, "invalid --step '%s' (a positive integer)",
				       arg);
		return 0;
	}
	return -ENOENT;
}

/* SYSTEM:EVENT and FIELD, the operands, the checks across options, and a->o. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct hist_args *a = (struct hist_args *)ca;

	if (argc - optind < 2)
		return cli_err(CLI_EXIT_USAGE,
			       "need SYSTEM:EVENT and FIELD, e.g. "
			       "'kagg hist sched:sched_switch prev_prio'; see --help");
	if (argc - optind > 2)
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s'", argv[optind + 2]);
	if (!strchr(argv[optind], ':') && !strchr(argv[optind], '/'))
		return cli_err(CLI_EXIT_USAGE,
			       "invalid event '%s' (SYSTEM:EVENT, e.g. "
			       "sched:sched_switch)",
			       argv[optind]);
	if (a->c.cm.unit != KAGG_UNIT_USECS)
		return cli_err(CLI_EXIT_USAGE,
			       "--unit does not apply: hist counts raw field values");
	if (a->linear && a->o.buckets == KAGG_BUCKETS_EXP)
		return cli_err(CLI_EXIT_USAGE, "--linear and --buckets exp:S exclude each other");
	if (a->buckets_lin && (a->linear || a->min_set))
		return cli_err(CLI_EXIT_USAGE, "--buckets linear:MIN:STEP or --linear --min "
					       "--step, not both");
	a->linear |= a->buckets_lin;
	if (!a->linear && (a->min_set || a->step != 1))
		return cli_err(CLI_EXIT_USAGE, "--min and --step go with --linear");
	a->o.lin_step = a->linear ? a->step : 0;
	a->o.event = argv[optind];
	a->o.field = argv[optind + 1];
	a->o.overhead = a->c.cm.overhead;
	return cli_pictures(&a->c.cm, CLI_PIC_BIT(CLI_PIC_HEATMAP) | CLI_PIC_BIT(CLI_PIC_HTML),
			    false, false);
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	struct hist_args *a = (struct hist_args *)ca;

	snprintf(a->banner, sizeof(a->banner), "Tracing %s", a->o.event);
	ca->banner = a->banner;
	return kagg_field_hist__open(&a->o);
}

static const struct cli_parser parser = CLI_PARSER(CLI_COMMON_SHORTOPTS, hist_opt, finish_args,
						   open_session, CLI_OPERANDS | CLI_PICTURES);

static int hist_main(int argc, char **argv)
{
	struct hist_args a = { .o = { .sz = sizeof(a.o), .log = cli_log }, .step = 1 };

	return cli_session_main(&parser, argc, argv, &a.c);
}

CLI_COMMAND(hist, "log2 or linear histogram of any tracepoint's numeric field", hist_main);
