/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Internal layout of the ring buffer (see user/rb/ringbuf.c for the design). */
#ifndef KAGG_RB_INTERNAL_H
#define KAGG_RB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <kagg/ringbuf.h>

#ifndef offsetofend
#define offsetofend(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#endif

/*
 * Smallest sz accepted for the caller-allocated structs: their size in the
 * first release (0.1).  Fields appended later are filled only when sz covers
 * them; these stay as they are.
 */
#define RB_RSV_MIN_SZ offsetofend(struct kagg_rb_rsv, kind)
#define RB_EVENT_MIN_SZ offsetofend(struct kagg_rb_event, missed)
#define RB_STATS_MIN_SZ offsetofend(struct kagg_rb_stats, pages_lost)
#define RB_PAGE_ITER_MIN_SZ offsetofend(struct kagg_rb_page_iter, subbuf_size)

/* write state word: pos = seq << 28 | offset << 8 (low byte: 0, reserved) */
#define RB_MAX_NEST 255
#define RB_OFF_SHIFT 8
#define RB_SEQ_SHIFT 28
#define POS_SEQ(p) ((p) >> RB_SEQ_SHIFT)
#define POS_OFF(p) ((uint32_t)(((p) >> RB_OFF_SHIFT) & 0xfffffu))
#define MKPOS(seq, off, zero) \
	(((uint64_t)(seq) << RB_SEQ_SHIFT) | ((uint64_t)(off) << RB_OFF_SHIFT) | (uint64_t)(zero))

/* slot word: physical page << 48 | sequence number the page is for */
#define SLOT(phys, tag) (((uint64_t)(phys) << 48) | (uint64_t)(tag))
#define SLOT_PHYS(w) ((w) >> 48)
#define SLOT_TAG(w) ((w) & ((1ULL << 48) - 1))
#define SLOT_BUSY (1ULL << 47)	/* tag | BUSY: being evicted and zeroed */
#define SLOT_DIRTY (1ULL << 46) /* tag | DIRTY: a page for tag, not zeroed yet */

/* rb_cpu.foreign: who may change the write state besides rseq writers */
#define RB_FOREIGN_STICKY (1u << 31)	  /* written from other CPUs: locked CAS for good */
#define RB_FOREIGN_READY (1u << 30)	  /* ... and no rseq section can still miss it */
#define RB_FOREIGN_FENCED (1u << 29)	  /* a holder's fence ran since the count left 0 */
#define RB_FOREIGN_COUNT ((1u << 29) - 1) /* locked operations in progress */

/*
 * The slot this thread holds BUSY (zeroing its page), set before the CAS
 * that takes it: a signal handler's writer that finds it BUSY refuses at
 * once (commit_overrun) instead of waiting for the thread it interrupted.
 */
extern __thread uint64_t *rb_busy_slot __attribute__((tls_model("initial-exec")));

struct rb_state {
	uint64_t pos;
	uint64_t ts;
} __attribute__((aligned(16)));

struct rb_meta {
	uint32_t end;	   /* bytes used incl. tail padding (the page commit); readers */
	uint32_t real_end; /* bytes used by records; readers */
	uint32_t cnt;	   /* data events, counted by the writer that closed it ... */
	uint64_t cnt_seq;  /* ... for sub-buffer cnt_seq - 1 (0: not counted) */
};

struct kagg_rb;

struct rb_cpu {
	/* writers: one line */
	struct rb_state st;
	struct kagg_rb *rb;
	uint64_t *slots;
	struct rb_meta *meta;
	uint8_t *pages;
	uint16_t cpu;
	uint8_t subbuf_shift; /* log2(rb->subbuf) */
	uint8_t single;	      /* kagg_rb_opts.single_writer: its rseq writer runs on any CPU */
	uint32_t nr;	      /* rb->nr and rb->nr_magic, on the writers' line */
	uint64_t nr_magic;
	/*
	 * Read by every writer, written once per reader sleep: armed is 0, or
	 * 1 + the sub-buffer sequence a sleeping reader waits for (see
	 * kagg_rb__wait); the writer that sees it due clears it and wakes.
	 */
	uint64_t armed __attribute__((aligned(64)));
	uint32_t foreign; /* RB_FOREIGN_*, see ringbuf.c */
	/* rare-path counters */
	uint64_t overrun __attribute__((aligned(64)));
	uint64_t commit_overrun, dropped, too_big, nest_refused, pages_lost;
	/* reader state, under rlock */
	pthread_mutex_t rlock __attribute__((aligned(64)));
	uint64_t read_seq;	 /* next sub-buffer to take */
	uint64_t rd_phys;	 /* the reader page */
	uint32_t rd_off, rd_end; /* read position, data end in the reader page */
	uint64_t rd_ts;		 /* running ts at rd_off */
	uint64_t rd_page_ts;
	uint64_t last_overrun, rd_missed;
	uint64_t read_events;
	/* readers' scan for the commit position (see rb_commit_pos) */
	uint64_t commit_pos; /* last result */
	uint64_t scan_seq;
	uint32_t scan_off, scan_re;
} __attribute__((aligned(64)));
_Static_assert(__builtin_offsetof(struct rb_cpu, armed) == 64,
	       "rb_cpu: the writers' fields fill exactly one cache line");

struct kagg_rb {
	int nr_cpus;
	int max_nest;
	bool rseq; /* writers on their own CPU use rseq (see ringbuf.c) */
	size_t subbuf, nr;
	uint64_t nr_magic; /* ceil(2^64 / nr): rb_slot() without a division */
	uint32_t cap;
	enum kagg_rb_mode mode;
	clockid_t clockid;
	kagg_rb_clock_fn clock;
	void *clock_ctx;
	kagg_log_fn log;
	void *log_ctx;
	/* futex word of sleeping readers, bumped by the writer that wakes them */
	uint32_t wake_gen __attribute__((aligned(64)));
	struct rb_cpu cpus[] __attribute__((aligned(64)));
};

/*
 * seq % nr with a multiplication: q = floor(seq * nr_magic / 2^64) is
 * floor(seq / nr) or one more (nr_magic exceeds 2^64 / nr by less than 1,
 * and seq < 2^64), so the remainder needs at most one correction.  A 64-bit
 * division costs tens of cycles on the write path; this costs a few.
 */
static inline uint64_t rb_fastmod(uint64_t seq, uint64_t nr, uint64_t magic)
{
	if (!(nr & (nr - 1))) /* a power of two (the default): a mask */
		return seq & (nr - 1);
	uint64_t q = (uint64_t)(((unsigned __int128)seq * magic) >> 64);
	uint64_t r = seq - q * nr;

	return r >= nr ? r + nr : r; /* q one too many: r wrapped below 0 */
}

static inline uint64_t rb_slot(const struct kagg_rb *rb, uint64_t seq)
{
	return rb_fastmod(seq, rb->nr, rb->nr_magic);
}

uint32_t rb_count_events(const uint8_t *data, uint32_t end);
bool rb_reader_fill(struct rb_cpu *cb, bool may_close);
uint64_t rb_commit_pos(struct rb_cpu *cb, uint64_t upto);

/* A little-endian u32 of a page at any alignment (pages from files need not be aligned). */
static inline uint32_t rb_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Decode the next data record in data[*off, end) with running ts *ts,
 * skipping time and padding records.  Returns 1 with *ev filled and *off past
 * the record; 0 at the end of the data (*off = end; a padding record with
 * delta 0 or an all-zero header also mean "the rest is empty"); -EBADMSG when
 * the record at *off is malformed (*off stays on it): its length runs past
 * end, or end cuts its header.  Lengths are compared against what remains
 * (end - o), never added to o, so no value of a 32-bit length can wrap the
 * offset: every call moves forward by at least 4 bytes or returns.
 */
static inline int rb_decode_next(const uint8_t *data, uint32_t end, uint32_t *off, uint64_t *ts,
				 struct kagg_rb_event *ev)
{
	uint32_t o = *off;

	while (o < end) {
		uint32_t h, t, d, len, rest = end - o;

		if (rest < 4)
			goto bad;
		h = rb_le32(data + o);
		t = h & 31;
		d = h >> 5;
		if (__builtin_expect(t - 1 < KAGG_RB_TYPE_PADDING - 1, 1)) { /* 1..28 */
			len = 4 * t;
			if (len > rest - 4)
				goto bad;
			*ts += d;
			ev->data = data + o + 4;
			ev->len = len;
			ev->ts = *ts;
			*off = o + 4 + len;
			return 1;
		}
		if (t == KAGG_RB_TYPE_PADDING && !d)
			break; /* the rest of the sub-buffer is empty */
		if (t == 0 && !h && (rest < 8 || !rb_le32(data + o + 4)))
			break; /* a zeroed tail */
		if (rest < 8)
			goto bad;
		len = rb_le32(data + o + 4);
		switch (t) {
		case KAGG_RB_TYPE_PADDING: /* len: bytes after the 4-byte header */
			if (len > rest - 4 || len < 4)
				goto bad;
			*ts += d;
			o += 4 + len;
			continue;
		case KAGG_RB_TYPE_TIME_EXTEND:
			*ts += ((uint64_t)len << KAGG_RB_TS_SHIFT) + d;
			o += 8;
			continue;
		case KAGG_RB_TYPE_TIME_STAMP:
			*ts = (((uint64_t)len << KAGG_RB_TS_SHIFT) | d) | (*ts & (0xf8ULL << 56));
			o += 8;
			continue;
		default: /* 0: len counts itself and the payload */
			if (len < 4 || len > rest - 4)
				goto bad;
			*ts += d;
			ev->data = data + o + 8;
			ev->len = len - 4;
			ev->ts = *ts;
			*off = o + 4 + len;
			return 1;
		}
	}
	*off = end;
	return 0;
bad:
	*off = o;
	return -EBADMSG;
}

#endif
