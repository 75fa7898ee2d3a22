// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg list: what there is to trace, as bpftrace -l and perf list show it:
 * tracepoints (with their fields for kagg hist), kernel functions and the
 * functions of a program or library (kagg funclat).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kagg/kagg.h>
#include <kagg/funclat.h>
#include <kagg/rb_format.h>
#include "cli.h"

#define LS_EVENTS "/sys/kernel/tracing/events"

static const char usage_text[] =
	"usage: kagg list [OPTIONS] [PATTERN]\n"
	"\n"
	"What kagg can trace, as bpftrace -l and perf list show it: tracepoints as\n"
	"SYSTEM:EVENT (for kagg hist and kagg record -e), then kernel functions (for\n"
	"kagg funclat), one a line.  PATTERN is a glob (sched:*, vfs_*, *alloc*); a\n"
	"word without * ? [ matches anywhere in the name, as in perf list.  tracefs\n"
	"is mounted when it is not.\n"
	"\n"
	"  -t, --tracepoints      tracepoints only\n"
	"  -f, --functions        kernel functions only\n"
	"  -b, --binary BIN       the functions of BIN instead, as kagg funclat takes them\n"
	"                         (BIN:FUNC): a path, a program in $PATH, or a library (c)\n"
	"  -p, --pid PID          with -b: a library also through this process's maps\n"
	"  -v, --verbose          tracepoints with their fields (type and name), as\n"
	"                         bpftrace -lv; the numeric ones are kagg hist's FIELDs\n"
	"  -h, --help             this text\n"
	"\n"
	"Nothing matching is an error (exit 1) that names the nearest tracepoints.\n"
	"\n"
	"examples:\n"
	"  kagg list sched:                      # the scheduler's tracepoints\n"
	"  kagg list -v sched:sched_switch       # and its fields\n"
	"  kagg list -f 'vfs_*'                  # kernel functions\n"
	"  kagg list -b /usr/bin/bash '*readline*'   # a program's functions\n"
	"  kagg list -b c malloc                 # libc's\n";

static const struct option long_opts[] = {
	{ "tracepoints", no_argument, NULL, 't' },
	{ "functions", no_argument, NULL, 'f' },
	{ "binary", required_argument, NULL, 'b' },
	CLI_PID_LONGOPT,
	CLI_VERBOSE_HELP_LONGOPTS,
	{},
};

struct ls_args {
	bool tracepoints, functions, fields;
	const char *binary;
	int pid;
	char glob[512];
	size_t listed;
	struct cli_near near; /* the tracepoints nearest a pattern that matched nothing */
};

/* A pattern without glob characters matches anywhere (perf list's words). */
static int ls_glob(const char *pattern, char *glob, size_t sz)
{
	int n;

	if (!pattern)
		n = snprintf(glob, sz, "*");
	else if (strpbrk(pattern, "*?["))
		n = snprintf(glob, sz, "%s", pattern);
	else
		n = snprintf(glob, sz, "*%s*", pattern);
	return n < 0 || (size_t)n >= sz ? -1 : 0;
}

/* SYS/NAME's fields, but the common_ ones: "    TYPE NAME[N]". */
static void ls_fields(const char *sys, const char *name)
{
	KAGG_OPTS(kagg_rb_events_opts, eo);
	const struct kagg_rb_format *fmt = NULL;
	struct kagg_rb_events *evs;
	char path[1024], *text = NULL;
	size_t len = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), LS_EVENTS "/%s/%s/format", sys, name);
	f = fopen(path, "re");
	if (!f)
		return;
	text = malloc(65536);
	if (text)
		len = fread(text, 1, 65535, f);
	fclose(f);
	evs = kagg_rb_events__new(&eo);
	if (text && evs && !kagg_rb_events__parse(evs, sys, text, len, &fmt) && fmt) {
		for (i = kagg_rb_format__nr_common(fmt); i < kagg_rb_format__nr_fields(fmt); i++) {
			const struct kagg_rb_field *fd = kagg_rb_format__field_at(fmt, i);

			if (fd->kind == KAGG_RB_FIELD_ARRAY)
				printf("    %s %s[%d]\n", fd->type, fd->name, fd->array_len);
			else
				printf("    %s %s\n", fd->type, fd->name);
		}
	}
	kagg_rb_events__free(evs);
	free(text);
}

static int ls_dirs(const struct dirent *d)
{
	return d->d_name[0] != '.' && d->d_type == DT_DIR;
}

/* Every tracepoint SYS:NAME matching a->glob, in name order. */
static int ls_tracepoints(struct ls_args *a)
{
	struct dirent **sys = NULL, **ev;
	char path[512], full[512];
	int ns, ne, i, j;

	ns = scandir(LS_EVENTS, &sys, ls_dirs, alphasort);
	if (ns < 0)
		return cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", LS_EVENTS, strerror(errno));
	for (i = 0; i < ns; i++) {
		snprintf(path, sizeof(path), LS_EVENTS "/%s", sys[i]->d_name);
		ne = scandir(path, &ev, ls_dirs, alphasort);
		for (j = 0; j < ne; j++) {
			snprintf(full, sizeof(full), "%s:%s", sys[i]->d_name, ev[j]->d_name);
			if (!fnmatch(a->glob, full, 0)) {
				printf("%s\n", full);
				if (a->fields)
					ls_fields(sys[i]->d_name, ev[j]->d_name);
				a->listed++;
			} else {
				cli_near_add(&a->near, full);
			}
			free(ev[j]);
		}
		if (ne >= 0)
			free(ev);
		free(sys[i]);
	}
	free(sys);
	return 0;
}

static int ls_print(void *ctx, const char *name)
{
	struct ls_args *a = ctx;

	printf("%s\n", name);
	a->listed++;
	return ferror(stdout) ? 1 : 0;
}

/* Functions: the kernel's matching a->glob, or BIN:glob's. */
static int ls_functions(struct ls_args *a)
{
	char pat[1024];
	int n;

	if (a->binary)
		snprintf(pat, sizeof(pat), "%s:%s", a->binary, a->glob);
	else
		snprintf(pat, sizeof(pat), "%s", a->glob);
	/* nothing matching is said once, at the end */
	n = kagg_funclat__list(pat, a->pid, ls_print, a, a->binary ? cli_log : NULL, NULL);
	if (n == -ENOENT && !a->binary)
		return 0;
	if (n < 0)
		return cli_logged
			       ? CLI_EXIT_FAIL
			       : cli_err(CLI_EXIT_FAIL, "cannot list '%s': %s", pat, strerror(-n));
	return 0;
}

static int list_main(int argc, char **argv)
{
	struct ls_args a = {};
	uint64_t pid;
	int c, ret = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":tfb:p:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			a.tracepoints = true;
			break;
		case 'f':
			a.functions = true;
			break;
		case 'b':
			a.binary = optarg;
			break;
		case 'p':
			if (cli_parse_range(optarg, 1, INT32_MAX, "pid", false, &pid))
				return CLI_EXIT_USAGE;
			a.pid = (int)pid;
			break;
		case 'v':
			a.fields = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_opt_near(c, argv, long_opts);
		}
	}
	if (optind + 1 < argc)
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s' (one PATTERN)",
			       argv[optind + 1]);
	if (a.binary && (a.tracepoints || a.functions))
		return cli_err(CLI_EXIT_USAGE, "-b lists BIN's functions: drop -t and -f");
	if (a.pid && !a.binary)
		return cli_err(CLI_EXIT_USAGE, "-p goes with -b (a library in the process's maps)");
	if (ls_glob(optind < argc ? argv[optind] : NULL, a.glob, sizeof(a.glob)))
		return cli_err(CLI_EXIT_USAGE, "PATTERN too long");
	if (!a.tracepoints && !a.functions && !a.binary)
		a.tracepoints = a.functions = true;
	if (CLI_PARSE_ONLY)
		return CLI_EXIT_OK;
	cli_near_init(&a.near, optind < argc ? argv[optind] : "");
	if (!a.binary) {
		int err = cli_mount_tracefs();

		if (err)
			return cli_err(CLI_EXIT_FAIL,
				       "tracefs is not mounted on /sys/kernel/tracing "
				       "and mounting it failed: %s (run as root, or mount -t "
				       "tracefs nodev /sys/kernel/tracing)",
				       strerror(-err));
	}
	if (a.tracepoints)
		ret = ls_tracepoints(&a);
	if (!ret && (a.functions || a.binary))
		ret = ls_functions(&a);
	if (!ret && !a.listed) {
		if (a.tracepoints && a.near.best[0])
			ret = cli_err(CLI_EXIT_FAIL, "nothing matches '%s'; did you mean %s?",
				      optind < argc ? argv[optind] : "", a.near.best);
		else
			ret = cli_err(CLI_EXIT_FAIL, "nothing matches '%s'",
				      optind < argc ? argv[optind] : "");
	}
	return ret ?: cli_output_done(0);
}

CLI_COMMAND(list, "tracepoints (and fields), kernel functions, a binary's functions", list_main);
