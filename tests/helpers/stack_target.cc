// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stack_target: a short-lived C++ process with known, namespaced functions, for the stack
 * tests (demangled frames, and symbols of a process that exits before the tool reads them).
 *
 *	stack_target [--lead-ms MS] spin MS    kagg_test::Spinner::spin(unsigned int) keeps
 *	                                       the CPU busy for MS ms of its CPU time
 *	stack_target [--lead-ms MS] nap MS N   kagg_test::Sleeper::nap(unsigned int, unsigned int)
 *	                                       sleeps N times MS ms
 *	stack_target late LIB SPIN_MS NAP_MS N spin SPIN_MS and nap NAP_MS once as above, then
 *	                                       dlopen() LIB (libstack_late.so) and do the same in
 *	                                       it: kagg_late_spin(SPIN_MS), kagg_late_nap(NAP_MS, N)
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
#include <dlfcn.h>

namespace kagg_test
{

/*
 * The thread's CPU time: a spin of MS ms is MS ms on the CPU (what a CPU-clock sampler
 * sees) however long the machine's load stretches it in wall time.
 */
static double cpu_ms()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
		double end = cpu_ms() + ms;

		while (cpu_ms() < end)
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
	std::fputs("usage: stack_target [--lead-ms MS] spin MS | nap MS N\n"
		   "       stack_target late LIB SPIN_MS NAP_MS N\n",
		   stderr);
	return 2;
}

/* Run in the process for a while, then load more code and run in that. */
static int late(const char *lib, unsigned int spin_ms, unsigned int nap_ms, unsigned int n)
{
	kagg_test::Spinner s;
	kagg_test::Sleeper z;
	void (*late_spin)(unsigned int);
	void (*late_nap)(unsigned int, unsigned int);
	void *h;

	s.spin(spin_ms);
	z.nap(nap_ms, 1);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		std::fprintf(stderr, "stack_target: %s\n", dlerror());
		return 1;
	}
	late_spin = (void (*)(unsigned int))dlsym(h, "kagg_late_spin");
	late_nap = (void (*)(unsigned int, unsigned int))dlsym(h, "kagg_late_nap");
	if (!late_spin || !late_nap) {
		std::fprintf(stderr, "stack_target: %s\n", dlerror());
		return 1;
	}
	late_spin(spin_ms);
	late_nap(nap_ms, n);
	return 0;
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
	if (argc - i == 5 && !std::strcmp(argv[i], "late"))
		return late(argv[i + 1], std::atoi(argv[i + 2]), std::atoi(argv[i + 3]),
			    std::atoi(argv[i + 4]));
	return usage();
}
