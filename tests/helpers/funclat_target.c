// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * funclat_target: functions with known latencies for the funclat tests.
 *
 *	funclat_target [--lead-ms MS] CMD [ARG]
 *	  sleep20 N    call target_sleep_20ms() N times (20 ms each)
 *	  sleep5 N     call target_sleep_5ms() N times
 *	  recurse D    target_recurse(D - 1): D nested levels; level k (0 innermost)
 *	               returns 4.5 * 2^k ms after it was entered (low in its log2 bucket,
 *	               so scheduling delays do not push it into the next one)
 *	  nop N        call target_nop() N times (probe cost benchmark)
 *	  nested N     target_outer() N times: 2 ms, target_sleep_5ms(), 2 ms (9 ms)
 * --lead-ms sleeps first (in main, untraced), so a tracer can attach.
 *
 * With KAGG_TARGET_TIMES=FILE, each call of a sleeping function appends
 * "FUNCTION PID NS" to FILE: its wall time, measured around the call by its
 * caller.  What a tracer measures of the call (entry to return) lies within
 * it: the tests' ground truth, whatever the scheduler did to the sleeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static FILE *times;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Call fn(), noting its wall time under name when KAGG_TARGET_TIMES asks. */
static void timed(const char *name, void (*fn)(void))
{
	unsigned long long t0 = now_ns();

	fn();
	if (times)
		fprintf(times, "%s %d %llu\n", name, (int)getpid(), now_ns() - t0);
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000L };

	while (nanosleep(&ts, &ts))
		;
}

static void sleep_ms(unsigned int ms)
{
	sleep_us(ms * 1000);
}

__attribute__((noinline, used)) void target_sleep_20ms(void)
{
	sleep_ms(20);
	sink++;
}

__attribute__((noinline, used)) void target_sleep_5ms(void)
{
	sleep_ms(5);
	sink++;
}

__attribute__((noinline, used)) void target_nop(void)
{
	sink++;
}

void target_recurse(unsigned int level);

/* target_recurse(level), its wall time noted as timed() notes a call's. */
static void timed_recurse(unsigned int level)
{
	unsigned long long t0 = now_ns();

	target_recurse(level);
	if (times)
		fprintf(times, "target_recurse %d %llu\n", (int)getpid(), now_ns() - t0);
}

/* Level k sleeps 4.5 ms (k = 0) or 4.5 * 2^(k-1) ms before descending: it lasts 4.5 * 2^k ms. */
__attribute__((noinline, used)) void target_recurse(unsigned int level)
{
	sleep_us(level ? 4500u << (level - 1) : 4500);
	if (level)
		timed_recurse(level - 1);
	sink++; /* not a tail call: every level returns through its own frame */
}

__attribute__((noinline, used)) void target_outer(void)
{
	sleep_ms(2);
	timed("target_sleep_5ms", target_sleep_5ms);
	sleep_ms(2);
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	int a = 1;

	if (argc > 2 && !strcmp(argv[1], "--lead-ms")) {
		sleep_ms(atoi(argv[2]));
		a = 3;
	}
	if (argc < a + 2) {
		fprintf(stderr, "usage: funclat_target [--lead-ms MS] "
				"sleep20|sleep5|recurse|nop|nested N\n");
		return 2;
	}
	n = strtoul(argv[a + 1], NULL, 0);
	if (getenv("KAGG_TARGET_TIMES")) {
		times = fopen(getenv("KAGG_TARGET_TIMES"), "a");
		if (!times) {
			perror("funclat_target: KAGG_TARGET_TIMES");
			return 2;
		}
	}
	if (!strcmp(argv[a], "sleep20")) {
		for (i = 0; i < n; i++)
			timed("target_sleep_20ms", target_sleep_20ms);
	} else if (!strcmp(argv[a], "sleep5")) {
		for (i = 0; i < n; i++)
			timed("target_sleep_5ms", target_sleep_5ms);
	} else if (!strcmp(argv[a], "recurse")) {
		if (n)
			timed_recurse(n - 1);
	} else if (!strcmp(argv[a], "nop")) {
		for (i = 0; i < n; i++)
			target_nop();
	} else if (!strcmp(argv[a], "nested")) {
		for (i = 0; i < n; i++)
			timed("target_outer", target_outer);
	} else {
		fprintf(stderr, "funclat_target: unknown command '%s'\n", argv[a]);
		return 2;
	}
	if (times)
		fclose(times);
	return 0;
}
