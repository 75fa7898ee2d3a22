// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Ring buffer unit tests.  Ground truth is libtraceevent's kbuffer: every page
 * we hand out must decode in kbuffer to exactly the events we wrote
 * (timestamps, record sizes, payload bytes, missed counts), and the counters
 * must satisfy written = read + overrun + entries.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>
#include <kbuffer.h>

#include <kagg/ringbuf.h>
#include "rb/rb_internal.h" /* rb_slot(), the writers' state */
#include "testutil.h"
#include "unit_util.h"

struct fake_clock {
	uint64_t now;
	uint64_t step;
};

static uint64_t fake_now(void *ctx)
{
	struct fake_clock *c = ctx;
	uint64_t t = c->now;

	c->now += c->step;
	return t;
}

/* One expected event. */
struct exp_ev {
	uint64_t ts;
	uint32_t len; /* payload bytes written */
	uint8_t seed;
};

static void fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static bool check_bytes(const uint8_t *p, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			return false;
	return true;
}

static struct kagg_rb *mk(struct fake_clock *fc, size_t nr, enum kagg_rb_mode mode, int cpus)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = cpus, .nr_subbufs = nr, .mode = mode,
		  .clock = fc ? fake_now : NULL, .clock_ctx = fc);
	struct kagg_rb *rb = kagg_rb__new(&o);

	assert_non_null(rb);
	return rb;
}

static void wr(struct kagg_rb *rb, int cpu, struct fake_clock *fc, uint64_t ts, uint32_t len,
	       uint8_t seed, struct exp_ev *e)
{
	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	uint8_t *p;

	fc->now = ts;
	fc->step = 0;
	p = kagg_rb__reserve_cpu(rb, cpu, len, &rsv);
	assert_non_null(p);
	fill(p, len, seed);
	kagg_rb__commit(&rsv);
	if (e) {
		e->ts = ts;
		e->len = len;
		e->seed = seed;
	}
}

/* Expected record payload size as kbuffer reports it. */
static uint32_t rec_payload(uint32_t len)
{
	uint32_t r = kagg_rb__record_len(len);

	return len > KAGG_RB_MAX_SMALL_DATA ? r - 8 : r - 4;
}

/*
 * Drain cpu with read_page and decode every image with kbuffer; compare to
 * exp[0..n).  Returns the sum of missed counts reported.
 */
static long long drain_kbuffer(struct kagg_rb *rb, int cpu, const struct exp_ev *exp, size_t n,
			       size_t *got_out)
{
	size_t sz = kagg_rb__subbuf_size(rb), got = 0;
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint8_t *page = malloc(sz);
	long long missed = 0;
	int r;

	assert_non_null(kb);
	while ((r = kagg_rb__read_page(rb, cpu, page, sz)) > 0) {
		unsigned long long ts;
		void *d;
		int m;

		assert_int_equal(r, (int)sz);
		assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
		m = kbuffer_missed_events(kb);
		if (m > 0)
			missed += m;
		for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
			if (got < n) {
				assert_int_equal(ts, exp[got].ts);
				assert_int_equal(kbuffer_event_size(kb), rec_payload(exp[got].len));
				assert_true(check_bytes(d, exp[got].len, exp[got].seed));
			}
			got++;
		}
	}
	assert_int_equal(r, -EAGAIN);
	if (got_out)
		*got_out = got;
	else
		assert_int_equal(got, n);
	free(page);
	kbuffer_free(kb);
	return missed;
}

static void test_record_length_rules_match_ftrace(void **s)
{
	assert_int_equal(kagg_rb__record_len(0), 8);
	assert_int_equal(kagg_rb__record_len(1), 8);
	assert_int_equal(kagg_rb__record_len(4), 8);
	assert_int_equal(kagg_rb__record_len(5), 16); /* 12 -> 16 */
	assert_int_equal(kagg_rb__record_len(8), 16);
	assert_int_equal(kagg_rb__record_len(64), 68); /* sched_switch */
	assert_int_equal(kagg_rb__record_len(112), 116);
	assert_int_equal(kagg_rb__record_len(113), 124); /* type_len 0 */
	assert_int_equal(kagg_rb__record_len(4072), 4080);
}

static void test_edge_case_records_decode_in_kbuffer_exactly(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 8, KAGG_RB_OVERWRITE, 1);
	struct exp_ev e[16];
	size_t n = 0;

	wr(rb, 0, &fc, 1000, 0, 1, &e[n++]);		      /* empty payload, first in page */
	wr(rb, 0, &fc, 1010, 8, 2, &e[n++]);		      /* 12 -> 16 */
	wr(rb, 0, &fc, 1010, 4, 3, &e[n++]);		      /* same ns: delta 0 via TIME_EXTEND */
	wr(rb, 0, &fc, 1020 + (1ull << 27), 112, 4, &e[n++]); /* TIME_EXTEND, largest small */
	wr(rb, 0, &fc, 1030 + (5ull << 40), 113, 5, &e[n++]); /* big extend, type_len 0 */
	wr(rb, 0, &fc, (5ull << 40) + 2000, 64, 6, &e[n++]);
	assert_int_equal(drain_kbuffer(rb, 0, e, n, NULL), 0);
	kagg_rb__free(rb);
}

static void test_max_payload_accepted_and_larger_refused_and_counted(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_stats st = { .sz = sizeof(st) };
	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	struct exp_ev e[2];

	assert_int_equal(kagg_rb__max_payload(rb), 4072);
	assert_null(kagg_rb__reserve_cpu(rb, 0, 4073, &rsv));
	assert_int_equal(errno, E2BIG);
	wr(rb, 0, &fc, 100, 10, 1, &e[0]);
	wr(rb, 0, &fc, 200, 4072, 2, &e[1]); /* crosses into a fresh sub-buffer */
	assert_int_equal(drain_kbuffer(rb, 0, e, 2, NULL), 0);
	assert_int_equal(kagg_rb__stats(rb, 0, &st), 0);
	assert_int_equal(st.too_big, 1);
	assert_int_equal(st.read_events, 2);
	kagg_rb__free(rb);
}

static void test_page_crossing_pads_and_keeps_timestamps(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 16, KAGG_RB_OVERWRITE, 1);
	struct exp_ev e[400];
	size_t i, n = 0;

	for (i = 0; i < 400; i++) /* ~ 9 sub-buffers, sizes vary so padding varies */
		wr(rb, 0, &fc, 5000 + i * 333, (uint32_t)(i * 13 % 300), (uint8_t)i, &e[n++]);
	assert_int_equal(drain_kbuffer(rb, 0, e, n, NULL), 0);
	kagg_rb__free(rb);
}

static void test_discard_removes_last_or_pads_middle(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_rsv a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };
	struct kagg_rb_rsv c = { .sz = sizeof(c) }, d = { .sz = sizeof(d) };
	struct exp_ev e[4];
	uint8_t *p;
	size_t n = 0;

	wr(rb, 0, &fc, 100, 20, 1, &e[n++]);
	/* last record: removed outright, the next event's delta is from ts 100 */
	fc.now = 150;
	assert_non_null(kagg_rb__reserve_cpu(rb, 0, 40, &a));
	kagg_rb__discard(&a);
	/* middle record (b, nested c after it): b becomes padding */
	fc.now = 200;
	assert_non_null(kagg_rb__reserve_cpu(rb, 0, 40, &b));
	fc.now = 210;
	p = kagg_rb__reserve_cpu(rb, 0, 30, &c);
	fill(p, 30, 9);
	e[n++] = (struct exp_ev){ 210, 30, 9 };
	kagg_rb__commit(&c);
	kagg_rb__discard(&b);
	/* a discarded first-of-page event with delta 0 keeps later timestamps exact */
	fc.now = 300;
	assert_non_null(kagg_rb__reserve_cpu(rb, 0, 4000, &d)); /* new page */
	fc.now = 310;
	p = kagg_rb__reserve_cpu(rb, 0, 16, &c);
	fill(p, 16, 10);
	kagg_rb__commit(&c);
	e[n++] = (struct exp_ev){ 310, 16, 10 };
	kagg_rb__discard(&d);
	assert_int_equal(drain_kbuffer(rb, 0, e, n, NULL), 0);
	kagg_rb__free(rb);
}

/* A one-CPU ring of 4 pages after 1000 writes of 60 bytes (seed i at 10 + 50 * i). */
struct thousand {
	struct fake_clock fc;
	struct kagg_rb *rb;
	struct exp_ev e[1000]; /* the writes the ring took, in order */
	size_t n;	       /* how many it took */
};

/* The ring (mode) written 1000 times; a write it refuses fails with ENOBUFS.  Free it. */
static struct thousand *thousand_writes(enum kagg_rb_mode mode)
{
	struct thousand *t = calloc(1, sizeof(*t));
	size_t i;

	assert_non_null(t);
	t->rb = mk(&t->fc, 4, mode, 1);
	for (i = 0; i < 1000; i++) {
		struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
		uint8_t *p;

		t->fc.now = 10 + i * 50;
		p = kagg_rb__reserve_cpu(t->rb, 0, 60, &rsv);
		if (!p) {
			assert_int_equal(errno, ENOBUFS);
			continue;
		}
		fill(p, 60, (uint8_t)i);
		kagg_rb__commit(&rsv);
		t->e[t->n++] = (struct exp_ev){ 10 + i * 50, 60, (uint8_t)i };
	}
	return t;
}

static void test_overrun_drops_oldest_pages_and_reports_missed(void **s)
{
	struct thousand *t = thousand_writes(KAGG_RB_OVERWRITE);
	struct kagg_rb_stats st = { .sz = sizeof(st) };
	size_t got, first;
	long long missed;

	assert_int_equal(t->n, 1000); /* every write taken */
	assert_int_equal(kagg_rb__stats(t->rb, 0, &st), 0);
	assert_true(st.overrun > 0);
	assert_int_equal(st.entries + st.overrun, 1000);
	first = st.overrun;
	missed = drain_kbuffer(t->rb, 0, t->e + first, 1000 - first, &got);
	assert_int_equal(got, 1000 - first);
	assert_int_equal(missed, (long long)first);
	assert_int_equal(kagg_rb__stats(t->rb, 0, &st), 0);
	assert_int_equal(st.read_events + st.overrun, 1000);
	assert_int_equal(st.entries, 0);
	kagg_rb__free(t->rb);
	free(t);
}

static void test_consume_mode_refuses_newest_and_counts_dropped(void **s)
{
	struct thousand *t = thousand_writes(KAGG_RB_CONSUME);
	struct kagg_rb_stats st = { .sz = sizeof(st) };

	assert_int_equal(kagg_rb__stats(t->rb, 0, &st), 0);
	assert_int_equal(st.dropped_events, 1000 - t->n);
	assert_int_equal(st.overrun, 0);
	assert_int_equal(st.entries, t->n);
	assert_int_equal(t->e[0].ts, 10); /* the oldest were kept */
	assert_int_equal(drain_kbuffer(t->rb, 0, t->e, t->n, NULL), 0);
	/* room again after reading */
	wr(t->rb, 0, &t->fc, 999999, 8, 1, NULL);
	kagg_rb__free(t->rb);
	free(t);
}

static void test_random_streams_with_interleaved_reads_match_kbuffer(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 8, KAGG_RB_OVERWRITE, 1);
	size_t sz = kagg_rb__subbuf_size(rb), total = 20000, i, rd = 0;
	struct exp_ev *e = calloc(total, sizeof(*e));
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint8_t *page = malloc(sz);
	uint64_t ts = 1;
	long long missed = 0;
	struct kagg_rb_stats st = { .sz = sizeof(st) };

	srand(42);
	for (i = 0; i < total; i++) {
		int r = rand();

		ts += 1 + ((r % 10 == 0) ? (uint64_t)(r % 7) << 26 : (uint64_t)(r % 1000));
		wr(rb, 0, &fc, ts, (uint32_t)(rand() % 200), (uint8_t)i, &e[i]);
		if (rand() % 100 == 0) {
			/* read one page: the next expected event is after any missed */
			int n = kagg_rb__read_page(rb, 0, page, sz);
			unsigned long long kts;
			void *d;
			int m;

			if (n < 0)
				continue;
			kbuffer_load_subbuffer(kb, page);
			m = kbuffer_missed_events(kb);
			d = kbuffer_read_event(kb, &kts);
			if (m) {
				/* lost events: find where we resume (ts are unique here) */
				size_t j = rd;

				while (j < total && e[j].ts != kts)
					j++;
				assert_true(j < total);
				if (m > 0) /* -1: flag only, the count did not fit */
					assert_int_equal(m, j - rd);
				missed += j - rd;
				rd = j;
			}
			for (; d; d = kbuffer_next_event(kb, &kts)) {
				assert_int_equal(kts, e[rd].ts);
				assert_int_equal(kbuffer_event_size(kb), rec_payload(e[rd].len));
				assert_true(check_bytes(d, e[rd].len, e[rd].seed));
				rd++;
			}
		}
	}
	assert_int_equal(kagg_rb__stats(rb, 0, &st), 0);
	assert_int_equal(st.read_events + st.overrun + st.entries, total);
	{
		size_t got;
		assert_int_equal(rd + st.entries + (st.overrun - missed), total);
		drain_kbuffer(rb, 0, e + total - st.entries, st.entries, &got);
		assert_int_equal(got, st.entries);
	}
	free(page);
	free(e);
	kbuffer_free(kb);
	kagg_rb__free(rb);
}

static void test_overtaken_writer_gets_absolute_time_stamp(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 4, KAGG_RB_OVERWRITE, 1);
	struct exp_ev e[3];

	/* a writer that read the clock (ts 500) before a writer that reserved first (ts 600) */
	wr(rb, 0, &fc, 100, 16, 1, &e[0]);
	wr(rb, 0, &fc, 600, 16, 2, &e[1]);
	wr(rb, 0, &fc, 500, 16, 3, &e[2]);
	assert_int_equal(drain_kbuffer(rb, 0, e, 3, NULL), 0);
	kagg_rb__free(rb);
}

static void test_nested_writers_commit_in_stack_order(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_rsv a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	uint8_t *pa, *pb;
	struct exp_ev e[2] = { { 100, 24, 1 }, { 150, 24, 2 } };
	struct kagg_rb_iter *it;

	fc.now = 100;
	pa = kagg_rb__reserve_cpu(rb, 0, 24, &a);
	fc.now = 150;
	pb = kagg_rb__reserve_cpu(rb, 0, 24, &b); /* an interrupting writer */
	fill(pb, 24, 2);
	kagg_rb__commit(&b);
	/* the outer writer has not committed: nothing is visible yet */
	assert_int_equal(kagg_rb__consume(rb, 0, &ev), -EAGAIN);
	it = kagg_rb_iter__new(rb, 0);
	assert_int_equal(kagg_rb_iter__next(it, &ev), -ENOENT);
	kagg_rb_iter__free(it);
	fill(pa, 24, 1);
	kagg_rb__commit(&a);
	assert_int_equal(drain_kbuffer(rb, 0, e, 2, NULL), 0);
	kagg_rb__free(rb);
}

static void test_nesting_deeper_than_limit_refused_and_counted(void **s)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = 1, .max_nest = 3);
	struct kagg_rb *rb = kagg_rb__new(&o);
	struct kagg_rb_rsv r[4];
	struct kagg_rb_stats st = { .sz = sizeof(st) };
	int i;

	for (i = 0; i < 4; i++)
		r[i].sz = sizeof(r[i]);
	for (i = 0; i < 3; i++)
		assert_non_null(kagg_rb__reserve_cpu(rb, 0, 8, &r[i]));
	assert_null(kagg_rb__reserve_cpu(rb, 0, 8, &r[3]));
	assert_int_equal(errno, EBUSY);
	for (i = 2; i >= 0; i--)
		kagg_rb__commit(&r[i]);
	assert_int_equal(kagg_rb__stats(rb, 0, &st), 0);
	assert_int_equal(st.nest_refused, 1);
	assert_int_equal(st.entries, 3);
	kagg_rb__free(rb);
}

/* A real signal handler writing between reserve and commit of the thread it interrupts. */
static struct kagg_rb *sig_rb;
static volatile int sig_ok;

static void on_usr1(int sig)
{
	uint32_t v = 0xabcd1234;

	sig_ok = kagg_rb__write(sig_rb, 0, &v, sizeof(v)) == 0;
}

static void test_signal_handler_writer_nests_inside_interrupted_writer(void **s)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	uint32_t *p;

	sig_rb = mk(NULL, 4, KAGG_RB_OVERWRITE, 1);
	sigaction(SIGUSR1, &sa, &old);
	p = kagg_rb__reserve_cpu(sig_rb, 0, 4, &rsv);
	raise(SIGUSR1); /* handler runs here, before we commit */
	assert_true(sig_ok);
	*p = 0x11111111;
	assert_int_equal(kagg_rb__consume(sig_rb, 0, &ev), -EAGAIN);
	kagg_rb__commit(&rsv);
	assert_int_equal(kagg_rb__consume(sig_rb, 0, &ev), 0);
	assert_int_equal(*(const uint32_t *)ev.data, 0x11111111);
	assert_int_equal(kagg_rb__consume(sig_rb, 0, &ev), 0);
	assert_int_equal(*(const uint32_t *)ev.data, 0xabcd1234);
	assert_int_equal(kagg_rb__consume(sig_rb, 0, &ev), -EAGAIN);
	sigaction(SIGUSR1, &old, NULL);
	kagg_rb__free(sig_rb);
}

/*
 * sched_yield() interposed (the library is linked in statically): the ring
 * buffer yields only while it waits for a slot another writer holds BUSY.
 * With a handoff armed, the first yield hands the CPU to the other writer
 * and returns once that thread has released the slot: the wait is proven
 * without depending on when the scheduler runs the other thread.
 */
static unsigned int yields;
static sem_t handoff_go, handoff_done;
static bool handoff_armed;

int sched_yield(void)
{
	__atomic_fetch_add(&yields, 1, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&handoff_armed, false, __ATOMIC_SEQ_CST)) {
		sem_post(&handoff_go);
		while (sem_wait(&handoff_done) && errno == EINTR)
			;
		return 0;
	}
	return (int)syscall(SYS_sched_yield);
}

struct busy_slot {
	uint64_t *slot, free_word;
};

/* The other writer: done zeroing once the waiting one has yielded. */
static void *release_busy_slot(void *arg)
{
	struct busy_slot *b = arg;

	while (sem_wait(&handoff_go) && errno == EINTR)
		;
	__atomic_store_n(b->slot, b->free_word, __ATOMIC_RELEASE);
	sem_post(&handoff_done);
	return NULL;
}

/*
 * Crossing into a sub-buffer whose page is being zeroed (slot BUSY): wait
 * for another thread to finish, but never for the thread a signal handler
 * interrupted (rb_busy_slot is ours): refuse at once, counted.
 */
static void test_busy_slot_waited_for_unless_held_by_interrupted_thread(void **s)
{
	struct kagg_rb *rb = mk(NULL, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_stats st = { .sz = sizeof(st) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	struct rb_cpu *cb = &rb->cpus[0];
	struct busy_slot b;
	pthread_t th;
	int n = 0, read = 0;
	void *p;

	while (POS_OFF(cb->st.pos) + kagg_rb__record_len(200) <= rb->cap) {
		p = kagg_rb__reserve_cpu(rb, 0, 200, &rsv);
		assert_non_null(p);
		fill(p, 200, (uint8_t)n++);
		kagg_rb__commit(&rsv);
	}
	assert_int_equal(POS_SEQ(cb->st.pos), 0);
	b.slot = &cb->slots[rb_slot(rb, 1)];
	b.free_word = *b.slot;
	assert_int_equal(SLOT_TAG(b.free_word), 1);
	*b.slot = SLOT(SLOT_PHYS(b.free_word), 1 | SLOT_BUSY);

	/* held by the thread we "interrupted": no wait */
	yields = 0;
	rb_busy_slot = b.slot;
	errno = 0;
	assert_null(kagg_rb__reserve_cpu(rb, 0, 200, &rsv));
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(yields, 0);
	rb_busy_slot = NULL;
	assert_int_equal(kagg_rb__stats(rb, 0, &st), 0);
	assert_int_equal(st.commit_overrun, 1);

	/* held by another thread: wait until it is done, then write */
	assert_int_equal(sem_init(&handoff_go, 0, 0), 0);
	assert_int_equal(sem_init(&handoff_done, 0, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, release_busy_slot, &b), 0);
	__atomic_store_n(&handoff_armed, true, __ATOMIC_SEQ_CST);
	p = kagg_rb__reserve_cpu(rb, 0, 200, &rsv);
	/* the slot was released only inside the first yield: the writer waited */
	assert_false(__atomic_load_n(&handoff_armed, __ATOMIC_SEQ_CST));
	pthread_join(th, NULL);
	sem_destroy(&handoff_go);
	sem_destroy(&handoff_done);
	assert_non_null(p);
	assert_true(yields > 0);
	fill(p, 200, (uint8_t)n++);
	kagg_rb__commit(&rsv);
	assert_int_equal(POS_SEQ(cb->st.pos), 1);
	assert_int_equal(kagg_rb__stats(rb, 0, &st), 0);
	assert_int_equal(st.commit_overrun, 1);
	while (kagg_rb__consume(rb, 0, &ev) == 0) {
		assert_int_equal(ev.len, 200);
		assert_true(check_bytes(ev.data, 200, (uint8_t)read));
		read++;
	}
	assert_int_equal(read, n);
	kagg_rb__free(rb);
}

static void test_merged_consume_orders_cpus_by_timestamp(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 4, KAGG_RB_OVERWRITE, 3);
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	uint64_t last = 0;
	int i, n = 0;

	for (i = 0; i < 300; i++)
		wr(rb,
		   i % 3 == 0	? 2
		   : i % 3 == 1 ? 0
				: 1,
		   &fc, 1000 + (uint64_t)i * 17, 8, (uint8_t)i, NULL);
	while (kagg_rb__consume(rb, -1, &ev) == 0) {
		assert_int_equal(ev.ts, 1000 + (uint64_t)n * 17);
		assert_int_equal(ev.cpu, n % 3 == 0 ? 2 : n % 3 == 1 ? 0 : 1);
		assert_true(check_bytes(ev.data, 8, (uint8_t)n));
		assert_true(ev.ts >= last);
		last = ev.ts;
		n++;
	}
	assert_int_equal(n, 300);
	kagg_rb__free(rb);
}

static void test_iterator_is_non_consuming_and_repeatable(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 8, KAGG_RB_OVERWRITE, 2);
	struct kagg_rb_event ev = { .sz = sizeof(ev) }, ev2 = { .sz = sizeof(ev2) };
	struct kagg_rb_iter *a, *b;
	int i, n = 0;

	for (i = 0; i < 500; i++)
		wr(rb, i & 1, &fc, 100 + (uint64_t)i * 3, 20, (uint8_t)i, NULL);
	/* consume a few so the reader page is partly read */
	for (i = 0; i < 5; i++)
		assert_int_equal(kagg_rb__consume(rb, -1, &ev), 0);
	a = kagg_rb_iter__new(rb, -1);
	b = kagg_rb_iter__new(rb, -1);
	assert_non_null(a);
	assert_non_null(b);
	while (kagg_rb_iter__next(a, &ev) == 0) {
		assert_int_equal(kagg_rb_iter__next(b, &ev2), 0);
		assert_int_equal(ev.ts, ev2.ts);
		assert_int_equal(ev.ts, 100 + (uint64_t)(n + 5) * 3);
		assert_true(check_bytes(ev.data, 20, (uint8_t)(n + 5)));
		n++;
	}
	assert_int_equal(n, 495);
	kagg_rb_iter__free(a);
	kagg_rb_iter__free(b);
	/* the consuming reader still gets every remaining event */
	for (i = 5; i < 500; i++) {
		assert_int_equal(kagg_rb__consume(rb, -1, &ev), 0);
		assert_int_equal(ev.ts, 100 + (uint64_t)i * 3);
	}
	assert_int_equal(kagg_rb__consume(rb, -1, &ev), -EAGAIN);
	kagg_rb__free(rb);
}

static void test_partly_consumed_page_uses_copy_path_with_last_ts(void **s)
{
	struct fake_clock fc = { 0 };
	struct kagg_rb *rb = mk(&fc, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	struct exp_ev e[10];
	uint8_t page[4096];
	int i;

	for (i = 0; i < 10; i++)
		wr(rb, 0, &fc, 1000 + (uint64_t)i * 100, 12, (uint8_t)i, &e[i]);
	assert_int_equal(kagg_rb__consume(rb, 0, &ev), 0);
	assert_int_equal(kagg_rb__consume(rb, 0, &ev), 0);
	assert_int_equal(kagg_rb__read_page(rb, 0, page, sizeof(page)), 4096);
	assert_int_equal(*(uint64_t *)page, 1100); /* ts of the last consumed event */
	/* and kbuffer decodes the rest exactly: re-check via a fresh drain of a copy */
	{
		struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
		unsigned long long ts;
		void *d;
		int k = 2;

		kbuffer_load_subbuffer(kb, page);
		for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts), k++) {
			assert_int_equal(ts, e[k].ts);
			assert_true(check_bytes(d, 12, e[k].seed));
		}
		assert_int_equal(k, 10);
		kbuffer_free(kb);
	}
	kagg_rb__free(rb);
}

static void test_stats_print_in_tracefs_layout(void **s)
{
	struct kagg_rb_stats st = { .sz = sizeof(st),
				    .entries = 3,
				    .overrun = 4,
				    .commit_overrun = 0,
				    .bytes = 120,
				    .oldest_event_ts = 1234567890123ULL,
				    .now_ts = 2000000000ULL,
				    .dropped_events = 5,
				    .read_events = 6 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	kagg_rb_stats__fprint(&st, f);
	fclose(f);
	assert_string_equal(buf, "entries: 3\noverrun: 4\ncommit overrun: 0\nbytes: 120\n"
				 "oldest event ts:  1234.567890\nnow ts:     2.000000\n"
				 "dropped events: 5\nread events: 6\n");
	free(buf);
}

static void *late_writer(void *arg)
{
	usleep(50000);
	kagg_rb__write(arg, 0, "hello", 5);
	return NULL;
}

static void test_blocking_wait_wakes_on_commit_and_times_out(void **s)
{
	struct kagg_rb *rb = mk(NULL, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	pthread_t t;

	assert_int_equal(kagg_rb__wait(rb, 0, 0, 20), -ETIMEDOUT);
	pthread_create(&t, NULL, late_writer, rb);
	assert_int_equal(kagg_rb__wait(rb, 0, 0, 5000), 0);
	pthread_join(t, NULL);
	assert_int_equal(kagg_rb__consume(rb, 0, &ev), 0);
	assert_memory_equal(ev.data, "hello", 5);
	/* watermark 50%: 4 sub-buffers, 1 partial page is not enough */
	kagg_rb__write(rb, 0, "x", 1);
	assert_int_equal(kagg_rb__wait(rb, 0, 50, 20), -ETIMEDOUT);
	kagg_rb__free(rb);
}

struct sleeper {
	struct kagg_rb *rb;
	int cpu, percent, ret;
};

static void *sleeper(void *arg)
{
	struct sleeper *sl = arg;

	sl->ret = kagg_rb__wait(sl->rb, sl->cpu, sl->percent, 10000);
	return NULL;
}

/*
 * A reader asleep in kagg_rb__wait costs the writers one FUTEX_WAKE (one
 * bump of the futex word), however many records they commit while it sleeps
 * and after it left; CPU 1's writer wakes a reader waiting on every CPU.
 */
static void test_sleeping_reader_woken_once(void **s)
{
	struct kagg_rb *rb = mk(NULL, 8, KAGG_RB_CONSUME, 2);
	struct sleeper sl = { .rb = rb, .cpu = -1, .percent = 50, .ret = 1 };
	uint8_t msg[200] = { 0 };
	uint32_t gen;
	pthread_t t;
	int i;

	pthread_create(&t, NULL, sleeper, &sl);
	while (!__atomic_load_n(&rb->cpus[1].armed, __ATOMIC_ACQUIRE))
		sched_yield();
	usleep(20000); /* past the 1 ms bound after a fresh arm: it sleeps on the arm */
	gen = __atomic_load_n(&rb->wake_gen, __ATOMIC_ACQUIRE);
	/* 7 of 8 sub-buffers: the 50% watermark is passed half-way */
	for (i = 0; i < 7 * 19; i++)
		assert_int_equal(kagg_rb__write(rb, 1, msg, sizeof(msg)), 0);
	pthread_join(t, NULL);
	assert_int_equal(sl.ret, 0);
	assert_true(__atomic_load_n(&rb->wake_gen, __ATOMIC_ACQUIRE) - gen <= 1);
	assert_int_equal(rb->cpus[0].armed, 0);
	assert_int_equal(rb->cpus[1].armed, 0);
	kagg_rb__free(rb);
}

static void test_opts_validated(void **s)
{
	KAGG_OPTS(kagg_rb_opts, bad_sz, .subbuf_size = 6000);
	KAGG_OPTS(kagg_rb_opts, bad_nr, .nr_subbufs = 1);
	TU_NEWER(kagg_rb_opts, big, 1);

	assert_null(kagg_rb__new(&bad_sz));
	assert_int_equal(errno, EINVAL);
	assert_null(kagg_rb__new(&bad_nr));
	assert_null(kagg_rb__new(&big.o));
	kagg_rb__free(NULL);
}

/*
 * Caller-allocated structs carry sz: too small is refused before anything
 * happens, a larger (newer) struct is filled only as far as this library
 * knows, its sz and unknown tail left alone, and an input struct with
 * non-zero unknown bytes is refused.
 */
static void test_sized_structs_validated(void **s)
{
	struct kagg_rb *rb = mk(NULL, 4, KAGG_RB_OVERWRITE, 1);
	struct kagg_rb_rsv small_rsv = { .sz = sizeof(size_t) }, rsv = { .sz = sizeof(rsv) };
	struct kagg_rb_event small_ev = { .sz = offsetof(struct kagg_rb_event, missed) };
	struct kagg_rb_stats small_st = { .sz = sizeof(small_st) - 8 };
	struct kagg_rb_page_iter small_it = { .sz = sizeof(small_it) - 1 },
				 it = { .sz = sizeof(it) };
	TU_NEWER(kagg_rb_event, big_ev, 0xdead);
	TU_NEWER(kagg_rb_stats, big_st, 0xbeef);
	struct kagg_rb_iter *iter;
	uint8_t page[4096];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	errno = 0;
	assert_null(kagg_rb__reserve_cpu(rb, 0, 8, &small_rsv));
	assert_int_equal(errno, EINVAL);
	assert_null(kagg_rb__reserve(rb, 8, NULL));
	assert_int_equal(errno, EINVAL);
	/* sz set once, the reservation reused */
	for (i = 0; i < 3; i++) {
		assert_non_null(kagg_rb__reserve_cpu(rb, 0, 8, &rsv));
		kagg_rb__commit(&rsv);
	}
	assert_int_equal(rsv.sz, sizeof(rsv));

	assert_int_equal(kagg_rb__stats(rb, 0, &small_st), -EINVAL);
	assert_int_equal(kagg_rb__stats(rb, 0, &big_st.o), 0);
	assert_int_equal(big_st.o.entries, 3);
	assert_int_equal(big_st.o.nest_refused, 0);
	assert_int_equal(big_st.o.sz, sizeof(big_st));
	assert_int_equal(big_st.newer, 0xbeef);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(kagg_rb_stats__fprint(&big_st.o, f), -EINVAL); /* unknown bytes set */
	big_st.newer = 0;
	assert_int_equal(kagg_rb_stats__fprint(&big_st.o, f), 0);
	assert_int_equal(kagg_rb_stats__fprint(&small_st, f), -EINVAL);
	fclose(f);
	assert_non_null(strstr(buf, "entries: 3\n"));
	free(buf);

	iter = kagg_rb_iter__new(rb, 0);
	assert_non_null(iter);
	assert_int_equal(kagg_rb_iter__next(iter, &small_ev), -EINVAL);
	assert_int_equal(kagg_rb_iter__next(iter, &big_ev.o), 0);
	assert_true(big_ev.o.len >= 8);
	assert_int_equal(big_ev.o.sz, sizeof(big_ev));
	assert_int_equal(big_ev.newer, 0xdead);
	kagg_rb_iter__free(iter);

	/* a refused consume consumes nothing */
	assert_int_equal(kagg_rb__consume(rb, 0, &small_ev), -EINVAL);
	assert_int_equal(kagg_rb__consume(rb, 0, &big_ev.o), 0);
	assert_int_equal(big_ev.o.sz, sizeof(big_ev));
	assert_int_equal(big_ev.newer, 0xdead);
	assert_int_equal(kagg_rb__stats(rb, 0, &big_st.o), 0);
	assert_int_equal(big_st.o.entries, 2);

	assert_int_equal(kagg_rb__read_page(rb, 0, page, sizeof(page)), 4096);
	assert_int_equal(kagg_rb_page_iter__init(&small_it, page, 4096), -EINVAL);
	assert_int_equal(kagg_rb_page_iter__init(&it, page, 4096), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &small_ev), -EINVAL); /* checked first */
	assert_int_equal(kagg_rb_page_iter__next(&it, &big_ev.o), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &big_ev.o), 0);
	assert_int_equal(kagg_rb_page_iter__next(&it, &big_ev.o), -ENOENT);
	assert_int_equal(big_ev.o.sz, sizeof(big_ev));
	assert_int_equal(big_ev.newer, 0xdead);
	kagg_rb__free(rb);
}

static void test_large_subbuffers_decode_in_kbuffer(void **s)
{
	struct fake_clock fc = { 0 };
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = 1, .subbuf_size = 16384, .nr_subbufs = 8,
		  .clock = fake_now, .clock_ctx = &fc);
	struct kagg_rb *rb = kagg_rb__new(&o);
	struct exp_ev e[100];
	int i;

	assert_non_null(rb);
	assert_int_equal(kagg_rb__max_payload(rb), 16384 - 24);
	for (i = 0; i < 100; i++)
		wr(rb, 0, &fc, 10 + (uint64_t)i, (uint32_t)(i * 97 % 1500), (uint8_t)i, &e[i]);
	assert_int_equal(drain_kbuffer(rb, 0, e, 100, NULL), 0);
	kagg_rb__free(rb);
}

/* rb_slot(seq) == seq % nr for every sub-buffer count and sequences up to 2^64 - 1. */
static void test_slot_index_without_division(void **state)
{
	static const uint64_t nrs[] = { 2, 3, 7, 63, 64, 65, 256, 1000, 4095, 4096, 65533, 65534 };
	struct kagg_rb rb = {};
	uint64_t x = 0x9e3779b97f4a7c15ULL, seq;
	size_t i;
	int k;

	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		rb.nr = nrs[i];
		rb.nr_magic = UINT64_MAX / rb.nr + 1;
		for (k = 0; k < 200000; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
			seq = k<1000 ? (uint64_t)k
				     : k<2000 ? UINT64_MAX - (uint64_t)(k - 1000) : x>>(k % 64);
			if (rb_slot(&rb, seq) != seq % rb.nr)
				fail_msg("nr %llu seq %llu: rb_slot %llu, %% %llu",
					 (unsigned long long)rb.nr, (unsigned long long)seq,
					 (unsigned long long)rb_slot(&rb, seq),
					 (unsigned long long)(seq % rb.nr));
		}
	}
}

/*
 * More CPUs than buffers: a thread on CPU 1 writing "its" buffer writes
 * buffer 0 (1 mod 1), from outside buffer 0's CPU, so that buffer leaves the
 * rseq writers for the locked ones, and every event arrives.
 */
static void *fold_writer(void *arg)
{
	struct kagg_rb *rb = arg;
	cpu_set_t set;
	uint32_t i;

	CPU_ZERO(&set);
	CPU_SET(1, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		return (void *)1;
	for (i = 0; i < 1000; i++)
		if (kagg_rb__write(rb, -1, &i, sizeof(i)))
			return (void *)2;
	return NULL;
}

static void test_writers_beyond_nr_cpus_fold_onto_a_buffer(void **s)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = 1, .nr_subbufs = 64);
	struct kagg_rb *rb;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	pthread_t t;
	void *ret;
	uint32_t n = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("# skipped: needs 2 online CPUs\n");
		skip();
	}
	rb = kagg_rb__new(&o);
	assert_non_null(rb);
	pthread_create(&t, NULL, fold_writer, rb);
	pthread_join(t, &ret);
	assert_null(ret);
	while (kagg_rb__consume(rb, 0, &ev) == 0) {
		assert_int_equal(*(const uint32_t *)ev.data, n);
		n++;
	}
	assert_int_equal(n, 1000);
	assert_int_equal(rb->cpus[0].foreign, RB_FOREIGN_STICKY | RB_FOREIGN_READY);
	kagg_rb__free(rb);
}

UU_MAIN(cmocka_unit_test(test_slot_index_without_division),
	cmocka_unit_test(test_writers_beyond_nr_cpus_fold_onto_a_buffer),
	cmocka_unit_test(test_record_length_rules_match_ftrace),
	cmocka_unit_test(test_edge_case_records_decode_in_kbuffer_exactly),
	cmocka_unit_test(test_max_payload_accepted_and_larger_refused_and_counted),
	cmocka_unit_test(test_page_crossing_pads_and_keeps_timestamps),
	cmocka_unit_test(test_discard_removes_last_or_pads_middle),
	cmocka_unit_test(test_overrun_drops_oldest_pages_and_reports_missed),
	cmocka_unit_test(test_consume_mode_refuses_newest_and_counts_dropped),
	cmocka_unit_test(test_random_streams_with_interleaved_reads_match_kbuffer),
	cmocka_unit_test(test_overtaken_writer_gets_absolute_time_stamp),
	cmocka_unit_test(test_nested_writers_commit_in_stack_order),
	cmocka_unit_test(test_nesting_deeper_than_limit_refused_and_counted),
	cmocka_unit_test(test_signal_handler_writer_nests_inside_interrupted_writer),
	cmocka_unit_test(test_busy_slot_waited_for_unless_held_by_interrupted_thread),
	cmocka_unit_test(test_merged_consume_orders_cpus_by_timestamp),
	cmocka_unit_test(test_iterator_is_non_consuming_and_repeatable),
	cmocka_unit_test(test_partly_consumed_page_uses_copy_path_with_last_ts),
	cmocka_unit_test(test_stats_print_in_tracefs_layout),
	cmocka_unit_test(test_blocking_wait_wakes_on_commit_and_times_out),
	cmocka_unit_test(test_sleeping_reader_woken_once), cmocka_unit_test(test_opts_validated),
	cmocka_unit_test(test_sized_structs_validated),
	cmocka_unit_test(test_large_subbuffers_decode_in_kbuffer))
