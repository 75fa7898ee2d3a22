// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stack_target: a short-lived C++ process with known, namespaced functions, for the stack
 * tests (demangled frames, and symbols of a process that exits before the tool reads them).
 *
 *	stack_target [--lead-ms MS] spin MS    kagg_test::Spinner::spin(unsigned int) keeps
 *	                                       the CPU busy for MS ms
 *	stack_target [--lead-ms MS] nap MS N   kagg_test::Sleeper::nap(unsigned int, unsigned int)
 *	                                       sleeps N times MS ms
 * then exits.  --lead-ms sleeps first (in main), so a tracer can attach.
 *
 * Built with frame pointers: a user stack captured in spin() reads spin, main, ...; one
 * captured in the sleep syscall reads clock_nanosleep, nap, main, ... (unwinding from libc's
 * syscall wrapper, which keeps no frame, skips its direct caller: Sleeper::once).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace kagg_test
{

static double now_ms()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

class Spinner
{
public:
	__attribute__((noinline)) void spin(unsigned int ms)
	{
		double end = now_ms() + ms;

		while (now_ms() < end)
			for (int i = 0; i < 10000; i++)
				sink_ = sink_ * 31 + i;
	}

private:
	volatile unsigned long sink_ = 0;
};

class Sleeper
{
public:
	__attribute__((noinline)) void nap(unsigned int ms, unsigned int n)
	{
		for (unsigned int i = 0; i < n; i++)
			once(ms);
		__asm__ volatile("" ::: "memory");
	}

private:
	__attribute__((noinline)) void once(unsigned int ms)
	{
		sleep_ms(ms);
		__asm__ volatile("" ::: "memory");
	}
};

} // namespace kagg_test

static int usage()
{
	std::fputs("usage: stack_target [--lead-ms MS] spin MS | nap MS N\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > 2 && !std::strcmp(argv[1], "--lead-ms")) {
		kagg_test::sleep_ms(std::atoi(argv[2]));
		i = 3;
	}
	if (argc - i == 2 && !std::strcmp(argv[i], "spin")) {
		kagg_test::Spinner s;

		s.spin(std::atoi(argv[i + 1]));
		return 0;
	}
	if (argc - i == 3 && !std::strcmp(argv[i], "nap")) {
		kagg_test::Sleeper s;

		s.nap(std::atoi(argv[i + 1]), std::atoi(argv[i + 2]));
		return 0;
	}
	return usage();
}
