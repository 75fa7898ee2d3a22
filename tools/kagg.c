// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg: the dispatcher.  `kagg CMD [ARGS]` runs the subcommand registered
 * with CLI_COMMAND() in tools/CMD.c.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <kagg/kagg.h>
#include "cli.h"

static void usage(FILE *f)
{
	const struct cli_cmd *c;

	fprintf(f,
		"usage: kagg COMMAND [OPTIONS]   (kagg COMMAND --help for details)\n\n"
		"kagg %s: eBPF in-kernel aggregation toolkit\n\ncommands:\n",
		kagg_version());
	for (c = __start_cli_cmds; c < __stop_cli_cmds; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
}

/* The command's exit code; a closed pipe ends kagg as it ends cat(1), by SIGPIPE. */
static int done(int rc)
{
	if (rc == CLI_EXIT_PIPE) {
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	return rc;
}

/* An unknown command: one line, naming the nearest command when one is near. */
static int unknown(const char *name)
{
	const struct cli_cmd *c;
	struct cli_near n;

	cli_near_init(&n, name);
	for (c = __start_cli_cmds; c < __stop_cli_cmds; c++)
		cli_near_add(&n, c->name);
	if (n.best[0])
		return cli_err(CLI_EXIT_USAGE,
			       "unknown command '%s'; did you mean '%s'? (kagg "
			       "--help lists them)",
			       name, n.best);
	return cli_err(CLI_EXIT_USAGE, "unknown command '%s' (kagg --help lists them)", name);
}

int main(int argc, char **argv)
{
	const struct cli_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* `kagg help CMD`: CMD's own help, as `kagg CMD --help` prints it. */
		static char help_opt[] = "--help";
		char *hargv[] = { argv[2], help_opt, NULL };

		c = cli_find_cmd(argv[2]);
		if (!c)
			return unknown(argv[2]);
		return cli_run_cmd(c, 2, hargv);
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("kagg %s\n", kagg_version());
		return CLI_EXIT_OK;
	}
	c = cli_find_cmd(argv[1]);
	if (c)
		return done(cli_run_cmd(c, argc - 1, argv + 1));
	return unknown(argv[1]);
}
