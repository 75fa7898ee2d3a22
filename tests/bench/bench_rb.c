// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Ring buffer figures, as ratios against baselines measured in the same run.
 * Asserts nothing.
 *
 *  floor      one CLOCK_MONOTONIC read + one CAS on a tail + copying the record
 *  ours       kagg_rb__reserve + memcpy + kagg_rb__commit, overwrite mode, no reader
 *  mutex      the same record written under a pthread mutex into a ring:
 *             one ring shared by all writers, and one ring per CPU
 *  decode     walking our sub-buffers with kagg_rb_page_iter vs libtraceevent kbuffer
 *
 * Writers are pinned to CPUs 0..N-1.  Each figure is the best of 3 runs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kbuffer.h>

#include <kagg/ringbuf.h>
#include "bench_time.h"

/* Records per writer per run; KAGG_BENCH_ITERS lowers it under emulation (qemu-user). */
static long iters = 2000000L;

enum kind { FLOOR, OURS, MUTEX_SHARED, MUTEX_PERCPU };

#define RING (1 << 20)

static const char *write_path; /* ours: how the writers changed the state */

struct mring {
	pthread_mutex_t lock;
	uint64_t tail;
	uint8_t *buf;
} __attribute__((aligned(64)));

struct shared {
	enum kind kind;
	size_t payload;
	struct kagg_rb *rb;
	struct mring m[2];
	uint64_t tails[2][8]; /* floor: one tail per writer, own line */
	pthread_barrier_t bar;
};

struct wr {
	struct shared *s;
	int cpu;
	double ns;
	pthread_t th;
};

static void *run_writer(void *arg)
{
	struct wr *w = arg;
	struct shared *s = w->s;
	uint8_t msg[4096];
	uint8_t *floor_buf = malloc(RING + 8192);
	long i;
	double t0;

	memset(msg, 0xab, sizeof(msg));
	pin(w->cpu);
	pthread_barrier_wait(&s->bar);
	t0 = now_ns();
	switch (s->kind) {
	case FLOOR: {
		uint64_t *tail = &s->tails[w->cpu][0];

		for (i = 0; i < iters; i++) {
			uint64_t ts = mono(), t = __atomic_load_n(tail, __ATOMIC_RELAXED), len;
			uint8_t *p;

			len = s->payload + 8;
			while (!__atomic_compare_exchange_n(tail, &t, t + len, false,
							    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				;
			p = floor_buf + (t & (RING - 1));
			memcpy(p, &ts, 8);
			memcpy(p + 8, msg, s->payload);
		}
		break;
	}
	case OURS: {
		struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) }; /* sz set once, reused */

		for (i = 0; i < iters; i++) {
			void *p = kagg_rb__reserve(s->rb, s->payload, &rsv);

			if (p) {
				memcpy(p, msg, s->payload);
				kagg_rb__commit(&rsv);
			}
		}
		break;
	}
	case MUTEX_SHARED:
	case MUTEX_PERCPU:
		for (i = 0; i < iters; i++) {
			struct mring *m = &s->m[s->kind == MUTEX_SHARED ? 0 : (sched_getcpu() & 1)];
			uint64_t ts;
			uint8_t *p;

			pthread_mutex_lock(&m->lock);
			ts = mono();
			p = m->buf + (m->tail & (RING - 1));
			m->tail += s->payload + 8;
			memcpy(p, &ts, 8);
			memcpy(p + 8, msg, s->payload);
			pthread_mutex_unlock(&m->lock);
		}
		break;
	}
	w->ns = now_ns() - t0;
	free(floor_buf);
	return NULL;
}

/* events per second over all writers (best of 3) and ns per event per writer */
static double measure(enum kind k, size_t payload, int writers, double *ns_per_ev)
{
	double best = 0, best_ns = 0;
	int rep, i;

	for (rep = 0; rep < 3; rep++) {
		struct shared *s = aligned_alloc(64, sizeof(*s));
		struct wr w[2];
		double wall = 0, sum = 0, rate;

		memset(s, 0, sizeof(*s));
		s->kind = k;
		s->payload = payload;
		if (k == OURS) {
			KAGG_OPTS(kagg_rb_opts, o, .nr_subbufs = 256);
			s->rb = kagg_rb__new(&o);
		}
		for (i = 0; i < 2; i++) {
			pthread_mutex_init(&s->m[i].lock, NULL);
			s->m[i].buf = malloc(RING + 8192);
		}
		pthread_barrier_init(&s->bar, NULL, (unsigned)writers);
		for (i = 0; i < writers; i++) {
			w[i].s = s;
			w[i].cpu = i;
			pthread_create(&w[i].th, NULL, run_writer, &w[i]);
		}
		for (i = 0; i < writers; i++) {
			pthread_join(w[i].th, NULL);
			if (w[i].ns > wall)
				wall = w[i].ns;
			sum += w[i].ns;
		}
		rate = (double)iters * writers / wall * 1e9;
		if (rate > best) {
			best = rate;
			best_ns = sum / ((double)iters * writers);
		}
		if (k == OURS && !write_path)
			write_path = kagg_rb__write_path(s->rb, 0);
		kagg_rb__free(s->rb);
		for (i = 0; i < 2; i++)
			free(s->m[i].buf);
		pthread_barrier_destroy(&s->bar);
		free(s);
	}
	*ns_per_ev = best_ns;
	return best;
}

static void bench_decode(void)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = 1, .nr_subbufs = 1100);
	struct kagg_rb *rb = kagg_rb__new(&o);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint8_t *pages = malloc(1024 * 4096), msg[64] = { 0 };
	size_t np = 0, i, events = 0;
	double t, ours = 1e18, theirs = 1e18;
	uint64_t sum = 0;
	int rep;

	while (kagg_rb__write(rb, 0, msg, sizeof(msg)) == 0 && events < 60000)
		events++;
	while (np < 1024 && kagg_rb__read_page(rb, 0, pages + np * 4096, 4096) > 0)
		np++;
	for (rep = 0; rep < 5; rep++) {
		size_t n = 0;

		t = now_ns();
		for (i = 0; i < np; i++) {
			struct kagg_rb_page_iter it = { .sz = sizeof(it) };
			struct kagg_rb_event ev = { .sz = sizeof(ev) };

			kagg_rb_page_iter__init(&it, pages + i * 4096, 4096);
			while (kagg_rb_page_iter__next(&it, &ev) == 0) {
				sum += ev.ts + ev.len;
				n++;
			}
		}
		t = (now_ns() - t) / (double)n;
		if (t < ours)
			ours = t;
		n = 0;
		t = now_ns();
		for (i = 0; i < np; i++) {
			unsigned long long ts;
			void *d;

			kbuffer_load_subbuffer(kb, pages + i * 4096);
			for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
				sum += ts + (unsigned)kbuffer_event_size(kb);
				n++;
			}
		}
		t = (now_ns() - t) / (double)n;
		if (t < theirs)
			theirs = t;
	}
	printf("decode 64-byte events: ours %.2f ns/event, kbuffer %.2f ns/event, "
	       "kbuffer/ours %.2fx  (%zu pages; checksum %llu)\n",
	       ours, theirs, theirs / ours, np, (unsigned long long)(sum & 0xff));
	kbuffer_free(kb);
	kagg_rb__free(rb);
	free(pages);
}

int main(void)
{
	static const size_t sizes[] = { 16, 64, 256 };
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	const char *it = getenv("KAGG_BENCH_ITERS");
	size_t i;

	if (it && atol(it) > 0)
		iters = atol(it);

	printf("# kagg ring buffer bench (%d CPUs online; writers pinned to CPUs 0..N-1)\n", ncpu);
	printf("# %-7s %-4s %10s %10s %10s %10s %10s | %8s %8s %9s %9s\n", "payload", "thr",
	       "floor ns", "ours ns", "mutex1 ns", "mutexN ns", "ours Mev/s", "ours/flr",
	       "2thr/1thr", "ours/mtx1", "ours/mtxN");
	for (i = 0; i < 3; i++) {
		double f1, o1, m1, p1, f2, o2, m2, p2, ro1, rm1, rp1, ro2, rm2, rp2;

		ro1 = measure(OURS, sizes[i], 1, &o1);
		measure(FLOOR, sizes[i], 1, &f1);
		rm1 = measure(MUTEX_SHARED, sizes[i], 1, &m1);
		rp1 = measure(MUTEX_PERCPU, sizes[i], 1, &p1);
		printf("  %-7zu %-4d %10.1f %10.1f %10.1f %10.1f %10.2f | %8.2f %8s %9.2f %9.2f\n",
		       sizes[i], 1, f1, o1, m1, p1, ro1 / 1e6, o1 / f1, "-", ro1 / rm1, ro1 / rp1);
		if (ncpu < 2)
			continue;
		ro2 = measure(OURS, sizes[i], 2, &o2);
		measure(FLOOR, sizes[i], 2, &f2);
		rm2 = measure(MUTEX_SHARED, sizes[i], 2, &m2);
		rp2 = measure(MUTEX_PERCPU, sizes[i], 2, &p2);
		printf("  %-7zu %-4d %10.1f %10.1f %10.1f %10.1f %10.2f | %8.2f %8.2f %9.2f "
		       "%9.2f\n",
		       sizes[i], 2, f2, o2, m2, p2, ro2 / 1e6, o2 / f2, ro2 / ro1, ro2 / rm2,
		       ro2 / rp2);
	}
	printf("# ours: writers on their own CPU's buffer, write path %s\n",
	       write_path ? write_path : "?");
	printf("# ns = per reserve+commit per writer thread (clock read included); ours/flr = ours "
	       "ns\n"
	       "# / floor ns; 2thr/1thr = throughput of 2 writers over 1; ours/mtx1, ours/mtxN =\n"
	       "# our throughput over the shared-mutex ring's and the per-CPU-mutex ring's.\n");
	bench_decode();
	if (ncpu < 2) {
		printf("bench_rb: not measured: the 2-writer rows need 2 CPUs online\n");
		return 1;
	}
	return 0;
}
