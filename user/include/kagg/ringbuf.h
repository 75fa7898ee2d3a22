/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/ringbuf.h - a userspace per-CPU ring buffer that stores records in the
 * exact ftrace format (struct buffer_data_page sub-buffers, 5/27-bit event
 * headers, TIME_EXTEND / TIME_STAMP / PADDING records, RB_MISSED_* commit
 * flags), so pages read from it decode with libtraceevent's kbuffer,
 * trace-cmd and kagg's own readers.  See docs/ringbuf.md.
 *
 * Thread-safety
 *  - Writers (reserve/commit/discard/write) are lock-free and may run from
 *    any thread and from signal handlers (async-signal-safe: no locks, no
 *    allocation).  A writer may be preempted or migrated between reserve and
 *    commit; any number of writers may be in flight on one CPU buffer at once
 *    (concurrently, or nested in stack order up to max_nest per thread).
 *  - Readers (consume, read_page, iter, stats, wait) take a per-CPU reader
 *    mutex: they are thread-safe with each other and never block writers.
 *    They are not async-signal-safe.
 *  - kagg_rb__free() must not race with anything.
 */
#ifndef KAGG_RINGBUF_H
#define KAGG_RINGBUF_H

#include <stdio.h>

#include <kagg/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Record format constants (ftrace, little-endian, 4-byte alignment). */
#define KAGG_RB_TYPE_PADDING 29
#define KAGG_RB_TYPE_TIME_EXTEND 30
#define KAGG_RB_TYPE_TIME_STAMP 31
#define KAGG_RB_MAX_SMALL_DATA 112
#define KAGG_RB_TS_SHIFT 27
#define KAGG_RB_PAGE_HDR 16		   /* u64 time_stamp + u64 commit */
#define KAGG_RB_MISSED_EVENTS (1ULL << 31) /* commit flag */
#define KAGG_RB_MISSED_STORED (1ULL << 30) /* commit flag */
#define KAGG_RB_COMMIT_MASK ((1ULL << 30) - 1)

enum kagg_rb_mode {
	KAGG_RB_OVERWRITE = 0, /* full: drop the oldest sub-buffer, count `overrun` */
	KAGG_RB_CONSUME = 1,   /* full: refuse the new event, count `dropped_events` */
};

/* Timestamp source in nanoseconds. Must be async-signal-safe if signal handlers write. */
typedef uint64_t (*kagg_rb_clock_fn)(void *ctx);

struct kagg_rb_opts {
	size_t sz;
	int nr_cpus;	    /* CPU buffers; 0: number of configured CPUs */
	size_t subbuf_size; /* bytes: 4096 << order, order 0..7; 0: 4096 */
	size_t nr_subbufs;  /* sub-buffers per CPU (>= 2); 0: 64 */
	enum kagg_rb_mode mode;
	int clockid; /* a clockid_t, used when clock is NULL; 0 is CLOCK_REALTIME,
		      * so set use_clockid; default CLOCK_MONOTONIC */
	bool use_clockid;
	kagg_rb_clock_fn clock; /* overrides clockid (fake clocks in tests) */
	void *clock_ctx;
	int max_nest; /* reservations open at once per thread, 1..255; 0: 16 */
	kagg_log_fn log;
	void *log_ctx;
	/*
	 * One thread at a time writes, to any CPU buffer (a hand-over between
	 * threads must be ordered, by a join or a lock; the writer's signal
	 * handlers may nest).  Its writes then take the rseq path on every
	 * buffer, wherever it runs, instead of the locked one; a reader that
	 * closes a sub-buffer restarts it with one membarrier on all CPUs.
	 * Two threads writing at once corrupt the buffer.
	 */
	bool single_writer;
};
#define kagg_rb_opts__last_field single_writer

struct kagg_rb;

/*
 * Create a ring buffer.  Returns NULL with errno EINVAL (bad opts: subbuf_size
 * not 4096 << 0..7, nr_subbufs < 2, max_nest out of range) or ENOMEM.
 */
KAGG_API struct kagg_rb *kagg_rb__new(const struct kagg_rb_opts *opts);
KAGG_API void kagg_rb__free(struct kagg_rb *rb);

KAGG_API int kagg_rb__nr_cpus(const struct kagg_rb *rb);
KAGG_API size_t kagg_rb__subbuf_size(const struct kagg_rb *rb);
/* Largest payload one event can carry: subbuf_size - 16 - 8 (4072 for 4 KiB). */
KAGG_API size_t kagg_rb__max_payload(const struct kagg_rb *rb);
/* Read the buffer's clock (the timestamps records get). */
KAGG_API uint64_t kagg_rb__now(const struct kagg_rb *rb);
/*
 * How writers change CPU buffer cpu's write state now: "rseq" (writers running
 * on that CPU, or the single writer, use a restartable sequence, no locked
 * instruction) or a 16-byte compare-and-swap because this process has no rseq
 * or the buffer is written from other CPUs: "locked" (x86_64: cmpxchg16b),
 * "locked-casp" (arm64 with LSE atomics) or "locked-llsc" (arm64 without:
 * ldaxp/stlxp).  NULL for a bad cpu.
 */
KAGG_API const char *kagg_rb__write_path(const struct kagg_rb *rb, int cpu);

/*
 * Caller-allocated structs (kagg_rb_rsv, kagg_rb_event, kagg_rb_stats,
 * kagg_rb_page_iter) start with `size_t sz`: set it to sizeof the struct
 * before passing it in.  The library fills and reads only what sz covers and
 * never writes sz; a sz smaller than the struct's first release fails with
 * -EINVAL (NULL + EINVAL for reserve).  A struct the library reads as input
 * (an event to print, stats to print) must have every byte past what this
 * library knows zero, else -EINVAL.  The checks sit where a caller starts
 * using a struct (reserve, iterator init), not on every record.
 */

/*
 * A reservation: filled by reserve, passed to exactly one commit or discard.
 * The caller owns the storage (put it on the stack) and sets sz, once: a
 * reservation may be reused for the next reserve after its commit or discard.
 * The other fields are private.
 */
struct kagg_rb_rsv {
	size_t sz;
	void *cb;
	uint32_t *rec; /* start of the reservation */
	uint8_t *page;
	uint64_t start; /* position of the reservation (incl. time record) */
	uint64_t end;	/* position after it */
	uint64_t prev_ts;
	uint64_t ts;
	uint32_t w[4]; /* header words, stored at commit (w[0] last) */
	uint32_t nw;   /* header words before the payload */
	uint32_t dlen; /* data record length */
	uint32_t kind;
};

/*
 * Reserve room for a len-byte payload on the calling thread's CPU buffer
 * (the CPU it runs on, modulo nr_cpus).  Returns a pointer to the payload, 4-byte
 * aligned, with bytes past len up to the record's 4-byte boundary zeroed.
 * Every non-NULL return must be followed by kagg_rb__commit() or
 * kagg_rb__discard() on the same rsv, in stack order with respect to other
 * reservations made by the same thread (signal handlers included).  Readers
 * see nothing of a CPU buffer past the oldest uncommitted reservation, so
 * keep the window short.  Returns NULL with errno:
 *   E2BIG   len > kagg_rb__max_payload()     (counted: too_big)
 *   EBUSY   the thread already holds max_nest open reservations (nest_refused)
 *   ENOBUFS consume mode and the buffer is full (dropped_events), or the
 *           writer caught up with an uncommitted sub-buffer (commit_overrun)
 *   EINVAL  rb or rsv NULL, or rsv->sz too small
 */
KAGG_API void *kagg_rb__reserve(struct kagg_rb *rb, size_t len, struct kagg_rb_rsv *rsv);
/* Same on an explicit CPU buffer (0 <= cpu < nr_cpus; else NULL, EINVAL). */
KAGG_API void *kagg_rb__reserve_cpu(struct kagg_rb *rb, int cpu, size_t len,
				    struct kagg_rb_rsv *rsv);
/* Publish a reservation (visible to readers once no older writer is in flight). */
KAGG_API void kagg_rb__commit(struct kagg_rb_rsv *rsv);
/*
 * Drop a reservation: removed outright when it is still the last record of
 * the buffer, otherwise turned into a PADDING record (readers skip it).
 */
KAGG_API void kagg_rb__discard(struct kagg_rb_rsv *rsv);
/* reserve + memcpy + commit.  0 or -E2BIG/-EBUSY/-ENOBUFS/-EINVAL. */
KAGG_API int kagg_rb__write(struct kagg_rb *rb, int cpu, const void *data, size_t len);

/*
 * One decoded event.  data stays valid until the next read call on that CPU.
 * Caller-allocated: set sz; the readers fill the rest.
 */
struct kagg_rb_event {
	size_t sz;
	uint64_t ts;
	const void *data;
	uint32_t len; /* payload bytes in the record (4-byte multiple, >= asked) */
	int cpu;
	int64_t missed; /* events lost just before this one: 0, count, -1 unknown */
};

/*
 * Consuming read (trace_pipe): the oldest unread event of `cpu`, or of all
 * CPUs merged in timestamp order when cpu < 0.  0, -EAGAIN when empty,
 * -EINVAL bad cpu or ev->sz.
 */
KAGG_API int kagg_rb__consume(struct kagg_rb *rb, int cpu, struct kagg_rb_event *ev);

/*
 * trace_pipe_raw: consume one whole sub-buffer image of `cpu` into buf
 * (buf_sz >= subbuf_size): a never-read sub-buffer is handed out as it was
 * written (commit = real end, tail padding excluded); a partly consumed one is
 * copied from the read position with time_stamp = the last consumed event's
 * ts.  Lost events since the last read set RB_MISSED_EVENTS, and
 * RB_MISSED_STORED with the u64 count after the data when 8 bytes are free.
 * Bytes past the data are zero.  When only the sub-buffer being written holds
 * data, the writers are moved to the next one first (no data is lost).
 * Returns subbuf_size, -EAGAIN when empty, -EINVAL, -ENOSPC (buf_sz).
 */
KAGG_API int kagg_rb__read_page(struct kagg_rb *rb, int cpu, void *buf, size_t buf_sz);
/*
 * Same, but never moves the writers on: only sub-buffers the writers have
 * left (full ones) are handed out, -EAGAIN otherwise.  For streaming readers
 * (splice-like), so a reader that keeps up does not cut sub-buffers short.
 */
KAGG_API int kagg_rb__read_full_page(struct kagg_rb *rb, int cpu, void *buf, size_t buf_sz);

/*
 * Block until `cpu` (any CPU when cpu < 0) holds unread data filling at least
 * percent% of its sub-buffers (buffer_percent; 0 = any data).  timeout_ms < 0
 * waits forever.  0, -ETIMEDOUT, -EINTR, -EINVAL.
 */
KAGG_API int kagg_rb__wait(struct kagg_rb *rb, int cpu, int percent, int timeout_ms);

/*
 * Per-CPU statistics, names and meaning of tracefs per_cpu/cpuN/stats.
 * Caller-allocated: set sz; kagg_rb__stats() fills the rest.
 */
struct kagg_rb_stats {
	size_t sz;
	uint64_t entries;	 /* unread events in the buffer */
	uint64_t overrun;	 /* events lost to overwrite */
	uint64_t commit_overrun; /* events refused: writer wrapped into uncommitted data */
	uint64_t bytes;		 /* unread bytes (records and padding) */
	uint64_t oldest_event_ts;
	uint64_t now_ts;
	uint64_t dropped_events; /* consume mode: events refused because full */
	uint64_t read_events;	 /* events consumed by readers */
	/* kagg additions */
	uint64_t too_big;      /* events refused: larger than a sub-buffer */
	uint64_t nest_refused; /* events refused: max_nest reservations open */
	uint64_t pages_lost;   /* sub-buffers dropped by overwrite */
};
/* cpu < 0: sum over CPUs (timestamps: min oldest, now). 0 or -EINVAL (also bad st->sz). */
KAGG_API int kagg_rb__stats(struct kagg_rb *rb, int cpu, struct kagg_rb_stats *st);
/* Print st in the per_cpu/cpuN/stats text layout.  0 or -EINVAL (bad st->sz). */
KAGG_API int kagg_rb_stats__fprint(const struct kagg_rb_stats *st, FILE *f);

/*
 * Non-consuming iterator (the `trace` file): a snapshot of the unread events of
 * `cpu` (all CPUs merged by timestamp when cpu < 0) taken at creation; reading
 * it consumes nothing, so two iterators over an idle buffer return the same
 * events.  NULL with errno EINVAL/ENOMEM.
 */
struct kagg_rb_iter;
KAGG_API struct kagg_rb_iter *kagg_rb_iter__new(struct kagg_rb *rb, int cpu);
/* 0 with *ev filled, -ENOENT at the end, -EINVAL bad ev->sz. */
KAGG_API int kagg_rb_iter__next(struct kagg_rb_iter *it, struct kagg_rb_event *ev);
KAGG_API void kagg_rb_iter__free(struct kagg_rb_iter *it);

/*
 * Decoding one sub-buffer image (ours or the kernel's trace_pipe_raw), for any
 * sub-buffer size.  Little-endian, 8-byte commit (64-bit kernels).  The image
 * may come from a file: every length is checked against the commit size, and
 * the page may sit at any alignment.
 * Caller-allocated: set sz; __init() fills the rest (read-only for the caller).
 */
struct kagg_rb_page_iter {
	size_t sz;
	const uint8_t *page;
	uint32_t off, size; /* read position and data size (commit & 30 bits) */
	uint64_t ts;	    /* running timestamp */
	int64_t missed;	    /* 0, lost count, or -1 when only the flag is set */
	size_t subbuf_size;
};
/*
 * 0, or -EINVAL when the commit size (bytes 8..15 of the page) does not fit
 * subbuf_size or it->sz is too small.
 */
KAGG_API int kagg_rb_page_iter__init(struct kagg_rb_page_iter *it, const void *page,
				     size_t subbuf_size);
/*
 * Next data event (ev->missed = it->missed on the first one).  0, -ENOENT at
 * the end, -EINVAL (NULL argument, or ev->sz too small), or -EBADMSG when
 * the record at it->off is malformed (its length runs past the commit size):
 * it->off stays on it, so the record sits at byte KAGG_RB_PAGE_HDR + it->off
 * of the page, and every later call returns -EBADMSG again.  ev->sz is
 * checked on the first call after __init() (a page is decoded in one go):
 * keep passing events of that size until the next __init().
 */
KAGG_API int kagg_rb_page_iter__next(struct kagg_rb_page_iter *it, struct kagg_rb_event *ev);

/* Length of the data record (header included) for an n-byte payload. */
static inline uint32_t kagg_rb__record_len(size_t n)
{
	uint32_t len;

	if (n == 0)
		n = 1;
	len = (uint32_t)((n + 3) & ~(size_t)3) + 4;
	if (n > KAGG_RB_MAX_SMALL_DATA)
		len += 4;
	return len == 12 ? 16 : len;
}

#ifdef __cplusplus
}
#endif
#endif /* KAGG_RINGBUF_H */
