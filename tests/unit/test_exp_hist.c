// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Exponential-histogram bucketing (bpf/shared/buckets.h, the code the BPF programs
 * run, compiled natively) against the definition: bucket i of unit u and
 * scale s holds u*2^(i/N) < v <= u*2^((i+1)/N), N = 2^s.  Every bucket edge
 * over the whole u64 range is tried with its neighbours (edge-1, edge,
 * edge+1), the expected bucket found by comparing v with the edges in
 * binary128 (113-bit mantissa: exact for every u64 and for the edges that
 * are integers, and ~2^-49 of a unit off for the others, which are
 * irrational and never equal an integer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#if defined(__aarch64__)
/* arm64's long double is IEEE binary128 already: libm's long double functions */
#include <math.h>
typedef long double f128;
#define ldexpq ldexpl
#define exp2q exp2l
#define floorq floorl
#define log2q log2l
#else
#include <quadmath.h>
typedef __float128 f128;
#endif
#include <linux/types.h>

#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#include "shared/buckets.h"
#include "unit_util.h"

static f128 edge(const struct kagg_exp_params *p, int64_t i)
{
	int64_t n = 1 << p->scale, q = i >= 0 ? i / n : -((-i + n - 1) / n), r = i - q * n;

	/* u * 2^q * 2^(r/N): the power of two and u exact, 2^(r/N) rounded */
	return (f128)p->unit * ldexpq(r ? exp2q((f128)r / n) : 1, (int)q);
}

/* The bucket of v > 0 by the definition. */
static int64_t expected_index(const struct kagg_exp_params *p, uint64_t v)
{
	int64_t n = 1 << p->scale;
	int64_t i = (int64_t)floorq(log2q((f128)v / p->unit) * n);

	while (edge(p, i) >= v)
		i--;
	while (edge(p, i + 1) < v)
		i++;
	return i;
}

static void check(const struct kagg_exp_params *p, uint64_t v, unsigned long *checked)
{
	int64_t got, want;
	uint32_t slot;

	if (!v)
		return;
	slot = kagg_exp_slot(v, p);
	assert_true(slot < (uint32_t)KAGG_EXP_SLOTS(p->scale));
	got = (int64_t)slot + p->base_index;
	want = expected_index(p, v);
	if (got != want)
		fail_msg("unit %llu scale %u: v=%llu in bucket %lld, want %lld",
			 (unsigned long long)p->unit, p->scale, (unsigned long long)v,
			 (long long)got, (long long)want);
	(*checked)++;
}

/* Every edge in [1, 2^64) and its integer neighbours, for every unit and scale. */
static void test_every_edge_and_neighbours(void **state)
{
	unsigned long checked = 0;

	for (int u = 0; u < KAGG_EXP_UNITS; u++) {
		for (int s = 0; s <= KAGG_EXP_MAX_SCALE; s++) {
			const struct kagg_exp_params *p = &kagg_exp_table[u][s];
			int64_t n = 1 << s;
			int64_t lo = p->base_index, hi = p->base_index + KAGG_EXP_SLOTS(s);

			assert_int_equal(p->scale, s);
			for (int64_t i = lo - n; i <= hi + n; i++) {
				f128 e = edge(p, i);
				uint64_t f;

				if (e < 1 || e >= 0x1p64Q)
					continue;
				f = (uint64_t)floorq(e);
				for (int d = -1; d <= 1; d++)
					if (!(d < 0 && f == 0) && !(d > 0 && f == UINT64_MAX))
						check(p, f + d, &checked);
			}
			check(p, 1, &checked);
			check(p, UINT64_MAX, &checked);
		}
	}
	print_message("%lu values checked\n", checked);
	assert_true(checked > 3 * 64 * 63);
}

/*
 * Slots never decrease with v, and once buckets are wider than 1 (v > 1 /
 * (2^(1/8) - 1), about 11.1, at scale 3) consecutive integers skip none.
 */
static void test_slots_monotonic_and_dense(void **state)
{
	const struct kagg_exp_params *p = &kagg_exp_table[0][3];
	uint32_t prev = 0, s;
	uint64_t v;

	for (v = 1; v < 1000000; v++) {
		s = kagg_exp_slot(v, p);
		assert_true(s >= prev);
		if (v > 12)
			assert_true(s <= prev + 1);
		prev = s;
	}
	assert_int_equal(kagg_exp_slot(UINT64_MAX, p), KAGG_EXP_SLOTS(3) - 1);
	assert_int_equal(kagg_exp_slot(1, p), 0);
}

/* Known values: powers of two sit at the top of their bucket (upper bound inclusive). */
static void test_known_buckets(void **state)
{
	const struct kagg_exp_params *ns0 = &kagg_exp_table[0][0], *us3 = &kagg_exp_table[1][3];

	/* scale 0, unit 1: bucket i = (2^i, 2^(i+1)] */
	assert_int_equal(kagg_exp_slot(1, ns0) + ns0->base_index, -1);
	assert_int_equal(kagg_exp_slot(2, ns0) + ns0->base_index, 0);
	assert_int_equal(kagg_exp_slot(3, ns0) + ns0->base_index, 1);
	assert_int_equal(kagg_exp_slot(4, ns0) + ns0->base_index, 1);
	assert_int_equal(kagg_exp_slot(5, ns0) + ns0->base_index, 2);
	/* scale 3, unit 1000: 1000 is the upper edge of bucket -1, 1001 is in bucket 0 */
	assert_int_equal(kagg_exp_slot(1000, us3) + us3->base_index, -1);
	assert_int_equal(kagg_exp_slot(1001, us3) + us3->base_index, 0);
	/* 2^(1/8) * 1000 = 1090.5..: 1090 in bucket 0, 1091 in bucket 1 */
	assert_int_equal(kagg_exp_slot(1090, us3) + us3->base_index, 0);
	assert_int_equal(kagg_exp_slot(1091, us3) + us3->base_index, 1);
}

UU_MAIN(cmocka_unit_test(test_every_edge_and_neighbours),
	cmocka_unit_test(test_slots_monotonic_and_dense), cmocka_unit_test(test_known_buckets))
