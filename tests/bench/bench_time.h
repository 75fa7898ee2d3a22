/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Timing and pinning helpers shared by the compiled benchmarks. */
#ifndef KAGG_BENCH_TIME_H
#define KAGG_BENCH_TIME_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

static inline double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline uint64_t mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* CPU time of the calling thread, ns: what it cost, not counting preemption. */
static inline double thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The same two clocks in seconds. */
static inline double now_s(void)
{
	return now_ns() / 1e9;
}

static inline double thread_cpu_s(void)
{
	return thread_ns() / 1e9;
}

/* Pin the calling thread to cpu (cpu < 0: leave it free). */
static inline void pin(int cpu)
{
	cpu_set_t s;

	if (cpu < 0)
		return;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

#endif
