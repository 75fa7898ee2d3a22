// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Prometheus text 0.0.4 and OpenMetrics 1.0 exposition of kagg snapshots
 * (kagg/prom.h).  Each tool instance keeps the sums of the interval
 * snapshots it was given: counters by name, drops by cause, BPF cost by
 * program, and its histograms by key, so that what is written only grows.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <kagg/prom.h>
#include "opts.h"
#include "snapshot_internal.h"

#define PROM_DEFAULT_KEYS 100
#define PROM_MAX_DROPS 16
#define PROM_MAX_PROGS 8

/* One cumulative histogram series. */
struct prom_series {
	struct kagg_hist_key key; /* key.label points to label below */
	char *label;
	bool other;		  /* the folded keys */
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
	bool seen;		/* a snapshot was added */
	char *tool, *event, *attach, *kernel, *filters, *value;
	struct timespec created;
	uint64_t events_seen, events_recorded, events_filtered, folded;
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
	struct prom_series *series; /* keyed ones at most max_keys, plus the unkeyed one */
	size_t nr_series;
	size_t nr_keyed;
	struct prom_series other;
};

struct kagg_prom {
	size_t max_keys;
	struct prom_inst *insts;
	size_t nr_insts;
};

struct kagg_prom *kagg_prom__new(const struct kagg_prom_opts *opts)
{
	struct kagg_prom_opts o = { 0 };
	struct kagg_prom *p;

	if (opts && !kagg_opts_copy(&o, sizeof(o), opts)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->max_keys = o.max_keys ? o.max_keys : PROM_DEFAULT_KEYS;
	return p;
}

static void series_free(struct prom_series *s)
{
	free(s->label);
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

static bool hist_keyed(const struct kagg_hist_key *k)
{
	return k->mode != KAGG_KEY_NONE || k->id;
}

static bool same_key(const struct kagg_hist_key *a, const struct kagg_hist_key *b)
{
	return a->mode == b->mode && a->id == b->id &&
	       (a->mode == KAGG_KEY_NONE || a->pid == b->pid) &&
	       (a->mode != KAGG_KEY_TID || a->tid == b->tid);
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

static int take_layout(struct prom_inst *in, const struct kagg_hist *h)
{
	in->has_layout = true;
	in->unit = h->unit;
	in->lin_min = h->lin_min;
	in->lin_step = h->lin_step;
	if (hist_is_exp(h)) {
		in->has_exp = true;
		in->exp_scale = h->exp_scale;
		in->exp_base = h->exp_base_index;
	}
	return set_str(&in->value, KAGG_HAS_FIELD(h, kagg_hist, value) ? h->value : NULL);
}

/* The series of key k, or NULL when it is not kept yet. */
static struct prom_series *find_series(struct prom_inst *in, const struct kagg_hist_key *k)
{
	size_t i;

	for (i = 0; i < in->nr_series; i++)
		if (same_key(&in->series[i].key, k))
			return &in->series[i];
	return NULL;
}

static struct prom_series *new_series(struct prom_inst *in, const struct kagg_hist_key *k)
{
	struct prom_series *tmp = realloc(in->series, (in->nr_series + 1) * sizeof(*tmp));

	if (!tmp)
		return NULL;
	in->series = tmp;
	tmp = &in->series[in->nr_series];
	memset(tmp, 0, sizeof(*tmp));
	tmp->key = *k;
	tmp->key.label = NULL;
	if (k->label && !(tmp->label = strdup(k->label)))
		return NULL;
	tmp->key.label = tmp->label;
	in->nr_series++;
	if (hist_keyed(k))
		in->nr_keyed++;
	return tmp;
}

/* Histograms by count, largest first (new keys take the free places in that order). */
static int by_total(const void *a, const void *b)
{
	const struct kagg_hist *x = *(const struct kagg_hist *const *)a;
	const struct kagg_hist *y = *(const struct kagg_hist *const *)b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static int update_hists(struct kagg_prom *p, struct prom_inst *in,
			const struct kagg_snapshot *snap)
{
	size_t n = kagg_snapshot__hist_cnt(snap), i;
	const struct kagg_hist **hs;
	int err = 0;

	if (!n)
		return 0;
	hs = calloc(n, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		hs[i] = kagg_snapshot__hist(snap, i);
	qsort(hs, n, sizeof(*hs), by_total);
	if (!in->has_layout)
		err = take_layout(in, hs[0]);
	for (i = 0; i < n && !err; i++) {
		const struct kagg_hist *h = hs[i];
		struct prom_series *s = find_series(in, &h->key);

		if (s) {
			/* A process's name can change (exec); the latest one is shown. */
			memcpy(s->key.comm, h->key.comm, sizeof(s->key.comm));
		} else if (hist_keyed(&h->key) && in->nr_keyed >= p->max_keys) {
			s = &in->other;
			s->other = true;
			in->folded++;
		} else if (!h->total && hist_keyed(&h->key)) {
			continue; /* no place taken by a key that counted nothing */
		} else {
			s = new_series(in, &h->key);
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
		struct prom_named *d = named(in->drops, &in->nr_drops, PROM_MAX_DROPS,
					     m->drops[k]->cause);
		if (d)
			d->a += m->drops[k]->count;
	}
	if (m->has_overhead) {
		in->has_overhead = true;
		for (k = 0; k < m->nr_progs; k++) {
			struct prom_named *pc = named(in->progs, &in->nr_progs, PROM_MAX_PROGS,
						      m->progs[k]->prog);
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
	return fmt == KAGG_PROM_OPENMETRICS ?
		"application/openmetrics-text; version=1.0.0; charset=utf-8" :
		"text/plain; version=0.0.4; charset=utf-8";
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

/* q of the media type t in accept, -1 when absent. */
static double accept_type_q(const char *accept, const char *t)
{
	const char *e = accept;
	size_t n = strlen(t);

	while (e && *e) {
		while (*e == ' ' || *e == ',')
			e++;
		if (!strncasecmp(e, t, n) && (e[n] == ';' || e[n] == ',' || e[n] == ' ' || !e[n]))
			return accept_q(e);
		e = strchr(e, ',');
	}
	return -1;
}

enum kagg_prom_format kagg_prom__negotiate(const char *accept)
{
	double om, text;

	if (!accept)
		return KAGG_PROM_TEXT;
	om = accept_type_q(accept, "application/openmetrics-text");
	text = accept_type_q(accept, "text/plain");
	return om > 0 && om > text ? KAGG_PROM_OPENMETRICS : KAGG_PROM_TEXT;
}

struct pw {
	FILE *f;
	bool om;
	const struct kagg_prom *p;
};

/* A metric name part: [a-zA-Z0-9_:] kept, anything else '_'. */
static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == ':' ? *s : '_', f);
}

/* A label value, escaped: backslash, double quote and newline. */
static void put_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* A float as the shortest text that reads back the same; +Inf, -Inf, NaN. */
static void put_double(FILE *f, double v)
{
	char buf[40];
	int prec;

	if (isnan(v)) {
		fputs("NaN", f);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", f);
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

/*
 * "# TYPE/HELP/UNIT" of a family.  type: counter, gauge, info, histogram; base: the family's
 * name without suffix (text 0.0.4 names counters NAME_total and info metrics NAME_info, a
 * gauge).
 */
static void family(struct pw *w, const char *base, const char *tool, const char *type,
		   const char *unit, const char *help)
{
	const char *suffix = "";
	char name[128];

	if (!w->om && !strcmp(type, "counter"))
		suffix = "_total";
	else if (!w->om && !strcmp(type, "info"))
		suffix = "_info", type = "gauge";
	snprintf(name, sizeof(name), "%s%s%s%s", base, tool ? "_" : "", tool ? tool : "",
		 unit ? unit : "");
	fputs("# HELP ", w->f);
	put_name(w->f, name);
	fprintf(w->f, "%s %s\n# TYPE ", suffix, help);
	put_name(w->f, name);
	fprintf(w->f, "%s %s\n", suffix, type);
	if (w->om && unit && !strcmp(unit, "_seconds")) {
		fputs("# UNIT ", w->f);
		put_name(w->f, name);
		fprintf(w->f, " %s\n", unit + 1);
	}
}

/* The labels every series of in has: tool_id, tool; no closing brace. */
static void inst_labels(struct pw *w, const struct prom_inst *in)
{
	fputs("{tool_id=", w->f);
	put_value(w->f, in->id);
	fputs(",tool=", w->f);
	put_value(w->f, in->tool);
}

static void counter(struct pw *w, const char *name, const struct prom_inst *in,
		    const char *lname, const char *lvalue, uint64_t v)
{
	fprintf(w->f, "%s_total", name);
	inst_labels(w, in);
	if (lname) {
		fprintf(w->f, ",%s=", lname);
		put_value(w->f, lvalue);
	}
	fprintf(w->f, "} %llu\n", (unsigned long long)v);
}

static void counter_seconds(struct pw *w, const char *name, const struct prom_inst *in,
			    const char *lname, const char *lvalue, double v)
{
	fprintf(w->f, "%s_total", name);
	inst_labels(w, in);
	fprintf(w->f, ",%s=", lname);
	put_value(w->f, lvalue);
	fputs("} ", w->f);
	put_double(w->f, v);
	fputc('\n', w->f);
}

static const double unit_ns[] = {
	[KAGG_UNIT_USECS] = 1e3, [KAGG_UNIT_NSECS] = 1, [KAGG_UNIT_MSECS] = 1e6,
};

static double ns_per_unit(const struct prom_inst *in)
{
	return (unsigned int)in->unit < sizeof(unit_ns) / sizeof(unit_ns[0]) ? unit_ns[in->unit] : 1;
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
		.sz = sizeof(h), .unit = in->unit, .nr_slots = k + 1, .lin_min = in->lin_min,
		.lin_step = in->lin_step, .has_exp = in->has_exp, .exp_scale = in->exp_scale,
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

/* The key labels of series s (with a leading comma), "other" for the folded keys. */
static void key_labels(struct pw *w, const struct prom_inst *in, const struct prom_series *s)
{
	const struct kagg_hist_key *k = &s->key;
	char num[24], comm[sizeof(k->comm) + 1];

	if (s->other) {
		fputs(",key=\"other\"", w->f);
		return;
	}
	if (k->mode != KAGG_KEY_NONE) {
		snprintf(num, sizeof(num), "%d", k->pid);
		fputs(",pid=", w->f);
		put_value(w->f, num);
		if (k->mode == KAGG_KEY_TID) {
			snprintf(num, sizeof(num), "%d", k->tid);
			fputs(",tid=", w->f);
			put_value(w->f, num);
		}
		memcpy(comm, k->comm, sizeof(k->comm));
		comm[sizeof(k->comm)] = 0;
		fputs(",comm=", w->f);
		put_value(w->f, comm);
	}
	if (k->id || k->label) {
		fputs(",key=", w->f);
		if (k->label) {
			put_value(w->f, k->label);
		} else {
			snprintf(num, sizeof(num), "%llu", (unsigned long long)k->id);
			put_value(w->f, num);
		}
	}
}

static void series_write(struct pw *w, const char *name, const struct prom_inst *in,
			 const struct prom_series *s)
{
	unsigned int k, last = 0;
	uint64_t cum = 0;

	for (k = 0; k < s->nr_slots; k++)
		if (s->slots[k])
			last = k + 1;
	for (k = 0; k < last; k++) {
		cum += s->slots[k];
		fprintf(w->f, "%s_bucket", name);
		inst_labels(w, in);
		key_labels(w, in, s);
		fputs(",le=\"", w->f);
		put_double(w->f, slot_le(in, k));
		fprintf(w->f, "\"} %llu\n", (unsigned long long)cum);
	}
	fprintf(w->f, "%s_bucket", name);
	inst_labels(w, in);
	key_labels(w, in, s);
	fprintf(w->f, ",le=\"+Inf\"} %llu\n", (unsigned long long)s->total);
	fprintf(w->f, "%s_count", name);
	inst_labels(w, in);
	key_labels(w, in, s);
	fprintf(w->f, "} %llu\n", (unsigned long long)s->total);
	if (s->has_sum) {
		fprintf(w->f, "%s_sum", name);
		inst_labels(w, in);
		key_labels(w, in, s);
		fputs("} ", w->f);
		put_double(w->f, inst_is_time(in) ? s->sum * ns_per_unit(in) / 1e9 : s->sum);
		fputc('\n', w->f);
	}
	if (w->om) {
		fprintf(w->f, "%s_created", name);
		inst_labels(w, in);
		key_labels(w, in, s);
		fputs("} ", w->f);
		put_double(w->f, (double)in->created.tv_sec + in->created.tv_nsec * 1e-9);
		fputc('\n', w->f);
	}
}

/* Text 0.0.4 has no _created: it is a gauge family of its own there. */
static void created_gauges(struct pw *w, const char *name, const char *tool)
{
	const struct kagg_prom *p = w->p;
	size_t i, j;

	fprintf(w->f, "# HELP %s_created When the series of %s started counting (Unix time).\n"
		      "# TYPE %s_created gauge\n", name, name, name);
	for (i = 0; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!in->seen || strcmp(in->tool, tool) || !in->has_layout)
			continue;
		for (j = 0; j <= in->nr_series; j++) {
			const struct prom_series *s = j < in->nr_series ? &in->series[j] : &in->other;

			if (j == in->nr_series && !s->other)
				continue;
			fprintf(w->f, "%s_created", name);
			inst_labels(w, in);
			key_labels(w, in, s);
			fputs("} ", w->f);
			put_double(w->f, (double)in->created.tv_sec + in->created.tv_nsec * 1e-9);
			fputc('\n', w->f);
		}
	}
}

/* The histogram family of the instances of tool whose first one is p->insts[first]. */
static void hist_family(struct pw *w, size_t first)
{
	const struct kagg_prom *p = w->p;
	const struct prom_inst *f = &p->insts[first];
	const bool time = inst_is_time(f);
	char name[128], tool[64];
	size_t i, j;

	snprintf(tool, sizeof(tool), "%s", f->tool);
	for (i = 0; tool[i]; i++)
		if (!((tool[i] >= 'a' && tool[i] <= 'z') || (tool[i] >= '0' && tool[i] <= '9')))
			tool[i] = '_';
	snprintf(name, sizeof(name), "kagg_%s_%s", tool, time ? "seconds" : "value");
	family(w, "kagg", tool, "histogram", time ? "_seconds" : "_value",
	       time ? "What the tool measured, in seconds (cumulative buckets)." :
		      "The values the tool counted (cumulative buckets).");
	for (i = first; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!in->seen || !in->has_layout || strcmp(in->tool, f->tool) ||
		    inst_is_time(in) != time)
			continue;
		for (j = 0; j < in->nr_series; j++)
			series_write(w, name, in, &in->series[j]);
		if (in->other.other)
			series_write(w, name, in, &in->other);
	}
	if (!w->om)
		created_gauges(w, name, f->tool);
}

int kagg_prom__write(const struct kagg_prom *p, FILE *f, enum kagg_prom_format fmt)
{
	struct pw w = { .f = f, .om = fmt == KAGG_PROM_OPENMETRICS, .p = p };
	size_t i, j, k;

	if (!p || !f || (fmt != KAGG_PROM_TEXT && fmt != KAGG_PROM_OPENMETRICS))
		return -EINVAL;
	family(&w, "kagg_build", NULL, "info", NULL, "The kagg library serving these metrics.");
	fprintf(f, "kagg_build_info{version=");
	put_value(f, kagg_version());
	fputs("} 1\n", f);

	family(&w, "kagg_tool", NULL, "info", NULL,
	       "A tool instance: its event, the attach type used, the kernel, its filters.");
	for (i = 0; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];

		if (!in->seen)
			continue;
		fputs("kagg_tool_info", f);
		inst_labels(&w, in);
		fputs(",event=", f);
		put_value(f, in->event);
		fputs(",attach=", f);
		put_value(f, in->attach);
		fputs(",kernel=", f);
		put_value(f, in->kernel);
		fputs(",filters=", f);
		put_value(f, in->filters);
		fputs("} 1\n", f);
	}

#define EACH_SEEN(in) \
	for (i = 0; i < p->nr_insts; i++) \
		for (const struct prom_inst *in = &p->insts[i]; in && in->seen; in = NULL)

	family(&w, "kagg_events_seen", NULL, "counter", NULL, "Events the BPF programs ran for.");
	EACH_SEEN(in)
		counter(&w, "kagg_events_seen", in, NULL, NULL, in->events_seen);
	family(&w, "kagg_events_recorded", NULL, "counter", NULL,
	       "Events aggregated into the histograms.");
	EACH_SEEN(in)
		counter(&w, "kagg_events_recorded", in, NULL, NULL, in->events_recorded);
	family(&w, "kagg_events_filtered", NULL, "counter", NULL,
	       "Events left out by the tool's filters (not lost).");
	EACH_SEEN(in)
		counter(&w, "kagg_events_filtered", in, NULL, NULL, in->events_filtered);
	family(&w, "kagg_drops", NULL, "counter", NULL, "Events or captures lost, by cause.");
	EACH_SEEN(in)
		for (j = 0; j < in->nr_drops; j++)
			counter(&w, "kagg_drops", in, "cause", in->drops[j].name, in->drops[j].a);
	family(&w, "kagg_bpf_run_seconds", NULL, "counter", NULL,
	       "Time the tool's BPF programs ran (BPF_ENABLE_STATS).");
	EACH_SEEN(in)
		for (j = 0; j < in->nr_progs; j++)
			counter_seconds(&w, "kagg_bpf_run_seconds", in, "prog", in->progs[j].name,
					(double)in->progs[j].b / 1e9);
	family(&w, "kagg_bpf_runs", NULL, "counter", NULL,
	       "Runs of the tool's BPF programs (BPF_ENABLE_STATS).");
	EACH_SEEN(in)
		for (j = 0; j < in->nr_progs; j++)
			counter(&w, "kagg_bpf_runs", in, "prog", in->progs[j].name, in->progs[j].a);
	family(&w, "kagg_folded_keys", NULL, "counter", NULL,
	       "Keyed histograms added to the series of key other, one per key and interval.");
	EACH_SEEN(in)
		counter(&w, "kagg_folded_keys", in, NULL, NULL, in->folded);
#undef EACH_SEEN

	/* One histogram family per tool, its instances together. */
	for (i = 0; i < p->nr_insts; i++) {
		const struct prom_inst *in = &p->insts[i];
		bool done = false;

		if (!in->seen || !in->has_layout)
			continue;
		for (k = 0; k < i && !done; k++)
			done = p->insts[k].seen && p->insts[k].has_layout &&
			       !strcmp(p->insts[k].tool, in->tool) &&
			       inst_is_time(&p->insts[k]) == inst_is_time(in);
		if (!done)
			hist_family(&w, i);
	}
	if (w.om)
		fputs("# EOF\n", f);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
