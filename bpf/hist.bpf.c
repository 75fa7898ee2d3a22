// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hist: a log2 histogram of one numeric field of any tracepoint.
 *
 * One generic classic tracepoint program: ctx points to the event's raw
 * record, laid out as the event's tracefs format file says.  Userspace
 * reads that file at run time and hands the field's offset, size and
 * signedness over as rodata; the program reads 8 bytes at ctx + offset with
 * bpf_probe_read_kernel (a variable offset into ctx cannot be dereferenced
 * directly) and keeps the field's low `size` bytes, sign-extended when
 * signed (x86-64 is little endian).  The same for the --key and --filter
 * fields.
 *
 * Buckets are log2 (negative signed values have none: counted apart), or
 * linear (lin_step > 0) from lin_min, KAGG_SLOTS of them, values outside
 * counted apart.  Aggregates are split in two generations like every kagg
 * program; one per-CPU array histogram, or a shared hash of per-key
 * histograms (atomic adds).
 */
/* kernels with hist triggers (arm64's vmlinux.h) have a struct hist_field of their own */
#define hist_field kernel_hist_field
#include "vmlinux.h"
#undef hist_field
#include <bpf/bpf_helpers.h>
#include "shared/hist.h"
#include "agg.bpf.h"

const volatile struct hist_field val = {};
const volatile struct hist_field key = {};
const volatile struct hist_field flt = {};
const volatile __u32 key_kind = HIST_KEY_NONE;
const volatile __u32 filter_op = HIST_OP_NONE;
const volatile __u64 filter_val = 0;
/* Linear buckets when lin_step > 0: slot k holds [lin_min + k*step, lin_min + (k+1)*step). */
const volatile __s64 lin_min = 0;
const volatile __u64 lin_step = 0;

__u32 armed = 0;

KAGG_COUNTERS_MAP(HIST_CNT_MAX);
KAGG_COUNTERS_GET
KAGG_HIST_MAP;
KAGG_KEY_HIST_MAP;
KAGG_EXP_HIST_MAP; /* --buckets exp:S, not keyed */
KAGG_EXP_CELLS;	   /* --buckets exp:S with a numeric key: counts and sums by key (32 bits) */

/* Field f of the record at ctx, widened to 64 bits; false when unreadable. */
static __always_inline bool read_field(void *ctx, __u32 off, __u32 size, bool sign, __u32 src,
				       __u64 *out)
{
	__u64 v = 0;

	if (src == HIST_SRC_TID) {
		*out = (__u32)bpf_get_current_pid_tgid();
		return true;
	}
	if (bpf_probe_read_kernel(&v, sizeof(v), (void *)((unsigned long)ctx + off)))
		return false;
	switch (size) {
	case 1:
		v = sign ? (__u64)(__s64)(__s8)v : (__u8)v;
		break;
	case 2:
		v = sign ? (__u64)(__s64)(__s16)v : (__u16)v;
		break;
	case 4:
		v = sign ? (__u64)(__s64)(__s32)v : (__u32)v;
		break;
	}
	*out = v;
	return true;
}

/*
 * Two's-complement values compare as signed exactly when they compare as
 * unsigned with their sign bits flipped: one comparison serves both.
 */
static __always_inline bool filter_pass(__u64 v)
{
	__u64 flip = flt.is_signed ? 1ULL << 63 : 0, a = v ^ flip, b = filter_val ^ flip;

	switch (filter_op) {
	case HIST_OP_EQ:
		return a == b;
	case HIST_OP_NE:
		return a != b;
	case HIST_OP_LT:
		return a < b;
	case HIST_OP_LE:
		return a <= b;
	case HIST_OP_GT:
		return a > b;
	case HIST_OP_GE:
		return a >= b;
	}
	return true;
}

/* FNV-1a over the 16 bytes of a string key, up to its NUL. */
static __always_inline __u64 str_hash(const char *s)
{
	__u64 h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < KAGG_COMM_LEN; i++) {
		if (!s[i])
			break;
		h = (h ^ (__u8)s[i]) * 0x100000001b3ULL;
	}
	return h;
}

SEC("tracepoint")
int hist_tp(void *ctx)
{
	struct kagg_key k = { .kstack = KAGG_NO_STACK, .ustack = KAGG_NO_STACK };
	char str[KAGG_COMM_LEN] = {};
	const char *comm_src;
	struct counters *c;
	__u32 slot, g;
	__u64 v, fv;

	c = counters_get();
	if (!c)
		return 0;
	c->cnt[HIST_CNT_EVENTS]++;
	if (filter_op != HIST_OP_NONE) {
		if (!read_field(ctx, flt.off, flt.size, flt.is_signed, flt.src, &fv)) {
			c->cnt[HIST_CNT_DROP_READ]++;
			return 0;
		}
		if (!filter_pass(fv)) {
			c->cnt[HIST_CNT_FILTERED]++;
			return 0;
		}
	}
	if (!read_field(ctx, val.off, val.size, val.is_signed, val.src, &v)) {
		c->cnt[HIST_CNT_DROP_READ]++;
		return 0;
	}
	if (lin_step) {
		__u64 k;

		if (val.is_signed ? (__s64)v < lin_min : v < (__u64)lin_min) {
			c->cnt[HIST_CNT_BELOW]++;
			return 0;
		}
		k = (v - (__u64)lin_min) / lin_step;
		if (k >= KAGG_SLOTS) {
			c->cnt[HIST_CNT_ABOVE]++;
			return 0;
		}
		slot = k;
	} else if (val.is_signed && (__s64)v < 0) {
		c->cnt[HIST_CNT_NEGATIVE]++;
		return 0;
	} else {
		slot = kagg_slot(v);
	}
	g = kagg_gen();
	if (key_kind == HIST_KEY_NONE) {
		KAGG_HIST_ADD(g, slot, v);
		c->cnt[HIST_CNT_RECORDED]++;
		return 0;
	}
	k.gen = g;
	if (key_kind == HIST_KEY_STR) {
		if (bpf_probe_read_kernel(str, sizeof(str) - 1,
					  (void *)((unsigned long)ctx + key.off))) {
			c->cnt[HIST_CNT_DROP_READ]++;
			return 0;
		}
		k.aux = str_hash(str);
		comm_src = (void *)((unsigned long)ctx + key.off);
	} else {
		if (!read_field(ctx, key.off, key.size, key.is_signed, key.src, &k.aux)) {
			c->cnt[HIST_CNT_DROP_READ]++;
			return 0;
		}
		/* the exp cells' id is the key's value: it must fit 32 bits */
		if (exp_words && (key.is_signed ? (__s64)k.aux != (__s32)k.aux : k.aux >> 32)) {
			c->cnt[HIST_CNT_DROP_EXP_KEY]++;
			return 0;
		}
		comm_src = str;
	}
	if (kagg_keyed_add(&key_hist, &k, comm_src, slot, v, &exp_cells, exp_words, (__u32)k.aux,
			   &exp_params, &c->cnt[HIST_CNT_DROP_KEYS_FULL],
			   &c->cnt[HIST_CNT_DROP_EXP_CELLS]))
		c->cnt[HIST_CNT_RECORDED]++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
