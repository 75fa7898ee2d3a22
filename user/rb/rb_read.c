// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Ring buffer readers that consume nothing: sub-buffer image decoding, the
 * snapshot iterator (`trace` semantics) and per-CPU stats.
 *
 * The iterator copies every unread sub-buffer under the reader lock and
 * validates each copy against the slot word afterwards (a writer may evict
 * the page while we copy it in overwrite mode: the copy is then dropped, as
 * those events are counted as overrun).  Decoding afterwards needs no lock,
 * and reading the snapshot twice gives the same events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/ringbuf.h>
#include "util/opts.h"
#include "rb/rb_internal.h"

int kagg_rb_page_iter__init(struct kagg_rb_page_iter *it, const void *page, size_t subbuf_size)
{
	const uint8_t *p = page;
	uint64_t commit;
	uint32_t size;

	if (!sz_valid(it, RB_PAGE_ITER_MIN_SZ) || !p || subbuf_size < 32)
		return -EINVAL;
	memcpy(&commit, p + 8, 8);
	size = (uint32_t)(commit & KAGG_RB_COMMIT_MASK);
	if (size > subbuf_size - KAGG_RB_PAGE_HDR)
		return -EINVAL;
	it->page = p;
	it->off = 0;
	it->size = size;
	memcpy(&it->ts, p, 8);
	it->subbuf_size = subbuf_size;
	it->missed = 0;
	if (commit & KAGG_RB_MISSED_EVENTS) {
		it->missed = -1;
		if ((commit & KAGG_RB_MISSED_STORED) && size <= subbuf_size - KAGG_RB_PAGE_HDR - 8)
			memcpy(&it->missed, p + KAGG_RB_PAGE_HDR + size, 8);
	}
	return 0;
}

/* The first event of the page: check ev's size (once per page), hand over the loss count. */
static __attribute__((noinline)) int page_iter_first(struct kagg_rb_page_iter *it,
						     struct kagg_rb_event *ev)
{
	int r;

	if (!sz_valid(ev, RB_EVENT_MIN_SZ))
		return -EINVAL;
	r = rb_decode_next(it->page + KAGG_RB_PAGE_HDR, it->size, &it->off, &it->ts, ev);
	if (r <= 0)
		return r ? r : -ENOENT;
	ev->cpu = -1;
	ev->missed = it->missed;
	return 0;
}

int kagg_rb_page_iter__next(struct kagg_rb_page_iter *it, struct kagg_rb_event *ev)
{
	int r;

	if (__builtin_expect(it->off == 0, 0))
		return page_iter_first(it, ev);
	r = rb_decode_next(it->page + KAGG_RB_PAGE_HDR, it->size, &it->off, &it->ts, ev);
	if (r <= 0)
		return r ? r : -ENOENT;
	ev->cpu = -1;
	ev->missed = 0;
	return 0;
}

/* ------------------------------------------------------------ snapshot iterator */

struct it_page {
	uint64_t ts;
	uint32_t len;
	int cpu;
	uint8_t *data;
};

struct it_cpu {
	struct it_page *pages;
	size_t nr, cur;
	uint32_t off;
	uint64_t ts;
	bool have;
	struct kagg_rb_event ev;
};

struct kagg_rb_iter {
	int lo, hi;
	struct it_cpu *c;
};

static int it_add(struct it_cpu *ic, size_t *cap, int cpu, uint64_t ts, const uint8_t *d,
		  uint32_t len)
{
	struct it_page *p;

	if (!len)
		return 0;
	if (ic->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 8;

		p = realloc(ic->pages, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ic->pages = p;
		*cap = n;
	}
	p = &ic->pages[ic->nr];
	p->data = malloc(len);
	if (!p->data)
		return -ENOMEM;
	memcpy(p->data, d, len);
	p->ts = ts;
	p->len = len;
	p->cpu = cpu;
	ic->nr++;
	return 0;
}

/* Copy the unread data of cb (rlock held). */
static int it_snap(struct rb_cpu *cb, struct it_cpu *ic)
{
	struct kagg_rb *rb = cb->rb;
	size_t cap = 0;
	uint64_t c, s, w;
	int err;

	if (cb->rd_off < cb->rd_end) {
		err = it_add(ic, &cap, cb->cpu, cb->rd_ts,
			     cb->pages + cb->rd_phys * rb->subbuf + KAGG_RB_PAGE_HDR + cb->rd_off,
			     cb->rd_end - cb->rd_off);
		if (err)
			return err;
	}
	c = rb_commit_pos(cb, UINT64_MAX);
	s = cb->read_seq;
	if (POS_SEQ(c) + 1 > s + rb->nr)
		s = POS_SEQ(c) + 1 - rb->nr;
	for (; s <= POS_SEQ(c); s++) {
		const uint8_t *pg;
		uint32_t len;

		w = __atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE);
		if (SLOT_TAG(w) != s)
			continue;
		pg = cb->pages + SLOT_PHYS(w) * rb->subbuf;
		len = s == POS_SEQ(c) ? POS_OFF(c) : cb->meta[SLOT_PHYS(w)].real_end;
		err = it_add(ic, &cap, cb->cpu, *(const uint64_t *)pg, pg + KAGG_RB_PAGE_HDR, len);
		if (err)
			return err;
		/* evicted while we copied it: drop the copy */
		if (__atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE) != w) {
			free(ic->pages[--ic->nr].data);
		}
	}
	return 0;
}

void kagg_rb_iter__free(struct kagg_rb_iter *it)
{
	int i;
	size_t j;

	if (!it)
		return;
	for (i = 0; it->c && i < it->hi - it->lo; i++) {
		for (j = 0; j < it->c[i].nr; j++)
			free(it->c[i].pages[j].data);
		free(it->c[i].pages);
	}
	free(it->c);
	free(it);
}

struct kagg_rb_iter *kagg_rb_iter__new(struct kagg_rb *rb, int cpu)
{
	struct kagg_rb_iter *it;
	int i, err = 0;

	if (!rb || cpu >= rb->nr_cpus) {
		errno = EINVAL;
		return NULL;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->lo = cpu < 0 ? 0 : cpu;
	it->hi = cpu < 0 ? rb->nr_cpus : cpu + 1;
	it->c = calloc(it->hi - it->lo, sizeof(*it->c));
	if (!it->c) {
		free(it);
		return NULL;
	}
	for (i = it->lo; i < it->hi && !err; i++) {
		struct rb_cpu *cb = &rb->cpus[i];

		pthread_mutex_lock(&cb->rlock);
		err = it_snap(cb, &it->c[i - it->lo]);
		pthread_mutex_unlock(&cb->rlock);
	}
	if (err) {
		kagg_rb_iter__free(it);
		errno = -err;
		return NULL;
	}
	return it;
}

static bool it_peek(struct it_cpu *ic)
{
	while (!ic->have && ic->cur < ic->nr) {
		struct it_page *p = &ic->pages[ic->cur];

		if (ic->off == 0)
			ic->ts = p->ts;
		if (rb_decode_next(p->data, p->len, &ic->off, &ic->ts, &ic->ev) > 0) {
			ic->ev.cpu = p->cpu;
			ic->ev.missed = 0;
			ic->have = true;
		} else {
			ic->cur++;
			ic->off = 0;
		}
	}
	return ic->have;
}

int kagg_rb_iter__next(struct kagg_rb_iter *it, struct kagg_rb_event *ev)
{
	struct it_cpu *best = NULL;
	int i;

	if (!sz_valid(ev, RB_EVENT_MIN_SZ))
		return -EINVAL;
	for (i = 0; i < it->hi - it->lo; i++) {
		struct it_cpu *ic = &it->c[i];

		if (it_peek(ic) && (!best || ic->ev.ts < best->ev.ts))
			best = ic;
	}
	if (!best)
		return -ENOENT;
	best->ev.sz = sizeof(best->ev);
	sz_copy(ev, &best->ev, sizeof(best->ev));
	best->have = false;
	return 0;
}

/* ------------------------------------------------------------------ stats */

static void stats_cpu(struct rb_cpu *cb, struct kagg_rb_stats *st)
{
	struct kagg_rb_iter it = { .lo = 0, .hi = 1 };
	struct it_cpu ic = { 0 };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	size_t j;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&cb->rlock);
	/* a snapshot without closing the page being written: count in place */
	{
		struct kagg_rb *rb = cb->rb;
		uint64_t c = rb_commit_pos(cb, UINT64_MAX), s, w;

		if (cb->rd_off < cb->rd_end) {
			st->entries += rb_count_events(cb->pages + cb->rd_phys * rb->subbuf +
							       KAGG_RB_PAGE_HDR + cb->rd_off,
						       cb->rd_end - cb->rd_off);
			st->bytes += cb->rd_end - cb->rd_off;
		}
		s = cb->read_seq;
		if (POS_SEQ(c) + 1 > s + rb->nr)
			s = POS_SEQ(c) + 1 - rb->nr;
		for (; s <= POS_SEQ(c); s++) {
			const uint8_t *pg;
			uint32_t len, n;

			w = __atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE);
			if (SLOT_TAG(w) != s)
				continue;
			pg = cb->pages + SLOT_PHYS(w) * rb->subbuf;
			len = s == POS_SEQ(c) ? POS_OFF(c) : cb->meta[SLOT_PHYS(w)].end;
			n = rb_count_events(pg + KAGG_RB_PAGE_HDR, len);
			if (__atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE) != w)
				continue;
			st->entries += n;
			st->bytes += len;
		}
		st->read_events = cb->read_events;
		st->now_ts = kagg_rb__now(rb);
	}
	/* oldest event: the first of a one-CPU snapshot */
	if (st->entries) {
		(void)it_snap(cb, &ic);
		it.c = &ic;
		if (!kagg_rb_iter__next(&it, &ev))
			st->oldest_event_ts = ev.ts;
		for (j = 0; j < ic.nr; j++)
			free(ic.pages[j].data);
		free(ic.pages);
	}
	pthread_mutex_unlock(&cb->rlock);
	st->overrun = __atomic_load_n(&cb->overrun, __ATOMIC_RELAXED);
	st->commit_overrun = __atomic_load_n(&cb->commit_overrun, __ATOMIC_RELAXED);
	st->dropped_events = __atomic_load_n(&cb->dropped, __ATOMIC_RELAXED);
	st->too_big = __atomic_load_n(&cb->too_big, __ATOMIC_RELAXED);
	st->nest_refused = __atomic_load_n(&cb->nest_refused, __ATOMIC_RELAXED);
	st->pages_lost = __atomic_load_n(&cb->pages_lost, __ATOMIC_RELAXED);
}

int kagg_rb__stats(struct kagg_rb *rb, int cpu, struct kagg_rb_stats *out)
{
	struct kagg_rb_stats one, all = { 0 }, *st = &all;
	int i;

	if (!rb || cpu >= rb->nr_cpus || !sz_valid(out, RB_STATS_MIN_SZ))
		return -EINVAL;
	if (cpu >= 0) {
		stats_cpu(&rb->cpus[cpu], st);
		goto done;
	}
	for (i = 0; i < rb->nr_cpus; i++) {
		stats_cpu(&rb->cpus[i], &one);
		st->entries += one.entries;
		st->overrun += one.overrun;
		st->commit_overrun += one.commit_overrun;
		st->bytes += one.bytes;
		if (one.entries &&
		    (!st->oldest_event_ts || one.oldest_event_ts < st->oldest_event_ts))
			st->oldest_event_ts = one.oldest_event_ts;
		st->now_ts = one.now_ts;
		st->dropped_events += one.dropped_events;
		st->read_events += one.read_events;
		st->too_big += one.too_big;
		st->nest_refused += one.nest_refused;
		st->pages_lost += one.pages_lost;
	}
done:
	st->sz = sizeof(*st);
	sz_copy(out, st, sizeof(*st));
	return 0;
}

int kagg_rb_stats__fprint(const struct kagg_rb_stats *st, FILE *f)
{
	if (!sz_in_valid(st, RB_STATS_MIN_SZ, sizeof(*st)) || !f)
		return -EINVAL;
	fprintf(f, "entries: %llu\n", (unsigned long long)st->entries);
	fprintf(f, "overrun: %llu\n", (unsigned long long)st->overrun);
	fprintf(f, "commit overrun: %llu\n", (unsigned long long)st->commit_overrun);
	fprintf(f, "bytes: %llu\n", (unsigned long long)st->bytes);
	fprintf(f, "oldest event ts: %5llu.%06lu\n",
		(unsigned long long)(st->oldest_event_ts / 1000000000ULL),
		(unsigned long)(st->oldest_event_ts % 1000000000ULL / 1000));
	fprintf(f, "now ts: %5llu.%06lu\n", (unsigned long long)(st->now_ts / 1000000000ULL),
		(unsigned long)(st->now_ts % 1000000000ULL / 1000));
	fprintf(f, "dropped events: %llu\n", (unsigned long long)st->dropped_events);
	fprintf(f, "read events: %llu\n", (unsigned long long)st->read_events);
	return 0;
}
