// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg report: print a trace.dat (v6; what `kagg record` writes) as the
 * kernel's `trace` text, every CPU merged in timestamp order.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include <kagg/tracedat.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg report [--cpu N] FILE.dat\n"
	"\n"
	"Print the events of a trace-cmd trace.dat (version 6) as lines of the\n"
	"kernel's trace file: comm-pid [cpu] flags timestamp: event: fields.\n"
	"Lost events are shown where they happened (CPU:N [LOST M EVENTS]).\n"
	"\n"
	"      --cpu N            only CPU N\n"
	"  -h, --help             this text\n";

static const struct option long_opts[] = {
	CLI_CPU_LONGOPT,
	CLI_HELP_LONGOPT,
	{},
};

struct report_args {
	struct cli_args c; /* first: what cli_parse fills */
	int cpu;	   /* --cpu N; -1: every CPU */
};

/* --cpu, report's one option (cli_parser.opt). */
static int report_opt(struct cli_args *ca, int c, const char *arg)
{
	if (c != CLI_OPT_CPU)
		return -ENOENT;
	return CLI_RANGE(arg, 0, 4095, "--cpu", false, &((struct report_args *)ca)->cpu);
}

static const struct cli_parser parser = CLI_PARSER(":h", report_opt, NULL, NULL, CLI_OPERANDS);

static int report_main(int argc, char **argv)
{
	KAGG_OPTS(kagg_tracedat_opts, o, .error_offset = NULL);
	struct report_args a = { .cpu = -1 };
	uint64_t where = UINT64_MAX;
	struct kagg_tracedat *t;
	int ret;
	long n;

	ret = cli_parse(&parser, argc, argv, &a.c);
	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret;
	if (optind != argc - 1)
		return cli_err(CLI_EXIT_USAGE, "give exactly one FILE.dat (see --help)");
	o.error_offset = &where;
	t = kagg_tracedat__open(argv[optind], &o);
	if (!t && errno == EINVAL && where != UINT64_MAX)
		return cli_err(CLI_EXIT_FAIL, "%s: not a valid trace.dat: malformed at offset %llu",
			       argv[optind], (unsigned long long)where);
	if (!t)
		return cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", argv[optind],
			       errno == EINVAL	  ? "not a valid trace.dat v6"
			       : errno == ENOTSUP ? "unsupported trace.dat variant (kagg reads v6, "
						    "64-bit little-endian, uncompressed)"
			       : errno == ESPIPE  ? "not a regular file (a FIFO, a socket or a "
						    "device): kagg report maps its file"
						  : strerror(errno));
	if (a.cpu >= kagg_tracedat__nr_cpus(t)) {
		int nr_cpus = kagg_tracedat__nr_cpus(t); /* read before t is freed */

		kagg_tracedat__free(t);
		return cli_err(CLI_EXIT_USAGE, "--cpu %d: the file has %d CPUs", a.cpu, nr_cpus);
	}
	signal(SIGPIPE, SIG_IGN);
	n = kagg_tracedat__fprint(t, stdout, a.cpu);
	where = kagg_tracedat__error_offset(t);
	kagg_tracedat__free(t);
	if (n == -EINVAL && where != UINT64_MAX) {
		if (cli_output_done(0))
			return CLI_EXIT_FAIL;
		return cli_err(CLI_EXIT_FAIL, "%s: malformed page or record at offset %llu",
			       argv[optind], (unsigned long long)where);
	}
	if (n < 0)
		return cli_err(CLI_EXIT_FAIL, "%s: malformed page (%s)", argv[optind],
			       strerror((int)-n));
	return cli_output_done(0);
}

CLI_COMMAND(report, "print a trace.dat as kernel trace text", report_main);
