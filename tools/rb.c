// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg rb: drive and inspect the ftrace-format ring buffer.
 *
 *   kagg rb bench [--writers N] [--payload BYTES] [--mode overwrite|consume]
 *                 [--seconds S] [--subbufs N] [--raw-dir DIR] [--format json]
 *   kagg rb decode [--events-dir DIR] FILE...
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "cli.h"

static void rb_usage(FILE *f)
{
	fprintf(f, "usage: kagg rb bench [--writers N] [--payload BYTES] [--mode overwrite|consume]\n"
		   "                     [--seconds S] [--subbufs N] [--raw-dir DIR] [--format json]\n"
		   "       kagg rb decode [--events-dir DIR] FILE...\n\n"
		   "bench   N writer threads reserve+commit BYTES-byte events on their CPU's buffer\n"
		   "        while a reader drains whole sub-buffers; prints events written, read,\n"
		   "        overrun and dropped and ns per reserve+commit, per CPU and in total.\n"
		   "        --raw-dir leaves cpuN.raw (trace_pipe_raw layout), header_page,\n"
		   "        header_event and kagg/bench/format there.\n"
		   "decode  print raw sub-buffer files (ours or the kernel's trace_pipe_raw) as\n"
		   "        `trace` text; formats from --events-dir (default "
		   "/sys/kernel/tracing/events).\n");
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ bench */

#define MAX_CPUS 1024

struct bench {
	struct kagg_rb *rb;
	const struct kagg_rb_format *fmt;
	size_t payload;
	volatile int stop;
	int nr_cpus;
	/* per-CPU time attribution by the writers */
	double cpu_ns[MAX_CPUS];
	uint64_t cpu_ev[MAX_CPUS];
	pthread_mutex_t lock;
	FILE *raw[MAX_CPUS];
	struct kagg_rb_events *evs;
	uint64_t pages_out;
	int err;
};

struct writer {
	struct bench *b;
	pthread_t th;
	int id;
	uint64_t attempts, committed;
	double ns;
	int tid;
};

static void *bench_writer(void *arg)
{
	struct writer *w = arg;
	struct bench *b = w->b;
	uint32_t seq = 0;
	uint64_t n = 0, local_ev = 0;
	double t0 = now_s(), ts = t0;
	int id = kagg_rb_format__id(b->fmt);

	w->tid = (int)gettid();
	while (!b->stop) {
		int i;

		for (i = 0; i < 256; i++) {
			struct kagg_rb_rsv rsv;
			uint8_t *p;

			rsv.sz = sizeof(rsv);
			p = kagg_rb__reserve(b->rb, b->payload, &rsv);
			n++;
			if (!p)
				continue;
			kagg_rb_entry__init(p, id, 0, 0, (int32_t)gettid());
			if (b->payload >= 12)
				memcpy(p + 8, &w->id, 4);
			if (b->payload >= 16)
				memcpy(p + 12, &seq, 4);
			seq++;
			kagg_rb__commit(&rsv);
			w->committed++;
		}
		local_ev += 256;
		if (local_ev >= 4096) {
			double t = now_s();
			int cpu = sched_getcpu();

			pthread_mutex_lock(&b->lock);
			if (cpu >= 0) {
				cpu %= b->nr_cpus;
				b->cpu_ns[cpu] += (t - ts) * 1e9;
				b->cpu_ev[cpu] += local_ev;
			}
			pthread_mutex_unlock(&b->lock);
			ts = t;
			local_ev = 0;
		}
	}
	w->attempts = n;
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
			if (b->raw[cpu] &&
			    fwrite(page, kagg_rb__subbuf_size(b->rb), 1, b->raw[cpu]) != 1)
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

static void hp_fn(const void *a, FILE *f)
{
	kagg_rb__fprint_header_page(*(const size_t *)a, f);
}

static void he_fn(const void *a, FILE *f)
{
	kagg_rb__fprint_header_event(f);
}

static void fmt_fn(const void *a, FILE *f)
{
	kagg_rb_format__fprint(a, f);
}

static int bench_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "writers", required_argument, NULL, 'w' },
		{ "payload", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "subbufs", required_argument, NULL, 'n' },
		{ "raw-dir", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t writers = 1, payload = 64, subbufs = 64, tot_att = 0, tot_com = 0;
	double seconds = 1, tot_ns = 0;
	const char *raw_dir = NULL;
	bool json = false;
	enum kagg_rb_mode mode = KAGG_RB_OVERWRITE;
	struct bench *b;
	struct writer *w;
	struct kagg_rb_stats st = { .sz = sizeof(st) }, tot = { .sz = sizeof(tot) };
	pthread_t reader;
	char fields[128];
	uint8_t *page;
	int c, i, ret = KAGG_EXIT_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (cli_parse_u64(optarg, &writers) || !writers || writers > 1024)
				return cli_err(KAGG_EXIT_USAGE, "--writers: 1..1024, got '%s'", optarg);
			break;
		case 'p':
			if (cli_parse_u64(optarg, &payload) || payload < 8 || payload > 4072)
				return cli_err(KAGG_EXIT_USAGE, "--payload: 8..4072 bytes, got '%s'",
					       optarg);
			break;
		case 'n':
			if (cli_parse_u64(optarg, &subbufs) || subbufs < 2 || subbufs > 65000)
				return cli_err(KAGG_EXIT_USAGE, "--subbufs: 2..65000, got '%s'", optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "overwrite"))
				mode = KAGG_RB_OVERWRITE;
			else if (!strcmp(optarg, "consume"))
				mode = KAGG_RB_CONSUME;
			else
				return cli_err(KAGG_EXIT_USAGE,
					       "--mode: overwrite or consume, got '%s'", optarg);
			break;
		case 's':
			if (cli_parse_seconds(optarg, &seconds))
				return cli_err(KAGG_EXIT_USAGE, "--seconds: a positive number, got '%s'",
					       optarg);
			break;
		case 'r':
			raw_dir = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json"))
				return cli_err(KAGG_EXIT_USAGE, "--format: only 'json', got '%s'",
					       optarg);
			json = true;
			break;
		case 'h':
			rb_usage(stdout);
			return KAGG_EXIT_OK;
		default:
			return cli_err(KAGG_EXIT_USAGE, "bad option (kagg rb --help)");
		}
	}
	if (optind < argc)
		return cli_err(KAGG_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);

	b = calloc(1, sizeof(*b));
	w = calloc(writers, sizeof(*w));
	page = malloc(4096);
	if (!b || !w || !page) {
		cli_err(KAGG_EXIT_FAIL, "out of memory");
		goto out;
	}
	pthread_mutex_init(&b->lock, NULL);
	{
		KAGG_OPTS(kagg_rb_opts, o, .nr_subbufs = subbufs, .mode = mode, .log = cli_log);
		struct kagg_rb_events *evs;

		b->evs = evs = kagg_rb_events__new(NULL);
		b->rb = kagg_rb__new(&o);
		if (!b->rb) {
			cli_err(KAGG_EXIT_FAIL, "ring buffer: %s", strerror(errno));
			goto out;
		}
		snprintf(fields, sizeof(fields), "%s%s", payload >= 12 ? "u32 writer; " : "",
			 payload >= 16 ? "u32 seq; " : "");
		if (payload > 16)
			snprintf(fields + strlen(fields), sizeof(fields) - strlen(fields),
				 "u8 fill[%llu]", (unsigned long long)(payload - 16));
		if (!evs || kagg_rb_events__define(evs, "kagg", "bench", fields,
						   payload >= 16 ? "\"writer=%u seq=%u\", "
								   "REC->writer, REC->seq"
								 : NULL,
						   &b->fmt)) {
			cli_err(KAGG_EXIT_FAIL, "cannot define the bench event");
			goto out;
		}
		b->nr_cpus = kagg_rb__nr_cpus(b->rb);
		if (b->nr_cpus > MAX_CPUS)
			b->nr_cpus = MAX_CPUS;
		if (raw_dir) {
			size_t sb = kagg_rb__subbuf_size(b->rb);
			char path[4096];

			mkdir(raw_dir, 0755);
			snprintf(path, sizeof(path), "%s/kagg", raw_dir);
			mkdir(path, 0755);
			snprintf(path, sizeof(path), "%s/kagg/bench", raw_dir);
			mkdir(path, 0755);
			if (write_text(raw_dir, "header_page", hp_fn, &sb) ||
			    write_text(raw_dir, "header_event", he_fn, NULL) ||
			    write_text(raw_dir, "kagg/bench/format", fmt_fn, b->fmt)) {
				cli_err(KAGG_EXIT_FAIL, "cannot write to %s: %s", raw_dir,
					strerror(errno));
				goto out;
			}
			for (i = 0; i < b->nr_cpus; i++) {
				snprintf(path, sizeof(path), "%s/cpu%d.raw", raw_dir, i);
				b->raw[i] = fopen(path, "we");
				if (!b->raw[i]) {
					cli_err(KAGG_EXIT_FAIL, "cannot create %s: %s", path,
						strerror(errno));
					goto out;
				}
			}
		}
	}
	b->payload = payload;
	cli_setup_signals();
	pthread_create(&reader, NULL, bench_reader, b);
	for (i = 0; i < (int)writers; i++) {
		w[i].b = b;
		w[i].id = i;
		pthread_create(&w[i].th, NULL, bench_writer, &w[i]);
	}
	cli_sleep(seconds);
	b->stop = 1;
	for (i = 0; i < (int)writers; i++) {
		pthread_join(w[i].th, NULL);
		tot_att += w[i].attempts;
		tot_com += w[i].committed;
		tot_ns += w[i].ns;
	}
	pthread_join(reader, NULL);
	bench_drain(b, page, true);
	if (raw_dir) { /* comm names for decode */
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/saved_cmdlines", raw_dir);
		f = fopen(path, "we");
		for (i = 0; f && i < (int)writers; i++)
			fprintf(f, "%d kagg-writer%d\n", w[i].tid, i);
		if (!f || fclose(f))
			b->err = -EIO;
	}
	if (b->err) {
		cli_err(KAGG_EXIT_FAIL, "writing raw pages: %s", strerror(-b->err));
		goto out;
	}

	if (json)
		printf("{\"writers\": %llu, \"payload\": %llu, \"mode\": \"%s\", \"seconds\": %g, "
		       "\"cpus\": [",
		       (unsigned long long)writers, (unsigned long long)payload,
		       mode ? "consume" : "overwrite", seconds);
	else
		printf("%-5s %12s %12s %12s %12s %14s  %s\n", "CPU", "written", "read", "overrun",
		       "dropped", "ns/event", "writers");
	for (i = 0; i < b->nr_cpus; i++) {
		uint64_t written;
		double ns = b->cpu_ev[i] ? b->cpu_ns[i] / (double)b->cpu_ev[i] : 0;

		kagg_rb__stats(b->rb, i, &st);
		written = st.read_events + st.overrun + st.dropped_events + st.entries;
		tot.read_events += st.read_events;
		tot.overrun += st.overrun;
		tot.dropped_events += st.dropped_events;
		tot.entries += st.entries;
		tot.commit_overrun += st.commit_overrun;
		if (json)
			printf("%s{\"cpu\": %d, \"written\": %llu, \"read\": %llu, \"overrun\": %llu, "
			       "\"dropped\": %llu, \"ns_per_event\": %.2f, \"write_path\": \"%s\"}",
			       i ? ", " : "", i, (unsigned long long)written,
			       (unsigned long long)st.read_events, (unsigned long long)st.overrun,
			       (unsigned long long)st.dropped_events, ns,
			       kagg_rb__write_path(b->rb, i));
		else
			printf("%-5d %12llu %12llu %12llu %12llu %14.2f  %s\n", i,
			       (unsigned long long)written, (unsigned long long)st.read_events,
			       (unsigned long long)st.overrun, (unsigned long long)st.dropped_events,
			       ns, kagg_rb__write_path(b->rb, i));
	}
	{
		uint64_t written = tot.read_events + tot.overrun + tot.dropped_events + tot.entries;
		double ns = tot_att ? tot_ns / (double)tot_att : 0;

		if (json)
			printf("], \"total\": {\"written\": %llu, \"read\": %llu, \"overrun\": %llu, "
			       "\"dropped\": %llu, \"commit_overrun\": %llu, \"ns_per_event\": "
			       "%.2f}}\n",
			       (unsigned long long)written, (unsigned long long)tot.read_events,
			       (unsigned long long)tot.overrun, (unsigned long long)tot.dropped_events,
			       (unsigned long long)tot.commit_overrun, ns);
		else
			printf("%-5s %12llu %12llu %12llu %12llu %14.2f\n(commit overrun %llu; "
			       "written = read + overrun + dropped; ns/event per writer thread; writers:\n"
			       "rseq = restartable sequences on their own CPU, locked = cmpxchg16b)\n",
			       "total", (unsigned long long)written,
			       (unsigned long long)tot.read_events, (unsigned long long)tot.overrun,
			       (unsigned long long)tot.dropped_events, ns,
			       (unsigned long long)tot.commit_overrun);
		if (tot.read_events + tot.overrun + tot.entries != tot_com) {
			cli_err(KAGG_EXIT_FAIL, "counters disagree: written %llu, writers committed "
						"%llu",
				(unsigned long long)written, (unsigned long long)tot_com);
			goto out;
		}
	}
	ret = KAGG_EXIT_OK;
out:
	if (b) {
		for (i = 0; i < MAX_CPUS; i++)
			if (b->raw[i])
				fclose(b->raw[i]);
		kagg_rb__free(b->rb);
		kagg_rb_events__free(b->evs);
	}
	free(b);
	free(w);
	free(page);
	return ret;
}

/* ------------------------------------------------------------------ decode */

struct dec_ev {
	struct kagg_rb_event ev;
	size_t order;
	int64_t lost; /* print a LOST line first */
};

static int dec_cmp(const void *a, const void *b)
{
	const struct dec_ev *x = a, *y = b;

	if (x->ev.ts != y->ev.ts)
		return x->ev.ts < y->ev.ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* comm names learnt from sched_switch records and saved_cmdlines */
struct comms {
	int *pid;
	char (*comm)[17];
	size_t n, cap;
};

static void comm_put(struct comms *c, int pid, const char *name, size_t len)
{
	size_t i;

	if (pid <= 0)
		return;
	for (i = 0; i < c->n && c->pid[i] != pid; i++)
		;
	if (i == c->n) {
		if (c->n == c->cap) {
			size_t nc = c->cap ? c->cap * 2 : 256;
			int *p = realloc(c->pid, nc * sizeof(*p));
			char(*cm)[17] = p ? realloc(c->comm, nc * sizeof(*cm)) : NULL;

			if (p)
				c->pid = p;
			if (!p || !cm)
				return;
			c->comm = cm;
			c->cap = nc;
		}
		c->n++;
		c->pid[i] = pid;
	}
	if (len > 16)
		len = 16;
	memcpy(c->comm[i], name, len);
	c->comm[i][len] = 0;
}

static const char *comm_get(void *ctx, int pid)
{
	struct comms *c = ctx;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->pid[i] == pid)
			return c->comm[i];
	return NULL;
}

static uint8_t *load_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	uint8_t *b = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 65536 > cap) {
			uint8_t *t = realloc(b, cap * 2 + 65536);

			if (!t) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = t;
			cap = cap * 2 + 65536;
		}
		r = fread(b + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	*len = n;
	return b;
}

static int decode_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "events-dir", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = "/sys/kernel/tracing/events";
	struct kagg_rb_events *evs = NULL;
	struct dec_ev *all = NULL;
	struct comms comms = { 0 };
	uint8_t **bufs = NULL;
	size_t n = 0, cap = 0, subbuf = 4096, i;
	int c, nfiles, ret = KAGG_EXIT_FAIL, failed = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'e':
			dir = optarg;
			break;
		case 'h':
			rb_usage(stdout);
			return KAGG_EXIT_OK;
		default:
			return cli_err(KAGG_EXIT_USAGE, "bad option (kagg rb --help)");
		}
	}
	nfiles = argc - optind;
	if (nfiles <= 0)
		return cli_err(KAGG_EXIT_USAGE, "decode needs at least one raw page FILE");
	evs = kagg_rb_events__new(NULL);
	bufs = calloc((size_t)nfiles, sizeof(*bufs));
	if (!evs || !bufs) {
		cli_err(KAGG_EXIT_FAIL, "out of memory");
		goto out;
	}
	if (kagg_rb_events__load_dir(evs, dir, &failed) <= 0) {
		cli_err(KAGG_EXIT_FAIL, "no event formats under %s", dir);
		goto out;
	}
	{
		char path[4096];
		size_t hl;
		uint8_t *hp;

		snprintf(path, sizeof(path), "%s/header_page", dir);
		hp = load_file(path, &hl);
		if (hp) {
			char *d;

			hp = realloc(hp, hl + 1);
			hp[hl] = 0;
			d = strstr((char *)hp, "char data;");
			if (d && (d = strstr(d, "size:")))
				subbuf = (size_t)strtoul(d + 5, NULL, 10) + 16;
			free(hp);
		}
		snprintf(path, sizeof(path), "%s/saved_cmdlines", dir);
		hp = load_file(path, &hl);
		if (!hp) {
			snprintf(path, sizeof(path), "%s/../saved_cmdlines", dir);
			hp = load_file(path, &hl);
		}
		if (hp) {
			char *p, *save = NULL;

			hp = realloc(hp, hl + 1);
			hp[hl] = 0;
			for (p = strtok_r((char *)hp, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
				int pid;
				char name[17];

				if (sscanf(p, "%d %16s", &pid, name) == 2)
					comm_put(&comms, pid, name, strlen(name));
			}
			free(hp);
		}
	}
	for (c = 0; c < nfiles; c++) {
		const char *file = argv[optind + c], *base = strrchr(file, '/');
		size_t len, off;
		int cpu = 0;

		base = base ? base + 1 : file;
		if (sscanf(base, "cpu%d", &cpu) != 1)
			cpu = c;
		bufs[c] = load_file(file, &len);
		if (!bufs[c]) {
			cli_err(KAGG_EXIT_FAIL, "cannot read %s: %s", file, strerror(errno));
			goto out;
		}
		for (off = 0; off + subbuf <= len; off += subbuf) {
			struct kagg_rb_page_iter it = { .sz = sizeof(it) };
			struct kagg_rb_event ev = { .sz = sizeof(ev) };

			if (kagg_rb_page_iter__init(&it, bufs[c] + off, subbuf)) {
				cli_err(KAGG_EXIT_FAIL, "%s: sub-buffer at %zu is corrupt", file, off);
				goto out;
			}
			while (kagg_rb_page_iter__next(&it, &ev) == 0) {
				if (n == cap) {
					struct dec_ev *t;

					cap = cap ? cap * 2 : 4096;
					t = realloc(all, cap * sizeof(*t));
					if (!t) {
						cli_err(KAGG_EXIT_FAIL, "out of memory");
						goto out;
					}
					all = t;
				}
				ev.cpu = cpu;
				all[n].ev = ev;
				all[n].order = n;
				all[n].lost = ev.missed;
				n++;
			}
		}
	}
	qsort(all, n, sizeof(*all), dec_cmp);
	/* learn comms from sched_switch records */
	{
		const struct kagg_rb_format *sw = kagg_rb_events__find_by_name(evs, "sched",
									       "sched_switch");
		const struct kagg_rb_field *pp, *pc, *np, *nc;
		int sw_id = kagg_rb_format__id(sw);

		if (sw && (pp = kagg_rb_format__field(sw, "prev_pid")) &&
		    (pc = kagg_rb_format__field(sw, "prev_comm")) &&
		    (np = kagg_rb_format__field(sw, "next_pid")) &&
		    (nc = kagg_rb_format__field(sw, "next_comm"))) {
			for (i = 0; i < n; i++) {
				const uint8_t *r = all[i].ev.data;

				if (all[i].ev.len < 64 || *(const uint16_t *)r != sw_id)
					continue;
				if (!comm_get(&comms, (int)kagg_rb_field__int(pp, r)))
					comm_put(&comms, (int)kagg_rb_field__int(pp, r),
						 (const char *)r + pc->offset,
						 strnlen((const char *)r + pc->offset, 16));
				if (!comm_get(&comms, (int)kagg_rb_field__int(np, r)))
					comm_put(&comms, (int)kagg_rb_field__int(np, r),
						 (const char *)r + nc->offset,
						 strnlen((const char *)r + nc->offset, 16));
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (all[i].lost > 0)
			printf("CPU:%d [LOST %lld EVENTS]\n", all[i].ev.cpu, (long long)all[i].lost);
		else if (all[i].lost < 0)
			printf("CPU:%d [LOST EVENTS]\n", all[i].ev.cpu);
		kagg_rb_events__fprint_event(evs, stdout, &all[i].ev, comm_get, &comms);
	}
	ret = cli_output_done(0);
out:
	for (c = 0; bufs && c < nfiles; c++)
		free(bufs[c]);
	free(bufs);
	free(all);
	free(comms.pid);
	free(comms.comm);
	kagg_rb_events__free(evs);
	return ret;
}

static int rb_main(int argc, char **argv)
{
	if (argc < 2)
		return cli_err(KAGG_EXIT_USAGE, "missing subcommand: bench or decode (kagg rb --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		rb_usage(stdout);
		return KAGG_EXIT_OK;
	}
	if (!strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "decode"))
		return decode_main(argc - 1, argv + 1);
	return cli_err(KAGG_EXIT_USAGE, "unknown subcommand '%s' (bench or decode)", argv[1]);
}

KAGG_COMMAND(rb, "per-CPU ftrace-format ring buffer: bench, decode raw pages", rb_main);
