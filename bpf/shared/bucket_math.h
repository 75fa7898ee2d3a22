/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The integer bucket math itself, and the exact extremes kept beside the
 * buckets, on their own so that the BPF SDK (bpf/sdk/kagg.bpf.h, installed
 * with this file as <kagg/bpf/bucket_math.h>) and kagg's own programs and
 * userspace (through shared/buckets.h and shared/common.h) run the same code.  Plain C on
 * __u32/__u64, no BPF helper, no other kagg header: the includer brings the __u32/__u64 types and
 * __always_inline.  The atomic forms for maps every CPU writes are BPF's only.
 */
#ifndef KAGG_SHARED_BUCKET_MATH_H
#define KAGG_SHARED_BUCKET_MATH_H

#define KAGG_EXP_MAX_SCALE 5
#define KAGG_EXP_MAX_N (1 << KAGG_EXP_MAX_SCALE)

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
 * Slot of v > 0 among 2^s buckets an octave: 2^s * floor(log2 v) + j, where
 * j counts the thresholds below v normalized to [2^63, 2^64).  thresh holds
 * KAGG_EXP_MAX_N values, ascending, of which the first 2^s are used (s <=
 * KAGG_EXP_MAX_SCALE).  Volatile: BPF programs pass their const volatile
 * rodata, whose values the compiler must not assume.
 */
static __always_inline __u32 kagg_exp_slot_in(__u64 v, const volatile __u64 *thresh, __u32 s)
{
	__u32 k = kagg_log2_64(v), j = 0, b;
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

			if (vn > thresh[(j + step - 1) & (KAGG_EXP_MAX_N - 1)])
				j += step;
		}
	}
	if (vn > thresh[j & (KAGG_EXP_MAX_N - 1)])
		j++;
	return (k << s) + j;
}

/*
 * The exact extremes of a histogram, kept next to its counts: max the largest value
 * counted, nmin the bitwise complement of the smallest (~v is largest when v is
 * smallest).  Both are maxima, so that an entry of zeroes (as a map entry is made and as
 * userspace resets a generation) holds none, and a CPU or a cell that counted nothing
 * merges as nothing: the smallest over copies is the complement of the largest nmin.  A
 * histogram that counted nothing has no extremes (count 0: nmin and max mean nothing).
 * Values compare as unsigned: the programs store v ^ kagg_ext_flip (bpf/agg.bpf.h), the
 * sign bit for signed values, which then compare the same.
 */
#define KAGG_EXT_WORDS 2 /* nmin, max: words after an exp histogram's sum */

static __always_inline void kagg_ext_put(__u64 *nmin, __u64 *max, __u64 o)
{
	if (~o > *nmin)
		*nmin = ~o;
	if (o > *max)
		*max = o;
}

/* Merge the extremes of another copy (a CPU's, a cell's) into *nmin, *max. */
static __always_inline void kagg_ext_merge(__u64 *nmin, __u64 *max, __u64 nmin2, __u64 max2)
{
	if (nmin2 > *nmin)
		*nmin = nmin2;
	if (max2 > *max)
		*max = max2;
}

#ifdef __bpf__
/*
 * Raise *p, a maximum every CPU may write (shared maps), to o: a compare-and-swap, tried
 * again while another CPU changed *p meanwhile, at most 4 times (each retry
 * means another CPU raised it: it gives up only under a storm of new extremes on one
 * histogram).  Most values are no new extreme and cost one load.  Kernels without BPF
 * cmpxchg (before 5.12) load the programs with a plain store in its place (libkagg's
 * loader does it): exact unless two CPUs raise one extreme at once.
 */
static __always_inline bool kagg_max_try(__u64 *p, __u64 *cur, __u64 o)
{
	__u64 old;

	if (o <= *cur)
		return true;
	old = __sync_val_compare_and_swap(p, *cur, o);
	if (old == *cur)
		return true;
	*cur = old;
	return false;
}

/* 4 tries, written out: no compiler is asked to unroll a loop (clang 14 may not) */
static __always_inline void kagg_max_shared(__u64 *p, __u64 o)
{
	__u64 cur = *(volatile __u64 *)p;

	(void)(kagg_max_try(p, &cur, o) || kagg_max_try(p, &cur, o) || kagg_max_try(p, &cur, o) ||
	       kagg_max_try(p, &cur, o));
}

/* kagg_ext_put() on extremes every CPU may write. */
static __always_inline void kagg_ext_put_shared(__u64 *nmin, __u64 *max, __u64 o)
{
	kagg_max_shared(nmin, ~o);
	kagg_max_shared(max, o);
}
#endif /* __bpf__ */

#endif /* KAGG_SHARED_BUCKET_MATH_H */
