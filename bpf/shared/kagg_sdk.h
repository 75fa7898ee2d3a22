/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kagg/bpf/kagg_sdk.h - the contract between a BPF program written with
 * kagg.bpf.h and the generic loader (kagg run, kagg_prog__open()).  Both
 * sides include it: the program after vmlinux.h, userspace after
 * <linux/types.h>.
 *
 * What the loader finds in the object's BTF:
 *   - an aggregation is a map NAME with a `const volatile struct kagg_sdk_desc
 *     NAME__kagg` in .rodata saying what it is (kind, flags, drop counters);
 *     its key type is `struct NAME__key { __u32 gen; __u32 __pad; KEY k; }`
 *     and its value one of the kagg_sdk_* values below, checked by size;
 *   - the per-CPU array `kagg_counters` (one struct kagg_sdk_counters);
 *   - the .bss words `kagg_gen` (generation, flipped by the loader) and
 *     `kagg_armed` (set once every program is attached);
 *   - the .rodata `kagg_unit_ns`/`kagg_unit_log2` (the unit of time
 *     histograms), set by the loader;
 *   - the .rodata `kagg_stream` (enum kagg_sdk_stream, set by the loader):
 *     each histogram or counter observation also streamed as a record
 *     (struct kagg_sdk_rec, then the KEY, then the __u64 value at the next
 *     8-byte boundary) in the ring buffer `kagg_events`, counted by
 *     generation in `kagg_stream_cnt`;
 *   - the .rodata `kagg_exp` (0, else exp scale + 1) and `kagg_exp_params`: log2
 *     histograms counted in exponential buckets instead, in each one's cell map
 *     NAME__x (key struct NAME__xkey { __u32 gen; __u32 slot; KEY k; }, values
 *     struct kagg_sdk_cell; slot 0 the zero bucket, k >= 1 exp slot k - 1);
 *   - histogram values and cells end with the exact extremes (nmin, max) of
 *     the values counted; an object built before they were (its values the
 *     _V1 sizes below) is read without them;
 *   - every other `const volatile` global is a tunable (--set NAME=VALUE);
 *   - the key fields whose type is one of the typedefs below are resolved
 *     when printed; fields whose name starts with "__" are padding, not shown.
 */
#ifndef __KAGG_SDK_H
#define __KAGG_SDK_H

#define KAGG_SDK_SLOTS 64  /* log2 / linear buckets per histogram */
#define KAGG_SDK_NR_CNT 32 /* counters of kagg_counters */
#define KAGG_SDK_COMM_LEN 16
#define KAGG_SDK_MAX_STACK 127	     /* frames per stack */
#define KAGG_SDK_NO_STACK (-1000000) /* stack id: not captured by design */

/* Counters (kagg_counters.cnt[i]): 0 .. KAGG_SDK_CNT_DROP-1, then drops by cause. */
enum kagg_sdk_cnt {
	KAGG_SDK_CNT_EVENTS = 0,   /* observations offered while armed */
	KAGG_SDK_CNT_RECORDED = 1, /* observations aggregated */
	KAGG_SDK_CNT_FILTERED = 2, /* left out by the program (kagg_filtered()): no loss */
	KAGG_SDK_CNT_DROP = 3,	   /* first drop counter, one or more per aggregation */
};

/* What an aggregation is (kagg_sdk_desc.kind). */
enum kagg_sdk_kind {
	KAGG_SDK_LOG2 = 1,   /* log2 histogram per key (struct kagg_sdk_hist) */
	KAGG_SDK_LINEAR = 2, /* linear histogram per key (struct kagg_sdk_hist) */
	KAGG_SDK_COUNT = 3,  /* count and sum per key (struct kagg_sdk_count) */
	KAGG_SDK_STACKS = 4, /* count and sum per stack (struct kagg_sdk_stack_val) */
	KAGG_SDK_PAIR = 5,   /* start/stop pair: no aggregate, its drops */
	KAGG_SDK_DROP = 6,   /* a drop cause of the program's own (KAGG_DROP): its counter */
};

/* kagg_sdk_desc.flags */
enum kagg_sdk_flag {
	KAGG_SDK_TIME = 1 << 0,	  /* values are ns, shown in the session's unit */
	KAGG_SDK_KSTACK = 1 << 1, /* stacks: kernel frames */
	KAGG_SDK_USTACK = 1 << 2, /* stacks: user frames */
	KAGG_SDK_LOSS = 1 << 3,	  /* a KAGG_DROP: each one counted lost an observation */
};

/* `const volatile struct kagg_sdk_desc NAME__kagg` next to each aggregation NAME. */
struct kagg_sdk_desc {
	__u32 kind;  /* enum kagg_sdk_kind */
	__u32 flags; /* enum kagg_sdk_flag */
	__u32 drop;  /* counter: keys full (pairs: start table full) */
	__u32 drop2; /* pairs: a start found the previous one open (its stop was missed) */
	__u32 drop3; /* pairs: a stop found no start (started before the session) */
	__u32 __pad;
	__s64 lin_min; /* linear: slot k is [lin_min + k*lin_step, lin_min + (k+1)*lin_step) */
	__u64 lin_step;
};

struct kagg_sdk_counters {
	__u64 cnt[KAGG_SDK_NR_CNT];
};

/*
 * Histogram value (one per key, or per CPU without a key): slot counts; sum of the values (ns for
 * times), modulo 2^64; the extremes of the values as kagg_ext_put() keeps them
 * (<kagg/bpf/bucket_math.h>), a linear histogram's taken as signed (kagg_sdk_ext_ord()).
 */
struct kagg_sdk_hist {
	__u64 slots[KAGG_SDK_SLOTS];
	__u64 sum;
	__u64 nmin, max;
};
#define KAGG_SDK_HIST_V1_SIZE (8 * KAGG_SDK_SLOTS + 8) /* without the extremes */

/* kagg_stream: where observations go. */
enum kagg_sdk_stream {
	KAGG_SDK_STREAM_OFF = 0,  /* aggregated in the maps */
	KAGG_SDK_STREAM_ONLY = 1, /* streamed only */
	KAGG_SDK_STREAM_BOTH = 2, /* aggregated and streamed */
};

/*
 * Head of a streamed observation; the KEY follows, then the __u64 value (at the next
 * 8-byte boundary).  ts, seq, cpu and gen are laid out as libkagg's record header.
 */
struct kagg_sdk_rec {
	__u64 ts;  /* bpf_ktime_get_ns() of the event (kagg_now()) */
	__u64 seq; /* this CPU's streamed records so far: gaps are losses */
	__u32 cpu;
	__u32 gen; /* snapshot generation */
	__u32 agg; /* the aggregation: its descriptor's drop counter */
	__u32 pid; /* the current thread */
};

/* kagg_stream_cnt's value, per CPU, one entry per generation. */
struct kagg_sdk_stream_cnt {
	__u64 seen;    /* observations streamed or tried */
	__u64 sent;    /* records submitted */
	__u64 dropped; /* ring buffer full */
};

/* Exponential buckets (--buckets exp:S): libkagg's struct kagg_exp_params. */
#define KAGG_SDK_EXP_MAX_SCALE 5
#define KAGG_SDK_EXP_MAX_N (1 << KAGG_SDK_EXP_MAX_SCALE)

struct kagg_sdk_exp_params {
	__u64 thresh[KAGG_SDK_EXP_MAX_N]; /* ascending; the first 2^scale are used */
	__s64 base_index;
	__u64 unit;
	__u32 scale;
	__u32 __pad;
};

/*
 * v as a histogram of kind compares its extremes (kagg_ext_put()): a linear histogram's
 * values as signed (the sign bit flipped), others as unsigned.  Its own inverse.
 */
static __always_inline __u64 kagg_sdk_ext_ord(__u32 kind, __u64 v)
{
	return kind == KAGG_SDK_LINEAR ? v ^ (1ULL << 63) : v;
}

/* Counter value (one per key, or per CPU without a key). */
struct kagg_sdk_count {
	__u64 count;
	__u64 sum;
};

/* An exp bucket's cell (one per key and bucket, or per CPU without a key): a count and a sum, and
 * the extremes as kagg_sdk_hist's. */
struct kagg_sdk_cell {
	__u64 count;
	__u64 sum;
	__u64 nmin, max;
};
#define KAGG_SDK_CELL_V1_SIZE 16 /* without the extremes (a kagg_sdk_count) */

/* Stack aggregation key (stacks in kagg_stackmap) and value. */
struct kagg_sdk_stack_key {
	__u32 gen;
	__u32 tgid;
	__u32 pid;
	__s32 kstack; /* stack id, negative errno, or KAGG_SDK_NO_STACK */
	__s32 ustack;
	__u32 __pad;
	__u64 aux;
};

struct kagg_sdk_stack_val {
	char comm[KAGG_SDK_COMM_LEN];
	__u64 sum; /* of the values recorded (ns for times) */
	__u64 count;
};

_Static_assert(sizeof(struct kagg_sdk_desc) == 40, "kagg_sdk_desc layout");
_Static_assert(sizeof(struct kagg_sdk_counters) == 8 * KAGG_SDK_NR_CNT, "counters layout");
_Static_assert(sizeof(struct kagg_sdk_hist) == KAGG_SDK_HIST_V1_SIZE + 16, "kagg_sdk_hist layout");
_Static_assert(sizeof(struct kagg_sdk_count) == 16, "kagg_sdk_count layout");
_Static_assert(sizeof(struct kagg_sdk_cell) == KAGG_SDK_CELL_V1_SIZE + 16, "kagg_sdk_cell layout");
_Static_assert(sizeof(struct kagg_sdk_rec) == 32, "kagg_sdk_rec layout");
_Static_assert(sizeof(struct kagg_sdk_exp_params) == 8 * KAGG_SDK_EXP_MAX_N + 24,
	       "kagg_sdk_exp_params layout");
_Static_assert(sizeof(struct kagg_sdk_stream_cnt) == 24, "kagg_sdk_stream_cnt layout");
_Static_assert(sizeof(struct kagg_sdk_stack_key) == 32, "kagg_sdk_stack_key layout");
_Static_assert(sizeof(struct kagg_sdk_stack_val) == 32, "kagg_sdk_stack_val layout");

/*
 * Key fields the loader resolves when it prints them, by their type's name
 * (keep the typedef: a field declared with the underlying integer prints as
 * a number).
 */
typedef __u32 kagg_pid_t;    /* a process id: printed as the number and NAME_comm */
typedef __u64 kagg_cgroup_t; /* a cgroup v2 id: printed as the cgroup's path */
typedef __u64 kagg_kaddr_t;  /* a kernel address: printed as its symbol */
typedef __u64 kagg_uaddr_t;  /* a user address in the key's kagg_pid_t process: its symbol */
typedef __u32 kagg_dev_t;    /* a kernel dev_t (major << 20 | minor): "major:minor" */
typedef __s32 kagg_kstack_t; /* a kernel stack id of kagg_stackmap: its frames, ';'-joined */
typedef __s32 kagg_ustack_t; /* a user stack id, of the key's kagg_pid_t process: its frames */

#endif /* __KAGG_SDK_H */
