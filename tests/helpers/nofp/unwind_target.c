// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Built with -O2 -fomit-frame-pointer (tests/bpf/test_unwind.c): a known chain
 * main -> unw_a -> unw_b -> unw_c with the work in the leaf, in code that keeps no frame
 * pointer, so only unwind tables find the callers.
 *
 *   unwind_target spin MS     unw_c spins MS ms of CPU time
 *   unwind_target sleep N     unw_c sleeps 2 ms, N times
 *
 * Protocol on stdin/stdout: it writes "ready\n" once loaded, waits for a byte on stdin to
 * start, writes "done\n" when the chain returned, then waits for stdin to close to exit (so
 * a test can snapshot before the exit path runs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) int unw_c(int sleep, long n)
{
	struct timespec ts = { 0, 2000000 };
	double end = cpu_ms() + n;
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
		sink = x;
	} while (cpu_ms() < end);
	return (int)(x & 1);
}

__attribute__((noinline)) int unw_b(int sleep, long n)
{
	int r = unw_c(sleep, n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) int unw_a(int sleep, long n)
{
	int r = unw_b(sleep, n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

int main(int argc, char **argv)
{
	char b;
	int r;

	if (argc != 3 || (strcmp(argv[1], "spin") && strcmp(argv[1], "sleep")))
		return 2;
	if (write(1, "ready\n", 6) != 6 || read(0, &b, 1) != 1)
		return 1;
	r = unw_a(!strcmp(argv[1], "sleep"), atol(argv[2]));
	if (write(1, "done\n", 5) != 5)
		return 1;
	while (read(0, &b, 1) > 0)
		;
	return r < 0;
}
