// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg rb: drive and inspect the ftrace-format ring buffer.
 *
 *   kagg rb bench [--writers N] [--payload BYTES] [--mode overwrite|consume]
 *                 [--seconds S] [--subbufs N] [--raw-dir DIR] [--rate N] [--format json]
 *   kagg rb decode [--events-dir DIR] FILE...
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "rb_bench.h"
#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "cli.h"

static void rb_usage(FILE *f)
{
	fprintf(f, "usage: kagg rb bench [--writers N] [--payload BYTES] [--mode overwrite|consume]\n"
		   "                     [--seconds S] [--subbufs N] [--raw-dir DIR] [--rate N]\n"
		   "                     [--format json]\n"
		   "       kagg rb decode [--events-dir DIR] FILE...\n\n"
		   "bench   N writer threads reserve+commit BYTES-byte events on their CPU's buffer\n"
		   "        while a reader drains whole sub-buffers; prints events written, read,\n"
		   "        overrun and dropped and ns per reserve+commit, per CPU and in total.\n"
		   "        --raw-dir leaves cpuN.raw (trace_pipe_raw layout), header_page,\n"
		   "        header_event and kagg/bench/format there.  --rate paces each writer\n"
		   "        to N events per second (it sleeps when ahead) and prints the loss.\n"
		   "decode  print raw sub-buffer files (ours or the kernel's trace_pipe_raw) as\n"
		   "        `trace` text; formats from --events-dir (default "
		   "/sys/kernel/tracing/events).\n");
}

/* ------------------------------------------------------------------ bench */

/* Options into o and *fmt: 0, -1 after --help, or a usage error's exit code. */
/* What the subcommands' option loops share: -1 after --help, else a usage error. */
static int rb_opt_other(int c)
{
	if (c == 'h') {
		rb_usage(stdout);
		return -1;
	}
	return cli_err(CLI_EXIT_USAGE, "bad option (kagg rb --help)");
}

static int bench_parse(int argc, char **argv, struct rbb_opts *o, enum kagg_format *fmt)
{
	static const struct option lo[] = {
		{ "writers", required_argument, NULL, 'w' },
		{ "payload", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "subbufs", required_argument, NULL, 'n' },
		{ "raw-dir", required_argument, NULL, 'r' },
		{ "rate", required_argument, NULL, 'R' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (cli_parse_u64(optarg, &v) || !v || v > 1024)
				return cli_err(CLI_EXIT_USAGE, "--writers: 1..1024, got '%s'", optarg);
			o->writers = (unsigned int)v;
			break;
		case 'p':
			if (cli_parse_u64(optarg, &v) || v < 8 || v > 4072)
				return cli_err(CLI_EXIT_USAGE, "--payload: 8..4072 bytes, got '%s'",
					       optarg);
			o->payload = v;
			break;
		case 'n':
			if (cli_parse_u64(optarg, &v) || v < 2 || v > 65000)
				return cli_err(CLI_EXIT_USAGE, "--subbufs: 2..65000, got '%s'", optarg);
			o->nr_subbufs = v;
			break;
		case 'm':
			if (!strcmp(optarg, "overwrite"))
				o->mode = KAGG_RB_OVERWRITE;
			else if (!strcmp(optarg, "consume"))
				o->mode = KAGG_RB_CONSUME;
			else
				return cli_err(CLI_EXIT_USAGE,
					       "--mode: overwrite or consume, got '%s'", optarg);
			break;
		case 's':
			if (cli_parse_seconds(optarg, &o->seconds))
				return cli_err(CLI_EXIT_USAGE, "--seconds: a positive number, got '%s'",
					       optarg);
			break;
		case 'r':
			o->raw_dir = optarg;
			break;
		case 'R':
			if (cli_parse_u64(optarg, &v) || !v)
				return cli_err(CLI_EXIT_USAGE, "--rate: events per second, got '%s'",
					       optarg);
			o->rate = (double)v;
			break;
		case 'f':
			if (strcmp(optarg, "json"))
				return cli_err(CLI_EXIT_USAGE, "--format: only 'json', got '%s'",
					       optarg);
			*fmt = KAGG_FORMAT_JSON;
			break;
		default:
			return rb_opt_other(c);
		}
	}
	if (optind < argc)
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int bench_main(int argc, char **argv)
{
	KAGG_OPTS(rbb_opts, o, .writers = 1, .payload = 64, .nr_subbufs = 64,
		  .seconds = 1, .stop = &cli_stop, .log = cli_log);
	struct rbb_result r = { .sz = sizeof(r) };
	enum kagg_format fmt = KAGG_FORMAT_TEXT;
	int ret, err;

	if (!cli_start(bench_parse(argc, argv, &o, &fmt), NULL, &ret))
		return ret;
	err = rbb__run(&o, &r);
	if (err)
		return cli_logged ? CLI_EXIT_FAIL : cli_err(CLI_EXIT_FAIL, "%s", strerror(-err));
	rbb__print(&r, stdout, fmt);
	/* Everything was drained: each commit was read, overwritten or is still there. */
	if (r.read + r.overrun + r.entries != r.committed)
		ret = cli_err(CLI_EXIT_FAIL, "counters disagree: written %llu, writers committed %llu",
			      (unsigned long long)r.written, (unsigned long long)r.committed);
	rbb_result__release(&r);
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

/* A whole file, or NULL with errno (a directory is EISDIR). */
static uint8_t *load_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	uint8_t *b = NULL;
	size_t n = 0, cap = 0, r;
	int err;

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
	if (ferror(f)) {
		err = errno ? errno : EIO;
		free(b);
		fclose(f);
		errno = err;
		return NULL;
	}
	fclose(f);
	*len = n;
	return b;
}

/* A whole file NUL-terminated, or NULL. */
static char *load_text(const char *path)
{
	size_t len;
	uint8_t *b = load_file(path, &len), *t;

	if (!b)
		return NULL;
	t = realloc(b, len + 1);
	if (!t) {
		free(b);
		return NULL;
	}
	t[len] = 0;
	return (char *)t;
}

/* Sub-buffers of 32 bytes (a header and a record) up to what a commit word can describe. */
#define SUBBUF_MIN 32
#define SUBBUF_MAX ((size_t)KAGG_RB_COMMIT_MASK + 1 + KAGG_RB_PAGE_HDR)

/*
 * Sub-buffer size from dir's header_page (data's size + the 16-byte header),
 * else 4096; 0 when header_page states a size outside SUBBUF_MIN..SUBBUF_MAX.
 */
static size_t subbuf_size(const char *dir)
{
	unsigned long long data;
	size_t subbuf = 4096;
	char path[4096], *hp, *d, *end;

	snprintf(path, sizeof(path), "%s/header_page", dir);
	hp = load_text(path);
	if (!hp)
		return subbuf;
	d = strstr(hp, "char data;");
	if (d && (d = strstr(d, "size:"))) {
		errno = 0;
		data = strtoull(d + 5, &end, 10);
		if (errno || end == d + 5 || data > SUBBUF_MAX - KAGG_RB_PAGE_HDR ||
		    data + KAGG_RB_PAGE_HDR < SUBBUF_MIN)
			subbuf = 0;
		else
			subbuf = (size_t)data + KAGG_RB_PAGE_HDR;
	}
	free(hp);
	return subbuf;
}

/* "PID COMM" lines of dir's saved_cmdlines, or of the one next to dir. */
static void load_cmdlines(const char *dir, struct comms *comms)
{
	char path[4096], *text, *p, *save = NULL;

	snprintf(path, sizeof(path), "%s/saved_cmdlines", dir);
	text = load_text(path);
	if (!text) {
		snprintf(path, sizeof(path), "%s/../saved_cmdlines", dir);
		text = load_text(path);
	}
	if (!text)
		return;
	for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		int pid;
		char name[17];

		if (sscanf(p, "%d %16s", &pid, name) == 2)
			comm_put(comms, pid, name, strlen(name));
	}
	free(text);
}

/* Every event of every file, the files' bytes they point into, the first damage met. */
struct decoded {
	struct dec_ev *all;
	size_t n, cap;
	uint8_t **bufs;
	int nfiles;
	const char *bad_file; /* NULL: every file decoded whole */
	const char *bad_what;
	uint64_t bad_off; /* file offset of the damage */
	int nempty; /* empty files: CPUs that recorded nothing (bench --raw-dir leaves them) */
};

/* Remember the first damage; the file's events before it are kept. */
static void decoded_bad(struct decoded *d, const char *file, const char *what, uint64_t off)
{
	if (d->bad_file)
		return;
	d->bad_file = file;
	d->bad_what = what;
	d->bad_off = off;
}

static int decoded_add(struct decoded *d, const struct kagg_rb_event *ev)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4096;
		void *p = realloc(d->all, cap * sizeof(*d->all));

		if (!p)
			return -ENOMEM;
		d->all = p;
		d->cap = cap;
	}
	d->all[d->n].ev = *ev;
	d->all[d->n].order = d->n;
	d->all[d->n].lost = ev->missed;
	d->n++;
	return 0;
}

/*
 * File i (cpuN.raw names its CPU, else CPU i): 0 or an exit code, said.  A
 * damaged sub-buffer or record ends the file there (decoded_bad()): what
 * came before it is kept.  An empty file is counted in d->nempty.
 */
static int decode_file(struct decoded *d, int i, const char *file, size_t subbuf)
{
	const char *base = strrchr(file, '/');
	size_t len, off;
	int cpu = 0;

	base = base ? base + 1 : file;
	if (sscanf(base, "cpu%d", &cpu) != 1)
		cpu = i;
	d->bufs[i] = load_file(file, &len);
	if (!d->bufs[i])
		return cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", file, strerror(errno));
	if (!len) {
		d->nempty++;
		return 0;
	}
	if (len < subbuf)
		return cli_err(CLI_EXIT_FAIL, "%s: %zu bytes, shorter than one %zu-byte sub-buffer",
			       file, len, subbuf);
	for (off = 0; off + subbuf <= len; off += subbuf) {
		struct kagg_rb_page_iter it = { .sz = sizeof(it) };
		struct kagg_rb_event ev = { .sz = sizeof(ev) };
		int err;

		if (kagg_rb_page_iter__init(&it, d->bufs[i] + off, subbuf)) {
			decoded_bad(d, file, "sub-buffer commit size", off + 8);
			return 0;
		}
		while ((err = kagg_rb_page_iter__next(&it, &ev)) == 0) {
			ev.cpu = cpu;
			if (decoded_add(d, &ev))
				return cli_err(CLI_EXIT_FAIL, "out of memory");
		}
		if (err == -EBADMSG) {
			decoded_bad(d, file, "record", off + KAGG_RB_PAGE_HDR + it.off);
			return 0;
		}
	}
	if (off != len)
		decoded_bad(d, file, "sub-buffer (the file ends inside it)", off);
	return 0;
}

static void decoded_free(struct decoded *d)
{
	int i;

	for (i = 0; d->bufs && i < d->nfiles; i++)
		free(d->bufs[i]);
	free(d->bufs);
	free(d->all);
}

/*
 * The comm of a pid that a sched_switch record of len bytes names, unless
 * already known or the format puts either field outside the record.
 */
static void learn_comm(struct comms *comms, const struct kagg_rb_field *pid,
		       const struct kagg_rb_field *comm, const uint8_t *r, uint32_t len)
{
	size_t max;
	int p;

	if (pid->offset < 0 || pid->size <= 0 || (uint64_t)pid->offset + pid->size > len ||
	    comm->offset < 0 || comm->size <= 0 || (uint64_t)comm->offset + comm->size > len)
		return;
	p = (int)kagg_rb_field__int(pid, r);
	max = comm->size < 16 ? (size_t)comm->size : 16;
	if (!comm_get(comms, p))
		comm_put(comms, p, (const char *)r + comm->offset,
			 strnlen((const char *)r + comm->offset, max));
}

static void learn_switch_comms(const struct kagg_rb_events *evs, const struct decoded *d,
			       struct comms *comms)
{
	const struct kagg_rb_format *sw = kagg_rb_events__find_by_name(evs, "sched",
								       "sched_switch");
	const struct kagg_rb_field *pp, *pc, *np, *nc;
	size_t i;
	int sw_id;

	if (!sw || !(pp = kagg_rb_format__field(sw, "prev_pid")) ||
	    !(pc = kagg_rb_format__field(sw, "prev_comm")) ||
	    !(np = kagg_rb_format__field(sw, "next_pid")) ||
	    !(nc = kagg_rb_format__field(sw, "next_comm")))
		return;
	sw_id = kagg_rb_format__id(sw);
	for (i = 0; i < d->n; i++) {
		const uint8_t *r = d->all[i].ev.data;

		if (d->all[i].ev.len < 64 || *(const uint16_t *)r != sw_id)
			continue;
		learn_comm(comms, pp, pc, r, d->all[i].ev.len);
		learn_comm(comms, np, nc, r, d->all[i].ev.len);
	}
}

static void print_decoded(const struct kagg_rb_events *evs, const struct decoded *d,
			  struct comms *comms)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct dec_ev *e = &d->all[i];

		if (e->lost > 0)
			printf("CPU:%d [LOST %lld EVENTS]\n", e->ev.cpu, (long long)e->lost);
		else if (e->lost < 0)
			printf("CPU:%d [LOST EVENTS]\n", e->ev.cpu);
		kagg_rb_events__fprint_event(evs, stdout, &e->ev, comm_get, comms);
	}
}

/* Options into *dir: 0, -1 after --help, or a usage error's exit code. */
static int decode_parse(int argc, char **argv, const char **dir)
{
	static const struct option lo[] = {
		{ "events-dir", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'e':
			*dir = optarg;
			break;
		default:
			return rb_opt_other(c);
		}
	}
	if (argc - optind <= 0)
		return cli_err(CLI_EXIT_USAGE, "decode needs at least one raw page FILE");
	return 0;
}

static int decode_main(int argc, char **argv)
{
	const char *dir = "/sys/kernel/tracing/events";
	struct kagg_rb_events *evs = NULL;
	struct decoded d = { 0 };
	struct comms comms = { 0 };
	size_t subbuf;
	int i, ret, failed = 0;

	ret = decode_parse(argc, argv, &dir);
	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret;
	ret = CLI_EXIT_FAIL;
	d.nfiles = argc - optind;
	evs = kagg_rb_events__new(NULL);
	d.bufs = calloc((size_t)d.nfiles, sizeof(*d.bufs));
	if (!evs || !d.bufs) {
		cli_err(CLI_EXIT_FAIL, "out of memory");
		goto out;
	}
	if (kagg_rb_events__load_dir(evs, dir, &failed) <= 0) {
		cli_err(CLI_EXIT_FAIL, "no event formats under %s", dir);
		goto out;
	}
	subbuf = subbuf_size(dir);
	if (!subbuf) {
		cli_err(CLI_EXIT_FAIL, "%s/header_page: sub-buffer size outside %d..%zu bytes", dir,
			SUBBUF_MIN, SUBBUF_MAX);
		goto out;
	}
	load_cmdlines(dir, &comms);
	for (i = 0; i < d.nfiles; i++)
		if (decode_file(&d, i, argv[optind + i], subbuf))
			goto out;
	if (d.nempty == d.nfiles) {
		cli_err(CLI_EXIT_FAIL, "%s: 0 bytes, shorter than one %zu-byte sub-buffer",
			argv[argc - 1], subbuf);
		goto out;
	}
	qsort(d.all, d.n, sizeof(*d.all), dec_cmp);
	learn_switch_comms(evs, &d, &comms);
	print_decoded(evs, &d, &comms);
	ret = cli_output_done(0);
	if (ret == CLI_EXIT_OK && d.bad_file)
		ret = cli_err(CLI_EXIT_FAIL, "%s: malformed %s at offset %llu", d.bad_file,
			      d.bad_what, (unsigned long long)d.bad_off);
out:
	decoded_free(&d);
	free(comms.pid);
	free(comms.comm);
	kagg_rb_events__free(evs);
	return ret;
}

static int rb_main(int argc, char **argv)
{
	if (argc < 2)
		return cli_err(CLI_EXIT_USAGE, "missing subcommand: bench or decode (kagg rb --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		rb_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "decode"))
		return decode_main(argc - 1, argv + 1);
	return cli_err(CLI_EXIT_USAGE, "unknown subcommand '%s' (bench or decode)", argv[1]);
}

CLI_COMMAND(rb, "per-CPU ftrace-format ring buffer: bench, decode raw pages", rb_main);
