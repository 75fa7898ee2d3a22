// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tprec: stream the raw record of any tracepoint, for kagg record -e SYS:NAME.
 *
 * Classic tracepoint programs, attached at run time: ctx points to the
 * event's trace entry, laid out as its tracefs format says.  Userspace reads
 * that format and hands each program, by its index, the size of the fixed
 * part and the offsets of the dynamic fields (__data_loc, __rel_loc); the
 * program copies the entry up to the end of its last dynamic data (at most
 * TPREC_MAX_DATA bytes, counted when cut) into a per-CPU scratch record and
 * outputs it to the ring buffer.  For BPF the kernel leaves the entry's
 * common fields unset (the first 8 bytes hold a pt_regs pointer): the record
 * carries the thread id, and userspace writes them.
 *
 * One program per event (tprec_0 .. tprec_7, TPREC_MAX_EVENTS): the index is a
 * constant of each, no attach cookie needed (kernels before 5.15 have none).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "shared/tprec.h"
#include "stream.bpf.h"

const volatile __u32 rec_fixed[TPREC_MAX_EVENTS] = {};
const volatile __u32 rec_dyn[TPREC_MAX_EVENTS][TPREC_MAX_DYN] = {};

KAGG_COUNTERS_MAP(TPREC_CNT_MAX);
KAGG_COUNTERS_GET

struct tprec_scratch {
	struct tprec_rec hdr;
	__u8 data[TPREC_MAX_DATA];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tprec_scratch);
} scratch SEC(".maps");

/* Where the entry's data ends: past its fixed part and every dynamic field's data. */
static __always_inline __u32 record_end(void *ctx, __u32 ev, bool *cut)
{
	__u32 end = rec_fixed[ev], loc, off, i, fend;

	for (i = 0; i < TPREC_MAX_DYN; i++) {
		off = rec_dyn[ev][i];
		if (!off)
			break;
		if (bpf_probe_read_kernel(&loc, sizeof(loc),
					  (void *)((unsigned long)ctx + (off & 0xffff))))
			continue;
		fend = (loc & 0xffff) + (loc >> 16);
		if (off & TPREC_DYN_REL)
			fend += (off & 0xffff) + 4;
		if (fend > end)
			end = fend;
	}
	if (end > TPREC_MAX_DATA) {
		*cut = true;
		end = TPREC_MAX_DATA;
	}
	return end;
}

static __always_inline int tprec(void *ctx, __u32 ev)
{
	struct kagg_event_slot *es;
	struct kagg_stream_cnt *sc;
	struct tprec_scratch *s;
	struct counters *c;
	__u32 zero = 0, key, len, g;
	bool cut = false;
	__u64 now;

	c = counters_get();
	if (!c)
		return 0;
	c->cnt[TPREC_CNT_EVENTS]++;
	now = bpf_ktime_get_ns();
	g = kagg_gen();
	key = g & 1;
	s = bpf_map_lookup_elem(&scratch, &zero);
	es = bpf_map_lookup_elem(&event_slot, &zero);
	sc = bpf_map_lookup_elem(&stream_cnt, &key);
	if (!s || !es || !sc)
		return 0;
	len = record_end(ctx, ev, &cut);
	if (cut)
		c->cnt[TPREC_CNT_TRUNCATED]++;
	len &= TPREC_MAX_DATA * 2 - 1; /* bounds the verifier sees: len <= TPREC_MAX_DATA */
	if (len > TPREC_MAX_DATA)
		len = TPREC_MAX_DATA;
	if (bpf_probe_read_kernel(s->data, len, ctx)) {
		c->cnt[TPREC_CNT_DROP_READ]++;
		return 0;
	}
	/* as kagg_rec_reserve(): numbered on this CPU, counted seen, then sent or dropped */
	s->hdr.seq = ++es->seq;
	sc->seen++;
	s->hdr.ts = now;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.gen = g;
	s->hdr.event = ev;
	s->hdr.len = len;
	s->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	if (bpf_ringbuf_output(&events, s, sizeof(s->hdr) + len, kagg_wake_flags())) {
		sc->dropped++;
		return 0;
	}
	sc->sent++;
	return 0;
}

#define TPREC_PROG(i)                 \
	SEC("tracepoint")             \
	int tprec_##i(void *ctx)      \
	{                             \
		return tprec(ctx, i); \
	}

TPREC_PROG(0)
TPREC_PROG(1)
TPREC_PROG(2)
TPREC_PROG(3)
TPREC_PROG(4)
TPREC_PROG(5)
TPREC_PROG(6)
TPREC_PROG(7)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
