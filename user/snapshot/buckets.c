// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Bucket bounds of a histogram, whatever its buckets: log2 (slot k holds
 * [2^k, 2^(k+1) - 1], slot 0 also 0 and 1), linear (lin_min + k * lin_step,
 * lin_step wide) and exponential (slot k > 0 holds (2^(i/2^s), 2^((i+1)/2^s)]
 * with i = exp_base_index + k - 1, slot 0 the zeros).  Every reader of bucket
 * bounds (percentiles, printers, exporters) comes here; the kernel's side of
 * the same math is bpf/shared/buckets.h.
 */
#include <linux/types.h>

#include <kagg/snapshot.h>
#include "shared/exp_table.h"
#include "snapshot/snapshot_internal.h"
#include "util/opts.h"

#define HIST_MAX_SLOTS 64

void kagg_log2_bounds(unsigned int k, uint64_t *low, uint64_t *high)
{
	if (k >= HIST_MAX_SLOTS)
		k = HIST_MAX_SLOTS - 1;
	*low = k ? 1ULL << k : 0;
	*high = k == HIST_MAX_SLOTS - 1 ? UINT64_MAX : (2ULL << k) - 1;
}

/*
 * 2^(i/2^scale), from the boundaries' table (unit 1: thresh[j] = 2^(j/2^scale) * 2^63,
 * floored, so relative error 2^-63) and a power of two: no libm.
 */
static double exp_boundary(int64_t i, unsigned int scale)
{
	int64_t n = 1 << scale, o = i >= 0 ? i / n : -((-i + n - 1) / n);
	double v = (double)kagg_exp_table[0][scale].thresh[i - o * n] / 9223372036854775808.0;

	for (; o > 0; o--)
		v *= 2;
	for (; o < 0; o++)
		v /= 2;
	return v;
}

bool hist_is_exp(const struct kagg_hist *h)
{
	return KAGG_HAS_FIELD(h, kagg_hist, exp_base_index) && h->has_exp;
}

void hist_slot_bounds(const struct kagg_hist *h, unsigned int k, double *low, double *high)
{
	uint64_t lo, hi;

	if (hist_is_exp(h)) {
		unsigned int s = h->exp_scale < 0		     ? 0
				 : h->exp_scale > KAGG_EXP_MAX_SCALE ? KAGG_EXP_MAX_SCALE
								     : (unsigned int)h->exp_scale;
		int64_t i = h->exp_base_index + (int64_t)k - 1;

		if (!k) {
			*low = *high = 0;
			return;
		}
		*low = exp_boundary(i, s);
		*high = exp_boundary(i + 1, s);
		return;
	}
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

void kagg_hist__bounds(const struct kagg_hist *h, unsigned int k, double *low, double *high)
{
	if (h && low && high && sz_in_valid(h, HIST_MIN_SZ, sizeof(*h)))
		hist_slot_bounds(h, k, low, high);
}
