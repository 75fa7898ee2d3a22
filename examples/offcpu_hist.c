// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * offcpu_hist: the smallest useful libkagg program.  It prints a
 * system-wide off-CPU time histogram every second for N seconds, like
 * `kagg offcpu -i 1 -d N`, using only the public API:
 *
 *	kagg_offcpu__open()          load the BPF programs (embedded in libkagg)
 *	kagg_session__attach()       start counting
 *	kagg_session__snapshot(RESET) read the last second exactly, start the next
 *	kagg_snapshot__print()       BCC-style text (or JSON) to any FILE *
 *	kagg_session__destroy()      detach and unload everything
 *
 * Build:  cc offcpu_hist.c $(pkg-config --cflags --libs kagg) -o offcpu_hist
 * Run:    sudo ./offcpu_hist 5
 *
 * With CLI_EXIT_AFTER_ATTACH=1 in the environment it prints the
 * CLOCK_REALTIME time at which the programs were attached and exits
 * (tests/bench/startup.sh uses this to time start-up).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kagg/kagg.h>

/* Library messages arrive here, with the ctx pointer given in the opts. */
static void log_cb(void *ctx, enum kagg_log_level level, const char *msg)
{
	const char *prog = ctx;

	if (level == KAGG_LOG_WARN)
		fprintf(stderr, "%s: %s\n", prog, msg);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	struct kagg_session *s;
	int err, i;

	/* Every opts struct starts with its size: KAGG_OPTS zeroes it and sets sz. */
	KAGG_OPTS(kagg_offcpu_opts, opts, .unit = KAGG_UNIT_USECS, .log = log_cb,
		  .log_ctx = argv[0]);

	/* Open and load; NULL with errno set on failure (EPERM: run as root). */
	s = kagg_offcpu__open(&opts);
	if (!s) {
		fprintf(stderr, "%s: opening offcpu: %s\n", argv[0], strerror(errno));
		return 1;
	}
	/* int returns are 0 or -errno. */
	err = kagg_session__attach(s);
	if (err) {
		fprintf(stderr, "%s: attaching: %s\n", argv[0], strerror(-err));
		kagg_session__destroy(s);
		return 1;
	}
	if (getenv("CLI_EXIT_AFTER_ATTACH")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		printf("attached %lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
		fflush(stdout);
		_exit(0); /* the kernel detaches everything when the process ends */
	}

	for (i = 0; i < seconds; i++) {
		struct kagg_snapshot *snap;

		sleep(1);
		/* KAGG_SNAP_RESET: this second's events, each in exactly one snapshot. */
		snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
		if (!snap) {
			fprintf(stderr, "%s: snapshot: %s\n", argv[0], strerror(errno));
			break;
		}
		/* NULL print opts: text, with the "# ..." meta header lines. */
		kagg_snapshot__print(snap, stdout, NULL);
		fflush(stdout);
		kagg_snapshot__free(snap);
	}

	kagg_session__destroy(s);
	return 0;
}
