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
 * high bound of the last non-empty bucket.
 */
#include <errno.h>
#include <math.h>

#include <kagg/snapshot.h>
#include "opts.h"
#include "snapshot_internal.h"

void hist_slot_bounds(const struct kagg_hist *h, unsigned int k, double *low, double *high)
{
	uint64_t lo, hi;

	if (h->lin_step) {
		int64_t l = h->lin_min + (int64_t)(k * h->lin_step);

		*low = (double)l;
		*high = (double)(l + (int64_t)h->lin_step - 1);
		return;
	}
	kagg_log2_bounds(k, &lo, &hi);
	*low = (double)lo;
	*high = (double)hi;
}

int hist_pct_slot(const struct kagg_hist *h, double q, unsigned int *slot, double *value)
{
	uint64_t n = 0, rank, before = 0;
	long double r;
	double low, high;
	unsigned int k;

	if (!(q > 0 && q <= 100))
		return -EINVAL;
	for (k = 0; k < h->nr_slots; k++)
		n += h->slots[k];
	if (!n)
		return -ENODATA;
	/* q/100 * n in long double, a hair under so that 99.9% of 1000 is rank 999 */
	r = (long double)q * (long double)n / 100.0L;
	rank = (uint64_t)ceill(r - r * 1e-12L);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	for (k = 0; k < h->nr_slots; k++) {
		uint64_t c = h->slots[k];

		if (before + c >= rank) {
			hist_slot_bounds(h, k, &low, &high);
			*slot = k;
			*value = low + (high - low) * (double)(rank - before) / (double)c;
			return 0;
		}
		before += c;
	}
	return -EINVAL; /* not reached: n counts the same slots */
}

int kagg_hist__percentile(const struct kagg_hist *h, double q, double *value, double *low,
			  double *high)
{
	unsigned int k;
	double v;
	int err;

	if (!h || !value || !kagg_in_valid(h, HIST_MIN_SZ, sizeof(*h)))
		return -EINVAL;
	err = hist_pct_slot(h, q, &k, &v);
	if (err)
		return err;
	*value = v;
	if (low && high)
		hist_slot_bounds(h, k, low, high);
	return 0;
}
