// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the tools' option parsers.  The input is a command line:
 * NUL-separated arguments, the first one a command name (`offcpu`, `rb`...).
 * The tools are linked in built with -DKAGG_CLI_PARSE_ONLY (tools/cli.h):
 * each command's main parses and checks its arguments, then returns before
 * loading anything.  `report` and `rb decode` are left out: their operands
 * are files they read, which the other targets cover.
 *
 * Seeds (corpus/fuzz_cli): the command lines of the docs and the tests, and
 * the usage errors the tests check.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_WRONLY);

	/* usage texts and one-line errors by the million; libFuzzer keeps its own stderr */
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		abort();
	close(fd);
	stderr = fopen("/dev/null", "we");
	if (!stderr)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const reset_argv[] = { "fuzz_cli", NULL };
	char *buf, *argv[MAX_ARGS + 1];
	const struct cli_cmd *c;
	int argc = 0, ret;
	size_t i;

	buf = malloc(size + 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = 0;
	argv[argc++] = buf;
	for (i = 0; i < size && argc < MAX_ARGS; i++)
		if (!buf[i])
			argv[argc++] = buf + i + 1;
	if (argc > 1 && argv[argc - 1] == buf + size)
		argc--; /* a trailing NUL ends the last argument */
	argv[argc] = NULL;
	c = cli_find_cmd(argv[0]);
	if (!c || !strcmp(c->name, "report") ||
	    (!strcmp(c->name, "rb") && argc > 1 && !strcmp(argv[1], "decode")))
		goto out;
	/* glibc's getopt keeps a pointer into the last argv unless optind is 0 */
	optind = 0;
	getopt(1, reset_argv, "");
	ret = cli_run_cmd(c, argc, argv);
	if (ret != CLI_EXIT_OK && ret != CLI_EXIT_FAIL && ret != CLI_EXIT_USAGE)
		abort();
out:
	free(buf);
	return 0;
}
