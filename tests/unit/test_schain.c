// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The streamed switch chain (user/stream/stream.c's schain), the userspace twin of
 * kagg_chain_break(): switch sequences worked out by hand, each CPU's switches starting
 * from the task the previous one went to, with the breaks a skipped switch makes, a lost
 * record of ours (unknown, no break) and a chain forgotten at a new attach.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream/stream.h"
#include "testutil.h"
#include "unit_util.h"

struct sw {
	uint32_t cpu;
	bool lost;
	int32_t prev, next;
	bool brk; /* expected: a break */
};

static void run(struct schain *ch, const struct sw *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t before = ch->breaks;

		if (schain_break(ch, s[i].cpu, s[i].lost, s[i].prev, s[i].next) != s[i].brk)
			fail_msg("switch %zu (cpu %u, %d -> %d): break %d expected", i, s[i].cpu,
				 s[i].prev, s[i].next, s[i].brk);
		assert_int_equal(ch->breaks - before, s[i].brk);
	}
}

/* Unbroken chains on two CPUs, idle (pid 0) included: no break. */
static void test_chains_hold(void **state)
{
	static const struct sw s[] = {
		{ 0, false, 0, 100, false },   { 1, false, 0, 200, false },
		{ 0, false, 100, 0, false },   { 1, false, 200, 300, false },
		{ 0, false, 0, 200, false },   { 1, false, 300, 0, false },
		{ 0, false, 200, 100, false }, { 1, false, 0, 300, false },
	};
	struct schain ch;

	assert_int_equal(schain_init(&ch, 2), 0);
	run(&ch, s, TU_NR(s));
	assert_int_equal(ch.breaks, 0);
	schain_fini(&ch);
}

/*
 * A switch not delivered (100 -> 200 on CPU 0): the next one starts from 200, not from
 * 100: one break.  The first switch of a CPU has nothing to chain to.
 */
static void test_skipped_switch_breaks(void **state)
{
	static const struct sw s[] = {
		{ 0, false, 7, 100, false }, /* first on CPU 0: unknown before */
		{ 0, false, 200, 0, true },  /* 100 -> 200 was not delivered */
		{ 0, false, 0, 300, false }, { 1, false, 5, 6, false },
		{ 1, false, 6, 5, false },   { 1, false, 9, 5, true },
	};
	struct schain ch;

	assert_int_equal(schain_init(&ch, 2), 0);
	run(&ch, s, TU_NR(s));
	assert_int_equal(ch.breaks, 2);
	schain_fini(&ch);
}

/* After a lost record of ours the chain is unknown: the mismatch is no break, what follows chains.
 */
static void test_lost_record_is_no_break(void **state)
{
	static const struct sw s[] = {
		{ 0, false, 0, 100, false },
		{ 0, true, 300, 0, false }, /* 100 -> 300 lost with our records */
		{ 0, false, 0, 400, false },
		{ 0, false, 500, 0, true },
	};
	struct schain ch;

	assert_int_equal(schain_init(&ch, 1), 0);
	run(&ch, s, TU_NR(s));
	assert_int_equal(ch.breaks, 1);
	schain_fini(&ch);
}

/* Forgotten (attached again after a detach): the switches missed meanwhile are no break. */
static void test_forget(void **state)
{
	static const struct sw before[] = { { 0, false, 0, 100, false },
					    { 1, false, 0, 200, false } };
	static const struct sw after[] = { { 0, false, 300, 0, false },
					   { 1, false, 400, 0, false },
					   { 0, false, 0, 300, false },
					   { 0, false, 0, 0, true } };
	struct schain ch;

	assert_int_equal(schain_init(&ch, 2), 0);
	run(&ch, before, TU_NR(before));
	schain_forget(&ch);
	run(&ch, after, TU_NR(after));
	assert_int_equal(ch.breaks, 1);
	schain_fini(&ch);
	/* fini leaves nothing to forget */
	schain_forget(&ch);
}

UU_MAIN(cmocka_unit_test(test_chains_hold), cmocka_unit_test(test_skipped_switch_breaks),
	cmocka_unit_test(test_lost_record_is_no_break), cmocka_unit_test(test_forget))
