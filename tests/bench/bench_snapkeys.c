// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The cost of one read-and-reset snapshot of many keys: `kagg hist
 * syscalls:sys_enter_lseek offset --key offset --filter 'fd == 987'` while this
 * process seeks its fd 987 (/dev/zero) to 0 .. KEYS - 1 (KEYS distinct keys, one value each), then
 * one snapshot with KAGG_SNAP_RESET, timed; ROUNDS rounds, the median printed
 * with the possible CPUs (the figure to compare between boots of one kernel
 * with few and many possible CPUs).  Checks its ground truth: every round's
 * snapshot has exactly KEYS histograms of one value each (exit 1 otherwise).
 *
 *   bench_snapkeys [KEYS [ROUNDS]]      (root; 10000 keys, 5 rounds)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <kagg/kagg.h>

static unsigned long long snk_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int snk_cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long keys = argc > 1 ? atol(argv[1]) : 10000, rounds = argc > 2 ? atol(argv[2]) : 5;
	unsigned long long *ns;
	struct kagg_session *s;
	char filter[64];
	long r, i;
	int fd, bad = 0;

	if (keys < 1 || rounds < 1 || keys > 10240)
		return fprintf(stderr, "usage: bench_snapkeys [KEYS (<= 10240) [ROUNDS]]\n"), 2;
	fd = open("/dev/zero", O_RDONLY);
	/* an fd number no other process is likely to seek (the filter cannot take a pid too) */
	if (fd >= 0 && dup2(fd, 987) == 987) {
		close(fd);
		fd = 987;
	}
	ns = calloc(rounds, sizeof(*ns));
	if (fd < 0 || !ns)
		return perror("bench_snapkeys"), 2;
	snprintf(filter, sizeof(filter), "fd == %d", fd);
	{
		KAGG_OPTS(kagg_field_hist_opts, o, .event = "syscalls:sys_enter_lseek",
			  .field = "offset", .key_field = "offset", .filter = filter);

		s = kagg_field_hist__open(&o);
	}
	if (!s || kagg_session__attach(s))
		return fprintf(stderr, "bench_snapkeys: cannot open or attach\n"), 2;
	for (r = 0; r < rounds; r++) {
		struct kagg_snapshot *snap;
		unsigned long long t0;
		size_t n, total = 0;

		for (i = 0; i < keys; i++)
			lseek(fd, i, SEEK_SET);
		t0 = snk_now_ns();
		snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
		ns[r] = snk_now_ns() - t0;
		if (!snap)
			return fprintf(stderr, "bench_snapkeys: snapshot failed\n"), 2;
		n = kagg_snapshot__hist_cnt(snap);
		for (i = 0; i < (long)n; i++)
			total += kagg_snapshot__hist(snap, i)->total;
		if (n != (size_t)keys || total != (size_t)keys) {
			fprintf(stderr, "round %ld: %zu keys, %zu values, want %ld of each\n", r, n,
				total, keys);
			bad = 1;
		}
		kagg_snapshot__free(snap);
	}
	kagg_session__destroy(s);
	qsort(ns, rounds, sizeof(*ns), snk_cmp);
	printf("snapshot of %ld keys, %d possible CPUs: median %.2f ms (%.0f ns/key), "
	       "min %.2f ms, max %.2f ms over %ld rounds\n",
	       keys, libbpf_num_possible_cpus(), ns[rounds / 2] / 1e6,
	       (double)ns[rounds / 2] / keys, ns[0] / 1e6, ns[rounds - 1] / 1e6, rounds);
	free(ns);
	close(fd);
	return bad;
}
