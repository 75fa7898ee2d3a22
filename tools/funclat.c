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
"usage: kagg funclat [OPTIONS] FUNC\n"
"\n"
"Time from entry to return of a function, one log2 histogram per function,\n"
"aggregated in the kernel.  Nested and recursive calls are timed per level.\n"
"\n"
"FUNC is a kernel function (vfs_read), LIB:FUNC (c:malloc, libc is found\n"
"through the process's maps, /etc/ld.so.cache or the library directories) or\n"
"PATH:FUNC (/usr/bin/bash:readline, or a program name in $PATH's absolute\n"
"directories).  FUNC may be a glob (vfs_*, c:str*): one histogram per\n"
"matching function.\n"
"\n"
"  -p, --pid PID          only this process\n"
"      --attach TYPE      auto (default), fentry, kprobe, kprobe.multi, uprobe,\n"
"                         uprobe.multi\n"
"      --max-funcs N      refuse patterns matching more than N functions (1024)\n"
CLI_COMMON_HELP
"\n"
"attach paths: kernel functions use fentry/fexit (one function) or kprobe.multi\n"
"(a glob), else one kprobe/kretprobe per function; user functions uprobe.multi,\n"
"else one uprobe/uretprobe per function.  The meta block names the path used\n"
"and why others failed.\n"
"\n"
"examples:\n"
"  kagg funclat vfs_read -d 5\n"
"  kagg funclat 'vfs_*' -i 1\n"
"  kagg funclat c:malloc -p 1234 --unit nsecs -d 10\n"
"  kagg funclat '/usr/bin/bash:*line*' --format json -d 5 --overhead\n";

enum {
	OPT_ATTACH = CLI_OPT_TOOL,
	OPT_MAX_FUNCS,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	{ "pid", required_argument, NULL, 'p' },
	{ "attach", required_argument, NULL, OPT_ATTACH },
	{ "max-funcs", required_argument, NULL, OPT_MAX_FUNCS },
	{},
};

static int parse_args(int argc, char **argv, struct kagg_funclat_opts *o, struct cli_common *cm)
{
	static const char *const attach[] = { "auto", "fentry", "kprobe", "kprobe.multi",
					      "uprobe", "uprobe.multi" };
	static const enum kagg_funclat_attach attach_val[] = {
		KAGG_FUNCLAT_AUTO, KAGG_FUNCLAT_FENTRY, KAGG_FUNCLAT_KPROBE,
		KAGG_FUNCLAT_KPROBE_MULTI, KAGG_FUNCLAT_UPROBE, KAGG_FUNCLAT_UPROBE_MULTI,
	};
	uint64_t v;
	size_t i;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "p:", long_opts, NULL)) != -1) {
		int rc = cli_common_opt(c, optarg, cm);

		if (rc != -ENOENT) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'p':
			if (cli_parse_u64(optarg, &v) || !v || v > INT32_MAX)
				return cli_err(KAGG_EXIT_USAGE, "invalid pid '%s'", optarg);
			o->pid = v;
			break;
		case OPT_ATTACH:
			for (i = 0; i < 6 && strcmp(optarg, attach[i]); i++)
				;
			if (i == 6)
				return cli_err(KAGG_EXIT_USAGE, "invalid attach type '%s' (auto, fentry, "
					       "kprobe, kprobe.multi, uprobe, uprobe.multi)", optarg);
			o->attach = attach_val[i];
			break;
		case OPT_MAX_FUNCS:
			if (cli_parse_u64(optarg, &v) || !v || v > 1024)
				return cli_err(KAGG_EXIT_USAGE, "invalid --max-funcs '%s' (1 to 1024)",
					       optarg);
			o->max_funcs = v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default:
			return cli_bad_opt(c, argv);
		}
	}
	if (optind >= argc)
		return cli_err(KAGG_EXIT_USAGE, "missing FUNC (kernel function, LIB:FUNC or "
			       "PATH:FUNC); see --help");
	if (optind + 1 < argc)
		return cli_err(KAGG_EXIT_USAGE, "unexpected argument '%s'", argv[optind + 1]);
	o->pattern = argv[optind];
	o->unit = cm->unit;
	o->overhead = cm->overhead;
	return 0;
}

static int funclat_main(int argc, char **argv)
{
	struct kagg_funclat_opts o = {};
	struct cli_common cm = {};
	struct kagg_session *s = NULL;
	char banner[512];
	int ret;

	o.sz = sizeof(o);
	cm.print.sz = sizeof(cm.print);
	o.log = cli_log;
	if (!cli_start(parse_args(argc, argv, &o, &cm), NULL, &ret))
		return ret;
	s = kagg_funclat__open(&o);
	if (!s)
		return cli_open_failed(errno);
	snprintf(banner, sizeof(banner), "Tracing latency of %s", o.pattern);
	ret = cli_run(s, &cm, banner);
	kagg_session__destroy(s);
	return ret;
}

KAGG_COMMAND(funclat, "function latency histograms (kernel or user functions)", funclat_main);
