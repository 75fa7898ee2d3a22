// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libstack_late.so: code that stack_target loads with dlopen() after it has run for a while,
 * so a tracer that read the process's maps at its first event has to read them again to name
 * these frames (bpf/proc_notes.bpf.h notes the process again when its executable mappings
 * grow).  Built with frame pointers, as stack_target is.
 */
#include <time.h>

/* The thread's CPU time, as stack_target's spin counts it. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

/* Keep the CPU busy for ms milliseconds of this thread's CPU time. */
__attribute__((noinline)) void kagg_late_spin(unsigned int ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + i;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void late_once(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
	__asm__ volatile("" ::: "memory");
}

/* Sleep n times ms milliseconds. */
__attribute__((noinline)) void kagg_late_nap(unsigned int ms, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		late_once(ms);
	__asm__ volatile("" ::: "memory");
}
