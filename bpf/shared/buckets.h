/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bucket math shared by both sides: the BPF programs bucket with it in the
 * kernel, the streaming consumers and the unit tests run the very same code
 * in userspace.  Plain C on __u32/__u64, integers only, no BPF helper: any
 * file may include it (userspace gets __always_inline from <sys/cdefs.h>).
 *
 * log2 buckets: kagg_log2_64(), kagg_log2_div().
 *
 * Exponential-histogram bucketing: the bucket boundaries of OpenTelemetry
 * exponential histograms and Prometheus native histograms, u * 2^(i/2^s)
 * (bucket i = (u*2^(i/N), u*2^((i+1)/N)], N = 2^s), with integers only.
 *
 * A value v > 0 in octave k = floor(log2 v) is shifted to vn = v << (63-k);
 * the octave's N boundaries, shifted alike, are the thresholds of
 * shared/exp_table.h, floored, and vn > boundary exactly when vn > threshold.
 * A branch-light binary search (s compares, no loop over buckets) counts the
 * thresholds below vn.  Plain C: the unit tests run this very code natively.
 */
#ifndef KAGG_SHARED_BUCKETS_H
#define KAGG_SHARED_BUCKETS_H

#include "shared/exp_table.h"

/* floor(log2(v)) for v > 0, 0 for v == 0: branch-light, verifier friendly. */
static __always_inline __u32 kagg_log2_32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 kagg_log2_64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? kagg_log2_32(hi) + 32 : kagg_log2_32((__u32)v);
}

/*
 * floor(log2(floor(v / unit))) (0 when the quotient is 0 or 1), capped at
 * 63, without a 64-bit division: with L = floor(log2 v) and U = floor(log2
 * unit) (unit_log2), the answer is the largest k with unit << k <= v, which
 * is L - U or L - U - 1.  Exact for every v and unit >= 1 (unit < 2^32).
 */
static __always_inline __u32 kagg_log2_div(__u64 v, __u64 unit, __u32 unit_log2)
{
	__s32 k;

	if (v < unit * 2)
		return 0;
	k = (__s32)kagg_log2_64(v) - (__s32)unit_log2;
	if (k > 0 && (unit << k) > v)
		k--;
	return k < 0 ? 0 : k > 63 ? 63 : (__u32)k;
}

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
