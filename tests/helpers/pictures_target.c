// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pictures_target: known shapes for the picture tests.
 *
 *	pictures_target spin SECONDS   main calls spin_three() then spin_one() in a loop; they
 *	                               burn 30 and 10 ms of CPU (rounds calibrated): 3:1
 *	pictures_target nap SECONDS    main calls nap_long() (30 ms asleep) then nap_short()
 *	                               (10 ms): off-CPU time 3:1, nap_long the widest frame
 * The CPU time of a round is calibrated first (about 0.1 s).  Both leave after SECONDS.  The
 *functions are not inlined, and the build keeps frame pointers, so user stacks unwind through them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/syscall.h>

static volatile unsigned long sink;

/*
 * This thread's CPU time, by a system call made right here (inlined into the caller): the
 * C library's clock_gettime goes through the vDSO, whose frames keep no frame pointer, and a
 * frame-pointer walk from there skips the caller (the sample would land in main).
 */
static inline __attribute__((always_inline)) double cpu_ms(void)
{
	struct timespec ts;
#ifdef __x86_64__
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_clock_gettime), "D"((long)CLOCK_THREAD_CPUTIME_ID),
			   "S"(&ts)
			 : "rcx", "r11", "memory");
#else
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
#endif
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rounds of burn() per millisecond of CPU, measured once before the loop. */
static unsigned long per_ms;

static inline __attribute__((always_inline)) void burn(unsigned long rounds)
{
	for (unsigned long i = 0; i < rounds; i++)
		sink += i;
}

/*
 * Burn ms of this thread's CPU time: rounds of about 1/4 ms between clock reads (a system
 * call each), so under 1% of the samples land outside the caller's own code.
 */
#define SPIN(ms)                              \
	do {                                  \
		double end = cpu_ms() + (ms); \
		do                            \
			burn(per_ms / 4);     \
		while (cpu_ms() < end);       \
	} while (0)

/*
 * A function the stacks name: it does what, then a barrier, so its call is a real call and
 * the call it makes is not a tail call (its frame stays on the stack).
 */
#define FRAME(name, what)                          \
	__attribute__((noinline)) void name(void)  \
	{                                          \
		what;                              \
		__asm__ volatile("" ::: "memory"); \
	}

FRAME(spin_three, SPIN(30))
FRAME(spin_one, SPIN(10))

static void calibrate(void)
{
	unsigned long n = 1 << 16;
	double t0 = cpu_ms(), t;

	for (;;) {
		burn(n);
		t = cpu_ms() - t0;
		if (t >= 50)
			break;
		n *= 2;
		t0 = cpu_ms();
	}
	per_ms = n / t;
}

/*
 * Sleep ms: the system call made right here (inlined into the caller), so the user stack
 * captured at the switch starts in nap_long or nap_short.  Through libc, the first frame
 * would be clock_nanosleep, which keeps no frame pointer: a frame-pointer walk from it skips
 * its caller.
 */
static inline __attribute__((always_inline)) void nap_ms(unsigned int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
#ifdef __x86_64__
	long ret;

	do
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(&ts)
				 : "rcx", "r11", "memory");
	while (ret == -EINTR);
#else
	while (nanosleep(&ts, &ts))
		;
#endif
}

FRAME(nap_long, nap_ms(30))
FRAME(nap_short, nap_ms(10))

int main(int argc, char **argv)
{
	double end;

	if (argc != 3 || (strcmp(argv[1], "spin") && strcmp(argv[1], "nap"))) {
		fprintf(stderr, "usage: pictures_target spin|nap SECONDS\n");
		return 2;
	}
	if (argv[1][0] == 's')
		calibrate();
	end = wall_s() + atof(argv[2]);
	while (wall_s() < end) {
		if (argv[1][0] == 's') {
			spin_three();
			spin_one();
		} else {
			nap_long();
			nap_short();
		}
	}
	return 0;
}
