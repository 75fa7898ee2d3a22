/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every tool with --mode agg|stream|both shares in BPF: the record ring
 * buffer, its wakeup policy, the session's `armed` switch, and the per-event
 * stamp that makes the two paths see the same events at the same times.
 *
 * With --mode both, the aggregating and the streaming program of an event
 * run one after the other on the same tracepoint hit, in one preempt-
 * disabled section, the aggregating one first (it is attached first, and a
 * tracepoint runs its programs in attach order).  It stamps the event in a
 * per-CPU slot (time, snapshot generation, armed); the streaming one takes
 * the same stamp, so both paths compute identical latencies, put them in
 * the same generation, and start and stop on the same event.  An event is
 * told from the next one on the same CPU by two words the caller picks
 * (task pointers, the event type).  The first program always stamps anew,
 * never takes: a stamp left by an event the second program did not run for
 * (it was not attached yet) must not be reused by a later event with the
 * same words.
 */
#ifndef KAGG_STREAM_BPF_H
#define KAGG_STREAM_BPF_H

#include "agg.bpf.h"

/* Both programs attached share each event's stamp (set for --mode both). */
const volatile bool share_event = false;
const volatile __u32 wake_mode = KAGG_BPF_WAKE_WATERMARK;
const volatile __u64 wake_bytes = 0;

/*
 * Set by userspace once every program of the session is attached, cleared
 * before any is detached: events outside that window are ignored by all of
 * them alike (per event, through the shared stamp).
 */
__u32 armed = 0;

/* Streamed records (userspace sizes it; 1 page when not streaming). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/*
 * Counters of the streamed records, by generation (struct kagg_stream_cnt):
 * once a snapshot has retired a generation and waited out the programs that
 * may still count in it, its entry holds seen = sent + dropped exactly.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct kagg_stream_cnt);
} stream_cnt SEC(".maps");

struct kagg_event_slot {
	__u64 seq; /* this CPU's streamed events so far */
	__u64 a;
	__u64 b;
	__u64 now;
	__u32 gen;
	__u16 valid;
	__u16 armed;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kagg_event_slot);
} event_slot SEC(".maps");

/*
 * Stamp the event (a, b): its time and generation; false when the session is
 * not armed.  first: the aggregating program (stamps), else the streaming
 * one (takes the stamp when it is this event's).
 */
static __always_inline bool kagg_event_stamp(__u64 a, __u64 b, __u64 *now, __u32 *g,
					     const bool first)
{
	struct kagg_event_slot *es;
	__u32 zero = 0;
	bool on;

	if (share_event) {
		es = bpf_map_lookup_elem(&event_slot, &zero);
		if (!first && es && es->valid && es->a == a && es->b == b) {
			es->valid = 0;
			*now = es->now;
			*g = es->gen;
			return es->armed;
		}
		on = *(volatile __u32 *)&armed;
		*now = bpf_ktime_get_ns();
		*g = kagg_gen();
		if (first && es) {
			es->a = a;
			es->b = b;
			es->now = *now;
			es->gen = *g;
			es->armed = on;
			es->valid = 1;
		}
		return on;
	}
	*now = bpf_ktime_get_ns();
	*g = kagg_gen();
	return *(volatile __u32 *)&armed;
}

/*
 * An aggregating program's event whose time may not be needed: with the
 * streaming programs attached (share_event) it is stamped at once for both
 * paths, as kagg_event_stamp(first); alone only the generation is read and
 * *now stays 0 until kagg_event_now() reads the clock where it is needed (a
 * clock read is most of such a program where the clock source is slow:
 * ~50-100 ns in a PVM guest).  False when the session is not armed.
 */
static __always_inline bool kagg_event_open(__u64 a, __u64 b, __u64 *now, __u32 *g)
{
	if (share_event)
		return kagg_event_stamp(a, b, now, g, true);
	*now = 0;
	*g = kagg_gen();
	return *(volatile __u32 *)&armed;
}

/* The event's time: the stamp, or the clock read now and kept for the event. */
static __always_inline __u64 kagg_event_now(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

/*
 * Reserve a streamed record of `size` bytes (a constant) in `events` for an
 * event of generation g and fill its head (struct kagg_rec_hdr); the event
 * is counted seen, and numbered from this CPU's count, in g's stream_cnt
 * entry, a failed reserve counted dropped there.  Finish with
 * kagg_rec_submit().
 */
static __always_inline void *kagg_rec_reserve(__u64 size, __u64 now, __u32 g)
{
	struct kagg_event_slot *es;
	struct kagg_stream_cnt *sc;
	__u32 zero = 0, key = g & 1;
	struct kagg_rec_hdr *h;
	__u64 seq;

	es = bpf_map_lookup_elem(&event_slot, &zero);
	sc = bpf_map_lookup_elem(&stream_cnt, &key);
	if (!es || !sc)
		return NULL;
	seq = ++es->seq; /* never reset: the consumer finds lost records as holes */
	sc->seen++;
	h = bpf_ringbuf_reserve(&events, size, 0);
	if (!h) {
		sc->dropped++;
		return NULL;
	}
	h->ts = now;
	h->seq = seq;
	h->cpu = bpf_get_smp_processor_id();
	h->gen = g;
	return h;
}

/* bpf_ringbuf_submit() flags for the wakeup policy. */
static __always_inline __u64 kagg_wake_flags(void)
{
	switch (wake_mode) {
	case KAGG_BPF_WAKE_WATERMARK:
		return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes
			       ? BPF_RB_FORCE_WAKEUP
			       : BPF_RB_NO_WAKEUP;
	case KAGG_BPF_WAKE_ADAPTIVE:
		return 0;
	case KAGG_BPF_WAKE_NONE:
		return BPF_RB_NO_WAKEUP;
	case KAGG_BPF_WAKE_EVERY:
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* Submit a record from kagg_rec_reserve(), counted sent in its generation's entry. */
static __always_inline void kagg_rec_submit(void *r)
{
	__u32 key = ((struct kagg_rec_hdr *)r)->gen & 1;
	struct kagg_stream_cnt *sc = bpf_map_lookup_elem(&stream_cnt, &key);

	if (sc)
		sc->sent++;
	bpf_ringbuf_submit(r, kagg_wake_flags());
}

#endif /* KAGG_STREAM_BPF_H */
