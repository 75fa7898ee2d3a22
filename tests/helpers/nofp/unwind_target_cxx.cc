// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * unwind_target's C++ twin (-O2 -fomit-frame-pointer): main -> unw::Chain::a(long)
 * -> unw::Chain::b(long) -> unw::Chain::c(long), the same arguments and protocol.
 */
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace unw
{

static volatile unsigned long sink;

struct Chain {
	bool sleep;

	static double cpu_ms()
	{
		struct timespec ts;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	}

	__attribute__((noinline)) int c(long n)
	{
		struct timespec ts = { 0, 2000000 };
		double end = cpu_ms() + n;
		unsigned long x = (unsigned long)n;
		long i;

		if (sleep) {
			for (i = 0; i < n; i++)
				nanosleep(&ts, nullptr);
			return (int)i;
		}
		do {
			for (i = 0; i < 200000; i++)
				x = x * 6364136223846793005UL + 1442695040888963407UL;
			sink = x;
		} while (cpu_ms() < end);
		return (int)(x & 1);
	}

	__attribute__((noinline)) int b(long n)
	{
		int r = c(n);

		__asm__ volatile("" : "+r"(r));
		return r + 1;
	}

	__attribute__((noinline)) int a(long n)
	{
		int r = b(n);

		__asm__ volatile("" : "+r"(r));
		return r + 1;
	}
};

} // namespace unw

int main(int argc, char **argv)
{
	char b;
	int r;

	if (argc != 3 || (strcmp(argv[1], "spin") && strcmp(argv[1], "sleep")))
		return 2;
	if (write(1, "ready\n", 6) != 6 || read(0, &b, 1) != 1)
		return 1;
	unw::Chain ch = { !strcmp(argv[1], "sleep") };
	r = ch.a(atol(argv[2]));
	if (write(1, "done\n", 5) != 5)
		return 1;
	while (read(0, &b, 1) > 0)
		;
	return r < 0;
}
