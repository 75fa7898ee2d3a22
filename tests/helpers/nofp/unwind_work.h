/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What unwind_target and its C++ twin share: the work of the chain's leaf, inlined into it
 * so that the leaf stays the frame samples land in, and the stdin/stdout protocol of main
 * (unwind_target.c says it).  C and C++.
 */
#ifndef KAGG_UNWIND_WORK_H
#define KAGG_UNWIND_WORK_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long unw_sink;

static double unw_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sleep 2 ms n times (sleep), else spin n ms of CPU time. */
static inline __attribute__((always_inline)) int unw_work(int sleep, long n)
{
	struct timespec ts = { 0, 2000000 };
	double end = unw_cpu_ms() + n;
	unsigned long x = (unsigned long)n;
	long i;

	if (sleep) {
		for (i = 0; i < n; i++)
			nanosleep(&ts, NULL);
		return (int)i;
	}
	do {
		for (i = 0; i < 200000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		unw_sink = x;
	} while (unw_cpu_ms() < end);
	return (int)(x & 1);
}

/* main's start: "spin MS" or "sleep N" into *sleep and *n, "ready", a byte read; 0 or an exit code.
 */
static int unw_start(int argc, char **argv, int *sleep, long *n)
{
	char b;

	if (argc != 3 || (strcmp(argv[1], "spin") && strcmp(argv[1], "sleep")))
		return 2;
	if (write(1, "ready\n", 6) != 6 || read(0, &b, 1) != 1)
		return 1;
	*sleep = !strcmp(argv[1], "sleep");
	*n = atol(argv[2]);
	return 0;
}

/* main's end once the chain returned r: "done", then stdin read to its end; the exit code. */
static int unw_finish(int r)
{
	char b;

	if (write(1, "done\n", 5) != 5)
		return 1;
	while (read(0, &b, 1) > 0)
		;
	return r < 0;
}

/* The targets' main: the protocol around CHAIN, a call of the chain's top on sleep and n. */
#define UNW_MAIN(CHAIN)                                  \
	int main(int argc, char **argv)                  \
	{                                                \
		int sleep, ret;                          \
		long n;                                  \
                                                         \
		ret = unw_start(argc, argv, &sleep, &n); \
		return ret ? ret : unw_finish(CHAIN);    \
	}

#endif /* KAGG_UNWIND_WORK_H */
