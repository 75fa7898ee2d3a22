// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Percentiles of a bucketed histogram (log2, linear), read from the bucket
 * counts alone: the rank's bucket is exact, the value inside it interpolated.
 *
 * Rule: for q in (0, 100], the rank is r = ceil(q/100 * N) of the N values
 * (at least 1); the bucket [low, high] whose cumulative count first reaches r
 * holds it.  With b values in the buckets below and c in this one, the value
 * is low + (high - low) * (r - b) / c: the bucket's values are taken as
 * spread evenly over it, the last one at high.  q = 100 is the maximum: the
 * high bound of the last non-empty bucket.  A histogram that knows its exact
 * extremes (kagg_hist.has_minmax) holds the value within them: q = 100 is then
 * the maximum itself, and a bucket's one value is no longer taken at its bound.
 *
 * Exact percentiles (histograms that keep their values, kagg_hist.exact): the
 * same rank r, nearest-rank: the r-th smallest value itself.
 */
#include <errno.h>
#include <linux/types.h>

#include <kagg/snapshot.h>
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"

/* The rank of percentile q among n > 0 values: ceil(q/100 * n), in [1, n]. */
static uint64_t pct_rank(double q, uint64_t n)
{
	long double r;
	uint64_t rank;

	/* q/100 * n in long double, a hair under so that 99.9% of 1000 is rank 999 */
	r = (long double)q * (long double)n / 100.0L;
	r -= r * 1e-12L;
	rank = (uint64_t)r;
	if ((long double)rank < r)
		rank++; /* ceil, without libm */
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return rank;
}

bool hist_minmax(const struct kagg_hist *h, double *min, double *max)
{
	if (!KAGG_HAS_FIELD(h, kagg_hist, max) || !h->has_minmax)
		return false;
	*min = h->min;
	*max = h->max;
	return true;
}

int hist_pct_slot(const struct kagg_hist *h, double q, unsigned int *slot, double *value)
{
	uint64_t n = 0, rank, before = 0;
	double low, high, min, max;
	unsigned int k;

	if (!(q > 0 && q <= 100))
		return -EINVAL;
	for (k = 0; k < h->nr_slots; k++)
		n += h->slots[k];
	if (!n)
		return -ENODATA;
	rank = pct_rank(q, n);
	for (k = 0; k < h->nr_slots; k++) {
		uint64_t c = h->slots[k];

		if (before + c >= rank) {
			hist_slot_bounds(h, k, &low, &high);
			*slot = k;
			*value = low + (high - low) * (double)(rank - before) / (double)c;
			/*
			 * Every value, the percentile too, is within the extremes, and the
			 * percentile within the bucket printed with it: a time bucket's bounds
			 * are whole units, its values floored to them (8191.5 usecs counts in
			 * [4096, 8191]), so an extreme may lie just past them: then the bucket's
			 * bound holds.
			 */
			if (hist_minmax(h, &min, &max)) {
				low = min > low ? min : low;
				high = max < high ? max : high;
				if (low <= high)
					*value = *value < low ? low : *value > high ? high : *value;
				else
					*value = min > high ? high : low;
			}
			return 0;
		}
		before += c;
	}
	return -EINVAL; /* not reached: n counts the same slots */
}

bool hist_has_values(const struct kagg_hist *h)
{
	return h && KAGG_HAS_FIELD(h, kagg_hist, values) && h->exact == KAGG_EXACT_KEPT &&
	       h->values && h->nr_values;
}

int hist_exact_pct(const struct kagg_hist *h, double q, double *value)
{
	if (!(q > 0 && q <= 100))
		return -EINVAL;
	if (!hist_has_values(h))
		return -ENODATA;
	*value = h->values[pct_rank(q, h->nr_values) - 1];
	return 0;
}

int kagg_hist__percentile(const struct kagg_hist *h, double q, double *value, double *low,
			  double *high)
{
	unsigned int k;
	double v;
	int err;

	if (!h || !value || !sz_in_valid(h, HIST_MIN_SZ, sizeof(*h)))
		return -EINVAL;
	err = hist_pct_slot(h, q, &k, &v);
	if (err)
		return err;
	*value = v;
	if (low && high)
		hist_slot_bounds(h, k, low, high);
	return 0;
}

int kagg_hist__exact_percentile(const struct kagg_hist *h, double q, double *value)
{
	if (!h || !value || !sz_in_valid(h, HIST_MIN_SZ, sizeof(*h)))
		return -EINVAL;
	return hist_exact_pct(h, q, value);
}
