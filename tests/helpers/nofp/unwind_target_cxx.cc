// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * unwind_target's C++ twin (-O2 -fomit-frame-pointer): main -> unw::Chain::a(long)
 * -> unw::Chain::b(long) -> unw::Chain::c(long), the same arguments and protocol.
 */
#include "unwind_work.h"

namespace unw
{

struct Chain {
	bool sleep;

	__attribute__((noinline, noclone)) int c(long n)
	{
		return unw_work(sleep, n);
	}

	__attribute__((noinline, noclone)) int b(long n)
	{
		int r = c(n);

		__asm__ volatile("" : "+r"(r));
		return r + 1;
	}

	__attribute__((noinline, noclone)) int a(long n)
	{
		int r = b(n);

		__asm__ volatile("" : "+r"(r));
		return r + 1;
	}
};

} // namespace unw

UNW_MAIN((unw::Chain{ sleep != 0 }).a(n))
