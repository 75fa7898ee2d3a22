// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Percentiles read from bucket counts (kagg_hist__percentile and the
 * printers): hand-made log2 and linear histograms with answers worked out by
 * hand from the documented rule, and random values whose exact percentile
 * (sorted) must lie in the reported bucket.  Exact percentiles from the values
 * a streamed histogram keeps (user/stream/stream.c's svals): nearest rank, the
 * caps, and how the printers put them beside the kernel's.  Exact extremes:
 * how per-CPU copies and generations of them merge (bpf/shared/common.h, the
 * code the kernel runs), how the streamed aggregator keeps them, and how they
 * hold the percentiles and are printed.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include "snapshot/snapshot_internal.h"
#include "stream/stream.h"
#include "session/session_internal.h" /* session_ext_fold() */
#include "testutil.h"
#include "unit_util.h"

/* A snapshot of one histogram (log2 unless lin_step), slots as given. */
static struct kagg_snapshot *make(const uint64_t *slots, int64_t lin_min, uint64_t lin_step)
{
	struct kagg_snapshot *snap = snap_new();
	struct kagg_hist *h;
	int k;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, 1, 64), 0);
	h = &snap->hists[0];
	h->unit = KAGG_UNIT_USECS;
	h->lin_min = lin_min;
	h->lin_step = lin_step;
	for (k = 0; k < 64; k++) {
		((uint64_t *)h->slots)[k] = slots[k];
		h->total += slots[k];
	}
	snap->meta.tool = "test";
	snap->meta.unit = "usecs";
	return snap;
}

/* p<q> of h is value in [low, high]; what names the histogram in a failure. */
static void check(const struct kagg_hist *h, const char *what, double q, double value, double low,
		  double high)
{
	double v, l, hi;

	assert_int_equal(kagg_hist__percentile(h, q, &v, &l, &hi), 0);
	if (v < value - 1e-9 || v > value + 1e-9 || l != low || hi != high)
		fail_msg("%s: p%g = %.6f [%g, %g], want %.6f [%g, %g]", what, q, v, l, hi, value,
			 low, high);
}

/* A histogram (log2 unless lin_step), and its percentiles (q 0 ends the list). */
static const struct rank_case {
	const char *what;
	uint64_t slots[64];
	int64_t lin_min;
	uint64_t lin_step;
	struct {
		double q, value, low, high;
	} want[6];
} rank_cases[] = {
	/* 10 values in [1024, 2047]: the rank's share of the bucket, the max at its top. */
	{ "one bucket",
	  { [10] = 10 },
	  0,
	  0,
	  { { 50, 1024 + 1023 * 0.5, 1024, 2047 }, /* rank 5 of 10 */
	    { 10, 1024 + 1023 * 0.1, 1024, 2047 }, /* rank 1 */
	    { 100, 2047, 1024, 2047 } } },
	/* 90 values in [8, 15], 10 in [1024, 2047]: p90 is the 90th, p99 the 99th. */
	{ "two buckets",
	  { [3] = 90, [10] = 10 },
	  0,
	  0,
	  { { 50, 8 + 7 * 50.0 / 90, 8, 15 },
	    { 90, 15, 8, 15 },
	    { 90.5, 1024 + 1023 * 0.1, 1024, 2047 }, /* rank ceil(90.5) = 91 */
	    { 99, 1024 + 1023 * 0.9, 1024, 2047 },
	    { 99.9, 2047, 1024, 2047 } } }, /* rank ceil(99.9) = 100 */
	/* 99.9% of 1000 is rank 999 exactly, not 1000 by rounding. */
	{ "exact rank",
	  { [0] = 1, [4] = 999 },
	  0,
	  0,
	  { { 99.9, 16 + 15 * 998.0 / 999, 16, 31 },
	    { 0.1, 1, 0, 1 } } }, /* rank 1: slot 0 is [0, 1] */
	/* Linear buckets of 5 from -10: signed bounds. */
	{ "linear",
	  { [0] = 4, [1] = 4 },
	  -10,
	  5,
	  { { 50, -6, -10, -6 },	      /* rank 4: the top of [-10, -6] */
	    { 75, -5 + 4 * 2.0 / 4, -5, -1 }, /* rank 6: 2nd of 4 in [-5, -1] */
	    { 100, -1, -5, -1 } } },
};

static void test_ranks(void **state)
{
	size_t i, k;

	for (i = 0; i < sizeof(rank_cases) / sizeof(rank_cases[0]); i++) {
		const struct rank_case *c = &rank_cases[i];
		struct kagg_snapshot *snap = make(c->slots, c->lin_min, c->lin_step);
		const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);

		for (k = 0; c->want[k].q; k++)
			check(h, c->what, c->want[k].q, c->want[k].value, c->want[k].low,
			      c->want[k].high);
		kagg_snapshot__free(snap);
	}
}

static void test_errors(void **state)
{
	uint64_t slots[64] = { 0 };
	struct kagg_snapshot *snap = make(slots, 0, 0);
	const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);
	double v;

	assert_int_equal(kagg_hist__percentile(h, 50, &v, NULL, NULL), -ENODATA);
	((uint64_t *)h->slots)[2] = 1;
	assert_int_equal(kagg_hist__percentile(h, 0, &v, NULL, NULL), -EINVAL);
	assert_int_equal(kagg_hist__percentile(h, 100.5, &v, NULL, NULL), -EINVAL);
	assert_int_equal(kagg_hist__percentile(NULL, 50, &v, NULL, NULL), -EINVAL);
	assert_int_equal(kagg_hist__percentile(h, 50, &v, NULL, NULL), 0);
	assert_true(v == 7);
	kagg_snapshot__free(snap);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Random values: the exact nearest-rank percentile lies in the reported bucket. */
static void test_random_values_in_bucket(void **state)
{
	static const double qs[] = { 1, 25, 50, 90, 99, 99.9, 100 };
	uint64_t slots[64] = { 0 }, vals[3001], lo, hi;
	unsigned int seed = 12345, n, i, t;

	for (t = 0; t < 50; t++) {
		struct kagg_snapshot *snap;
		const struct kagg_hist *h;

		n = 1 + rand_r(&seed) % 3000;
		memset(slots, 0, sizeof(slots));
		for (i = 0; i < n; i++) {
			vals[i] = (uint64_t)rand_r(&seed) >> (rand_r(&seed) % 28);
			slots[vals[i] ? 63 - __builtin_clzll(vals[i]) : 0]++;
		}
		qsort(vals, n, sizeof(vals[0]), cmp_u64);
		snap = make(slots, 0, 0);
		h = kagg_snapshot__hist(snap, 0);
		for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
			long double r = (long double)qs[i] * n / 100;
			uint64_t rank = (uint64_t)ceill(r - r * 1e-12L);
			double v, l, hgh;

			if (rank < 1)
				rank = 1;
			assert_int_equal(kagg_hist__percentile(h, qs[i], &v, &l, &hgh), 0);
			kagg_log2_bounds(vals[rank - 1] ? 63 - __builtin_clzll(vals[rank - 1]) : 0,
					 &lo, &hi);
			assert_true(l == (double)lo && hgh == (double)hi);
			assert_true(v >= l && v <= hgh);
		}
		kagg_snapshot__free(snap);
	}
}

static char *print(const struct kagg_snapshot *snap, enum kagg_format fmt, const double *q,
		   size_t n)
{
	KAGG_OPTS(kagg_print_opts, o, .format = fmt, .no_meta = true, .percentiles = q,
		  .nr_percentiles = n);
	struct uu_mem m;

	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &o), 0);
	return uu_mem_text(&m);
}

/* An exp histogram of scale s from bucket index base (slot 0: the zero bucket). */
static struct kagg_snapshot *make_exp(const uint64_t *slots, int s, int64_t base)
{
	struct kagg_snapshot *snap = make(slots, 0, 0);

	snap->hists[0].has_exp = true;
	snap->hists[0].exp_scale = s;
	snap->hists[0].exp_base_index = base;
	return snap;
}

static void near(double got, double want)
{
	if (got < want * (1 - 1e-15) || got > want * (1 + 1e-15))
		fail_msg("%.17g, want %.17g", got, want);
}

/* Exp bounds are 2^(i/2^s), exactly enough for doubles; the zero bucket is [0, 0]. */
static void test_exp_bounds(void **state)
{
	uint64_t slots[64] = { 0 };
	struct kagg_snapshot *snap = make_exp(slots, 3, -10);
	const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);
	double l, u;

	kagg_hist__bounds(h, 0, &l, &u);
	assert_true(l == 0 && u == 0);
	kagg_hist__bounds(h, 1, &l, &u);  /* index -10 */
	near(l, 0.42044820762685725);	  /* 2^(-10/8) */
	near(u, 0.4585020216023356);	  /* 2^(-9/8) */
	kagg_hist__bounds(h, 19, &l, &u); /* index 8 */
	assert_true(l == 2.0);
	near(u, 2.1810154653305154);	  /* 2^(9/8) */
	kagg_hist__bounds(h, 63, &l, &u); /* index 52 */
	near(l, 90.50966799187809);	  /* 2^(52/8) = 2^6.5 */
	kagg_snapshot__free(snap);
}

/* Percentiles of exp buckets, and the zero bucket, by the same rule. */
static void test_exp_percentiles(void **state)
{
	uint64_t slots[64] = { [0] = 5, [3] = 10 }; /* scale 0 from index -1: slot 3 = (2, 4] */
	struct kagg_snapshot *snap = make_exp(slots, 0, -1);
	const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);

	check(h, "exp", 10, 0, 0, 0);		     /* rank 2: a zero */
	check(h, "exp", 50, 2 + 2 * 3.0 / 10, 2, 4); /* rank 8: 3rd of 10 in (2, 4] */
	check(h, "exp", 100, 4, 2, 4);
	kagg_snapshot__free(snap);
}

/* Exp JSON: "scale", each bucket its "index", from the first non-empty one; text too. */
static void test_exp_printed(void **state)
{
	uint64_t slots[64] = { [0] = 1, [19] = 4, [20] = 2 };
	struct kagg_snapshot *snap = make_exp(slots, 3, -10);
	char *out;

	out = print(snap, KAGG_FORMAT_JSON, NULL, 0);
	TU_ASSERT_HAS(out, "\"scale\": 3,\n",
		      "{\"index\":\"zero\",\"low\":0,\"high\":0,\"count\":1},\n",
		      "{\"index\":8,\"low\":2,\"high\":2.18102,\"count\":4},\n",
		      "{\"index\":9,\"low\":2.18102,\"high\":2.37841,\"count\":2}\n");
	assert_null(strstr(out, "\"index\":7,")); /* empty buckets between: not listed */
	free(out);
	out = print(snap, KAGG_FORMAT_TEXT, NULL, 0);
	TU_ASSERT_HAS(out, "0 -> 0          : 1 ", "2 -> 2.18102    : 4 ",
		      "\nmax   = 2.4 usecs [2.18102, 2.37841]\n");
	free(out);
	kagg_snapshot__free(snap);
}

/* Text and JSON carry each percentile with its bucket; the default list, or the caller's. */
static void test_printed(void **state)
{
	static const double mine[] = { 99.9, 100 };
	static const double bad[] = { 0 };
	uint64_t slots[64] = { [10] = 10 };
	struct kagg_snapshot *snap = make(slots, 0, 0);
	KAGG_OPTS(kagg_print_opts, o, .percentiles = bad, .nr_percentiles = 1);
	char *out;

	out = print(snap, KAGG_FORMAT_TEXT, NULL, 0);
	assert_non_null(strstr(out, "\np50   = 1535.5 usecs [1024, 2047]\n"
				    "p90   = 1944.7 usecs [1024, 2047]\n"
				    "p99   = 2047.0 usecs [1024, 2047]\n"
				    "p99.9 = 2047.0 usecs [1024, 2047]\n"
				    "max   = 2047.0 usecs [1024, 2047]\n"));
	free(out);
	out = print(snap, KAGG_FORMAT_JSON, NULL, 0);
	TU_ASSERT_HAS(out, "\"percentiles\": {\n",
		      "\"p50\": {\"value\":1535.500,\"low\":1024,\"high\":2047},\n",
		      "\"p99.9\": {\"value\":2047.000,\"low\":1024,\"high\":2047},\n",
		      "\"max\": {\"value\":2047.000,\"low\":1024,\"high\":2047}\n");
	free(out);
	out = print(snap, KAGG_FORMAT_JSON, mine, 2);
	assert_null(strstr(out, "\"p50\""));
	assert_non_null(strstr(out, "\"p99.9\": {"));
	assert_non_null(strstr(out, "\"max\": {"));
	free(out);
	assert_int_equal(kagg_snapshot__print(snap, stdout, &o), -EINVAL);
	kagg_snapshot__free(snap);
}

/* The extremes of copies v[0 .. n), merged as the readers merge per-CPU values. */
static void ext_merged(const struct kagg_hist_val *v, int n, __u64 *min, __u64 *max)
{
	__u64 nmin = 0, mx = 0;
	int i;

	for (i = 0; i < n; i++)
		kagg_ext_merge(&nmin, &mx, v[i].nmin, v[i].max);
	*min = ~nmin;
	*max = mx;
}

/*
 * session_ext_fold() of extremes as read: a part with none (all zero: a live generation
 * read between a value's count and its extremes) or torn (min above max) folds nothing; a
 * sound one sets them; a signed session unflips them.
 */
static void test_ext_fold_skips_none(void **state)
{
	struct kagg_session s = { .sum = SESSION_SUM_U64 };
	struct kagg_hist h = { .sz = sizeof(h) };

	(void)state;
	session_ext_fold(&s, &h, 0, 0);
	assert_false(h.has_minmax);
	session_ext_fold(&s, &h, ~(uint64_t)9, 5); /* min 9 > max 5 */
	assert_false(h.has_minmax);
	session_ext_fold(&s, &h, ~(uint64_t)5, 9);
	assert_true(h.has_minmax && h.min == 5 && h.max == 9);
	session_ext_fold(&s, &h, 0, 0);
	assert_true(h.min == 5 && h.max == 9);
	s.sum = SESSION_SUM_S64;
	h.has_minmax = false;
	session_ext_fold(&s, &h, ~((uint64_t)-2 ^ (1ULL << 63)), 3 ^ (1ULL << 63));
	assert_true(h.has_minmax && h.min == -2 && h.max == 3);
}

/*
 * Per-CPU extremes (kagg_ext_put(), per generation) merged over CPUs: a CPU that counted
 * nothing (all zeroes, as created or reset) changes nothing, a value of 0 is a minimum, not
 * an empty CPU, the generations stay apart and a reset one holds none; signed values
 * compare with their sign bit flipped.
 */
static void test_extremes_merge(void **state)
{
	struct kagg_hist_val v[2][4];
	const __u64 flip = 1ULL << 63;
	__u64 min, max, nmin = 0, mx = 0;

	(void)state;
	memset(v, 0, sizeof(v));
	kagg_ext_put(&v[0][0].nmin, &v[0][0].max, 50);
	kagg_ext_put(&v[0][0].nmin, &v[0][0].max, 7);
	kagg_ext_put(&v[0][2].nmin, &v[0][2].max, 9000);
	kagg_ext_put(&v[0][2].nmin, &v[0][2].max, 8);
	kagg_ext_put(&v[1][1].nmin, &v[1][1].max, UINT64_MAX);
	/* CPUs 1 and 3 counted nothing in generation 0 */
	ext_merged(v[0], 4, &min, &max);
	assert_true(min == 7 && max == 9000);
	ext_merged(v[1], 4, &min, &max);
	assert_true(min == UINT64_MAX && max == UINT64_MAX);
	kagg_ext_put(&v[0][3].nmin, &v[0][3].max, 0);
	ext_merged(v[0], 4, &min, &max);
	assert_true(min == 0 && max == 9000);
	/* generation 0 read and reset: none there, generation 1 as it was */
	memset(v[0], 0, sizeof(v[0]));
	ext_merged(v[0], 4, &min, &max);
	assert_true(min == UINT64_MAX && max == 0); /* count 0: the readers show none */
	ext_merged(v[1], 4, &min, &max);
	assert_true(min == UINT64_MAX && max == UINT64_MAX);
	/* signed: -5 and 3, flipped, compare as numbers; unflipped -5 would be the largest */
	kagg_ext_put(&nmin, &mx, (__u64)-5 ^ flip);
	kagg_ext_put(&nmin, &mx, 3 ^ flip);
	assert_true((int64_t)(~nmin ^ flip) == -5 && (int64_t)(mx ^ flip) == 3);
}

/*
 * The streamed aggregator keeps each histogram's extremes, per key and generation, and a
 * reset clears them: an interval shows its own.
 */
static void test_sagg_extremes(void **state)
{
	static const char comm[16] = "x";
	struct kagg_snapshot *a = snap_new(), *b = snap_new(), *c = snap_new();
	struct sagg ag;

	(void)state;
	assert_int_equal(sagg_init(&ag, KAGG_KEY_PID, KAGG_UNIT_USECS), 0);
	sagg_add(&ag, 0, scons_slot(7958123, 1000), 7958123, 7, 7, comm);
	sagg_add(&ag, 0, scons_slot(1500, 1000), 1500, 7, 7, comm);
	sagg_add(&ag, 0, scons_slot(0, 1000), 0, 9, 9, comm);
	sagg_add(&ag, 1, scons_slot(42000, 1000), 42000, 7, 7, comm);
	assert_int_equal(sagg_read(&ag, 0, true, a), 0);
	assert_int_equal(a->nr_hists, 2);
	assert_true(a->hists[0].key.pid == 7 && a->hists[0].has_minmax);
	assert_true(a->hists[0].min == 1.5 && a->hists[0].max == 7958.123);
	assert_true(a->hists[1].key.pid == 9 && a->hists[1].has_minmax);
	assert_true(a->hists[1].min == 0 && a->hists[1].max == 0);
	sagg_add(&ag, 0, scons_slot(3000, 1000), 3000, 7, 7, comm);
	assert_int_equal(sagg_read(&ag, 0, true, b), 0);
	assert_true(b->nr_hists == 1 && b->hists[0].min == 3 && b->hists[0].max == 3);
	assert_int_equal(sagg_read(&ag, 1, true, c), 0);
	assert_true(c->nr_hists == 1 && c->hists[0].min == 42 && c->hists[0].max == 42);
	sagg_fini(&ag);
	assert_int_equal(sagg_init(&ag, KAGG_KEY_NONE, KAGG_UNIT_USECS), 0);
	kagg_snapshot__free(a);
	a = snap_new();
	assert_int_equal(sagg_read(&ag, 0, true, a), 0);
	assert_true(a->nr_hists == 1 && !a->hists[0].total && !a->hists[0].has_minmax);
	sagg_fini(&ag);
	kagg_snapshot__free(a);
	kagg_snapshot__free(b);
	kagg_snapshot__free(c);
}

/*
 * A histogram with its exact extremes: the percentiles hold within them (one value in
 * [4096, 8191] is 7958.123 at every rank), min and max are printed exact, without bounds, in
 * place of the bucket-made max; without extremes, or with none counted, as before.
 */
static void test_extremes_printed(void **state)
{
	uint64_t slots[64] = { [12] = 1 };
	struct kagg_snapshot *snap = make(slots, 0, 0);
	struct kagg_hist *h = &snap->hists[0];
	double v, low, high;
	char *out;

	(void)state;
	h->has_minmax = true;
	h->min = h->max = 7958.123;
	assert_int_equal(kagg_hist__percentile(h, 50, &v, &low, &high), 0);
	assert_true(v == 7958.123 && low == 4096 && high == 8191);
	assert_int_equal(kagg_hist__percentile(h, 100, &v, &low, &high), 0);
	assert_true(v == 7958.123);
	out = print(snap, KAGG_FORMAT_TEXT, NULL, 0);
	assert_non_null(strstr(out, "\nmin   = 7958.123 usecs\n"
				    "p50   = 7958.1 usecs [4096, 8191]\n"
				    "p90   = 7958.1 usecs [4096, 8191]\n"
				    "p99   = 7958.1 usecs [4096, 8191]\n"
				    "p99.9 = 7958.1 usecs [4096, 8191]\n"
				    "max   = 7958.123 usecs\n"));
	assert_null(strstr(out, "8191.0"));
	free(out);
	out = print(snap, KAGG_FORMAT_JSON, NULL, 0);
	TU_ASSERT_HAS(out, "\"min\": 7958.123,", "\"max\": 7958.123,",
		      "\"max\": {\"value\":7958.123,\"low\":4096,\"high\":8191}");
	free(out);
	/*
	 * 8191.5 usecs counts in [4096, 8191] (floored to whole units): the percentiles stay
	 * in the bucket they are printed with, the max line is the value itself; likewise a
	 * bucket [0, 1] of values from 1.2 to 1.9
	 */
	h->min = h->max = 8191.5;
	assert_int_equal(kagg_hist__percentile(h, 100, &v, &low, &high), 0);
	assert_true(v == 8191 && low == 4096 && high == 8191);
	out = print(snap, KAGG_FORMAT_TEXT, NULL, 0);
	assert_non_null(strstr(out, "p50   = 8191.0 usecs [4096, 8191]\n"));
	assert_non_null(strstr(out, "\nmax   = 8191.500 usecs\n"));
	free(out);
	((uint64_t *)h->slots)[12] = 0;
	((uint64_t *)h->slots)[0] = 4;
	h->min = 1.2;
	h->max = 1.9;
	assert_int_equal(kagg_hist__percentile(h, 50, &v, &low, &high), 0);
	assert_true(v == 1 && low == 0 && high == 1);
	((uint64_t *)h->slots)[0] = 0;
	((uint64_t *)h->slots)[12] = 1;
	h->min = h->max = 7958.123;
	h->has_minmax = false;
	out = print(snap, KAGG_FORMAT_TEXT, NULL, 0);
	assert_non_null(strstr(out, "\nmax   = 8191.0 usecs [4096, 8191]\n"));
	assert_null(strstr(out, "min"));
	free(out);
	kagg_snapshot__free(snap);
}

/* Hand the values (ns) of s to histogram 0 of snap, its slots counting them (log2 of usecs). */
static void keep(struct kagg_snapshot *snap, struct svals *s)
{
	struct kagg_hist *h = &snap->hists[0];
	uint32_t i;

	for (i = 0; i < s->n; i++)
		((uint64_t *)h->slots)[scons_slot(s->v[i], 1000)]++;
	h->total = s->over ? h->total : s->n;
	assert_int_equal(svals_read(s, snap, h, 1000), 0);
}

/* Nearest rank over values kept in any order, in the histogram's unit (usecs from ns). */
static void test_exact_nearest_rank(void **state)
{
	uint64_t slots[64] = { 0 }, kept = 0;
	struct kagg_snapshot *snap = make(slots, 0, 0);
	const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);
	struct svals s = { 0 };
	double v;
	int i;

	for (i = 1000; i >= 1; i--) /* 1.5, 2.5, ... 1000.5 usecs, descending */
		svals_add(&s, (uint64_t)i * 1000 + 500, &kept);
	assert_true(kept == 1000);
	keep(snap, &s);
	assert_int_equal(h->exact, KAGG_EXACT_KEPT);
	assert_true(h->nr_values == 1000 && h->total == 1000);
	assert_int_equal(kagg_hist__exact_percentile(h, 50, &v), 0);
	assert_true(v == 500.5); /* rank 500 */
	assert_int_equal(kagg_hist__exact_percentile(h, 99.9, &v), 0);
	assert_true(v == 999.5); /* rank 999, not 1000 */
	assert_int_equal(kagg_hist__exact_percentile(h, 100, &v), 0);
	assert_true(v == 1000.5);
	assert_int_equal(kagg_hist__exact_percentile(h, 0.01, &v), 0);
	assert_true(v == 1.5); /* rank ceil(0.1) = 1 */
	assert_int_equal(kagg_hist__exact_percentile(h, 90.05, &v), 0);
	assert_true(v == 901.5); /* rank ceil(900.5) = 901 */
	assert_int_equal(kagg_hist__exact_percentile(h, 0, &v), -EINVAL);
	assert_int_equal(kagg_hist__exact_percentile(h, 100.5, &v), -EINVAL);
	assert_int_equal(kagg_hist__exact_percentile(NULL, 50, &v), -EINVAL);
	svals_clear(&s);
	kagg_snapshot__free(snap);
}

/* Histograms that keep no values (the kernel's), and empty ones, have no exact percentile. */
static void test_exact_none(void **state)
{
	uint64_t slots[64] = { [10] = 10 }, none[64] = { 0 };
	struct kagg_snapshot *snap = make(slots, 0, 0), *empty = make(none, 0, 0);
	struct svals s = { 0 };
	double v;

	assert_int_equal(kagg_hist__exact_percentile(kagg_snapshot__hist(snap, 0), 50, &v),
			 -ENODATA);
	keep(empty, &s);
	assert_int_equal(empty->hists[0].exact, KAGG_EXACT_KEPT);
	assert_int_equal(kagg_hist__exact_percentile(kagg_snapshot__hist(empty, 0), 50, &v),
			 -ENODATA);
	kagg_snapshot__free(snap);
	kagg_snapshot__free(empty);
}

/* Past KAGG_EXACT_MAX_VALUES, or the generation's SVALS_GEN_MAX, a histogram keeps none. */
static void test_exact_cap(void **state)
{
	uint64_t slots[64] = { 0 }, kept = 0;
	struct kagg_snapshot *snap = make(slots, 0, 0);
	struct svals s = { 0 }, t = { 0 };
	uint32_t i;
	double v;

	for (i = 0; i < KAGG_EXACT_MAX_VALUES; i++)
		svals_add(&s, 3000000 + i, &kept);
	assert_false(s.over);
	assert_true(s.n == KAGG_EXACT_MAX_VALUES && kept == KAGG_EXACT_MAX_VALUES);
	svals_add(&s, 5, &kept);
	assert_true(s.over);
	assert_null(s.v); /* the memory is given back at once */
	snap->hists[0].total = KAGG_EXACT_MAX_VALUES + 1;
	assert_int_equal(svals_read(&s, snap, &snap->hists[0], 1000), 0);
	assert_int_equal(snap->hists[0].exact, KAGG_EXACT_OVER_CAP);
	assert_int_equal(kagg_hist__exact_percentile(kagg_snapshot__hist(snap, 0), 50, &v),
			 -ENODATA);
	svals_clear(&s);
	assert_false(s.over); /* a new interval keeps values again */
	svals_add(&s, 7, &kept);
	assert_true(s.n == 1 && !s.over);
	svals_clear(&s);

	kept = SVALS_GEN_MAX - 1; /* the generation's budget: one value left */
	svals_add(&t, 1, &kept);
	assert_true(t.n == 1 && !t.over);
	svals_add(&t, 2, &kept);
	assert_true(t.over);
	svals_clear(&t);
	kagg_snapshot__free(snap);
}

/* Random values: the exact percentile lies in the bucket the histogram's percentile names. */
static void test_exact_in_bucket(void **state)
{
	static const double q[] = { 1, 10, 50, 90, 99, 99.9, 100 };
	int round, i;

	srand(17);
	for (round = 0; round < 50; round++) {
		uint64_t slots[64] = { 0 }, kept = 0;
		struct kagg_snapshot *snap = make(slots, 0, 0);
		const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);
		struct svals s = { 0 };
		int n = 1 + rand() % 3000;

		for (i = 0; i < n; i++)
			svals_add(&s, 2000 + (uint64_t)rand() % (1u << (rand() % 24)), &kept);
		keep(snap, &s);
		for (i = 0; i < (int)(sizeof(q) / sizeof(q[0])); i++) {
			double v, l, hi, x;

			assert_int_equal(kagg_hist__percentile(h, q[i], &v, &l, &hi), 0);
			assert_int_equal(kagg_hist__exact_percentile(h, q[i], &x), 0);
			/* log2 bounds count whole usecs: [l, hi] holds the values in [l, hi + 1) */
			if (!(x >= l && x < hi + 1))
				fail_msg("p%g exact %.3f outside [%g, %g]", q[i], x, l, hi);
		}
		svals_clear(&s);
		kagg_snapshot__free(snap);
	}
}

/* A random value whose significant bytes vary with kind: small, wide, all 64 bits, few. */
static uint64_t random_value(int kind)
{
	uint64_t r = (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();

	switch (kind) {
	case 0:
		return r & 0xff;
	case 1:
		return r & ((1ull << 40) - 1);
	case 2:
		return r ^ (uint64_t)rand() << 63;
	default:
		return 1000000 + (r & 3) * 0x0100000000000000ull; /* bytes 1-6 equal */
	}
}

/*
 * The kept values come out sorted, whatever bytes they differ in: against qsort(),
 * value for value, for a few values and for more than fit in 2 MiB.
 */
static void test_exact_sorted(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 300, 300000 };
	int kind;
	size_t z;

	srand(20);
	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		for (kind = 0; kind < 4; kind++) {
			uint64_t *ref = malloc(sizes[z] * sizeof(*ref)), kept = 0;
			struct kagg_snapshot *snap = snap_new();
			struct svals s = { 0 };
			struct kagg_hist *h;
			uint32_t i;

			assert_non_null(ref);
			assert_int_equal(snap_alloc_hists(snap, 1, 64), 0);
			h = &snap->hists[0];
			for (i = 0; i < sizes[z]; i++) {
				ref[i] = random_value(kind);
				svals_add(&s, ref[i], &kept);
			}
			h->total = sizes[z];
			assert_int_equal(svals_read(&s, snap, h, 1), 0);
			assert_int_equal(h->exact, KAGG_EXACT_KEPT);
			assert_int_equal(h->nr_values, sizes[z]);
			qsort(ref, sizes[z], sizeof(*ref), cmp_u64);
			for (i = 0; i < sizes[z]; i++)
				if (h->values[i] != (double)ref[i])
					fail_msg("%u values, kind %d: [%u] = %.0f, not %.0f",
						 sizes[z], kind, i, h->values[i], (double)ref[i]);
			svals_clear(&s);
			free(ref);
			kagg_snapshot__free(snap);
		}
	}
}

/*
 * A reset keeps a histogram's value array for the next interval: the next interval's
 * values are its own (none of the last one's), in the same memory.
 */
static void test_sagg_reuses_values(void **state)
{
	static const char comm[16] = "x";
	struct kagg_snapshot *one = snap_new(), *two = snap_new();
	const uint64_t *mem;
	struct sagg ag;
	uint32_t i;

	assert_int_equal(sagg_init(&ag, KAGG_KEY_NONE, KAGG_UNIT_NSECS), 0);
	for (i = 0; i < 5000; i++)
		sagg_add(&ag, 0, scons_slot(100 + i, 1), 100 + i, 1, 1, comm);
	mem = ag.gen[0].vals.v;
	assert_int_equal(sagg_read(&ag, 0, true, one), 0);
	assert_int_equal(one->hists[0].nr_values, 5000);
	assert_true(ag.gen[0].vals.n == 0 && ag.gen[0].vals.v == mem);
	for (i = 0; i < 3; i++)
		sagg_add(&ag, 0, scons_slot(7 - i, 1), 7 - i, 1, 1, comm);
	assert_int_equal(sagg_read(&ag, 0, true, two), 0);
	assert_int_equal(two->hists[0].total, 3);
	assert_int_equal(two->hists[0].nr_values, 3);
	assert_true(two->hists[0].values[0] == 5 && two->hists[0].values[2] == 7);
	assert_true(ag.gen[0].vals.v == mem);
	sagg_fini(&ag);
	kagg_snapshot__free(one);
	kagg_snapshot__free(two);
}

/* A snapshot of the kernel's histogram h, and the stream's of the same key from s. */
static struct kagg_snapshot *make_both(const uint64_t *slots, struct svals *s)
{
	struct kagg_snapshot *snap = make(slots, 0, 0);
	uint64_t none[64] = { 0 };

	snap->stream = make(none, 0, 0);
	keep(snap->stream, s);
	snap->meta.has_stream = true;
	snap->meta.mode = "both";
	return snap;
}

/* snap printed as fmt has `has` in it and not `hasnt` (either NULL: not checked). */
static void printed(const struct kagg_snapshot *snap, enum kagg_format fmt, const char *has,
		    const char *hasnt)
{
	char *out = print(snap, fmt, NULL, 0);

	if (has)
		assert_non_null(strstr(out, has));
	if (hasnt)
		assert_null(strstr(out, hasnt));
	free(out);
}

/* --mode both: each kernel percentile line with the exact one beside it, in text and JSON. */
static void test_exact_printed(void **state)
{
	uint64_t slots[64] = { [11] = 4 }, kept = 0;
	struct svals s = { 0 };
	struct kagg_snapshot *snap;
	char *out;

	svals_add(&s, 3000000, &kept); /* 3000, 3100, 3200, 3300 usecs */
	svals_add(&s, 3300000, &kept);
	svals_add(&s, 3100000, &kept);
	svals_add(&s, 3200000, &kept);
	snap = make_both(slots, &s);
	out = print(snap, KAGG_FORMAT_TEXT, NULL, 0);
	assert_non_null(strstr(out, "\np50   = 3071.5 usecs [2048, 4095]  exact 3100.000\n"
				    "p90   = 4095.0 usecs [2048, 4095]  exact 3300.000\n"));
	assert_non_null(strstr(out, "max   = 4095.0 usecs [2048, 4095]  exact 3300.000\n"));
	free(out);
	out = print(snap, KAGG_FORMAT_JSON, NULL, 0);
	/* the kernel's histogram, then the stream's: both carry the exact value */
	assert_non_null(strstr(out, "\"p50\": {\"value\":3071.500,\"low\":2048,\"high\":4095,"
				    "\"exact\":3100.000},\n"));
	assert_non_null(strstr(strstr(out, "\"stream\": {"),
			       "\"p50\": {\"value\":3071.500,\"low\":2048,\"high\":4095,"
			       "\"exact\":3100.000},\n"));
	assert_non_null(strstr(out, "\"exact_values\": \"kept\""));
	free(out);
	svals_clear(&s);
	kagg_snapshot__free(snap);

	/* over the cap: no exact values, and the output says why */
	s.over = true;
	snap = make_both(slots, &s);
	snap->stream->hists[0].total = 4;
	snap->stream->hists[0].exact = KAGG_EXACT_OVER_CAP;
	printed(snap, KAGG_FORMAT_TEXT, "(no exact percentiles: more than 1048576 values",
		"exact 3");
	printed(snap, KAGG_FORMAT_JSON, "\"exact_values\": \"over_cap\"", "\"exact\":");
	kagg_snapshot__free(snap);

	/* a kernel histogram alone prints no exact anything */
	snap = make(slots, 0, 0);
	printed(snap, KAGG_FORMAT_JSON, NULL, "\"exact\":");
	printed(snap, KAGG_FORMAT_JSON, NULL, "\"exact_values\"");
	printed(snap, KAGG_FORMAT_TEXT, NULL, "exact");
	kagg_snapshot__free(snap);
}

/* Of the n values (ns) in v, those bucket k of exp histogram h holds (bounds in usecs). */
static uint64_t in_bucket(const struct kagg_hist *h, unsigned int k, const uint64_t *v, size_t n)
{
	double low, high, us;
	uint64_t c = 0;
	size_t i;

	kagg_hist__bounds(h, k, &low, &high);
	for (i = 0; i < n; i++) {
		us = (double)v[i] / 1000;
		c += k ? us > low && us <= high : v[i] == 0;
	}
	return c;
}

/*
 * The streamed aggregator (sagg) with exp:3 buckets of usecs, per process: each process's
 * values are in the buckets whose bounds hold them, the sums and values kept; a reset
 * empties the generation and gives its buckets back.
 */
static void test_sagg_exp_buckets(void **state)
{
	static const uint64_t a[] = { 0, 1500, 2900, 3000001, 3100000, 3100001, 777777777 };
	static const uint64_t b[] = { 5000, 5001, 1 };
	static const char comm_a[16] = "a", comm_b[16] = "b"; /* comms are 16 bytes */
	struct kagg_snapshot *snap = snap_new(), *again = snap_new();
	struct sagg ag;
	unsigned int k;
	size_t i;

	assert_non_null(snap);
	assert_non_null(again);
	assert_int_equal(sagg_init(&ag, KAGG_KEY_PID, KAGG_UNIT_USECS), 0);
	sexp_init(&ag.exp, &kagg_exp_table[1][3]); /* unit 1e3 ns, scale 3 */
	assert_int_equal(ag.exp.nr_slots, KAGG_EXP_SLOTS(3) + 1);
	for (i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		sagg_add(&ag, 0, 0, a[i], 7, 7, comm_a);
	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		sagg_add(&ag, 0, 0, b[i], 9, 9, comm_b);
	sagg_add(&ag, 1, 0, 42, 7, 7, comm_a); /* the other generation: not read */
	assert_int_equal(sagg_read(&ag, 0, true, snap), 0);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 2);
	for (i = 0; i < 2; i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);
		const uint64_t *v = h->key.pid == 7 ? a : b;
		size_t n = h->key.pid == 7 ? sizeof(a) / sizeof(a[0]) : sizeof(b) / sizeof(b[0]);
		double sum = 0;

		assert_true(h->key.pid == 7 || h->key.pid == 9);
		assert_true(h->has_exp);
		assert_int_equal(h->exp_scale, 3);
		assert_int_equal(h->nr_slots, KAGG_EXP_SLOTS(3) + 1);
		assert_int_equal(h->total, n);
		for (k = 0; k < h->nr_slots; k++)
			if (h->slots[k])
				assert_int_equal(h->slots[k], in_bucket(h, k, v, n));
		for (k = 0; k < n; k++)
			sum += (double)v[k] / 1000;
		assert_true(fabs(h->sum - sum) < 1e-6);
		assert_int_equal(h->exact, KAGG_EXACT_KEPT);
		assert_int_equal(h->nr_values, n);
	}
	assert_int_equal(sagg_read(&ag, 0, false, again), 0);
	assert_int_equal(kagg_snapshot__hist_cnt(again), 0);
	sagg_fini(&ag);
	kagg_snapshot__free(snap);
	kagg_snapshot__free(again);
}

UU_MAIN(cmocka_unit_test(test_ranks), cmocka_unit_test(test_errors),
	cmocka_unit_test(test_random_values_in_bucket), cmocka_unit_test(test_printed),
	cmocka_unit_test(test_exp_bounds), cmocka_unit_test(test_exp_percentiles),
	cmocka_unit_test(test_exp_printed), cmocka_unit_test(test_exact_nearest_rank),
	cmocka_unit_test(test_exact_none), cmocka_unit_test(test_exact_cap),
	cmocka_unit_test(test_exact_in_bucket), cmocka_unit_test(test_exact_sorted),
	cmocka_unit_test(test_sagg_reuses_values), cmocka_unit_test(test_exact_printed),
	cmocka_unit_test(test_sagg_exp_buckets), cmocka_unit_test(test_extremes_merge),
	cmocka_unit_test(test_ext_fold_skips_none), cmocka_unit_test(test_sagg_extremes),
	cmocka_unit_test(test_extremes_printed))
