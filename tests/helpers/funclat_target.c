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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

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

/* Level k sleeps 4.5 ms (k = 0) or 4.5 * 2^(k-1) ms before descending: it lasts 4.5 * 2^k ms. */
__attribute__((noinline, used)) void target_recurse(unsigned int level)
{
	sleep_us(level ? 4500u << (level - 1) : 4500);
	if (level)
		target_recurse(level - 1);
	sink++; /* not a tail call: every level returns through its own frame */
}

__attribute__((noinline, used)) void target_outer(void)
{
	sleep_ms(2);
	target_sleep_5ms();
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
		fprintf(stderr, "usage: funclat_target [--lead-ms MS] sleep20|sleep5|recurse|nop|nested N\n");
		return 2;
	}
	n = strtoul(argv[a + 1], NULL, 0);
	if (!strcmp(argv[a], "sleep20")) {
		for (i = 0; i < n; i++)
			target_sleep_20ms();
	} else if (!strcmp(argv[a], "sleep5")) {
		for (i = 0; i < n; i++)
			target_sleep_5ms();
	} else if (!strcmp(argv[a], "recurse")) {
		if (n)
			target_recurse(n - 1);
	} else if (!strcmp(argv[a], "nop")) {
		for (i = 0; i < n; i++)
			target_nop();
	} else if (!strcmp(argv[a], "nested")) {
		for (i = 0; i < n; i++)
			target_outer();
	} else {
		fprintf(stderr, "funclat_target: unknown command '%s'\n", argv[a]);
		return 2;
	}
	return 0;
}
