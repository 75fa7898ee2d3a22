/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Bucketing helpers shared by the histogram programs. */
#ifndef KAGG_BITS_BPF_H
#define KAGG_BITS_BPF_H

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

#endif
