// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg: the dispatcher.  `kagg CMD [ARGS]` runs the subcommand registered
 * with KAGG_COMMAND() in tools/CMD.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kagg/kagg.h>
#include "cli.h"

extern const struct kagg_cmd __start_kagg_cmds[];
extern const struct kagg_cmd __stop_kagg_cmds[];

const char *cli_prog = "kagg";
volatile sig_atomic_t cli_stop;
int cli_verbose;
int cli_logged;

int cli_err(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > 1e7)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_int_list(const char *s, int **out, size_t *n)
{
	int *v = NULL, *tmp;
	size_t cnt = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		long x;

		errno = 0;
		x = strtol(p, &end, 10);
		if (errno || end == p || x <= 0 || x > INT32_MAX || (*end && *end != ','))
			goto bad;
		tmp = realloc(v, (cnt + 1) * sizeof(*v));
		if (!tmp)
			goto bad;
		v = tmp;
		v[cnt++] = (int)x;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	*out = v;
	*n = cnt;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

static void on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cli_sleep(double seconds)
{
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	end.tv_sec = now.tv_sec + (time_t)seconds;
	end.tv_nsec = now.tv_nsec + (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!cli_stop) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL);

		if (err != EINTR)
			break;
	}
}

void cli_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level <= (cli_verbose ? KAGG_LOG_DEBUG : KAGG_LOG_WARN)) {
		fflush(stdout);
		fprintf(stderr, "%s: %s\n", cli_prog, msg);
	}
	if (level == KAGG_LOG_WARN)
		cli_logged = 1;
}

void cli_route_libbpf_log(void)
{
	kagg_libbpf_set_log(cli_verbose ? cli_log : NULL, NULL);
}

static void usage(FILE *f)
{
	const struct kagg_cmd *c;

	fprintf(f, "usage: kagg COMMAND [OPTIONS]   (kagg COMMAND --help for details)\n\n"
		   "kagg %s: eBPF in-kernel aggregation toolkit\n\ncommands:\n",
		kagg_version());
	for (c = __start_kagg_cmds; c < __stop_kagg_cmds; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
}

int main(int argc, char **argv)
{
	static char prog[64];
	const struct kagg_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return KAGG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return KAGG_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("kagg %s\n", kagg_version());
		return KAGG_EXIT_OK;
	}
	for (c = __start_kagg_cmds; c < __stop_kagg_cmds; c++) {
		if (strcmp(c->name, argv[1]))
			continue;
		snprintf(prog, sizeof(prog), "kagg %s", c->name);
		cli_prog = prog;
		return c->main(argc - 1, argv + 1);
	}
	return cli_err(KAGG_EXIT_USAGE, "unknown command '%s' (kagg --help lists them)", argv[1]);
}
