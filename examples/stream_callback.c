// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stream_callback: receive every sched_switch as a record in a callback.
 *
 * In KAGG_MODE_STREAM the BPF program sends one record per context switch
 * through a BPF ring buffer instead of aggregating in the kernel.  The
 * library hands each record to kagg_offcpu_opts.on_switch from inside
 * kagg_session__poll(), on the calling thread.  This program counts the
 * records per CPU for N seconds, then prints the counts and what the meta
 * block says was delivered and dropped (dropped: the ring buffer was full
 * because we polled too slowly; the kernel never waits for us).
 *
 * Build:  cc stream_callback.c $(pkg-config --cflags --libs kagg) -o stream_callback
 * Run:    sudo ./stream_callback 2
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kagg/kagg.h>

#define MAX_CPUS 4096

/* Our callback state, passed back to us as ctx: no globals needed. */
struct counts {
	uint64_t per_cpu[MAX_CPUS];
	uint64_t total;
	int max_cpu;
};

static void on_switch(void *ctx, const struct kagg_sched_switch *ev)
{
	struct counts *c = ctx;

	if (ev->cpu < 0 || ev->cpu >= MAX_CPUS)
		return;
	c->per_cpu[ev->cpu]++;
	c->total++;
	if (ev->cpu > c->max_cpu)
		c->max_cpu = ev->cpu;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2, end;
	struct counts *c = calloc(1, sizeof(*c));
	const struct kagg_meta *m;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	int err, cpu;

	if (!c)
		return 1;
	c->max_cpu = -1;
	KAGG_OPTS(kagg_offcpu_opts, opts, .mode = KAGG_MODE_STREAM, .on_switch = on_switch,
		  .on_switch_ctx = c);

	s = kagg_offcpu__open(&opts);
	if (!s) {
		fprintf(stderr, "%s: opening offcpu: %s\n", argv[0], strerror(errno));
		free(c);
		return 1;
	}
	err = kagg_session__attach(s);
	if (err) {
		fprintf(stderr, "%s: attaching: %s\n", argv[0], strerror(-err));
		goto cleanup;
	}

	/* Poll until the time is up; each call runs on_switch for what arrived. */
	end = now_s() + seconds;
	while (now_s() < end) {
		int n = kagg_session__poll(s, 100);

		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "%s: poll: %s\n", argv[0], strerror(-n));
			err = n;
			goto cleanup;
		}
	}
	/* Stop the programs, drain what is still buffered, then read the meta. */
	kagg_session__detach(s);
	while (kagg_session__poll(s, 0) > 0)
		;
	snap = kagg_session__snapshot(s, 0);
	if (!snap) {
		err = -errno;
		fprintf(stderr, "%s: snapshot: %s\n", argv[0], strerror(errno));
		goto cleanup;
	}
	m = kagg_snapshot__meta(snap);

	printf("%-5s %12s\n", "CPU", "records");
	for (cpu = 0; cpu <= c->max_cpu; cpu++)
		if (c->per_cpu[cpu])
			printf("%-5d %12llu\n", cpu, (unsigned long long)c->per_cpu[cpu]);
	printf("callback total %llu\n", (unsigned long long)c->total);
	printf("meta: mode %s, seen %llu, delivered %llu, dropped %llu\n", m->mode,
	       (unsigned long long)m->stream_seen, (unsigned long long)m->stream_delivered,
	       (unsigned long long)m->stream_dropped);
	kagg_snapshot__free(snap);
cleanup:
	kagg_session__destroy(s);
	free(c);
	return err ? 1 : 0;
}
