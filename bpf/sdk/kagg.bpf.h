/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kagg/bpf/kagg.bpf.h - a whole kagg tool in one BPF program: declare
 * aggregations, record into them, and run it with `kagg run PROG.bpf.o`
 * (or kagg_prog__open() in libkagg).  See docs/sdk.md.
 *
 * Conventions:
 * - Include "vmlinux.h" first, then this header, once per program.
 * - Each aggregation is declared at file scope by one macro, which defines
 *   the map NAME, its descriptor NAME__kagg (what the loader reads) and
 *   the inline functions that record into it, NAME__record(...) and the
 *   like.  Declaring is all: the loader finds them in the object's BTF.
 * - A recorder returns true when the observation was aggregated.  Before
 *   every program of the session is attached, and after it is detached,
 *   recorders and starts do nothing (they return false).
 * - Keys are structs the program defines, compared as bytes: zero a key
 *   whole (`struct k k = {}` or __builtin_memset) before filling it, and pad
 *   explicitly.  Fields whose type is a kagg_*_t typedef of kagg_sdk.h are
 *   printed resolved (comm, cgroup path, symbol, major:minor, frames).
 * - Limits: MAX keys per aggregation per interval (the map holds both
 *   generations: 2 * MAX entries); a key that does not fit is counted as
 *   the drop "NAME_keys_full".  At most KAGG_SDK_NR_CNT - KAGG_SDK_CNT_DROP
 *   drop counters in a program (one per aggregation, three per pair).
 * - Tunables are `const volatile` globals: `kagg run --set NAME=VALUE`.
 *   Names starting with kagg_ are the loader's.
 * - Every function here is static __always_inline; none returns from its
 *   caller.
 */
#ifndef __KAGG_BPF_H
#define __KAGG_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#if __has_include("kagg_sdk.h")
#include "kagg_sdk.h"
#else
#include "shared/kagg_sdk.h" /* kagg's source tree */
#endif

/*
 * The key of an aggregation of one histogram or counter, no key: NAME__record(NULL, v).
 * Any KEY with no fields is kept in a per-CPU array, as cheap as a built-in tool's.
 */
struct kagg_nokey {
};

/* The functions the declaring macros define: inline, and fine to leave unused. */
#define __KAGG_FN static __always_inline __attribute__((unused))

/* ---------------------------------------------------------------- shared state */

/* Per-CPU counters: events, recorded, filtered, drops by cause. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kagg_sdk_counters);
} kagg_counters SEC(".maps");

/* Stacks of KAGG_STACKS aggregations and kagg_kstack_t/kagg_ustack_t key fields. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, KAGG_SDK_MAX_STACK * sizeof(__u64));
} kagg_stackmap SEC(".maps");

/*
 * The time of the KAGG_TP/KAGG_FUNC event running on this CPU (kagg_now()), read once
 * per event: a clock read is most of a small program where the clock source is slow
 * (50-100 ns in some guests).
 */
struct kagg_clock {
	__u64 now; /* 0 until read */
	__u32 on;  /* a KAGG_TP/KAGG_FUNC handler runs */
	__u32 __pad;
	__u64 seq; /* records streamed on this CPU (never reset: gaps are losses) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kagg_clock);
} kagg_clock SEC(".maps");

/* Snapshot generation (the loader flips it) and the session's armed switch. */
__u32 kagg_gen = 0;
__u32 kagg_armed = 0;
/* Unit of time histograms: ns per unit and its floor(log2) (set by the loader). */
const volatile __u64 kagg_unit_ns = 1000;
const volatile __u32 kagg_unit_log2 = 9;
/* The initial value of new histogram entries (too large for the BPF stack). */
const struct kagg_sdk_hist kagg_sdk_zero_hist = {};

/* Observations streamed too (enum kagg_sdk_stream, set by the loader). */
const volatile __u32 kagg_stream = KAGG_SDK_STREAM_OFF;

/* Streaming: wake the consumer once this many bytes wait (set by the loader; 0: always). */
const volatile __u64 kagg_wake_bytes = 0;

/* Streamed observations (the loader sizes it when streaming). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} kagg_events SEC(".maps");

/* Streamed records by generation: seen = sent + dropped once a generation is retired. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct kagg_sdk_stream_cnt);
} kagg_stream_cnt SEC(".maps");

/*
 * --mode both with --overhead: the loader sets kagg_time_stream, and the streaming part of
 * every observation is timed into kagg_stream_ns (one u64 per CPU, only growing), so that
 * each path's cost can be told apart in the one program that does both.
 */
const volatile __u32 kagg_time_stream = 0;
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} kagg_stream_ns SEC(".maps");

/*
 * Exponential buckets for log2 histograms: 0, else the scale + 1; the thresholds of raw
 * values [0] and of times [1] (in the session's unit), set by the loader.
 */
const volatile __u32 kagg_exp = 0;
const volatile struct kagg_sdk_exp_params kagg_exp_params[2] = {};

/* The session is armed. */
static __always_inline bool kagg_armed_now(void)
{
	return *(volatile __u32 *)&kagg_armed;
}

/* This CPU's counters (NULL only if the map is missing). */
static __always_inline struct kagg_sdk_counters *kagg_cnt(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&kagg_counters, &zero);
}

/* Count counter i (a constant) on this CPU. */
static __always_inline void kagg_count(__u32 i)
{
	struct kagg_sdk_counters *c = kagg_cnt();

	if (c && i < KAGG_SDK_NR_CNT)
		c->cnt[i]++;
}

/*
 * An observation counted as one the program saw and then counted as i (a constant: left out
 * by its filter, a drop of its own): seen = recorded + filtered + dropped holds.
 */
static __always_inline void kagg_count_seen(__u32 i)
{
	struct kagg_sdk_counters *c;

	if (!kagg_armed_now())
		return;
	c = kagg_cnt();
	if (c && i < KAGG_SDK_NR_CNT) {
		c->cnt[KAGG_SDK_CNT_EVENTS]++;
		c->cnt[i]++;
	}
}

/* An event the program leaves out on purpose (its own filter): counted, not lost. */
static __always_inline void kagg_filtered(void)
{
	kagg_count_seen(KAGG_SDK_CNT_FILTERED);
}

/*
 * Now, in ns (bpf_ktime_get_ns()): in a KAGG_TP or KAGG_FUNC handler the same for every
 * call of one event, read at the first; elsewhere read at each call.  (A program of
 * another kind that interrupts such a handler on its CPU, e.g. a perf event in NMI,
 * gets the handler's time: earlier by at most the handler's run so far.)
 */
static __always_inline __u64 kagg_now(void)
{
	__u32 zero = 0;
	struct kagg_clock *c = bpf_map_lookup_elem(&kagg_clock, &zero);

	if (!c || !c->on)
		return bpf_ktime_get_ns();
	if (!c->now)
		c->now = bpf_ktime_get_ns();
	return c->now;
}

/*
 * A KAGG_TP/KAGG_FUNC handler begins: kagg_now() reads the clock once until
 * kagg_event_end().  (A handler interrupted by another on its CPU reads it at each call
 * after: no time of one event is taken for another's.)
 */
static __always_inline struct kagg_clock *kagg_event_begin(void)
{
	__u32 zero = 0;
	struct kagg_clock *c = bpf_map_lookup_elem(&kagg_clock, &zero);

	if (c) {
		c->now = 0;
		c->on = 1;
	}
	return c;
}

static __always_inline int kagg_event_end(struct kagg_clock *c, int ret)
{
	if (c)
		c->on = 0;
	return ret;
}

/* One observation: this CPU's counters and the generation it goes to. */
struct kagg_obs {
	struct kagg_sdk_counters *c;
	__u32 gen;
};

/* Open an observation (counted as an event); false when not armed. */
static __always_inline bool kagg_obs_begin(struct kagg_obs *o)
{
	if (!kagg_armed_now())
		return false;
	o->c = kagg_cnt();
	if (!o->c)
		return false;
	o->gen = *(volatile __u32 *)&kagg_gen & 1;
	o->c->cnt[KAGG_SDK_CNT_EVENTS]++;
	return true;
}

/*
 * Close observation o: counted recorded, or when the aggregation's map had no room for
 * it (recorded false) counted as its drop; returns recorded.
 */
static __always_inline bool kagg_obs_end(struct kagg_obs *o, bool recorded, __u32 drop)
{
	if (recorded)
		o->c->cnt[KAGG_SDK_CNT_RECORDED]++;
	else
		o->c->cnt[drop]++;
	return recorded;
}

/*
 * Reserve a streamed record of size bytes (a constant) for aggregation agg in generation
 * gen, its head filled; NULL when the ring buffer is full (counted dropped).
 */
static __always_inline void *kagg_rec_reserve(__u64 size, __u32 agg, __u32 gen)
{
	struct kagg_sdk_stream_cnt *sc = bpf_map_lookup_elem(&kagg_stream_cnt, &gen);
	__u32 zero = 0;
	struct kagg_clock *c = bpf_map_lookup_elem(&kagg_clock, &zero);
	struct kagg_sdk_rec *r;

	if (!sc || !c)
		return NULL;
	sc->seen++;
	c->seq++;
	r = bpf_ringbuf_reserve(&kagg_events, size, 0);
	if (!r) {
		sc->dropped++;
		return NULL;
	}
	r->ts = kagg_now();
	r->seq = c->seq;
	r->cpu = bpf_get_smp_processor_id();
	r->gen = gen;
	r->agg = agg;
	r->pid = (__u32)bpf_get_current_pid_tgid();
	return r;
}

/* Submit a record of kagg_rec_reserve(), counted sent in its generation. */
static __always_inline void kagg_rec_submit(void *r, __u32 gen)
{
	struct kagg_sdk_stream_cnt *sc = bpf_map_lookup_elem(&kagg_stream_cnt, &gen);

	if (sc)
		sc->sent++;
	/* a wakeup per record costs more than the record: the consumer is woken in batches */
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&kagg_events, BPF_RB_AVAIL_DATA) >= kagg_wake_bytes
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
}

/* Count the time since t0 (bpf_ktime_get_ns()) as this CPU's streaming time. */
static __always_inline void kagg_stream_timed(__u64 t0)
{
	__u32 zero = 0;
	__u64 *ns = bpf_map_lookup_elem(&kagg_stream_ns, &zero);

	if (ns)
		*ns += bpf_ktime_get_ns() - t0;
}

/* ---------------------------------------------------------------- bucketing */

/*
 * kagg_log2_64(), kagg_log2_div() and kagg_exp_slot_in(): the bucket math of kagg's own
 * programs and userspace, the same code.
 */
#if __has_include("bucket_math.h")
#include "bucket_math.h"
#else
#include "shared/bucket_math.h" /* kagg's source tree */
#endif

_Static_assert(KAGG_SDK_EXP_MAX_N == KAGG_EXP_MAX_N, "kagg_sdk_exp_params.thresh size");

/* The exponential bucket of v > 0 with kagg_exp_params[time] (libkagg's kagg_exp_slot()). */
static __always_inline __u32 kagg_exp_slot_of(__u64 v, const volatile struct kagg_sdk_exp_params *p)
{
	return kagg_exp_slot_in(v, p->thresh, p->scale);
}

/*
 * The slot of v in a histogram of kind (a constant) with flags, or
 * KAGG_SDK_SLOTS when a linear one has no slot for it.
 */
static __always_inline __u32 kagg_slot(__u32 kind, __u32 flags, __u64 v, __s64 min, __u64 step)
{
	__u64 k;

	if (kind == KAGG_SDK_LINEAR) {
		if ((__s64)v < min)
			return KAGG_SDK_SLOTS;
		k = ((__u64)v - (__u64)min) / step;
		/*
		 * The verifier does not bound a quotient: keep the bound check below even
		 * where the compiler knows v (a constant, a switch) and would drop it.
		 */
		asm volatile("" : "+r"(k));
		return k < KAGG_SDK_SLOTS ? (__u32)k : KAGG_SDK_SLOTS;
	}
	if (flags & KAGG_SDK_TIME)
		return kagg_log2_div(v, kagg_unit_ns, kagg_unit_log2);
	return kagg_log2_64(v);
}

/* The entry of key k in map, created from init when missing; NULL when the map is full. */
static __always_inline void *kagg_agg_entry(void *map, const void *k, const void *init)
{
	void *v = bpf_map_lookup_elem(map, k);

	if (v)
		return v;
	bpf_map_update_elem(map, k, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, k);
}

/* Add v to *p: atomically in a map every CPU writes (shared, a constant), else plainly. */
static __always_inline void kagg_sdk_add(__u64 *p, __u64 v, bool shared)
{
	if (shared)
		__sync_fetch_and_add(p, v);
	else
		*p += v;
}

/* Count v (ordered as its extremes compare it: o) in slot of histogram h. */
static __always_inline void kagg_sdk_hist_add(struct kagg_sdk_hist *h, __u32 slot, __u64 v, __u64 o,
					      bool shared)
{
	/*
	 * slot < KAGG_SDK_SLOTS already, but 5.10's verifier does not carry that check's bound
	 * to the address: masked here, behind an empty asm so that the compiler keeps the mask
	 */
	asm volatile("" : "+r"(slot));
	slot &= KAGG_SDK_SLOTS - 1;
	kagg_sdk_add(&h->slots[slot], 1, shared);
	kagg_sdk_add(&h->sum, v, shared);
	if (shared)
		kagg_ext_put_shared(&h->nmin, &h->max, o);
	else
		kagg_ext_put(&h->nmin, &h->max, o);
}

/* ---------------------------------------------------------------- aggregations */

/*
 * The map of an aggregation NAME keyed by KEY (two generations: 2 * MAX entries), one
 * hash keyed by struct NAME__key that every CPU adds to atomically: its memory grows with
 * the keys, not with the CPUs (a per-CPU hash of 10240 keys would take 11 MB per possible
 * CPU).  For a KEY with no fields (sizeof 0, e.g. struct kagg_nokey) a per-CPU array of
 * two entries indexed by the generation: an array lookup is inlined by the verifier, and
 * each CPU adds to its own copy without atomics.
 */
#define __KAGG_AGG_MAP(NAME, KEY, MAX, VALUE)                                                     \
	struct NAME##__key {                                                                      \
		__u32 gen;                                                                        \
		__u32 __pad;                                                                      \
		KEY k;                                                                            \
	};                                                                                        \
	struct {                                                                                  \
		__uint(type, sizeof(KEY) ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_PERCPU_ARRAY);        \
		__uint(max_entries, sizeof(KEY) ? 2 * (MAX) : 2);                                 \
		__type(key, __typeof__(__builtin_choose_expr(sizeof(KEY), (struct NAME##__key){}, \
							     (__u32)0)));                         \
		__type(value, VALUE);                                                             \
	} NAME SEC(".maps")

/*
 * Generation o->gen's value of key in aggregation map (KEY its key type, NAME__key the
 * map's), created from init when missing; NULL when the map is full.
 */
#define __KAGG_AGG_ENTRY(NAME, KEY, o, key, init)                    \
	({                                                           \
		struct NAME##__key __k;                              \
		void *__v;                                           \
                                                                     \
		if (!sizeof(KEY)) {                                  \
			__v = bpf_map_lookup_elem(&NAME, &(o)->gen); \
		} else {                                             \
			__builtin_memset(&__k, 0, sizeof(__k));      \
			__k.gen = (o)->gen;                          \
			__k.k = *(key);                              \
			__v = kagg_agg_entry(&NAME, &__k, init);     \
		}                                                    \
		__v;                                                 \
	})

/* Its descriptor and drop counter (NAME__drop). */
#define __KAGG_DESC(NAME, KIND, FLAGS, MIN, STEP)                                      \
	enum { NAME##__drop = KAGG_SDK_CNT_DROP + __COUNTER__ };                       \
	_Static_assert(NAME##__drop < KAGG_SDK_NR_CNT, "too many kagg drop counters"); \
	const volatile struct kagg_sdk_desc NAME##__kagg = {                           \
		.kind = KIND,                                                          \
		.flags = FLAGS,                                                        \
		.drop = NAME##__drop,                                                  \
		.lin_min = MIN,                                                        \
		.lin_step = STEP,                                                      \
	}

/*
 * NAME__stream(key, v, gen): the observation as a record of kagg_events (struct
 * kagg_sdk_rec, the KEY, the value); true when sent.
 */
#define __KAGG_STREAM(NAME, KEY)                                          \
	struct NAME##__rec {                                              \
		struct kagg_sdk_rec h;                                    \
		KEY k;                                                    \
		__u64 v __attribute__((aligned(8)));                      \
	};                                                                \
	__KAGG_FN bool NAME##__stream(const KEY *key, __u64 v, __u32 gen) \
	{                                                                 \
		struct NAME##__rec *r;                                    \
                                                                          \
		r = kagg_rec_reserve(sizeof(*r), NAME##__drop, gen);      \
		if (!r)                                                   \
			return false;                                     \
		if (sizeof(KEY))                                          \
			__builtin_memcpy(&r->k, key, sizeof(KEY));        \
		r->v = v;                                                 \
		kagg_rec_submit(r, gen);                                  \
		return true;                                              \
	}

/*
 * Stream observation o of (key, v) when the loader asks (kagg_stream); in stream-only
 * mode *done says it is not aggregated here, and the result whether it was sent.
 */
#define __KAGG_STREAM_OBS(NAME, o, key, v, done)                                \
	({                                                                      \
		bool __sent = false;                                            \
                                                                                \
		*(done) = false;                                                \
		if (kagg_stream != KAGG_SDK_STREAM_OFF) {                       \
			__u64 __t0 = kagg_time_stream ? bpf_ktime_get_ns() : 0; \
                                                                                \
			__sent = NAME##__stream(key, v, (o)->gen);              \
			if (kagg_time_stream)                                   \
				kagg_stream_timed(__t0);                        \
			if (kagg_stream == KAGG_SDK_STREAM_ONLY) {              \
				*(done) = true;                                 \
				if (__sent)                                     \
					(o)->c->cnt[KAGG_SDK_CNT_RECORDED]++;   \
			}                                                       \
		}                                                               \
		__sent;                                                         \
	})

/*
 * Exponential buckets of a log2 histogram (kagg_exp): cells {count, sum} keyed by
 * (generation, slot, KEY), created as needed; the loader sizes the map.  Shared by the
 * CPUs (atomic adds) when KEY has fields, as the histograms are; per CPU without (at most
 * two generations of buckets).
 */
#define __KAGG_EXP_CELLS(NAME, KEY, MAX)                                                  \
	struct NAME##__xkey {                                                             \
		__u32 gen;                                                                \
		__u32 slot;                                                               \
		KEY k;                                                                    \
	};                                                                                \
	struct {                                                                          \
		__uint(type, sizeof(KEY) ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_PERCPU_HASH); \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                     \
		__uint(max_entries, 1);                                                   \
		__type(key, struct NAME##__xkey);                                         \
		__type(value, struct kagg_sdk_cell);                                      \
	} NAME##__x SEC(".maps");                                                         \
	__KAGG_FN bool NAME##__exp_add(const KEY *key, __u64 v, __u32 gen,                \
				       const volatile struct kagg_sdk_exp_params *p)      \
	{                                                                                 \
		struct NAME##__xkey xk;                                                   \
		struct kagg_sdk_cell *c, zero = {};                                       \
                                                                                          \
		__builtin_memset(&xk, 0, sizeof(xk));                                     \
		xk.gen = gen;                                                             \
		xk.slot = v ? kagg_exp_slot_of(v, p) + 1 : 0;                             \
		if (sizeof(KEY))                                                          \
			__builtin_memcpy(&xk.k, key, sizeof(KEY));                        \
		c = kagg_agg_entry(&NAME##__x, &xk, &zero);                               \
		if (!c)                                                                   \
			return false;                                                     \
		kagg_sdk_add(&c->count, 1, sizeof(KEY));                                  \
		kagg_sdk_add(&c->sum, v, sizeof(KEY));                                    \
		if (sizeof(KEY))                                                          \
			kagg_ext_put_shared(&c->nmin, &c->max, v);                        \
		else                                                                      \
			kagg_ext_put(&c->nmin, &c->max, v);                               \
		return true;                                                              \
	}

#define __KAGG_HIST(NAME, KEY, MAX, KIND, FLAGS, MIN, STEP)                                     \
	__KAGG_AGG_MAP(NAME, KEY, MAX, struct kagg_sdk_hist);                                   \
	__KAGG_DESC(NAME, KIND, FLAGS, MIN, STEP);                                              \
	__KAGG_STREAM(NAME, KEY)                                                                \
	__KAGG_EXP_CELLS(NAME, KEY, MAX)                                                        \
	__KAGG_FN bool NAME##__record(const KEY *key, __u64 v)                                  \
	{                                                                                       \
		struct kagg_sdk_hist *h;                                                        \
		struct kagg_obs o;                                                              \
		bool sent, done;                                                                \
		__u32 slot;                                                                     \
                                                                                                \
		if (!kagg_obs_begin(&o))                                                        \
			return false;                                                           \
		sent = __KAGG_STREAM_OBS(NAME, &o, key, v, &done);                              \
		if (done)                                                                       \
			return sent;                                                            \
		if (KIND == KAGG_SDK_LOG2 && kagg_exp)                                          \
			return kagg_obs_end(                                                    \
				&o,                                                             \
				NAME##__exp_add(key, v, o.gen,                                  \
						&kagg_exp_params[!!((FLAGS) & KAGG_SDK_TIME)]), \
				NAME##__drop);                                                  \
		/* a linear histogram's bounds as the loader left them (--set NAME.min=...) */  \
		slot = kagg_slot(KIND, FLAGS, v,                                                \
				 KIND == KAGG_SDK_LINEAR ? NAME##__kagg.lin_min : 0,            \
				 KIND == KAGG_SDK_LINEAR ? NAME##__kagg.lin_step : 1);          \
		if (slot >= KAGG_SDK_SLOTS) {                                                   \
			o.c->cnt[KAGG_SDK_CNT_FILTERED]++;                                      \
			return false;                                                           \
		}                                                                               \
		h = __KAGG_AGG_ENTRY(NAME, KEY, &o, key, &kagg_sdk_zero_hist);                  \
		if (h)                                                                          \
			kagg_sdk_hist_add(h, slot, v, kagg_sdk_ext_ord(KIND, v), sizeof(KEY));  \
		return kagg_obs_end(&o, h, NAME##__drop);                                       \
	}

/*
 * A log2 histogram per KEY, at most MAX keys: NAME__record(&key, value).
 * Slot k holds [2^k, 2^(k+1) - 1] (slot 0: 0 and 1).
 */
#define KAGG_HIST_LOG2(NAME, KEY, MAX) __KAGG_HIST(NAME, KEY, MAX, KAGG_SDK_LOG2, 0, 0, 0)
/* The same of times in ns (from a start/stop pair), bucketed in the session's unit. */
#define KAGG_HIST_TIME(NAME, KEY, MAX) \
	__KAGG_HIST(NAME, KEY, MAX, KAGG_SDK_LOG2, KAGG_SDK_TIME, 0, 0)
/*
 * A linear histogram per KEY: 64 slots, slot k holds [MIN + k*STEP, MIN + (k+1)*STEP),
 * values taken as signed; values outside count as filtered.  MIN and STEP are the
 * defaults: `kagg run --set NAME.min=M --set NAME.step=S` changes them at load.
 */
#define KAGG_HIST_LINEAR(NAME, KEY, MAX, MIN, STEP) \
	__KAGG_HIST(NAME, KEY, MAX, KAGG_SDK_LINEAR, 0, MIN, STEP)

#define __KAGG_COUNT(NAME, KEY, MAX, FLAGS)                        \
	__KAGG_AGG_MAP(NAME, KEY, MAX, struct kagg_sdk_count);     \
	__KAGG_DESC(NAME, KAGG_SDK_COUNT, FLAGS, 0, 0);            \
	__KAGG_STREAM(NAME, KEY)                                   \
	__KAGG_FN bool NAME##__record(const KEY *key, __u64 v)     \
	{                                                          \
		struct kagg_sdk_count *c, zero = {};               \
		struct kagg_obs o;                                 \
		bool sent, done;                                   \
                                                                   \
		if (!kagg_obs_begin(&o))                           \
			return false;                              \
		sent = __KAGG_STREAM_OBS(NAME, &o, key, v, &done); \
		if (done)                                          \
			return sent;                               \
		c = __KAGG_AGG_ENTRY(NAME, KEY, &o, key, &zero);   \
		if (c) {                                           \
			kagg_sdk_add(&c->count, 1, sizeof(KEY));   \
			kagg_sdk_add(&c->sum, v, sizeof(KEY));     \
		}                                                  \
		return kagg_obs_end(&o, c, NAME##__drop);          \
	}

/* A count and a sum per KEY: NAME__record(&key, value) counts 1 and adds value. */
#define KAGG_COUNT(NAME, KEY, MAX) __KAGG_COUNT(NAME, KEY, MAX, 0)
/* The same with a sum of times in ns (shown in the session's unit). */
#define KAGG_COUNT_TIME(NAME, KEY, MAX) __KAGG_COUNT(NAME, KEY, MAX, KAGG_SDK_TIME)

/* The current kernel stack's id in kagg_stackmap (a kagg_kstack_t field), or -errno. */
static __always_inline kagg_kstack_t kagg_kstack(void *ctx)
{
	return bpf_get_stackid(ctx, &kagg_stackmap, 0);
}

/* The current user stack's id (a kagg_ustack_t field, with a kagg_pid_t), or -errno. */
static __always_inline kagg_ustack_t kagg_ustack(void *ctx)
{
	return bpf_get_stackid(ctx, &kagg_stackmap, BPF_F_USER_STACK);
}

/*
 * A count and sum per stack of the current task: kernel frames, user frames or both
 * (WHICH: KAGG_SDK_KSTACK | KAGG_SDK_USTACK, optionally | KAGG_SDK_TIME for ns values),
 * at most MAX stacks: NAME__record(ctx, value), ctx the program's context.  One hash
 * every CPU adds to, as a keyed histogram's.
 */
#define KAGG_STACKS(NAME, MAX, WHICH)                                                          \
	struct {                                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                                               \
		__uint(max_entries, 2 * (MAX));                                                \
		__type(key, struct kagg_sdk_stack_key);                                        \
		__type(value, struct kagg_sdk_stack_val);                                      \
	} NAME SEC(".maps");                                                                   \
	__KAGG_DESC(NAME, KAGG_SDK_STACKS, WHICH, 0, 0);                                       \
	__KAGG_FN bool NAME##__record(void *ctx, __u64 v)                                      \
	{                                                                                      \
		struct kagg_sdk_stack_val *sv, zero = {};                                      \
		struct kagg_sdk_stack_key k = {};                                              \
		struct kagg_obs o;                                                             \
		__u64 id;                                                                      \
                                                                                               \
		if (!kagg_obs_begin(&o))                                                       \
			return false;                                                          \
		id = bpf_get_current_pid_tgid();                                               \
		k.gen = o.gen;                                                                 \
		k.tgid = id >> 32;                                                             \
		k.pid = (__u32)id;                                                             \
		k.kstack = ((WHICH) & KAGG_SDK_KSTACK) ? kagg_kstack(ctx) : KAGG_SDK_NO_STACK; \
		k.ustack = ((WHICH) & KAGG_SDK_USTACK) && k.tgid ? kagg_ustack(ctx)            \
								 : KAGG_SDK_NO_STACK;          \
		sv = bpf_map_lookup_elem(&NAME, &k);                                           \
		if (!sv) {                                                                     \
			bpf_get_current_comm(zero.comm, sizeof(zero.comm));                    \
			bpf_map_update_elem(&NAME, &k, &zero, BPF_NOEXIST);                    \
			sv = bpf_map_lookup_elem(&NAME, &k);                                   \
		}                                                                              \
		if (sv) {                                                                      \
			kagg_sdk_add(&sv->count, 1, true);                                     \
			kagg_sdk_add(&sv->sum, v, true);                                       \
		}                                                                              \
		return kagg_obs_end(&o, sv, NAME##__drop);                                     \
	}

/* ---------------------------------------------------------------- drops of the program's */

/*
 * A drop cause of the program's own, NAME: NAME__count() counts one (while the session is
 * armed), shown in the meta as the drop "NAME", described by WHAT (a string).  LOSS: true
 * when each one lost an observation (a read that failed: counted in the meta's dropped),
 * false when the event was left out by design (a value the program does not aggregate).
 */
#define KAGG_DROP(NAME, LOSS, WHAT)                                                    \
	enum { NAME##__drop = KAGG_SDK_CNT_DROP + __COUNTER__ };                       \
	_Static_assert(NAME##__drop < KAGG_SDK_NR_CNT, "too many kagg drop counters"); \
	const volatile struct kagg_sdk_desc NAME##__kagg = {                           \
		.kind = KAGG_SDK_DROP,                                                 \
		.flags = (LOSS) ? KAGG_SDK_LOSS : 0,                                   \
		.drop = NAME##__drop,                                                  \
	};                                                                             \
	const char NAME##__what[] = WHAT;                                              \
	__KAGG_FN void NAME##__count(void)                                             \
	{                                                                              \
		kagg_count_seen(NAME##__drop);                                         \
	}

/* ---------------------------------------------------------------- start/stop pairs */

/*
 * BPF task storage (5.11): where the kernel has none (5.10) the loader clears this and
 * leaves the pairs' task maps uncreated; their starts of tasks are then kept by thread id
 * (NAME__start_id), at most MAX open, a full table counted as NAME_full.
 */
const volatile __u32 kagg_task_storage = 1;

/* The thread id of task t (CO-RE read: any task pointer). */
static __always_inline __u32 kagg_task_tid(struct task_struct *t)
{
	return BPF_CORE_READ(t, pid);
}

/*
 * A start/stop pair NAME: the time between a start and the next stop of the same
 * task or 64-bit id, at most MAX ids open at once (tasks: no limit, task storage).
 *   NAME__start() / NAME__stop(&ns)             the current task
 *   NAME__start_task(t) / NAME__stop_task(t, &ns)  a trusted task pointer (tp_btf,
 *                                               fentry arguments)
 *   NAME__start_id(id) / NAME__stop_id(id, &ns) any id (a request, a thread id...)
 *   NAME__start_of(t, btf) / NAME__stop_of(t, btf, &ns)  in a KAGG_TP or KAGG_FUNC
 *                                               handler: the task, by task storage in the
 *                                               BTF flavour, by its thread id in the other
 * A stop is true with the interval in *ns.  Counted drops: NAME_full (a start found
 * the id table full), NAME_unclosed (a start found the previous one still open: its
 * stop was not seen, an interval lost) and NAME_no_start (a stop with no start: it
 * started before the session, no loss).
 */
#define KAGG_PAIR(NAME, MAX)                                                                    \
	struct {                                                                                \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);                                        \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                           \
		__type(key, int);                                                               \
		__type(value, __u64);                                                           \
	} NAME##__task SEC(".maps");                                                            \
	struct {                                                                                \
		__uint(type, BPF_MAP_TYPE_HASH);                                                \
		__uint(max_entries, MAX);                                                       \
		__type(key, __u64);                                                             \
		__type(value, __u64);                                                           \
	} NAME##__id SEC(".maps");                                                              \
	enum {                                                                                  \
		NAME##__full = KAGG_SDK_CNT_DROP + __COUNTER__,                                 \
		NAME##__unclosed = KAGG_SDK_CNT_DROP + __COUNTER__,                             \
		NAME##__nostart = KAGG_SDK_CNT_DROP + __COUNTER__,                              \
	};                                                                                      \
	_Static_assert(NAME##__nostart < KAGG_SDK_NR_CNT, "too many kagg drop counters");       \
	const volatile struct kagg_sdk_desc NAME##__kagg = {                                    \
		.kind = KAGG_SDK_PAIR,                                                          \
		.flags = KAGG_SDK_TIME,                                                         \
		.drop = NAME##__full,                                                           \
		.drop2 = NAME##__unclosed,                                                      \
		.drop3 = NAME##__nostart,                                                       \
	};                                                                                      \
	__KAGG_FN void NAME##__start_at(__u64 *ts)                                              \
	{                                                                                       \
		if (*ts)                                                                        \
			kagg_count(NAME##__unclosed);                                           \
		*ts = kagg_now();                                                               \
	}                                                                                       \
	__KAGG_FN bool NAME##__stop_at(__u64 *ts, __u64 *ns)                                    \
	{                                                                                       \
		if (!ts || !*ts) {                                                              \
			kagg_count(NAME##__nostart);                                            \
			return false;                                                           \
		}                                                                               \
		*ns = kagg_now() - *ts;                                                         \
		*ts = 0;                                                                        \
		return true;                                                                    \
	}                                                                                       \
	__KAGG_FN void NAME##__start_id(__u64 id)                                               \
	{                                                                                       \
		__u64 *ts, zero = 0;                                                            \
                                                                                                \
		if (!kagg_armed_now())                                                          \
			return;                                                                 \
		ts = bpf_map_lookup_elem(&NAME##__id, &id);                                     \
		if (!ts) {                                                                      \
			bpf_map_update_elem(&NAME##__id, &id, &zero, BPF_NOEXIST);              \
			ts = bpf_map_lookup_elem(&NAME##__id, &id);                             \
		}                                                                               \
		if (ts)                                                                         \
			NAME##__start_at(ts);                                                   \
		else                                                                            \
			kagg_count(NAME##__full);                                               \
	}                                                                                       \
	__KAGG_FN bool NAME##__stop_id(__u64 id, __u64 *ns)                                     \
	{                                                                                       \
		bool ok;                                                                        \
                                                                                                \
		if (!kagg_armed_now())                                                          \
			return false;                                                           \
		ok = NAME##__stop_at(bpf_map_lookup_elem(&NAME##__id, &id), ns);                \
		if (ok)                                                                         \
			bpf_map_delete_elem(&NAME##__id, &id);                                  \
		return ok;                                                                      \
	}                                                                                       \
	__KAGG_FN void NAME##__start_task(struct task_struct *t)                                \
	{                                                                                       \
		__u64 *ts;                                                                      \
                                                                                                \
		if (!kagg_task_storage) {                                                       \
			NAME##__start_id(kagg_task_tid(t));                                     \
			return;                                                                 \
		}                                                                               \
		if (!kagg_armed_now())                                                          \
			return;                                                                 \
		ts = bpf_task_storage_get(&NAME##__task, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE); \
		if (ts)                                                                         \
			NAME##__start_at(ts);                                                   \
		else                                                                            \
			kagg_count(NAME##__full);                                               \
	}                                                                                       \
	__KAGG_FN bool NAME##__stop_task(struct task_struct *t, __u64 *ns)                      \
	{                                                                                       \
		if (!kagg_task_storage)                                                         \
			return NAME##__stop_id(kagg_task_tid(t), ns);                           \
		if (!kagg_armed_now())                                                          \
			return false;                                                           \
		return NAME##__stop_at(bpf_task_storage_get(&NAME##__task, t, 0, 0), ns);       \
	}                                                                                       \
	__KAGG_FN void NAME##__start(void)                                                      \
	{                                                                                       \
		if (!kagg_task_storage)                                                         \
			NAME##__start_id((__u32)bpf_get_current_pid_tgid());                    \
		else                                                                            \
			NAME##__start_task(bpf_get_current_task_btf());                         \
	}                                                                                       \
	__KAGG_FN bool NAME##__stop(__u64 *ns)                                                  \
	{                                                                                       \
		if (!kagg_task_storage)                                                         \
			return NAME##__stop_id((__u32)bpf_get_current_pid_tgid(), ns);          \
		return NAME##__stop_task(bpf_get_current_task_btf(), ns);                       \
	}                                                                                       \
	__KAGG_FN void NAME##__start_of(struct task_struct *t, const bool btf)                  \
	{                                                                                       \
		if (btf)                                                                        \
			NAME##__start_task(t);                                                  \
		else                                                                            \
			NAME##__start_id(kagg_task_tid(t));                                     \
	}                                                                                       \
	__KAGG_FN bool NAME##__stop_of(struct task_struct *t, const bool btf, __u64 *ns)        \
	{                                                                                       \
		return btf ? NAME##__stop_task(t, ns) : NAME##__stop_id(kagg_task_tid(t), ns);  \
	}

/* ---------------------------------------------------------------- attach flavours */

/*
 * One flavour of a KAGG_TP/KAGG_FUNC handler: FNAME on section SECNAME, declared with
 * PROG (BPF_PROG or BPF_KPROBE) on the arguments (the ...), returning CALL with the
 * constant `btf` set to BTF.
 */
#define __KAGG_HANDLER(SECNAME, PROG, FNAME, BTF, CALL, ...) \
	SEC(SECNAME)                                         \
	int PROG(FNAME, ##__VA_ARGS__)                       \
	{                                                    \
		const bool btf = BTF;                        \
		struct kagg_clock *__c = kagg_event_begin(); \
                                                             \
		(void)btf;                                   \
		return kagg_event_end(__c, CALL);            \
	}

/*
 * A tracepoint program in two flavours, NAME_tp_btf on "tp_btf/TP" and NAME_raw_tp on
 * "raw_tp/TP"; the loader loads the first, the second when the first cannot load (the
 * meta says which was used, and why).  Both take the tracepoint's arguments (the ...,
 * as BPF_PROG takes them) and return CALL, an expression in which `btf` is a constant:
 * true in the first (arguments are trusted pointers), false in the second (read them
 * with BPF_CORE_READ).
 */
#define KAGG_TP(NAME, TP, CALL, ...)                                                     \
	__KAGG_HANDLER("tp_btf/" TP, BPF_PROG, NAME##_tp_btf, true, CALL, ##__VA_ARGS__) \
	__KAGG_HANDLER("raw_tp/" TP, BPF_PROG, NAME##_raw_tp, false, CALL, ##__VA_ARGS__)

/*
 * A kernel function's entry in two flavours, NAME_fentry on "fentry/FN" and NAME_kprobe
 * on "kprobe/FN", loaded like KAGG_TP's: CALL with `btf` true in the first.
 */
#define KAGG_FUNC(NAME, FN, CALL, ...)                                                   \
	__KAGG_HANDLER("fentry/" FN, BPF_PROG, NAME##_fentry, true, CALL, ##__VA_ARGS__) \
	__KAGG_HANDLER("kprobe/" FN, BPF_KPROBE, NAME##_kprobe, false, CALL, ##__VA_ARGS__)

#endif /* __KAGG_BPF_H */
