// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reference ring buffer's benchmark (kagg/rb_bench.h).
 *
 *   writer 0..N-1: reserve + fill + commit, 256 at a time, on the buffer of
 *                  the CPU they run on; every 4096 attempts they add the
 *                  time spent to that CPU's account (sched_getcpu)
 *   reader:        drains full sub-buffers of every CPU, sleeping in
 *                  kagg_rb__wait() at 50% (buffer_percent's default) when
 *                  none is ready; with raw_dir each page goes to cpuN.raw
 *   caller:        sleeps `seconds` (or until *stop), stops and joins the
 *                  threads, drains every page left, reads the counters
 *
 * What it guarantees: the counters are the buffer's own (kagg_rb__stats),
 * read after every writer stopped and every page was drained, next to the
 * writers' own count of commits.  What it does not: per-CPU time is
 * attributed to the CPU a writer ran on at the end of each 4096 attempts,
 * so a writer that migrates within a batch charges it to one CPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rb_bench.h"
#include <kagg/rb_format.h>
#include <stdio.h>

#define MAX_CPUS 1024
#define MAX_WRITERS 1024
#define BATCH 256	   /* attempts between two looks at the stop flag */
#define ACCOUNT_EVERY 4096 /* attempts between two time attributions */

/* Smallest result and row a caller may pass: the first version's. */
#define RESULT_MIN_SZ offsetofend(struct rbb_result, committed)
#define ROW_MIN_SZ offsetofend(struct rbb_cpu, write_path)
#define offsetofend(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))

struct bench {
	struct kagg_rb *rb;
	struct kagg_rb_events *evs;
	const struct kagg_rb_format *fmt;
	size_t payload;
	double rate; /* per writer per second; 0: unpaced */
	volatile int stop;
	int nr_cpus;
	/* per-CPU time attribution by the writers */
	pthread_mutex_t lock;
	double cpu_ns[MAX_CPUS];
	uint64_t cpu_ev[MAX_CPUS];
	FILE *raw[MAX_CPUS];
	int err; /* writing raw pages failed: -EIO */
	kagg_log_fn log;
	void *log_ctx;
};

struct writer {
	struct bench *b;
	pthread_t th;
	int id;
	int tid;
	uint64_t attempts, committed;
	double ns;
};

/* The per-CPU rows a result keeps (res->priv). */
struct rows {
	int n;
	struct rbb_cpu row[];
};

static void bench_log(const struct bench *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bench_log(const struct bench *b, const char *fmt, ...)
{
	va_list ap;

	char msg[512];

	if (!b->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->log(b->log_ctx, KAGG_LOG_WARN, msg);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ the threads */

/* Charge the time since *ts and n attempts to the CPU the writer runs on now. */
static void account(struct bench *b, double *ts, uint64_t n)
{
	double t = now_s();
	int cpu = sched_getcpu();

	pthread_mutex_lock(&b->lock);
	if (cpu >= 0) {
		cpu %= b->nr_cpus;
		b->cpu_ns[cpu] += (t - *ts) * 1e9;
		b->cpu_ev[cpu] += n;
	}
	pthread_mutex_unlock(&b->lock);
	*ts = t;
}

static void *bench_writer(void *arg)
{
	struct writer *w = arg;
	struct bench *b = w->b;
	uint32_t seq = 0;
	/* counted here, stored at the end: the writers' structs share cache lines */
	uint64_t n = 0, committed = 0, local_ev = 0;
	double t0 = now_s(), ts = t0;

	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	int id = kagg_rb_format__id(b->fmt);

	w->tid = (int)gettid();
	while (!b->stop) {
		int i;

		for (i = 0; i < BATCH; i++) {
			uint8_t *p = kagg_rb__reserve(b->rb, b->payload, &rsv);

			n++;
			if (!p)
				continue;
			kagg_rb_entry__init(p, id, 0, 0, w->tid);
			if (b->payload >= 12)
				memcpy(p + 8, &w->id, 4);
			if (b->payload >= 16)
				memcpy(p + 12, &seq, 4);
			seq++;
			kagg_rb__commit(&rsv);
			committed++;
		}
		local_ev += BATCH;
		if (local_ev >= ACCOUNT_EVERY) {
			account(b, &ts, local_ev);
			local_ev = 0;
		}
		if (b->rate > 0) {
			double ahead = t0 + (double)n / b->rate - now_s();

			if (ahead > 1e-6) {
				struct timespec d = { (time_t)ahead,
						      (long)((ahead - (time_t)ahead) * 1e9) };

				nanosleep(&d, NULL);
			}
		}
	}
	w->attempts = n;
	w->committed = committed;
	w->ns = (now_s() - t0) * 1e9;
	return NULL;
}

/* Drain every CPU once (full sub-buffers only unless `all`); returns pages read. */
static int bench_drain(struct bench *b, uint8_t *page, bool all)
{
	size_t sz = kagg_rb__subbuf_size(b->rb);
	int cpu, got = 0;

	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		while ((all ? kagg_rb__read_page(b->rb, cpu, page, sz)
			    : kagg_rb__read_full_page(b->rb, cpu, page, sz)) > 0) {
			got++;
			if (b->raw[cpu] && fwrite(page, sz, 1, b->raw[cpu]) != 1)
				b->err = -EIO;
		}
	}
	return got;
}

static void *bench_reader(void *arg)
{
	struct bench *b = arg;
	uint8_t *page = malloc(kagg_rb__subbuf_size(b->rb));

	while (!b->stop && page) {
		if (!bench_drain(b, page, false))
			kagg_rb__wait(b->rb, -1, 50, 10); /* buffer_percent's default */
	}
	free(page);
	return NULL;
}

/* ------------------------------------------------------------ setting up */

/* The bench event: the common fields, then writer id, sequence and filler as room allows. */
static int define_event(struct bench *b)
{
	char fields[128];
	size_t len;

	snprintf(fields, sizeof(fields), "%s%s", b->payload >= 12 ? "u32 writer; " : "",
		 b->payload >= 16 ? "u32 seq; " : "");
	len = strlen(fields);
	if (b->payload > 16)
		snprintf(fields + len, sizeof(fields) - len, "u8 fill[%zu]", b->payload - 16);
	if (!b->evs ||
	    kagg_rb_events__define(b->evs, "kagg", "bench", fields,
				   b->payload >= 16 ? "\"writer=%u seq=%u\", REC->writer, REC->seq"
						    : NULL,
				   &b->fmt)) {
		bench_log(b, "cannot define the bench event");
		return -EINVAL;
	}
	return 0;
}

static int write_text(const char *dir, const char *name, void (*fn)(const void *, FILE *),
		      const void *arg)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fn(arg, f);
	return fclose(f) ? -errno : 0;
}

static void header_page_fn(const void *a, FILE *f)
{
	kagg_rb__fprint_header_page(*(const size_t *)a, f);
}

static void header_event_fn(const void *a, FILE *f)
{
	kagg_rb__fprint_header_event(f);
}

static void format_fn(const void *a, FILE *f)
{
	kagg_rb_format__fprint(a, f);
}

/* raw_dir: the texts a decoder needs, and one page file per CPU (b->raw). */
static int open_raw_dir(struct bench *b, const char *dir)
{
	size_t sb = kagg_rb__subbuf_size(b->rb);
	char path[4096];
	int i, err;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/kagg", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/kagg/bench", dir);
	mkdir(path, 0755);
	err = write_text(dir, "header_page", header_page_fn, &sb);
	err = err ?: write_text(dir, "header_event", header_event_fn, NULL);
	err = err ?: write_text(dir, "kagg/bench/format", format_fn, b->fmt);
	if (err) {
		bench_log(b, "cannot write to %s: %s", dir, strerror(-err));
		return err;
	}
	for (i = 0; i < b->nr_cpus; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, i);
		b->raw[i] = fopen(path, "we");
		if (!b->raw[i]) {
			err = -errno;
			bench_log(b, "cannot create %s: %s", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The writer threads' names, so a decoder prints kagg-writerN for their pids. */
static int write_cmdlines(const char *dir, const struct writer *w, unsigned int n)
{
	char path[4096];
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/saved_cmdlines", dir);
	f = fopen(path, "we");
	for (i = 0; f && i < n; i++)
		fprintf(f, "%d kagg-writer%u\n", w[i].tid, i);
	return !f || fclose(f) ? -EIO : 0;
}

static int bench_setup(struct bench *b, const struct rbb_opts *o)
{
	KAGG_OPTS(kagg_rb_opts, ro, .nr_subbufs = o->nr_subbufs, .mode = o->mode, .log = o->log,
		  .log_ctx = o->log_ctx);
	int err;

	b->log = o->log;
	b->log_ctx = o->log_ctx;
	b->payload = o->payload;
	b->evs = kagg_rb_events__new(NULL);
	b->rb = kagg_rb__new(&ro);
	if (!b->rb) {
		err = -errno;
		bench_log(b, "ring buffer: %s", strerror(-err));
		return err;
	}
	if (b->payload > kagg_rb__max_payload(b->rb)) {
		bench_log(b, "payload %zu is larger than an event can be (%zu)", b->payload,
			  kagg_rb__max_payload(b->rb));
		return -EINVAL;
	}
	err = define_event(b);
	if (err)
		return err;
	b->nr_cpus = kagg_rb__nr_cpus(b->rb);
	if (b->nr_cpus > MAX_CPUS)
		b->nr_cpus = MAX_CPUS;
	return o->raw_dir ? open_raw_dir(b, o->raw_dir) : 0;
}

static void bench_free(struct bench *b)
{
	int i;

	if (!b)
		return;
	for (i = 0; i < MAX_CPUS; i++)
		if (b->raw[i])
			fclose(b->raw[i]);
	kagg_rb__free(b->rb);
	kagg_rb_events__free(b->evs);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* ------------------------------------------------------------ running */

/*
 * Sleep up to `seconds`, in slices of at most 100 ms so that *stop is seen
 * soon even when the signal that set it went to another thread.
 */
static void bench_sleep(double seconds, const volatile sig_atomic_t *stop)
{
	double end = now_s() + seconds, left;

	while (!(stop && *stop) && (left = end - now_s()) > 0) {
		struct timespec ts = { 0, (long)((left < 0.1 ? left : 0.1) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* Stop the threads started so far and wait for them. */
static void stop_threads(struct bench *b, pthread_t *reader, struct writer *w, unsigned int n)
{
	unsigned int i;

	b->stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	if (reader)
		pthread_join(*reader, NULL);
}

/* Writers and reader for the run's time, then every page left. */
static int bench_measure(struct bench *b, struct writer *w, const struct rbb_opts *o)
{
	uint8_t *page = malloc(kagg_rb__subbuf_size(b->rb));
	pthread_t reader;
	unsigned int i;
	int err;

	if (!page)
		return -ENOMEM;
	err = -pthread_create(&reader, NULL, bench_reader, b);
	if (err) {
		free(page);
		bench_log(b, "cannot start the reader thread: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < o->writers; i++) {
		w[i].b = b;
		w[i].id = (int)i;
		err = -pthread_create(&w[i].th, NULL, bench_writer, &w[i]);
		if (err) {
			stop_threads(b, &reader, w, i);
			free(page);
			bench_log(b, "cannot start writer thread %u: %s", i, strerror(-err));
			return err;
		}
	}
	bench_sleep(o->seconds, o->stop);
	stop_threads(b, &reader, w, o->writers);
	bench_drain(b, page, true);
	free(page);
	if (o->raw_dir && write_cmdlines(o->raw_dir, w, o->writers))
		b->err = -EIO;
	if (b->err)
		bench_log(b, "writing raw pages: %s", strerror(-b->err));
	return b->err;
}

/* The buffer's counters per CPU, their sums and the writers' own. */
static int bench_collect(struct bench *b, const struct writer *w, const struct rbb_opts *o,
			 struct rbb_result *r)
{
	struct rows *rows = calloc(1, sizeof(*rows) + b->nr_cpus * sizeof(rows->row[0]));
	uint64_t attempts = 0;
	double ns = 0;
	unsigned int i;
	int cpu;

	if (!rows)
		return -ENOMEM;
	rows->n = b->nr_cpus;
	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		struct rbb_cpu *c = &rows->row[cpu];
		struct kagg_rb_stats st = { .sz = sizeof(st) };

		kagg_rb__stats(b->rb, cpu, &st);
		c->sz = sizeof(*c);
		c->read = st.read_events;
		c->overrun = st.overrun;
		c->dropped = st.dropped_events;
		c->entries = st.entries;
		c->commit_overrun = st.commit_overrun;
		c->written = c->read + c->overrun + c->dropped + c->entries;
		c->ns_per_event = b->cpu_ev[cpu] ? b->cpu_ns[cpu] / (double)b->cpu_ev[cpu] : 0;
		c->write_path = kagg_rb__write_path(b->rb, cpu);
		r->read += c->read;
		r->overrun += c->overrun;
		r->dropped += c->dropped;
		r->entries += c->entries;
		r->commit_overrun += c->commit_overrun;
	}
	r->written = r->read + r->overrun + r->dropped + r->entries;
	for (i = 0; i < o->writers; i++) {
		attempts += w[i].attempts;
		r->committed += w[i].committed;
		ns += w[i].ns;
	}
	r->ns_per_event = attempts ? ns / (double)attempts : 0;
	r->writers = o->writers;
	r->payload = o->payload;
	r->mode = o->mode;
	r->seconds = o->seconds;
	r->rate = o->rate;
	r->nr_cpus = b->nr_cpus;
	r->priv = rows;
	return 0;
}

/* opts with defaults applied, or -EINVAL. */
static int bench_opts(const struct rbb_opts *opts, struct rbb_opts *o)
{
	/* an internal struct: a caller built against a newer one is refused */
	if (!opts || opts->sz < sizeof(size_t) || opts->sz > sizeof(*o))
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	memcpy(o, opts, opts->sz);
	o->writers = o->writers ?: 1;
	o->payload = o->payload ?: 64;
	o->nr_subbufs = o->nr_subbufs ?: 64;
	o->seconds = o->seconds ?: 1;
	if (o->writers > MAX_WRITERS || o->payload < 8 || !(o->seconds > 0) || !(o->rate >= 0) ||
	    (o->mode != KAGG_RB_OVERWRITE && o->mode != KAGG_RB_CONSUME))
		return -EINVAL;
	return 0;
}

int rbb__run(const struct rbb_opts *opts, struct rbb_result *res)
{
	struct rbb_result r = { .sz = sizeof(r) };
	struct rbb_opts o;
	struct bench *b = NULL;
	struct writer *w = NULL;
	int err;

	if (!res || res->sz < RESULT_MIN_SZ)
		return -EINVAL;
	err = bench_opts(opts, &o);
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	if (b)
		pthread_mutex_init(&b->lock, NULL);
	w = calloc(o.writers, sizeof(*w));
	if (!b || !w) {
		if (o.log)
			o.log(o.log_ctx, KAGG_LOG_WARN, "out of memory");
		err = -ENOMEM;
		goto cleanup;
	}
	b->rate = o.rate;
	err = bench_setup(b, &o);
	err = err ?: bench_measure(b, w, &o);
	err = err ?: bench_collect(b, w, &o, &r);
	if (!err) {
		size_t sz = res->sz;

		memcpy(res, &r, sz < sizeof(r) ? sz : sizeof(r));
		res->sz = sz;
	}
cleanup:
	bench_free(b);
	free(w);
	return err;
}

/* ------------------------------------------------------------ results */

int rbb_result__cpu(const struct rbb_result *res, int cpu, struct rbb_cpu *row)
{
	const struct rows *rows = res ? res->priv : NULL;
	size_t sz;

	if (!rows || cpu < 0 || cpu >= rows->n || !row || row->sz < ROW_MIN_SZ)
		return -EINVAL;
	sz = row->sz;
	memcpy(row, &rows->row[cpu], sz < sizeof(*row) ? sz : sizeof(*row));
	row->sz = sz;
	return 0;
}

void rbb_result__release(struct rbb_result *res)
{
	size_t sz;

	if (!res)
		return;
	sz = res->sz < sizeof(*res) ? res->sz : sizeof(*res);
	free(res->priv);
	memset(res, 0, sz);
	res->sz = sz;
}

static const char *mode_name(enum kagg_rb_mode mode)
{
	return mode ? "consume" : "overwrite";
}

static void print_text(const struct rbb_result *r, const struct rows *rows, FILE *f)
{
	int i;

	fprintf(f, "%-5s %12s %12s %12s %12s %14s  %s\n", "CPU", "written", "read", "overrun",
		"dropped", "ns/event", "writers");
	for (i = 0; i < rows->n; i++) {
		const struct rbb_cpu *c = &rows->row[i];

		fprintf(f,
			"%-5d %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14.2f  %s\n",
			i, c->written, c->read, c->overrun, c->dropped, c->ns_per_event,
			c->write_path);
	}
	fprintf(f, "%-5s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14.2f\n", "total",
		r->written, r->read, r->overrun, r->dropped, r->ns_per_event);
	fprintf(f,
		"(commit overrun %" PRIu64 "; written = read + overrun + dropped; ns/event per "
		"writer thread; writers:\n"
		"rseq = restartable sequences on their own CPU, locked = a 16-byte\n"
		"compare-and-swap: cmpxchg16b, arm64 casp or ldaxp/stlxp)\n",
		r->commit_overrun);
	if (r->rate > 0)
		fprintf(f,
			"(paced to %.0f events/s per writer; lost %.3f%%: overrun + dropped over "
			"written; ns/event includes the pacing sleeps)\n",
			r->rate,
			r->written ? 100.0 * (double)(r->overrun + r->dropped) / (double)r->written
				   : 0);
}

/* A JSON number with 2 decimals, or null (as NaN is no number). */
static const char *json_ns(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		return "null";
	snprintf(buf, len, "%.2f", v);
	return buf;
}

/*
 * One JSON line.  Every string is one of the bench's own words and kagg never
 * calls setlocale(), so printf's numbers are JSON numbers.
 */
static void print_json(const struct rbb_result *r, const struct rows *rows, FILE *f)
{
	char num[64];
	int i;

	fprintf(f,
		"{\"writers\": %u, \"payload\": %zu, \"mode\": \"%s\", \"seconds\": %g, \"cpus\": "
		"[",
		r->writers, r->payload, mode_name(r->mode), r->seconds);
	for (i = 0; i < rows->n; i++) {
		const struct rbb_cpu *c = &rows->row[i];

		fprintf(f,
			"%s{\"cpu\": %d, \"written\": %" PRIu64 ", \"read\": %" PRIu64
			", \"overrun\": %" PRIu64 ", \"dropped\": %" PRIu64
			", \"ns_per_event\": %s, \"write_path\": \"%s\"}",
			i ? ", " : "", i, c->written, c->read, c->overrun, c->dropped,
			json_ns(c->ns_per_event, num, sizeof(num)), c->write_path);
	}
	fprintf(f,
		"], \"total\": {\"written\": %" PRIu64 ", \"read\": %" PRIu64
		", \"overrun\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"commit_overrun\": %" PRIu64
		", \"ns_per_event\": %s}}\n",
		r->written, r->read, r->overrun, r->dropped, r->commit_overrun,
		json_ns(r->ns_per_event, num, sizeof(num)));
}

int rbb__print(const struct rbb_result *res, FILE *f, enum kagg_format fmt)
{
	if (!res || res->sz < RESULT_MIN_SZ || !res->priv || !f ||
	    (unsigned int)fmt > KAGG_FORMAT_JSON)
		return -EINVAL;
	if (fmt == KAGG_FORMAT_JSON)
		print_json(res, res->priv, f);
	else
		print_text(res, res->priv, f);
	return ferror(f) ? -EIO : 0;
}
