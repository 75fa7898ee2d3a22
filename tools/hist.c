// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg hist: a log2 or linear histogram of any tracepoint's numeric field.
 * A thin CLI over kagg_hist__open().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/hist.h>
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
"  -d, --duration SEC     run for SEC seconds, print, exit\n"
"  -i, --interval SEC     print and reset every SEC >= 0.001 s (exact snapshots)\n"
"      --format FMT       text (default) or json\n"
"      --overhead         report the BPF program's run time per event\n"
"  -v, --verbose          print libbpf and library messages\n"
"  -h, --help             this text\n"
"\n"
"Signed values below 0 have no log2 bucket: they are counted in the meta\n"
"(\"negative\") and not in the histogram; linear buckets take them.\n"
"\n"
"examples:\n"
"  kagg hist block:block_rq_issue bytes -d 10\n"
"  kagg hist sched:sched_switch prev_prio --linear --min 100 --step 1 -d 5\n"
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
	{},
};

static int parse_args(int argc, char **argv, struct kagg_hist_opts *o, struct cli_common *cm)
{
	bool linear = false, min_set = false;
	uint64_t step = 1;
	char *end;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, long_opts, NULL)) != -1) {
		int rc = cli_common_opt(c, optarg, cm);

		if (rc != -ENOENT) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case OPT_KEY:
			o->key_field = optarg;
			break;
		case OPT_FILTER:
			o->filter = optarg;
			break;
		case OPT_LINEAR:
			linear = true;
			break;
		case OPT_MIN:
			errno = 0;
			o->lin_min = strtoll(optarg, &end, 0);
			if (errno || end == optarg || *end)
				return cli_err(KAGG_EXIT_USAGE, "invalid --min '%s'", optarg);
			min_set = true;
			break;
		case OPT_STEP:
			if (cli_parse_u64(optarg, &step) || !step)
				return cli_err(KAGG_EXIT_USAGE, "invalid --step '%s' (a positive "
					       "integer)", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default:
			return cli_bad_opt(c, argv);
		}
	}
	if (argc - optind < 2)
		return cli_err(KAGG_EXIT_USAGE, "need SYSTEM:EVENT and FIELD, e.g. "
			       "'kagg hist sched:sched_switch prev_prio'; see --help");
	if (argc - optind > 2)
		return cli_err(KAGG_EXIT_USAGE, "unexpected argument '%s'", argv[optind + 2]);
	if (!strchr(argv[optind], ':') && !strchr(argv[optind], '/'))
		return cli_err(KAGG_EXIT_USAGE, "invalid event '%s' (SYSTEM:EVENT, e.g. "
			       "sched:sched_switch)", argv[optind]);
	if (cm->unit != KAGG_UNIT_USECS)
		return cli_err(KAGG_EXIT_USAGE, "--unit does not apply: hist counts raw field values");
	if (!linear && (min_set || step != 1))
		return cli_err(KAGG_EXIT_USAGE, "--min and --step go with --linear");
	o->lin_step = linear ? step : 0;
	o->event = argv[optind];
	o->field = argv[optind + 1];
	o->overhead = cm->overhead;
	return 0;
}

static int hist_main(int argc, char **argv)
{
	struct kagg_hist_opts o = {};
	struct cli_common cm = {};
	struct kagg_session *s;
	char banner[300];
	int ret;

	o.sz = sizeof(o);
	cm.print.sz = sizeof(cm.print);
	o.log = cli_log;
	if (!cli_start(parse_args(argc, argv, &o, &cm), NULL, &ret))
		return ret;
	s = kagg_hist__open(&o);
	if (!s)
		return cli_open_failed(errno);
	snprintf(banner, sizeof(banner), "Tracing %s", o.event);
	ret = cli_run(s, &cm, banner);
	kagg_session__destroy(s);
	return ret;
}

KAGG_COMMAND(hist, "log2 or linear histogram of any tracepoint's numeric field", hist_main);
