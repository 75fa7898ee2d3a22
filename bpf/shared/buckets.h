/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bucket math shared by both sides: the BPF programs bucket with it in the
 * kernel, the streaming consumers and the unit tests run the very same code
 * in userspace.  Plain C on __u32/__u64, integers only, no BPF helper: any
 * file may include it (userspace gets __always_inline from <sys/cdefs.h>).
 *
 * log2 buckets: kagg_log2_64(), kagg_log2_div(), from shared/bucket_math.h.
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
#include "shared/bucket_math.h"

/*
 * Slot of v > 0 in a histogram of KAGG_EXP_SLOTS(p->scale) slots: slot
 * 2^s * floor(log2 v) + j; the bucket index is slot + p->base_index.
 * v == 0 belongs to the zero bucket, which the caller counts apart.  p is volatile: BPF
 * programs pass their const volatile rodata, whose values the compiler must not assume.
 */
static __always_inline __u32 kagg_exp_slot(__u64 v, const volatile struct kagg_exp_params *p)
{
	return kagg_exp_slot_in(v, p->thresh, p->scale);
}

#endif
