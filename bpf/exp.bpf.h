/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Exponential-histogram bucketing: the bucket boundaries of OpenTelemetry
 * exponential histograms and Prometheus native histograms, u * 2^(i/2^s)
 * (bucket i = (u*2^(i/N), u*2^((i+1)/N)], N = 2^s), with integers only.
 *
 * A value v > 0 in octave k = floor(log2 v) is shifted to vn = v << (63-k);
 * the octave's N boundaries, shifted alike, are the thresholds of
 * abi/exp_table.h, floored, and vn > boundary exactly when vn > threshold.
 * A branch-light binary search (s compares, no loop over buckets) counts the
 * thresholds below vn.  Plain C: the unit tests run this very code natively.
 */
#ifndef KAGG_EXP_BPF_H
#define KAGG_EXP_BPF_H

#include "abi/exp_table.h"
#include "bits.bpf.h"

/*
 * Slot of v > 0 in a histogram of KAGG_EXP_SLOTS(p->scale) slots: slot
 * 2^s * floor(log2 v) + j; the bucket index is slot + p->base_index.
 * v == 0 belongs to the zero bucket, which the caller counts apart.  p is volatile: BPF
 * programs pass their const volatile rodata, whose values the compiler must not assume.
 */
static __always_inline __u32 kagg_exp_slot(__u64 v, const volatile struct kagg_exp_params *p)
{
	__u32 k = kagg_log2_64(v), s = p->scale, j = 0, b;
	__u64 vn = v << (63 - k);

	/*
	 * j = #{ m < 2^s : thresh[m] < vn }: halving steps 2^(s-1) ... 1 leave
	 * j at most 2^s - 1 with thresh[0 .. j) below vn; one last compare.
	 */
#ifdef __clang__
#pragma unroll
#endif
	for (b = KAGG_EXP_MAX_SCALE; b >= 1; b--) {
		if (s >= b) {
			__u32 step = 1U << (b - 1);

			if (vn > p->thresh[(j + step - 1) & (KAGG_EXP_MAX_N - 1)])
				j += step;
		}
	}
	if (vn > p->thresh[j & (KAGG_EXP_MAX_N - 1)])
		j++;
	return (k << s) + j;
}

#endif
