// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hist: a histogram of one numeric field of any tracepoint, written with the
 * SDK (bpf/sdk/kagg.bpf.h) and opened by libkagg's generic loader, as anyone's
 * program is: `kagg run hist.bpf.o --tracepoint SYSTEM:EVENT --set val_off=...`
 * does what `kagg hist` does, which only reads the event's format file and
 * sets these tunables.
 *
 * One classic tracepoint program, SEC("tracepoint") naming no event: ctx
 * points to the event's raw record, laid out as its tracefs format file says.
 * A field is read as 8 bytes at ctx + off with bpf_probe_read_kernel (a
 * variable offset into ctx cannot be dereferenced directly), keeping its low
 * `size` bytes, sign-extended when signed (little endian).  The same for the
 * key and the filter's field.
 *
 * One histogram (no key, a numeric key or a string key; log2 or linear) is
 * recorded into; the loader is told to leave the others empty (--set
 * NAME.max=0).  Values a bucket cannot hold are counted as drops of the
 * program's own: negative (signed, log2), below_range and above_range
 * (linear), read (a field that could not be read).
 */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"
#include "shared/hist.h"

/* The fields, as the event's format file places them: enum hist_src, offset, size, sign. */
const volatile __u32 val_src = HIST_SRC_RECORD, val_off = 0, val_size = 8;
const volatile bool val_signed = false;
const volatile __u32 key_kind = HIST_KEY_NONE; /* enum hist_key_kind */
const volatile __u32 key_src = HIST_SRC_RECORD, key_off = 0, key_size = 8;
const volatile bool key_signed = false;
const volatile __u32 filter_op = HIST_OP_NONE; /* enum hist_op */
const volatile __u32 flt_src = HIST_SRC_RECORD, flt_off = 0, flt_size = 8;
const volatile bool flt_signed = false;
const volatile __u64 filter_val = 0;
/* Linear buckets instead of log2 (their bounds: --set unkeyed_lin.min=, unkeyed_lin.step=, ...). */
const volatile bool linear = false;

/* 5120 keys per interval: 10240 entries for both generations, as kagg hist always had */
struct num_key {
	__u64 value; /* the field's, sign-extended */
};

struct str_key {
	char value[KAGG_SDK_COMM_LEN];
};

KAGG_HIST_LOG2(unkeyed, struct kagg_nokey, 1);
KAGG_HIST_LINEAR(unkeyed_lin, struct kagg_nokey, 1, 0, 1);
KAGG_HIST_LOG2(by_num, struct num_key, 5120);
KAGG_HIST_LINEAR(by_num_lin, struct num_key, 5120, 0, 1);
KAGG_HIST_LOG2(by_str, struct str_key, 5120);
KAGG_HIST_LINEAR(by_str_lin, struct str_key, 5120, 0, 1);
KAGG_DROP(negative, false, "signed value below 0: no log2 bucket (not recorded)");
KAGG_DROP(read, true, "field could not be read");
KAGG_DROP(below_range, false, "value below the first linear bucket (not recorded)");
KAGG_DROP(above_range, false, "value past the last linear bucket (not recorded)");

/* A field of the record at ctx, widened to 64 bits; false when unreadable. */
static __always_inline bool read_field(void *ctx, __u32 src, __u32 off, __u32 size, bool sign,
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
 * Two's-complement values compare as signed exactly when they compare as unsigned with
 * their sign bits flipped: one comparison serves both.
 */
static __always_inline bool filter_pass(__u64 v)
{
	__u64 flip = flt_signed ? 1ULL << 63 : 0, a = v ^ flip, b = filter_val ^ flip;

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

/*
 * v outside the linear buckets: counted as below_range or above_range.  The bounds are
 * unkeyed_lin's; kagg hist sets every linear aggregation's to the same.
 */
static __always_inline bool out_of_range(__u64 v)
{
	__s64 min = unkeyed_lin__kagg.lin_min;
	__u64 step = unkeyed_lin__kagg.lin_step;

	if (val_signed ? (__s64)v < min : v < (__u64)min) {
		below_range__count();
		return true;
	}
	if ((v - (__u64)min) / step >= KAGG_SDK_SLOTS) {
		above_range__count();
		return true;
	}
	return false;
}

/* Value v at key k into aggregation AGG, or into its twin AGG_lin with linear buckets. */
#define HIST_RECORD(AGG, k, v) (linear ? AGG##_lin__record(k, v) : AGG##__record(k, v))

SEC("tracepoint")
int hist_tp(void *ctx)
{
	struct num_key nk = {};
	struct str_key sk = {};
	__u64 v, fv;

	if (filter_op != HIST_OP_NONE) {
		if (!read_field(ctx, flt_src, flt_off, flt_size, flt_signed, &fv)) {
			read__count();
			return 0;
		}
		if (!filter_pass(fv)) {
			kagg_filtered();
			return 0;
		}
	}
	if (!read_field(ctx, val_src, val_off, val_size, val_signed, &v)) {
		read__count();
		return 0;
	}
	if (linear ? out_of_range(v) : val_signed && (__s64)v < 0) {
		if (!linear)
			negative__count();
		return 0;
	}
	if (key_kind == HIST_KEY_NONE) {
		HIST_RECORD(unkeyed, NULL, v);
		return 0;
	}
	/* a string up to its NUL: the bytes after it (the next field, stale ones) are no key */
	if (key_kind == HIST_KEY_STR
		    ? bpf_probe_read_kernel_str(
			      sk.value, key_size < sizeof(sk.value) ? key_size : sizeof(sk.value),
			      (void *)((unsigned long)ctx + key_off)) < 0
		    : !read_field(ctx, key_src, key_off, key_size, key_signed, &nk.value)) {
		read__count();
		return 0;
	}
	if (key_kind == HIST_KEY_STR)
		HIST_RECORD(by_str, &sk, v);
	else
		HIST_RECORD(by_num, &nk, v);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
