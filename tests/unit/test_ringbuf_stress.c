// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Ring buffer stress: writer threads forced onto the same CPU buffer (what
 * migration does to per-CPU writers), writers on their own CPU, and signal
 * handlers writing while the interrupted thread is between reserve and
 * commit, against a concurrent reader, for a few seconds per mode.  Two more
 * plans pin the writers: all on their own CPU's buffer (rseq writers only,
 * with the reader closing sub-buffers from outside), and one writer of
 * another CPU's buffer among them (that buffer turns to locked writers while
 * its rseq writers run).  A last plan has one unpinned writer thread, the
 * buffer's single_writer, writing both buffers in turn: it never takes the
 * locked path.
 *
 * Every 17th event is discarded.  Proves: no torn record (every payload checksums), each writer's
 * events keep their order on every buffer, pages decode in kbuffer exactly as in our own reader,
 * and the identity committed = read + overrun + still buffered holds exactly, with every refused
 * event counted (dropped + commit_overrun + nest_refused).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <kbuffer.h>

#include <kagg/ringbuf.h>
#include "rb/rb_internal.h"
#include "unit_util.h"

#define NW 6	      /* writer threads: 0..3 all on buffer 0, 4..5 on their own CPU */
#define NIDS (2 * NW) /* ids 0..NW-1 threads, NW..2NW-1 their signal handlers */
#define NCPU 2
#define SECONDS 2

struct rec {
	uint32_t id, seq, len, sum;
	uint8_t fill[];
};

struct wctx {
	struct kagg_rb *rb;
	int id;
	int pin;    /* CPU the thread runs on, -1: any */
	int target; /* buffer it writes, -1: its CPU's (kagg_rb__reserve), -2: alternating */
	pthread_t th;
	uint32_t seq, sig_seq;
	uint64_t committed, refused; /* thread and handler together */
	volatile sig_atomic_t in_window;
	uint64_t sig_in_window; /* handler runs that hit the reserve..commit window */
};

static volatile int stop;
static struct wctx W[NW];
static __thread struct wctx *self;

static uint32_t csum(const struct rec *r)
{
	uint32_t h = r->id * 2654435761u ^ r->seq ^ (r->len << 16), i;

	for (i = 0; i < r->len - sizeof(*r); i++)
		h = h * 31 + r->fill[i];
	return h;
}

/* One event; returns 0 or -errno.  Async-signal-safe. */
static int emit(struct wctx *w, uint32_t id, uint32_t *seq, uint32_t len, bool thread)
{
	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	struct rec *r;
	uint32_t i;

	if (w->target >= 0)
		r = kagg_rb__reserve_cpu(w->rb, w->target, len, &rsv);
	else if (w->target == -2)
		r = kagg_rb__reserve_cpu(w->rb, (int)(*seq % NCPU), len, &rsv);
	else
		r = kagg_rb__reserve(w->rb, len, &rsv);
	if (!r) {
		__atomic_fetch_add(&w->refused, 1, __ATOMIC_RELAXED);
		return -errno;
	}
	if (thread)
		w->in_window = 1;
	r->id = id;
	r->seq = (*seq)++;
	r->len = len;
	for (i = 0; i < len - sizeof(*r); i++)
		r->fill[i] = (uint8_t)(id + r->seq + i * 13);
	r->sum = csum(r);
	if (thread)
		w->in_window = 0;
	if (r->seq % 17 == 5) { /* discards too: removed or turned into padding */
		kagg_rb__discard(&rsv);
		return 0;
	}
	kagg_rb__commit(&rsv);
	__atomic_fetch_add(&w->committed, 1, __ATOMIC_RELAXED);
	return 0;
}

static void on_sig(int sig)
{
	struct wctx *w = self;
	int e = errno;

	if (!w)
		return;
	if (w->in_window)
		w->sig_in_window++;
	emit(w, (uint32_t)(NW + w->id), &w->sig_seq, 16 + (w->sig_seq % 50) * 4, false);
	errno = e;
}

static void *writer(void *arg)
{
	struct wctx *w = arg;
	unsigned x = (unsigned)w->id * 7919u + 1;

	self = w;
	if (w->pin >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->pin, &set);
		assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
	}
	while (!stop) {
		x = x * 1103515245u + 12345u;
		emit(w, (uint32_t)w->id, &w->seq, 16 + (x >> 16) % 180, true);
	}
	return NULL;
}

struct checker {
	uint32_t last[NIDS][NCPU];
	bool seen[NIDS][NCPU];
	uint64_t read, torn, disorder, kbuf_mismatch;
	struct kbuffer *kb;
};

static void check_event(struct checker *c, const struct kagg_rb_event *ev, int cpu)
{
	const struct rec *r = ev->data;

	c->read++;
	if (ev->len < sizeof(*r) || r->id >= NIDS || r->len > ev->len || r->len < sizeof(*r) ||
	    csum(r) != r->sum) {
		c->torn++;
		return;
	}
	if (c->seen[r->id][cpu] && r->seq <= c->last[r->id][cpu])
		c->disorder++;
	c->seen[r->id][cpu] = true;
	c->last[r->id][cpu] = r->seq;
}

/* Read one raw page of cpu; decode with ours and kbuffer; they must agree. */
static int read_one_page(struct kagg_rb *rb, struct checker *c, int cpu, uint8_t *page)
{
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	unsigned long long kts;
	void *d;
	int r = kagg_rb__read_page(rb, cpu, page, 4096);

	if (r < 0)
		return r;
	kbuffer_load_subbuffer(c->kb, page);
	d = kbuffer_read_event(c->kb, &kts);
	assert_int_equal(kagg_rb_page_iter__init(&it, page, 4096), 0);
	while (kagg_rb_page_iter__next(&it, &ev) == 0) {
		if (!d || kts != ev.ts || d != ev.data ||
		    (uint32_t)kbuffer_event_size(c->kb) != ev.len)
			c->kbuf_mismatch++;
		check_event(c, &ev, cpu);
		if (d)
			d = kbuffer_next_event(c->kb, &kts);
	}
	if (d)
		c->kbuf_mismatch++;
	return 0;
}

/* Who writes where; foreign[c]: how buffer c must end (see RB_FOREIGN_*). */
struct plan {
	const char *name;
	int nw; /* writer threads, 0: NW */
	int pin[NW], target[NW];
	int foreign[NCPU]; /* 0: rseq writers only; 1: STICKY; -1: either */
	bool single;	   /* kagg_rb_opts.single_writer */
};

static const struct plan mixed = {
	.name = "mixed",
	.pin = { -1, -1, -1, -1, -1, -1 },
	.target = { 0, 0, 0, 0, -1, -1 },
	.foreign = { -1, -1 },
};

static const struct plan own_cpu = {
	.name = "own CPU",
	.pin = { 0, 0, 0, 1, 1, 1 },
	.target = { -1, -1, -1, -1, -1, -1 },
	.foreign = { 0, 0 },
};

static const struct plan one_foreign = {
	.name = "one foreign writer",
	.pin = { 0, 0, 0, 1, 1, 1 },
	.target = { -1, -1, 1, -1, -1, -1 },
	.foreign = { 0, 1 },
};

/* One unpinned thread (and its signal handler) writing both buffers in turn. */
static const struct plan single = {
	.name = "single writer",
	.nw = 1,
	.pin = { -1 },
	.target = { -2 },
	.foreign = { 0, 0 },
	.single = true,
};

/* The pinned plans need two CPUs. */
static bool plan_runs_here(const struct plan *pl)
{
	bool pinned = false;
	int i;

	for (i = 0; i < NW; i++)
		pinned |= pl->pin[i] >= 0;
	if (!pinned)
		return true;
	if (sysconf(_SC_NPROCESSORS_ONLN) < NCPU) {
		printf("# skipped plan \"%s\": needs %d online CPUs\n", pl->name, NCPU);
		return false;
	}
	return true;
}

/*
 * Commits so far, all writers: the run lasts SECONDS, longer (up to a
 * minute) until there are enough to say something on a slow machine.
 */
static uint64_t all_committed(void)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < NW; i++)
		n += __atomic_load_n(&W[i].committed, __ATOMIC_RELAXED);
	return n;
}

static void run(enum kagg_rb_mode mode, const struct plan *pl)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = NCPU, .nr_subbufs = 16, .mode = mode,
		  .single_writer = pl->single);
	struct kagg_rb *rb = kagg_rb__new(&o);
	struct checker *c = calloc(1, sizeof(*c));
	struct sigaction sa = { .sa_handler = on_sig }, old;
	struct kagg_rb_stats st = { .sz = sizeof(st) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	struct timespec t0, now;
	uint8_t page[4096];
	uint64_t committed = 0, refused = 0, sigs = 0, hit = 0, n = 0;
	int i, nw = pl->nw ? pl->nw : NW;

	assert_non_null(rb);
	if (!plan_runs_here(pl)) {
		free(c);
		kagg_rb__free(rb);
		skip();
	}
	if (pl->foreign[0] >= 0 && !rb->rseq) {
		printf("# skipped plan \"%s\": no rseq writers in this process "
		       "(glibc did not register rseq, or membarrier cannot restart it)\n",
		       pl->name);
		free(c);
		kagg_rb__free(rb);
		skip();
	}
	c->kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, &old);
	stop = 0;
	memset(W, 0, sizeof(W));
	for (i = 0; i < nw; i++) {
		W[i].rb = rb;
		W[i].id = i;
		W[i].pin = pl->pin[i];
		W[i].target = pl->target[i];
		pthread_create(&W[i].th, NULL, writer, &W[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* reader: mix raw pages (checked against kbuffer) and merged consume */
		for (i = 0; i < 20; i++) {
			if (n % 3 == 0)
				read_one_page(rb, c, (int)(n % NCPU), page);
			else if (kagg_rb__consume(rb, -1, &ev) == 0)
				check_event(c, &ev, ev.cpu);
			n++;
		}
		pthread_kill(W[n % nw].th, SIGUSR1);
		sigs++;
		/* let the buffer fill: exercise dropped_events, or the single
		 * writer's overwrite (one writer alone would not outrun us) */
		if ((mode == KAGG_RB_CONSUME || pl->single) && n % 7)
			usleep(50);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < SECONDS ||
		 (now.tv_sec - t0.tv_sec < 60 && all_committed() < 20000));
	stop = 1;
	for (i = 0; i < nw; i++)
		pthread_join(W[i].th, NULL);
	/* drain */
	for (i = 0; i < NCPU; i++)
		while (read_one_page(rb, c, i, page) == 0)
			;
	for (i = 0; i < nw; i++) {
		committed += W[i].committed;
		refused += W[i].refused;
		hit += W[i].sig_in_window;
	}
	assert_int_equal(kagg_rb__stats(rb, -1, &st), 0);
	printf("# %s, %s: committed %llu read %llu overrun %llu dropped %llu commit_overrun %llu "
	       "nest_refused %llu; %llu signals, %llu inside a reserve..commit window\n",
	       pl->name, mode == KAGG_RB_OVERWRITE ? "overwrite" : "consume",
	       (unsigned long long)committed, (unsigned long long)c->read,
	       (unsigned long long)st.overrun, (unsigned long long)st.dropped_events,
	       (unsigned long long)st.commit_overrun, (unsigned long long)st.nest_refused,
	       (unsigned long long)sigs, (unsigned long long)hit);
	assert_int_equal(c->torn, 0);
	assert_int_equal(c->disorder, 0);
	assert_int_equal(c->kbuf_mismatch, 0);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.read_events, c->read);
	assert_int_equal(committed, c->read + st.overrun + st.entries);
	assert_int_equal(refused, st.dropped_events + st.commit_overrun + st.nest_refused);
	assert_true(committed > 10000);
	if (mode == KAGG_RB_OVERWRITE)
		assert_true(st.overrun > 0);
	else
		assert_true(st.dropped_events > 0);
	/* which write path each buffer ended on; no locked operation left open */
	for (i = 0; i < NCPU; i++) {
		uint32_t f = rb->cpus[i].foreign;

		if (rb->rseq)
			assert_int_equal(f & RB_FOREIGN_COUNT, 0);
		if (pl->foreign[i] == 0)
			assert_int_equal(f, 0);
		else if (pl->foreign[i] == 1)
			assert_int_equal(f, RB_FOREIGN_STICKY | RB_FOREIGN_READY);
	}
	sigaction(SIGUSR1, &old, NULL);
	kbuffer_free(c->kb);
	free(c);
	kagg_rb__free(rb);
}

static void test_overwrite_stress_threads_and_signal_writers_keep_identity(void **s)
{
	run(KAGG_RB_OVERWRITE, &mixed);
}

static void test_rseq_writers_on_own_cpu_with_reader_closing_keep_identity(void **s)
{
	run(KAGG_RB_OVERWRITE, &own_cpu);
	run(KAGG_RB_CONSUME, &own_cpu);
}

static void test_foreign_writer_among_rseq_writers_keeps_identity(void **s)
{
	run(KAGG_RB_OVERWRITE, &one_foreign);
}

static void test_consume_stress_threads_and_signal_writers_keep_identity(void **s)
{
	run(KAGG_RB_CONSUME, &mixed);
}

/* Never locked: the reader's closes restart the writer on whatever CPU it is. */
static void test_single_writer_on_any_cpu_with_reader_closing_keeps_identity(void **s)
{
	run(KAGG_RB_OVERWRITE, &single);
	run(KAGG_RB_CONSUME, &single);
}

UU_MAIN(cmocka_unit_test(test_overwrite_stress_threads_and_signal_writers_keep_identity),
	cmocka_unit_test(test_consume_stress_threads_and_signal_writers_keep_identity),
	cmocka_unit_test(test_rseq_writers_on_own_cpu_with_reader_closing_keep_identity),
	cmocka_unit_test(test_foreign_writer_among_rseq_writers_keeps_identity),
	cmocka_unit_test(test_single_writer_on_any_cpu_with_reader_closing_keeps_identity))
