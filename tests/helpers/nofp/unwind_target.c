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
#include "unwind_work.h"

__attribute__((noinline)) int unw_c(int sleep, long n)
{
	return unw_work(sleep, n);
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

UNW_MAIN(unw_a(sleep, n))
