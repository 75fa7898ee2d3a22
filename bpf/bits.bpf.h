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

#endif
