// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The streamed switch chain (user/stream/stream.c's schain), the userspace twin of
 * kagg_chain_break(): switch sequences worked out by hand, each CPU's switches starting
 * from the task the previous one went to, with the breaks a skipped switch makes, a lost
 * record of ours (unknown, no break) and a chain forgotten at a new attach.  Then
 * runqlat's stream consumer on hand-made records: the wait a break loses, counted only
 * for a task the filters pass, and a CPU's chain unknown after any lost record of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/types.h>
#include "shared/runqlat.h"
#include "builtin/runqlat_stream.h"
#include "stream/stream.h"
#include "testutil.h"
#include "unit_util.h"

struct sw {
	uint32_t cpu;
	bool lost;
	int32_t prev, next;
	bool brk; /* expected: a break */
};

/*
 * Switches s[0..n) on nr_cpus CPUs, each's break (or not) as expected, the chains forgotten
 * before switch forget_at (n: never); the breaks counted in all.
 */
static uint64_t run(int nr_cpus, const struct sw *s, size_t n, size_t forget_at)
{
	struct schain ch;
	uint64_t breaks;
	size_t i;

	assert_int_equal(schain_init(&ch, nr_cpus), 0);
	for (i = 0; i < n; i++) {
		uint64_t before = ch.breaks;

		if (i == forget_at)
			schain_forget(&ch);
		if (schain_break(&ch, s[i].cpu, s[i].lost, s[i].prev, s[i].next) != s[i].brk)
			fail_msg("switch %zu (cpu %u, %d -> %d): break %d expected", i, s[i].cpu,
				 s[i].prev, s[i].next, s[i].brk);
		assert_int_equal(ch.breaks - before, s[i].brk);
	}
	breaks = ch.breaks;
	schain_fini(&ch);
	schain_forget(&ch); /* fini leaves nothing to forget */
	return breaks;
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

	assert_int_equal(run(2, s, TU_NR(s), TU_NR(s)), 0);
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

	assert_int_equal(run(2, s, TU_NR(s), TU_NR(s)), 2);
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

	assert_int_equal(run(1, s, TU_NR(s), TU_NR(s)), 1);
}

/* Forgotten (attached again after a detach): the switches missed meanwhile are no break. */
static void test_forget(void **state)
{
	static const struct sw s[] = {
		{ 0, false, 0, 100, false },
		{ 1, false, 0, 200, false },
		/* forgotten here */
		{ 0, false, 300, 0, false },
		{ 1, false, 400, 0, false },
		{ 0, false, 0, 300, false },
		{ 0, false, 0, 0, true },
	};

	assert_int_equal(run(2, s, TU_NR(s), 2), 1);
}

/* A runqlat stream consumer on nr_cpus CPUs with only what consuming needs (no landing). */
static void rq_init(struct rqstream *st, int nr_cpus, int target_cpu)
{
	memset(st, 0, sizeof(*st));
	st->core.nr_cpus = nr_cpus;
	st->core.last_seq = calloc((size_t)nr_cpus, sizeof(*st->core.last_seq));
	assert_non_null(st->core.last_seq);
	st->unit_ns = 1000;
	st->target_cpu = target_cpu;
	assert_int_equal(u64map_init(&st->starts, 64), 0);
	assert_int_equal(sagg_init(&st->agg, KAGG_KEY_NONE, KAGG_UNIT_USECS), 0);
	assert_int_equal(schain_init(&st->chain, nr_cpus), 0);
}

static void rq_fini(struct rqstream *st)
{
	free(st->core.last_seq);
	u64map_free(&st->starts);
	sagg_fini(&st->agg);
	schain_fini(&st->chain);
}

/* Record seq on cpu at ts: a wakeup of pid (enq: it passes the filters), or a switch. */
static void rq_wakeup(struct rqstream *st, uint32_t cpu, uint64_t seq, uint64_t ts, int32_t pid)
{
	struct runqlat_rec r = {
		.ts = ts, .seq = seq, .cpu = cpu, .type = RUNQLAT_REC_WAKEUP, .enq = 1, .pid = pid
	};

	rqstream_on_record(st, &r, sizeof(r));
}

static void rq_switch(struct rqstream *st, uint32_t cpu, uint64_t seq, uint64_t ts, int32_t prev,
		      bool sel, int32_t next)
{
	struct runqlat_rec r = { .ts = ts,
				 .seq = seq,
				 .cpu = cpu,
				 .type = RUNQLAT_REC_SWITCH,
				 .sel = sel,
				 .pid = prev,
				 .next_pid = next };

	rqstream_on_record(st, &r, sizeof(r));
}

/*
 * Task 100 woken (its wait starts), then a switch out of it on CPU 0 that does not chain:
 * the switch into it was not delivered, its wait is lost.  Counted as switch_in_missed
 * when it passes the filters (sel) and the break is on the --cpu CPU (or no --cpu); its
 * start goes then, so a later switch into it closes no wait.  Not counted otherwise: the
 * start stays and the later switch-in closes a (too long) wait, as the kernel path does.
 */
static void test_runqlat_stream_break(void **state)
{
	static const struct {
		bool sel;
		int target_cpu;
		uint64_t missed, recorded;
	} c[] = { { true, -1, 1, 0 }, { false, -1, 0, 1 }, { true, 1, 0, 1 }, { true, 0, 1, 0 } };
	size_t k;

	for (k = 0; k < TU_NR(c); k++) {
		struct rqstream st;

		rq_init(&st, 2, c[k].target_cpu);
		rq_switch(&st, 0, 1, 1000, 0, false, 50); /* CPU 0 runs 50 */
		rq_wakeup(&st, 1, 1, 2000, 100);
		rq_switch(&st, 0, 2, 3000, 100, c[k].sel, 0); /* 50 -> 100 not delivered */
		rq_switch(&st, 0, 3, 9000, 0, false, 100);
		assert_int_equal(st.chain.breaks, 1);
		assert_int_equal(st.switch_in_missed, c[k].missed);
		assert_int_equal(st.recorded + st.filtered_cpu, c[k].recorded);
		rq_fini(&st);
	}
}

/* Records of CPU 0 lost (a gap in its numbers) before a wakeup: its chain is unknown. */
static void test_runqlat_stream_lost_record(void **state)
{
	struct rqstream st;

	rq_init(&st, 2, -1);
	rq_switch(&st, 0, 1, 1000, 0, true, 50);
	rq_wakeup(&st, 0, 5, 2000, 100);	  /* records 2 to 4 lost */
	rq_switch(&st, 0, 6, 3000, 70, true, 0);  /* from 70, not 50: unknown, no break */
	rq_switch(&st, 0, 7, 4000, 0, true, 100); /* chains: a wait closed */
	assert_int_equal(st.core.seq_gaps, 3);
	assert_int_equal(st.chain.breaks, 0);
	assert_int_equal(st.switch_in_missed, 0);
	assert_int_equal(st.recorded, 1);
	rq_fini(&st);
}

UU_MAIN(cmocka_unit_test(test_chains_hold), cmocka_unit_test(test_skipped_switch_breaks),
	cmocka_unit_test(test_lost_record_is_no_break), cmocka_unit_test(test_forget),
	cmocka_unit_test(test_runqlat_stream_break),
	cmocka_unit_test(test_runqlat_stream_lost_record))
