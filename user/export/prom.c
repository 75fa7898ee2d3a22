// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Prometheus exposition of kagg snapshots (kagg/prom.h): text 0.0.4,
 * OpenMetrics 1.0, and the delimited protobuf format with native histograms
 * for exp buckets (schema user/proto/prometheus_metrics.proto).
 *
 *   interval snapshot ─▶ kagg_prom__update(p, i, snap)   sums into instance i
 *   (resetting reads)      counters by name, drops by cause, BPF cost by
 *                          program, histograms by key, slot by slot
 *   scrape ─▶ kagg_prom__negotiate(Accept) ─▶ kagg_prom__write(p, f, fmt)
 *                          every family from the sums, nothing reset
 *
 * What it guarantees:
 * - What is written only grows: every counter and every histogram bucket is
 *   the sum of the snapshots given, so a scraper sees counters, never
 *   gauges that jump back (kagg_*_created says when each series started: its
 *   instance's start, or for a key first kept later the start of that interval).
 * - A bounded number of series per instance: at most max_keys keys that
 *   counted something (largest first within a snapshot) have their own
 *   series; a key that finds no free place is added to one series labelled
 *   key="other" and counted in kagg_folded_keys.  A key that never counted
 *   anything takes no place.  A keyed series that counted nothing for
 *   key_ttl seconds (of the snapshots' durations, a monotonic clock that a
 *   step of the wall clock does not move) is retired: it is written
 *   no more, its place is free, kagg_retired_keys counts it, and a key that
 *   comes back later starts a new series from zero (a counter reset).
 * - Every family is well-formed in the format asked: metric names hold
 *   [a-zA-Z0-9_:] only, label values are escaped (backslash, quote,
 *   newline), floats read back exactly (+Inf, -Inf, NaN spelled out), a
 *   bucket's `le` is the largest value it holds (in seconds for times), the
 *   buckets stop at the highest one that counted anything, then +Inf;
 *   OpenMetrics ends with "# EOF".  A native histogram (protobuf, nanoseconds, exp buckets)
 *   has kagg's exp buckets as they are: bucket i is native bucket i + 1.
 * - Errors come back: -ENOMEM, -EIO when the stream failed (fflush, ferror).
 *
 * What it does not do:
 * - Tell an interval snapshot from a cumulative one: given snapshots that
 *   do not reset, it counts their events again at every update.
 * - Check one instance's layout: the unit, linear and exp fields come from
 *   its first histogram; later ones are added slot by slot as they are.
 * - Undo a half-applied update: on ENOMEM part of a snapshot may be summed.
 * - Lock: updates and writes of one kagg_prom are the caller's to serialize.
 * - Count past PROM_MAX_DROPS drop causes or PROM_MAX_PROGS programs of an
 *   instance: later names are left out.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <kagg/prom.h>
#include "util/array.h"
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"
#include "util/utf8.h"
#include "prometheus_metrics.pb-c.h"

#define PROM_DEFAULT_KEYS 100
/* Seconds a keyed series may count nothing before it is retired: Prometheus's lookback delta. */
#define PROM_DEFAULT_KEY_TTL 300.0
/* The highest classic bucket of time histograms by default: the first whose le reaches 60 s. */
#define PROM_DEFAULT_MAX_BUCKET 60.0
#define PROM_MAX_DROPS 16
#define PROM_MAX_PROGS 8

/* One cumulative histogram series. */
struct prom_series {
	struct kagg_hist_key key; /* key.label points to label below */
	char *label;
	uint64_t cgroup_id; /* KAGG_KEY_CGROUP: the cgroup's id and path (NULL: gone) */
	char *cgroup;
	/* A program's aggregation (kagg_prog__open()): its name and its key's labels. */
	char *agg;
	size_t nr_labels;
	char **names, **vals;
	bool other;	/* the folded keys */
	bool keyed;	/* hist_keyed(): may be retired */
	double last;	/* when it last counted something: its instance's age then (s) */
	double created; /* the start of the interval it was made in (_created) */
	uint64_t *slots;
	unsigned int nr_slots;
	uint64_t total;
	double sum;
	bool has_sum;
};

struct prom_named {
	char *name;
	uint64_t a; /* drops: count; programs: runs */
	uint64_t b; /* programs: run time, ns */
};

struct prom_inst {
	char *id;
	bool seen; /* a snapshot was added */
	char *tool, *event, *attach, *kernel, *filters, *value;
	struct timespec created;
	double age; /* seconds counted by the snapshots added (their durations) */
	uint64_t events_seen, events_recorded, events_filtered, folded, retired;
	struct prom_named drops[PROM_MAX_DROPS];
	size_t nr_drops;
	struct prom_named progs[PROM_MAX_PROGS];
	size_t nr_progs;
	bool has_overhead;
	/* The bucket layout, from the first snapshot with histograms. */
	bool has_layout;
	enum kagg_unit unit;
	bool has_exp;
	int exp_scale;
	int64_t exp_base;
	int64_t lin_min;
	uint64_t lin_step;
	unsigned int nr_buckets;    /* the classic buckets listed, +Inf aside */
	struct prom_series *series; /* keyed ones at most max_keys, plus the unkeyed one */
	size_t nr_series;
	size_t nr_keyed;
	struct prom_series other;
};

struct kagg_prom {
	size_t max_keys;
	double max_bucket; /* 0: the default for the kind of histogram */
	double key_ttl;	   /* seconds; INFINITY: never */
	struct prom_inst *insts;
	size_t nr_insts;
};

struct kagg_prom *kagg_prom__new(const struct kagg_prom_opts *opts)
{
	struct kagg_prom_opts o = { 0 };
	struct kagg_prom *p;

	if (opts && !opts_copy(&o, OPTS_END(kagg_prom_opts), opts)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL; /* errno ENOMEM, from calloc */
	if (!(o.max_bucket >= 0) || !(o.key_ttl >= 0)) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	p->max_keys = o.max_keys ? o.max_keys : PROM_DEFAULT_KEYS;
	p->max_bucket = o.max_bucket;
	p->key_ttl = o.key_ttl ? o.key_ttl : PROM_DEFAULT_KEY_TTL;
	return p;
}

static void series_free(struct prom_series *s)
{
	free_strv(s->names, s->nr_labels);
	free_strv(s->vals, s->nr_labels);
	free(s->agg);
	free(s->label);
	free(s->cgroup);
	free(s->slots);
}

static void inst_free(struct prom_inst *in)
{
	size_t i;

	free(in->id);
	free(in->tool);
	free(in->event);
	free(in->attach);
	free(in->kernel);
	free(in->filters);
	free(in->value);
	for (i = 0; i < in->nr_drops; i++)
		free(in->drops[i].name);
	for (i = 0; i < in->nr_progs; i++)
		free(in->progs[i].name);
	for (i = 0; i < in->nr_series; i++)
		series_free(&in->series[i]);
	free(in->series);
	series_free(&in->other);
}

void kagg_prom__free(struct kagg_prom *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_insts; i++)
		inst_free(&p->insts[i]);
	free(p->insts);
	free(p);
}

int kagg_prom__add_tool(struct kagg_prom *p, const char *id)
{
	struct prom_inst *tmp;
	size_t i;

	if (!p || !id || !*id)
		return -EINVAL;
	for (i = 0; i < p->nr_insts; i++)
		if (!strcmp(p->insts[i].id, id))
			return -EINVAL;
	tmp = realloc(p->insts, (p->nr_insts + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	p->insts = tmp;
	tmp = &p->insts[p->nr_insts];
	memset(tmp, 0, sizeof(*tmp));
	tmp->id = strdup(id);
	if (!tmp->id)
		return -ENOMEM;
	return (int)p->nr_insts++;
}

/* Replace *dst by a copy of s (NULL: "") unless equal; -ENOMEM. */
static int set_str(char **dst, const char *s)
{
	char *c;

	if (!s)
		s = "";
	if (*dst && !strcmp(*dst, s))
		return 0;
	c = strdup(s);
	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

/* The named counter of list (nr of max), added when missing; NULL when full or ENOMEM. */
static struct prom_named *named(struct prom_named *list, size_t *nr, size_t max, const char *name)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		if (!strcmp(list[i].name, name))
			return &list[i];
	if (*nr >= max)
		return NULL;
	list[*nr] = (struct prom_named){ .name = strdup(name) };
	if (!list[*nr].name)
		return NULL;
	return &list[(*nr)++];
}

/* A program's aggregation's name, NULL for a built-in tool's histogram. */
static const char *hist_agg(const struct kagg_hist *h)
{
	return KAGG_HAS_FIELD(h, kagg_hist, label_values) ? h->agg : NULL;
}

static size_t hist_nr_labels(const struct kagg_hist *h)
{
	return KAGG_HAS_FIELD(h, kagg_hist, label_values) && h->label_names && h->label_values
		       ? h->nr_labels
		       : 0;
}

static bool hist_keyed(const struct kagg_hist *h)
{
	return h->key.mode != KAGG_KEY_NONE || h->key.id || hist_nr_labels(h);
}

/* h's cgroup id: a KAGG_KEY_CGROUP histogram's, else 0. */
static uint64_t hist_cgroup_id(const struct kagg_hist *h)
{
	return h->key.mode == KAGG_KEY_CGROUP && KAGG_HAS_FIELD(h, kagg_hist, cgroup) ? h->cgroup_id
										      : 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Do two comms (COMM_LEN bytes, NUL-padded) give the same label value?  Bytes outside
 * UTF-8 and controls print as U+FFFD (put_value), so two comms may: one series then.
 */
#define COMM_LEN sizeof(((struct kagg_hist_key *)0)->comm)
static bool same_comm_label(const char *a, const char *b)
{
	char ra[COMM_LEN + 1] = "", rb[COMM_LEN + 1] = "";
	char ca[3 * COMM_LEN + 1], cb[3 * COMM_LEN + 1];

	if (!memcmp(a, b, COMM_LEN))
		return true;
	memcpy(ra, a, COMM_LEN);
	memcpy(rb, b, COMM_LEN);
	utf8_clean(ca, ra, UTF8_KEEP_NL);
	utf8_clean(cb, rb, UTF8_KEEP_NL);
	return !strcmp(ca, cb);
}

/* Is s the series of h's key?  A program's keys compare by their labels. */
static bool same_key(const struct prom_series *s, const struct kagg_hist *h)
{
	const struct kagg_hist_key *a = &s->key, *b = &h->key;

	return a->mode == b->mode && a->id == b->id &&
	       (a->mode == KAGG_KEY_NONE || a->pid == b->pid) &&
	       (a->mode != KAGG_KEY_COMM || same_comm_label(a->comm, b->comm)) &&
	       (a->mode != KAGG_KEY_CGROUP || s->cgroup_id == hist_cgroup_id(h)) &&
	       (a->mode != KAGG_KEY_TID || a->tid == b->tid) && same_str(s->agg, hist_agg(h)) &&
	       (!s->agg || same_str(s->label, b->label));
}

/* Add h's slots to s (grown as needed); -ENOMEM. */
static int series_add(struct prom_series *s, const struct kagg_hist *h)
{
	unsigned int k;

	if (h->nr_slots > s->nr_slots) {
		uint64_t *n = realloc(s->slots, h->nr_slots * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + s->nr_slots, 0, (h->nr_slots - s->nr_slots) * sizeof(*n));
		s->slots = n;
		s->nr_slots = h->nr_slots;
	}
	for (k = 0; k < h->nr_slots; k++)
		s->slots[k] += h->slots[k];
	s->total += h->total;
	if (KAGG_HAS_FIELD(h, kagg_hist, sum) && h->has_sum) {
		s->has_sum = true;
		s->sum += h->sum;
	}
	return 0;
}

static double slot_le(const struct prom_inst *in, unsigned int k);
static bool inst_is_time(const struct prom_inst *in);

/*
 * The bucket layout of the instance, from its first histogram, and so the classic buckets it
 * lists from then on: every slot from the lowest up to the first whose le reaches the cap, so
 * that each `le` series exists from the first scrape and rate() across them stays consistent.
 */
static int take_layout(const struct kagg_prom *p, struct prom_inst *in, const struct kagg_hist *h)
{
	double cap;
	int err;

	in->has_layout = true;
	in->unit = h->unit;
	in->lin_min = h->lin_min;
	in->lin_step = h->lin_step;
	if (hist_is_exp(h)) {
		in->has_exp = true;
		in->exp_scale = h->exp_scale;
		in->exp_base = h->exp_base_index;
	}
	err = set_str(&in->value, KAGG_HAS_FIELD(h, kagg_hist, value) ? h->value : NULL);
	if (err)
		return err;
	cap = p->max_bucket ? p->max_bucket : inst_is_time(in) ? PROM_DEFAULT_MAX_BUCKET : INFINITY;
	for (in->nr_buckets = 0; in->nr_buckets < h->nr_slots;)
		if (slot_le(in, in->nr_buckets++) >= cap)
			break;
	return 0;
}

/*
 * Does h share the instance's bucket layout?  A program's aggregations are served in one
 * family, so they must: times in one unit, or values, log2 or the same linear buckets.
 */
static bool same_layout(const struct prom_inst *in, const struct kagg_hist *h)
{
	const char *v = KAGG_HAS_FIELD(h, kagg_hist, value) ? h->value : NULL;

	return in->unit == h->unit && in->lin_min == h->lin_min && in->lin_step == h->lin_step &&
	       in->has_exp == hist_is_exp(h) && (!in->value || !*in->value) == (!v || !*v);
}

/* The series of h's key, or NULL when it is not kept yet. */
static struct prom_series *find_series(struct prom_inst *in, const struct kagg_hist *h)
{
	size_t i;

	for (i = 0; i < in->nr_series; i++)
		if (same_key(&in->series[i], h))
			return &in->series[i];
	return NULL;
}

/* A copy of h's aggregation name and labels into s; -ENOMEM. */
static int series_labels(struct prom_series *s, const struct kagg_hist *h)
{
	size_t n = hist_nr_labels(h), i;

	if (hist_agg(h) && !(s->agg = strdup(hist_agg(h))))
		return -ENOMEM;
	if (!n)
		return 0;
	s->names = calloc(n, sizeof(*s->names));
	s->vals = calloc(n, sizeof(*s->vals));
	if (!s->names || !s->vals)
		return -ENOMEM;
	for (i = 0; i < n; i++, s->nr_labels++) {
		s->names[i] = strdup(h->label_names[i] ? h->label_names[i] : "");
		s->vals[i] = strdup(h->label_values[i] ? h->label_values[i] : "");
		if (!s->names[i] || !s->vals[i]) {
			s->nr_labels++; /* freed with the series */
			return -ENOMEM;
		}
	}
	return 0;
}

/* Seconds since the epoch. */
static double ts_s(const struct timespec *t)
{
	return (double)t->tv_sec + t->tv_nsec * 1e-9;
}

/* A new series for h's key, made in the interval of meta m. */
static struct prom_series *new_series(struct prom_inst *in, const struct kagg_hist *h,
				      const struct kagg_meta *m)
{
	const struct kagg_hist_key *k = &h->key;
	struct prom_series *tmp = realloc(in->series, (in->nr_series + 1) * sizeof(*tmp));

	if (!tmp)
		return NULL;
	in->series = tmp;
	tmp = &in->series[in->nr_series];
	memset(tmp, 0, sizeof(*tmp));
	tmp->key = *k;
	tmp->key.label = NULL;
	tmp->last = in->age;
	tmp->created = ts_s(&m->start);
	in->nr_series++;
	if ((k->label && !(tmp->label = strdup(k->label))) || series_labels(tmp, h))
		return NULL;
	tmp->cgroup_id = hist_cgroup_id(h);
	if (tmp->cgroup_id && h->cgroup && !(tmp->cgroup = strdup(h->cgroup)))
		return NULL;
	tmp->key.label = tmp->label;
	if (hist_keyed(h)) {
		tmp->keyed = true;
		in->nr_keyed++;
	}
	return tmp;
}

/* Retire the keyed series that counted nothing for the key TTL up to now: their places free. */
static void retire_idle(const struct kagg_prom *p, struct prom_inst *in, double now)
{
	size_t i, out = 0;

	for (i = 0; i < in->nr_series; i++) {
		struct prom_series *s = &in->series[i];

		if (s->keyed && now - s->last > p->key_ttl) {
			series_free(s);
			in->nr_keyed--;
			in->retired++;
			continue;
		}
		if (out != i)
			in->series[out] = *s;
		out++;
	}
	in->nr_series = out;
}

/* Histograms by count, largest first (new keys take the free places in that order). */
static int by_total(const void *a, const void *b)
{
	const struct kagg_hist *x = *(const struct kagg_hist *const *)a;
	const struct kagg_hist *y = *(const struct kagg_hist *const *)b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

/*
 * Add the histograms of snap, as of now: first those of the keys that have a series, then
 * the idle series retired, then the new keys into the places free (largest first).
 */
static int update_hists(struct kagg_prom *p, struct prom_inst *in, const struct kagg_snapshot *snap)
{
	const struct kagg_meta *m = kagg_snapshot__meta(snap);
	size_t n = kagg_snapshot__hist_cnt(snap), i;
	double now = in->age += m->duration_s;
	const struct kagg_hist **hs;
	int err = 0;

	if (!n) {
		retire_idle(p, in, now);
		return 0;
	}
	hs = calloc(n, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		hs[i] = kagg_snapshot__hist(snap, i);
	qsort(hs, n, sizeof(*hs), by_total);
	if (!in->has_layout)
		err = take_layout(p, in, hs[0]);
	for (i = 0; i < n && !err; i++) {
		const struct kagg_hist *h = hs[i];
		struct prom_series *s = find_series(in, h);

		if (hist_agg(h) && !same_layout(in, h)) {
			err = -EINVAL;
			break;
		}
		if (!s)
			continue;
		/* A process's name can change (exec); the latest one is shown. */
		memcpy(s->key.comm, h->key.comm, sizeof(s->key.comm));
		if (h->total)
			s->last = now;
		err = series_add(s, h);
		hs[i] = NULL;
	}
	if (!err)
		retire_idle(p, in, now);
	for (i = 0; i < n && !err; i++) {
		const struct kagg_hist *h = hs[i];
		struct prom_series *s;

		if (!h)
			continue;
		/* a key printed as one made in this pass (comms alike once escaped) */
		s = find_series(in, h);
		if (s) {
			if (h->total)
				s->last = now;
		} else if (hist_keyed(h) && in->nr_keyed >= p->max_keys) {
			s = &in->other;
			s->other = true;
			in->folded++;
		} else if (!h->total && hist_keyed(h)) {
			continue; /* no place taken by a key that counted nothing */
		} else {
			s = new_series(in, h, m);
			if (!s)
				err = -ENOMEM;
		}
		if (s)
			err = series_add(s, h);
	}
	free(hs);
	return err;
}

int kagg_prom__update(struct kagg_prom *p, int i, const struct kagg_snapshot *snap)
{
	const struct kagg_meta *m;
	struct prom_inst *in;
	size_t k;
	int err;

	if (!p || i < 0 || (size_t)i >= p->nr_insts || !snap)
		return -EINVAL;
	in = &p->insts[i];
	m = kagg_snapshot__meta(snap);
	if (!m)
		return -EINVAL;
	if (!in->seen) {
		in->seen = true;
		in->created = m->start;
	}
	if ((err = set_str(&in->tool, m->tool)) || (err = set_str(&in->event, m->event)) ||
	    (err = set_str(&in->attach, m->attach)) || (err = set_str(&in->kernel, m->kernel)) ||
	    (err = set_str(&in->filters, m->filters)))
		return err;
	in->events_seen += m->events_seen;
	in->events_recorded += m->events_recorded;
	in->events_filtered += m->events_filtered;
	for (k = 0; k < m->nr_drops; k++) {
		struct prom_named *d =
			named(in->drops, &in->nr_drops, PROM_MAX_DROPS, m->drops[k]->cause);
		if (d)
			d->a += m->drops[k]->count;
	}
	if (m->has_overhead) {
		in->has_overhead = true;
		for (k = 0; k < m->nr_progs; k++) {
			struct prom_named *pc =
				named(in->progs, &in->nr_progs, PROM_MAX_PROGS, m->progs[k]->prog);
			if (pc) {
				pc->a += m->progs[k]->run_cnt;
				pc->b += m->progs[k]->run_time_ns;
			}
		}
	}
	return update_hists(p, in, snap);
}

/* ------------------------------------------------------------ writing */

const char *kagg_prom__content_type(enum kagg_prom_format fmt)
{
	switch (fmt) {
	case KAGG_PROM_OPENMETRICS:
		return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	case KAGG_PROM_PROTOBUF:
		return "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
		       "encoding=delimited";
	default:
		return "text/plain; version=0.0.4; charset=utf-8";
	}
}

/* q of the Accept entry that starts at e (up to ',' ), 1 when not given. */
static double accept_q(const char *e)
{
	const char *end = strchr(e, ','), *q;

	for (q = e; (q = strchr(q, ';')) && (!end || q < end); q++) {
		while (*++q == ' ')
			;
		if (!strncmp(q, "q=", 2))
			return strtod(q + 2, NULL);
		q--;
	}
	return 1;
}

/* Whether the Accept entry at e (up to ',') has the parameter param. */
static bool accept_has(const char *e, const char *param)
{
	const char *end = strchr(e, ','), *p = strstr(e, param);

	return p && (!end || p < end);
}

/* q of the media type t in accept (with parameter param, unless NULL), -1 when absent. */
static double accept_type_q(const char *accept, const char *t, const char *param,
			    const char *param2)
{
	const char *e = accept;
	size_t n = strlen(t);

	while (e && *e) {
		while (*e == ' ' || *e == ',')
			e++;
		if (!strncasecmp(e, t, n) && (e[n] == ';' || e[n] == ',' || e[n] == ' ' || !e[n]) &&
		    (!param || accept_has(e, param)) && (!param2 || accept_has(e, param2)))
			return accept_q(e);
		e = strchr(e, ',');
	}
	return -1;
}

enum kagg_prom_format kagg_prom__negotiate(const char *accept)
{
	double om, text, pb;

	if (!accept)
		return KAGG_PROM_TEXT;
	om = accept_type_q(accept, "application/openmetrics-text", NULL, NULL);
	text = accept_type_q(accept, "text/plain", NULL, NULL);
	pb = accept_type_q(accept, "application/vnd.google.protobuf",
			   "proto=io.prometheus.client.MetricFamily", "encoding=delimited");
	if (pb > 0 && pb >= om && pb > text)
		return KAGG_PROM_PROTOBUF;
	return om > 0 && om > text ? KAGG_PROM_OPENMETRICS : KAGG_PROM_TEXT;
}

/* A series' labels: tool_id, tool, then its key's. */
#define LSET_MAX 16
struct lset {
	unsigned int n;
	const char *k[LSET_MAX];
	const char *v[LSET_MAX];
	char pid[16], tid[16], id[24], cgroup[24], comm[17];
	char names[LSET_MAX][64]; /* a program's label names, renamed off the reserved ones */
};

static void lset_add(struct lset *l, const char *k, const char *v)
{
	if (l->n < sizeof(l->k) / sizeof(l->k[0])) {
		l->k[l->n] = k;
		l->v[l->n++] = v ? v : "";
	}
}

static void inst_lset(struct lset *l, const struct prom_inst *in)
{
	l->n = 0;
	lset_add(l, "tool_id", in->id);
	lset_add(l, "tool", in->tool);
}

/*
 * A program's key label name: a C identifier (from BTF); one that is a label of the
 * exposition (tool_id, tool, agg, key, le, quantile) or starts with "__" is key_NAME.
 */
static const char *prog_label(struct lset *l, const char *name)
{
	static const char *const taken[] = { "tool_id", "tool", "agg", "key", "le", "quantile" };
	char *out = l->names[l->n < LSET_MAX ? l->n : 0];
	bool rename = !strncmp(name, "__", 2) || !*name;
	size_t i;

	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		rename |= !strcmp(name, taken[i]);
	snprintf(out, sizeof(l->names[0]), "%s%s", rename ? "key_" : "", name);
	for (; *out; out++)
		if (!((*out >= 'a' && *out <= 'z') || (*out >= 'A' && *out <= 'Z') ||
		      (*out >= '0' && *out <= '9') || *out == '_'))
			*out = '_';
	return l->names[l->n < LSET_MAX ? l->n : 0];
}

/*
 * The key labels of series s; key="other" for the folded keys.  A program's aggregation:
 * agg, then one label per field of its key.
 */
static void key_lset(struct lset *l, const struct prom_series *s)
{
	const struct kagg_hist_key *k = &s->key;
	size_t i;

	if (s->other) {
		lset_add(l, "key", "other");
		return;
	}
	if (s->agg) {
		lset_add(l, "agg", s->agg);
		for (i = 0; i < s->nr_labels; i++)
			lset_add(l, prog_label(l, s->names[i]), s->vals[i]);
		return;
	}
	if (k->mode == KAGG_KEY_CGROUP) {
		/* the id too: a cgroup made again at the same path (a restarted unit) is another */
		snprintf(l->cgroup, sizeof(l->cgroup), "%llu", (unsigned long long)s->cgroup_id);
		lset_add(l, "cgroup", s->cgroup ? s->cgroup : l->cgroup);
		lset_add(l, "cgroup_id", l->cgroup);
	} else if (k->mode != KAGG_KEY_NONE) { /* per process, thread or command */
		if (k->mode != KAGG_KEY_COMM) {
			snprintf(l->pid, sizeof(l->pid), "%d", k->pid);
			lset_add(l, "pid", l->pid);
		}
		if (k->mode == KAGG_KEY_TID) {
			snprintf(l->tid, sizeof(l->tid), "%d", k->tid);
			lset_add(l, "tid", l->tid);
		}
		memcpy(l->comm, k->comm, sizeof(k->comm));
		l->comm[sizeof(k->comm)] = 0;
		lset_add(l, "comm", l->comm);
	}
	if (k->label) {
		lset_add(l, "key", k->label);
	} else if (k->id) {
		snprintf(l->id, sizeof(l->id), "%llu", (unsigned long long)k->id);
		lset_add(l, "key", l->id);
	}
}

/* The protobuf family being built, and what it owns until written. */
struct pbf {
	Io__Prometheus__Client__MetricFamily fam;
	Io__Prometheus__Client__Metric **metrics;
	size_t cap;
	void **own;
	size_t nr_own, cap_own;
	bool failed;
};

struct pw {
	FILE *f;
	enum kagg_prom_format fmt;
	bool om;
	const struct kagg_prom *p;
	const char *type; /* of the family being written */
	struct pbf pb;
};

/* calloc'd memory freed when the family is written; NULL (and failed set) on ENOMEM. */
static void *pb_alloc(struct pw *w, size_t sz)
{
	void *p = calloc(1, sz);

	if (p && w->pb.nr_own == w->pb.cap_own) {
		size_t cap = w->pb.cap_own ? w->pb.cap_own * 2 : 64;
		void **tmp = realloc(w->pb.own, cap * sizeof(*tmp));

		if (!tmp) {
			free(p);
			p = NULL;
		} else {
			w->pb.own = tmp;
			w->pb.cap_own = cap;
		}
	}
	if (!p) {
		w->pb.failed = true;
		return NULL;
	}
	w->pb.own[w->pb.nr_own++] = p;
	return p;
}

static char *pb_str(struct pw *w, const char *s)
{
	char *c = pb_alloc(w, strlen(s) + 1);

	return c ? strcpy(c, s) : NULL;
}

/* A label value as put_value() writes it, unescaped: protobuf strings are UTF-8. */
static char *pb_value(struct pw *w, const char *s)
{
	char *c = pb_alloc(w, utf8_clean(NULL, s, UTF8_KEEP_NL) + 1);

	if (c)
		utf8_clean(c, s, UTF8_KEEP_NL);
	return c;
}

/* Write the family built so far (length-delimited) and free what it owned. */
static void pb_flush(struct pw *w)
{
	struct pbf *b = &w->pb;
	size_t i;

	if (b->fam.name && !b->failed) {
		size_t len = io__prometheus__client__metric_family__get_packed_size(&b->fam);
		uint8_t *buf = malloc(len + 10), *o = buf;
		size_t v = len;

		if (buf) {
			do {
				*o++ = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
				v >>= 7;
			} while (v);
			io__prometheus__client__metric_family__pack(&b->fam, o);
			fwrite(buf, 1, (size_t)(o - buf) + len, w->f);
			free(buf);
		} else {
			b->failed = true;
		}
	}
	for (i = 0; i < b->nr_own; i++)
		free(b->own[i]);
	b->nr_own = 0;
	free(b->metrics);
	b->metrics = NULL;
	b->cap = 0;
	io__prometheus__client__metric_family__init(&b->fam);
}

/* A new metric of the family, with labels l (and one more, k="v", unless k is NULL). */
static Io__Prometheus__Client__Metric *pb_metric(struct pw *w, const struct lset *l, const char *k,
						 const char *v)
{
	struct pbf *b = &w->pb;
	Io__Prometheus__Client__Metric *m = pb_alloc(w, sizeof(*m));
	size_t n = l->n + (k ? 1 : 0), i;

	if (!m)
		return NULL;
	io__prometheus__client__metric__init(m);
	m->label = pb_alloc(w, n * sizeof(*m->label));
	if (!m->label)
		return NULL;
	for (i = 0; i < n; i++) {
		Io__Prometheus__Client__LabelPair *lp = pb_alloc(w, sizeof(*lp));

		if (!lp)
			return NULL;
		io__prometheus__client__label_pair__init(lp);
		lp->name = pb_str(w, i < l->n ? l->k[i] : k);
		lp->value = pb_value(w, i < l->n ? l->v[i] : v);
		if (!lp->name || !lp->value)
			return NULL;
		m->label[m->n_label++] = lp;
	}
	if (GROW_ARRAY(b->metrics, b->cap, b->fam.n_metric, 16)) {
		b->failed = true;
		return NULL;
	}
	b->fam.metric = b->metrics;
	b->metrics[b->fam.n_metric++] = m;
	return m;
}

/* A metric name part: [a-zA-Z0-9_:] kept, anything else '_'. */
static void name_clean(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == ':'))
			*s = '_';
}

/*
 * A label value, the one rule of the three formats: each byte outside UTF-8 and each control
 * but the newline replaced by U+FFFD (utf8.h), since Prometheus refuses a scrape holding a
 * label value that is not UTF-8 and OpenMetrics has no escape for the controls; then, in the
 * text formats, backslash, double quote and newline escaped (\\, \", \n: all that both
 * text formats read).
 */
static void put_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t k;
	uint32_t c;

	fputc('"', f);
	for (; *p; p += k) {
		k = utf8_next(p, SIZE_MAX, &c);
		if (c == '\\')
			fputs("\\\\", f);
		else if (c == '"')
			fputs("\\\"", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == UTF8_BAD || utf8_is_control(c))
			fputs(UTF8_REPLACEMENT, f);
		else
			fwrite(p, 1, k, f);
	}
	fputc('"', f);
}

/* A float as the shortest text that reads back the same; +Inf, -Inf, NaN. */
static const char *fmt_double(char *buf, size_t n, double v)
{
	int prec;

	if (isnan(v))
		return "NaN";
	if (isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	if (v > -1e17 && v < 1e17 && v == (double)(int64_t)v) {
		snprintf(buf, n, "%.0f", v);
		return buf;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

static void put_double(FILE *f, double v)
{
	char buf[40];

	fputs(fmt_double(buf, sizeof(buf), v), f);
}

/*
 * Start a family.  type: counter, gauge, info, histogram; base: the family's name without
 * suffix (text 0.0.4 and protobuf name counters NAME_total and info metrics NAME_info, a
 * gauge).
 */
static void family(struct pw *w, const char *base, const char *tool, const char *type,
		   const char *unit, const char *help)
{
	const char *suffix = "";
	char name[160];

	if (!w->om && !strcmp(type, "counter"))
		suffix = "_total";
	else if (!w->om && !strcmp(type, "info"))
		suffix = "_info", type = "gauge";
	snprintf(name, sizeof(name), "%s%s%s%s", base, tool ? "_" : "", tool ? tool : "",
		 unit ? unit : "");
	name_clean(name);
	w->type = type;
	if (w->fmt == KAGG_PROM_PROTOBUF) {
		pb_flush(w);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s", suffix);
		w->pb.fam.name = pb_str(w, name);
		w->pb.fam.help = pb_str(w, help);
		w->pb.fam.has_type = true;
		w->pb.fam.type =
			!strcmp(type, "counter") ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER
			: !strcmp(type, "gauge") ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE
						 : IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM;
		return;
	}
	fprintf(w->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
	if (w->om && unit && !strcmp(unit, "_seconds"))
		fprintf(w->f, "# UNIT %s %s\n", name, unit + 1);
}

/* name{labels of l[, k="v"]} */
static void put_series(struct pw *w, const char *name, const struct lset *l, const char *k,
		       const char *v)
{
	unsigned int i;

	fputs(name, w->f);
	for (i = 0; i < l->n; i++) {
		fprintf(w->f, "%c%s=", i ? ',' : '{', l->k[i]);
		put_value(w->f, l->v[i]);
	}
	if (k) {
		fprintf(w->f, "%c%s=", l->n ? ',' : '{', k);
		put_value(w->f, v);
	}
	if (l->n || k)
		fputc('}', w->f);
	fputc(' ', w->f);
}

/* One sample of a counter, gauge or info family: name (with its suffix) and value. */
static void sample(struct pw *w, const char *name, const struct lset *l, const char *k,
		   const char *v, double value)
{
	if (w->fmt == KAGG_PROM_PROTOBUF) {
		Io__Prometheus__Client__Metric *m = pb_metric(w, l, k, v);

		if (!m)
			return;
		if (!strcmp(w->type, "counter")) {
			m->counter = pb_alloc(w, sizeof(*m->counter));
			if (m->counter) {
				io__prometheus__client__counter__init(m->counter);
				m->counter->has_value = true;
				m->counter->value = value;
			}
		} else {
			m->gauge = pb_alloc(w, sizeof(*m->gauge));
			if (m->gauge) {
				io__prometheus__client__gauge__init(m->gauge);
				m->gauge->has_value = true;
				m->gauge->value = value;
			}
		}
		return;
	}
	put_series(w, name, l, k, v);
	put_double(w->f, value);
	fputc('\n', w->f);
}

static void counter(struct pw *w, const char *name, const struct prom_inst *in, const char *lname,
		    const char *lvalue, double v)
{
	struct lset l;
	char full[96];

	inst_lset(&l, in);
	snprintf(full, sizeof(full), "%s_total", name);
	sample(w, full, &l, lname, lvalue, v);
}

static const double unit_ns[] = {
	[KAGG_UNIT_USECS] = 1e3,
	[KAGG_UNIT_NSECS] = 1,
	[KAGG_UNIT_MSECS] = 1e6,
};

static double ns_per_unit(const struct prom_inst *in)
{
	return (unsigned int)in->unit < sizeof(unit_ns) / sizeof(unit_ns[0]) ? unit_ns[in->unit]
									     : 1;
}

/* A time histogram (seconds), else values (kagg hist). */
static bool inst_is_time(const struct prom_inst *in)
{
	return !in->value || !*in->value;
}

/*
 * The `le` of slot k: the largest value it holds, in seconds for times.  A value counted in
 * usecs or msecs was truncated to its unit, so an integer slot's values are below
 * (high + 1) units: le is the last nanosecond before that.
 */
static double slot_le(const struct prom_inst *in, unsigned int k)
{
	struct kagg_hist h = {
		.sz = sizeof(h),
		.unit = in->unit,
		.nr_slots = k + 1,
		.lin_min = in->lin_min,
		.lin_step = in->lin_step,
		.has_exp = in->has_exp,
		.exp_scale = in->exp_scale,
		.exp_base_index = in->exp_base,
	};
	double lo, hi, u = ns_per_unit(in);

	hist_slot_bounds(&h, k, &lo, &hi);
	if (!inst_is_time(in))
		return hi;
	if (in->has_exp && k)
		return hi * u / 1e9;
	return ((hi + 1) * u - 1) / 1e9;
}

static double series_sum(const struct prom_inst *in, const struct prom_series *s)
{
	return inst_is_time(in) ? s->sum * ns_per_unit(in) / 1e9 : s->sum;
}

/* When s started counting: the start of the interval it was made in; "other": the instance's. */
static double series_created(const struct prom_inst *in, const struct prom_series *s)
{
	return s->other ? ts_s(&in->created) : s->created;
}

/* The count of slot k of s (0 past the slots it has). */
static uint64_t series_slot(const struct prom_series *s, unsigned int k)
{
	return k < s->nr_slots ? s->slots[k] : 0;
}

/* The slots up to the last that counted anything. */
static unsigned int series_last(const struct prom_series *s)
{
	unsigned int k, last = 0;

	for (k = 0; k < s->nr_slots; k++)
		if (s->slots[k])
			last = k + 1;
	return last;
}

static void series_write_pb(struct pw *w, const struct prom_inst *in, const struct prom_series *s,
			    const struct lset *l)
{
	Io__Prometheus__Client__Metric *m = pb_metric(w, l, NULL, NULL);
	Io__Prometheus__Client__Histogram *h;
	unsigned int k;
	uint64_t cum = 0;

	if (!m || !(h = m->histogram = pb_alloc(w, sizeof(*h))))
		return;
	io__prometheus__client__histogram__init(h);
	h->has_sample_count = true;
	h->sample_count = s->total;
	h->has_sample_sum = s->has_sum;
	h->sample_sum = series_sum(in, s);
	h->bucket = pb_alloc(w, (in->nr_buckets ? in->nr_buckets : 1) * sizeof(*h->bucket));
	if (!h->bucket)
		return;
	for (k = 0; k < in->nr_buckets; k++) {
		Io__Prometheus__Client__Bucket *b = pb_alloc(w, sizeof(*b));

		if (!b)
			return;
		io__prometheus__client__bucket__init(b);
		cum += series_slot(s, k);
		b->has_cumulative_count = b->has_upper_bound = true;
		b->cumulative_count = cum;
		b->upper_bound = slot_le(in, k);
		h->bucket[h->n_bucket++] = b;
	}
}

/*
 * The native histogram of an exp-bucketed series counted in nanoseconds: kagg's exp bucket of
 * index i, (2^(i/N), 2^((i+1)/N)], is the native bucket i + 1 of schema exp_scale; the values
 * of 0 are the zero bucket (threshold 0).
 */
static void series_write_native(struct pw *w, const struct prom_inst *in,
				const struct prom_series *s, const struct lset *l)
{
	Io__Prometheus__Client__Metric *m = pb_metric(w, l, NULL, NULL);
	Io__Prometheus__Client__Histogram *h;
	Io__Prometheus__Client__BucketSpan *sp;
	unsigned int k, first = 0, last = series_last(s);
	uint64_t prev = 0;

	if (!m || !(h = m->histogram = pb_alloc(w, sizeof(*h))))
		return;
	io__prometheus__client__histogram__init(h);
	if (!(sp = pb_alloc(w, sizeof(*sp))) || !(h->positive_span = pb_alloc(w, sizeof(sp))))
		return;
	io__prometheus__client__bucket_span__init(sp);
	h->has_sample_count = true;
	h->sample_count = s->total;
	h->has_sample_sum = s->has_sum;
	h->sample_sum = s->sum;
	h->has_schema = h->has_zero_threshold = h->has_zero_count = true;
	h->schema = in->exp_scale;
	h->zero_threshold = 0;
	h->zero_count = s->nr_slots ? s->slots[0] : 0;
	for (k = 1; k < last && !first; k++)
		if (s->slots[k])
			first = k;
	/* No bucket yet: one empty span, so that the histogram reads as native. */
	sp->has_offset = sp->has_length = true;
	h->positive_span[h->n_positive_span++] = sp;
	if (!first)
		return;
	sp->offset = (int32_t)(in->exp_base + first);
	sp->length = last - first;
	h->positive_delta = pb_alloc(w, sp->length * sizeof(*h->positive_delta));
	if (!h->positive_delta)
		return;
	for (k = first; k < last; k++) {
		h->positive_delta[h->n_positive_delta++] = (int64_t)(s->slots[k] - prev);
		prev = s->slots[k];
	}
}

static void series_write(struct pw *w, const char *name, const struct prom_inst *in,
			 const struct prom_series *s)
{
	unsigned int k;
	char n[192], le[40];
	uint64_t cum = 0;
	struct lset l;
	FILE *f = w->f;

	inst_lset(&l, in);
	key_lset(&l, s);
	if (w->fmt == KAGG_PROM_PROTOBUF) {
		series_write_pb(w, in, s, &l);
		return;
	}
	snprintf(n, sizeof(n), "%s_bucket", name);
	for (k = 0; k < in->nr_buckets; k++) {
		cum += series_slot(s, k);
		put_series(w, n, &l, "le", fmt_double(le, sizeof(le), slot_le(in, k)));
		fprintf(f, "%llu\n", (unsigned long long)cum);
	}
	put_series(w, n, &l, "le", "+Inf");
	fprintf(f, "%llu\n", (unsigned long long)s->total);
	/* OpenMetrics: _count and _sum together or not at all; +Inf is the count anyway. */
	if (!w->om || s->has_sum) {
		snprintf(n, sizeof(n), "%s_count", name);
		put_series(w, n, &l, NULL, NULL);
		fprintf(f, "%llu\n", (unsigned long long)s->total);
	}
	if (s->has_sum) {
		snprintf(n, sizeof(n), "%s_sum", name);
		put_series(w, n, &l, NULL, NULL);
		put_double(f, series_sum(in, s));
		fputc('\n', f);
	}
	if (w->om) {
		snprintf(n, sizeof(n), "%s_created", name);
		put_series(w, n, &l, NULL, NULL);
		put_double(f, series_created(in, s));
		fputc('\n', f);
	}
}

/* The series of instance in, the folded one last when there is one. */
#define EACH_SERIES(in, s, j)                                                             \
	for (j = 0; j <= (in)->nr_series; j++)                                            \
		for (const struct prom_series *s = j < (in)->nr_series ? &(in)->series[j] \
						   : (in)->other.other ? &(in)->other     \
								       : NULL;            \
		     s; s = NULL)

/* Whether in belongs to the histogram family of f. */
static bool same_family(const struct prom_inst *in, const struct prom_inst *f)
{
	return in->seen && in->has_layout && !strcmp(in->tool, f->tool) &&
	       inst_is_time(in) == inst_is_time(f);
}

/* Text 0.0.4 and protobuf have no _created: it is a gauge family of its own there. */
static void created_gauges(struct pw *w, const char *name, size_t first)
{
	const struct kagg_prom *p = w->p;
	char n[192], help[256];
	size_t i, j;

	snprintf(n, sizeof(n), "%s_created", name);
	snprintf(help, sizeof(help), "When the series of %s started counting (Unix time).", name);
	family(w, n, NULL, "gauge", NULL, help);
	for (i = first; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!same_family(in, &p->insts[first]))
			continue;
		EACH_SERIES(in, s, j)
		{
			struct lset l;

			inst_lset(&l, in);
			key_lset(&l, s);
			sample(w, n, &l, NULL, NULL, series_created(in, s));
		}
	}
}

/* Protobuf: the native histograms of the exp-bucketed instances counted in ns. */
static void native_family(struct pw *w, const char *tool, size_t first)
{
	const struct kagg_prom *p = w->p;
	bool any = false;
	size_t i, j;

	for (i = first; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!same_family(in, &p->insts[first]) || !in->has_exp ||
		    in->unit != KAGG_UNIT_NSECS)
			continue;
		if (!any)
			family(w, "kagg", tool, "histogram", "_nanoseconds",
			       "What the tool measured, in nanoseconds (native histogram).");
		any = true;
		EACH_SERIES(in, s, j)
		{
			struct lset l;

			inst_lset(&l, in);
			key_lset(&l, s);
			series_write_native(w, in, s, &l);
		}
	}
}

/* The histogram family of the instances of tool whose first one is p->insts[first]. */
static void hist_family(struct pw *w, size_t first)
{
	const struct kagg_prom *p = w->p;
	const struct prom_inst *f = &p->insts[first];
	const bool time = inst_is_time(f);
	char name[160], tool[64];
	size_t i, j;

	snprintf(tool, sizeof(tool), "%s", f->tool);
	for (i = 0; tool[i]; i++)
		if (!((tool[i] >= 'a' && tool[i] <= 'z') || (tool[i] >= '0' && tool[i] <= '9')))
			tool[i] = '_';
	snprintf(name, sizeof(name), "kagg_%s_%s", tool, time ? "seconds" : "value");
	family(w, "kagg", tool, "histogram", time ? "_seconds" : "_value",
	       time ? "What the tool measured, in seconds (cumulative buckets)."
		    : "The values the tool counted (cumulative buckets).");
	for (i = first; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!same_family(in, f))
			continue;
		EACH_SERIES(in, s, j)
		series_write(w, name, in, s);
	}
	if (!w->om)
		created_gauges(w, name, first);
	if (w->fmt == KAGG_PROM_PROTOBUF && time)
		native_family(w, tool, first);
}

/* A counter family with one sample per seen instance: its uint64_t at offset off. */
static void inst_counters(struct pw *w, const char *name, const char *help, size_t off)
{
	size_t i;

	family(w, name, NULL, "counter", NULL, help);
	for (i = 0; i < w->p->nr_insts; i++) {
		const struct prom_inst *in = &w->p->insts[i];

		if (in->seen)
			counter(w, name, in, NULL, NULL,
				*(const uint64_t *)((const char *)in + off));
	}
}

int kagg_prom__write(const struct kagg_prom *p, FILE *f, enum kagg_prom_format fmt)
{
	struct pw w = { .f = f, .fmt = fmt, .om = fmt == KAGG_PROM_OPENMETRICS, .p = p };
	struct lset l = { 0 };
	size_t i, j, k;

	if (!p || !f ||
	    (fmt != KAGG_PROM_TEXT && fmt != KAGG_PROM_OPENMETRICS && fmt != KAGG_PROM_PROTOBUF))
		return -EINVAL;
	io__prometheus__client__metric_family__init(&w.pb.fam);
	family(&w, "kagg_build", NULL, "info", NULL, "The kagg library serving these metrics.");
	sample(&w, "kagg_build_info", &l, "version", kagg_version(), 1);

	family(&w, "kagg_tool", NULL, "info", NULL,
	       "A tool instance: its event, the attach type used, the kernel, its filters.");
	for (i = 0; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!in->seen)
			continue;
		inst_lset(&l, in);
		lset_add(&l, "event", in->event);
		lset_add(&l, "attach", in->attach);
		lset_add(&l, "kernel", in->kernel);
		sample(&w, "kagg_tool_info", &l, "filters", in->filters, 1);
	}

#define EACH_SEEN(in)                     \
	for (i = 0; i < p->nr_insts; i++) \
		for (const struct prom_inst *in = &p->insts[i]; in && in->seen; in = NULL)

	inst_counters(&w, "kagg_events_seen", "Events the BPF programs ran for.",
		      offsetof(struct prom_inst, events_seen));
	inst_counters(&w, "kagg_events_recorded", "Events aggregated into the histograms.",
		      offsetof(struct prom_inst, events_recorded));
	inst_counters(&w, "kagg_events_filtered",
		      "Events left out by the tool's filters (not lost).",
		      offsetof(struct prom_inst, events_filtered));
	family(&w, "kagg_drops", NULL, "counter", NULL, "Events or captures lost, by cause.");
	EACH_SEEN(in)
	for (j = 0; j < in->nr_drops; j++)
		counter(&w, "kagg_drops", in, "cause", in->drops[j].name, in->drops[j].a);
	family(&w, "kagg_bpf_run_seconds", NULL, "counter", NULL,
	       "Time the tool's BPF programs ran (BPF_ENABLE_STATS).");
	EACH_SEEN(in)
	for (j = 0; j < in->nr_progs; j++)
		counter(&w, "kagg_bpf_run_seconds", in, "prog", in->progs[j].name,
			(double)in->progs[j].b / 1e9);
	family(&w, "kagg_bpf_runs", NULL, "counter", NULL,
	       "Runs of the tool's BPF programs (BPF_ENABLE_STATS).");
	EACH_SEEN(in)
	for (j = 0; j < in->nr_progs; j++)
		counter(&w, "kagg_bpf_runs", in, "prog", in->progs[j].name, in->progs[j].a);
	inst_counters(
		&w, "kagg_folded_keys",
		"Keyed histograms added to the series of key other, one per key and interval.",
		offsetof(struct prom_inst, folded));
	inst_counters(&w, "kagg_retired_keys",
		      "Keyed series retired after counting nothing for the key TTL.",
		      offsetof(struct prom_inst, retired));
#undef EACH_SEEN

	/* One histogram family per tool, its instances together. */
	for (i = 0; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];
		bool done = false;

		if (!in->seen || !in->has_layout)
			continue;
		for (k = 0; k < i && !done; k++)
			done = same_family(&p->insts[k], in);
		if (!done)
			hist_family(&w, i);
	}
	if (w.om)
		fputs("# EOF\n", f);
	if (fmt == KAGG_PROM_PROTOBUF) {
		pb_flush(&w);
		free(w.pb.own);
		if (w.pb.failed)
			return -ENOMEM;
	}
	return fflush(f) || ferror(f) ? -EIO : 0;
}
