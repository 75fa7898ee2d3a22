// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg run: a BPF object written with <kagg/bpf/kagg.bpf.h> as a kagg tool.
 * A thin CLI over kagg_prog__open() and kagg_session__snapshot().
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/prog.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg run [OPTIONS] PROG.bpf.o [INTERVAL [COUNT]]\n"
	"\n"
	"Load a BPF object written with <kagg/bpf/kagg.bpf.h> (docs/sdk.md), attach\n"
	"every program by its section name and print its aggregations: histograms,\n"
	"counters and stacks, keys printed from the object's BTF.\n"
	"\n"
	"      --set NAME=VALUE   set the object's const volatile global NAME (repeatable)\n"
	"      --attach TYPE      auto (default: tp_btf/fentry, else raw_tp/kprobe),\n"
	"                         tp_btf or raw_tp\n"
	"      --binary PATH      the binary of uprobes whose section names none\n"
	"                         (SEC(\"uprobe/:FUNC\"))\n"
	"      --func NAME        the function of uprobes whose section names none\n"
	"                         (SEC(\"uprobe\"), SEC(\"uretprobe\"))\n"
	"      --pid PID          uprobes in this process only\n"
	"      --tracepoint SYSTEM:EVENT\n"
	"                         the tracepoint of classic tracepoint programs whose\n"
	"                         section names none (SEC(\"tracepoint\"))\n"
	"      --mode MODE        agg (default: aggregate in the kernel), stream (one\n"
	"                         record per observation, aggregated here) or both\n"
	"                         (side by side, each path's cost in the meta)\n"
	"      --print            with --mode stream: print each record as ftrace text\n"
	"      --stream-bytes N   BPF ring buffer size (power of two, default 8388608)\n"
	"      --buckets B        log2 (default) or exp:S: the log2 histograms in\n"
	"                         exponential buckets of scale S (0..5), 2^S per octave\n"
	"  -f, --folded           stacks as folded lines (flamegraph.pl input)\n"
	"      --addrs            stack frames by address\n" CLI_COMMON_HELP
	"      --format svg|pprof a flame graph or a pprof profile of the stacks\n"
	"      --format heatmap   with -i: a heatmap SVG of the first histogram\n"
	"      --format html      a one-file report\n"
	"\n"
	"examples:\n"
	"  kagg run biolat.bpf.o -d 5\n"
	"  kagg run readsize.bpf.o --set comm=nginx 1 10\n"
	"  kagg run ulat.bpf.o --binary /usr/bin/myapp --func handle --unit msecs -i 1\n";

enum {
	OPT_SET = CLI_OPT_TOOL,
	OPT_BINARY,
	OPT_FUNC,
	OPT_TRACEPOINT,
};

static const struct option long_opts[] = {
	CLI_COMMON_LONGOPTS,
	CLI_STACKS_LONGOPTS,
	CLI_STREAM_LONGOPTS,
	{ "set", required_argument, NULL, OPT_SET },
	{ "binary", required_argument, NULL, OPT_BINARY },
	CLI_PID_LONGOPT,
	{ "func", required_argument, NULL, OPT_FUNC },
	{ "tracepoint", required_argument, NULL, OPT_TRACEPOINT },
	{},
};

struct run_args {
	struct cli_args c; /* first: what cli_parse fills */
	struct kagg_prog_opts o;
	const char *path;
	const char **sets;
	size_t nr_sets;
};

static int run_opt(struct cli_args *ca, int c, const char *arg)
{
	struct run_args *a = (struct run_args *)ca;
	const char **tmp;

	switch (c) {
	case OPT_SET:
		if (!strchr(arg, '=') || *arg == '=')
			return cli_err(CLI_EXIT_USAGE, "invalid --set '%s' (NAME=VALUE)", arg);
		tmp = realloc(a->sets, (a->nr_sets + 1) * sizeof(*tmp));
		if (!tmp)
			return cli_err(CLI_EXIT_FAIL, "out of memory");
		a->sets = tmp;
		a->sets[a->nr_sets++] = arg;
		return 0;
	case CLI_OPT_ATTACH:
		return cli_parse_attach(arg, &a->o.attach) ? CLI_EXIT_USAGE : 0;
	case OPT_BINARY:
		a->o.binary = arg;
		return 0;
	case OPT_FUNC:
		a->o.func = arg;
		return 0;
	case OPT_TRACEPOINT:
		a->o.tracepoint = arg;
		return 0;
	case 'p': /* --pid alone: -p is no option of run */
		return CLI_RANGE(arg, 1, INT32_MAX, "pid", false, &a->o.pid);
	}
	return -ENOENT;
}

static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct run_args *a = (struct run_args *)ca;
	int rc;

	if (optind >= argc)
		return cli_err(CLI_EXIT_USAGE, "which program? (kagg run PROG.bpf.o, see --help)");
	a->path = argv[optind];
	if (optind + 1 < argc) {
		rc = cli_positional_interval(argc - optind - 1, argv + optind + 1, &ca->cm);
		if (rc)
			return rc;
	}
	a->o.unit = ca->cm.unit;
	a->o.overhead = ca->cm.overhead;
	a->o.sets = a->sets;
	a->o.nr_sets = a->nr_sets;
	a->o.mode = ca->st.mode;
	a->o.stream_bytes = ca->st.stream_bytes;
	a->o.buckets = ca->st.buckets;
	a->o.exp_scale = ca->st.exp_scale;
	return cli_folded_ready(&ca->cm)
		       ?: cli_pictures(&ca->cm,
				       CLI_PIC_BIT(CLI_PIC_HTML) | CLI_PIC_BIT(CLI_PIC_HEATMAP) |
					       CLI_PIC_BIT(CLI_PIC_SVG) |
					       CLI_PIC_BIT(CLI_PIC_PPROF),
				       false, false);
}

static struct kagg_session *open_session(struct cli_args *ca)
{
	struct run_args *a = (struct run_args *)ca;

	ca->banner = "Running";
	return kagg_prog__open(a->path, &a->o);
}

static const struct cli_parser parser =
	CLI_PARSER(CLI_COMMON_SHORTOPTS "f", run_opt, finish_args, open_session,
		   CLI_OPERANDS | CLI_PICTURES | CLI_STREAMS);

static int run_main(int argc, char **argv)
{
	struct run_args a = { .o = { .sz = sizeof(a.o), .log = cli_log } };
	int ret;

	ret = cli_session_main(&parser, argc, argv, &a.c);
	free(a.sets);
	return ret;
}

CLI_COMMAND(run, "run your own BPF program written with <kagg/bpf/kagg.bpf.h>", run_main);
