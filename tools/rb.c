// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg rb: drive and inspect the ftrace-format ring buffer.
 *
 *   kagg rb bench [--writers N] [--payload BYTES] [--mode overwrite|consume]
 *                 [--seconds S] [--subbufs N] [--raw-dir DIR] [--rate N] [--format json]
 *   kagg rb decode [--events-dir DIR] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "rb_bench.h"
#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "cli.h"

static void rb_usage(FILE *f)
{
	fprintf(f,
		"usage: kagg rb bench [--writers N] [--payload BYTES] [--mode overwrite|consume]\n"
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

/* --WHAT N from lo to hi into *v, else the usage error "--WHAT: LO..HI[UNIT], got 'N'". */
static int rb_range(const char *arg, uint64_t lo, uint64_t hi, const char *what, const char *unit,
		    uint64_t *v)
{
	if (cli_parse_u64(arg, v) || *v < lo || *v > hi)
		return cli_err(CLI_EXIT_USAGE, "%s: %" PRIu64 "..%" PRIu64 "%s, got '%s'", what, lo,
			       hi, unit, arg);
	return 0;
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
		CLI_HELP_LONGOPT,
		{ 0 },
	};
	uint64_t v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (rb_range(optarg, 1, 1024, "--writers", "", &v))
				return CLI_EXIT_USAGE;
			o->writers = (unsigned int)v;
			break;
		case 'p':
			if (rb_range(optarg, 8, 4072, "--payload", " bytes", &v))
				return CLI_EXIT_USAGE;
			o->payload = v;
			break;
		case 'n':
			if (rb_range(optarg, 2, 65000, "--subbufs", "", &v))
				return CLI_EXIT_USAGE;
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
				return cli_err(CLI_EXIT_USAGE,
					       "--seconds: a positive number, got '%s'", optarg);
			break;
		case 'r':
			o->raw_dir = optarg;
			break;
		case 'R':
			if (cli_parse_u64(optarg, &v) || !v)
				return cli_err(CLI_EXIT_USAGE,
					       "--rate: events per second, got '%s'", optarg);
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
	KAGG_OPTS(rbb_opts, o, .writers = 1, .payload = 64, .nr_subbufs = 64, .seconds = 1,
		  .stop = &cli_stop, .log = cli_log);
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
		ret = cli_err(CLI_EXIT_FAIL,
			      "counters disagree: written %llu, writers committed %llu",
			      (unsigned long long)r.written, (unsigned long long)r.committed);
	rbb_result__release(&r);
	return ret;
}

/* ------------------------------------------------------------------ decode */

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

#define TEXT_MAX (16u << 20) /* a format directory's text files: header_page, saved_cmdlines */

/*
 * A whole regular file of at most TEXT_MAX bytes, or NULL with errno (EISDIR, ESPIPE: not a
 * regular file, EFBIG: larger).
 */
static uint8_t *load_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;
	uint8_t *b = NULL, *t;
	size_t n = 0, cap = 0;
	struct stat st;
	ssize_t r;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? EISDIR : ESPIPE;
		goto cleanup;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= TEXT_MAX) {
				err = EFBIG;
				goto cleanup;
			}
			t = realloc(b, cap + 65536);
			if (!t) {
				err = ENOMEM;
				goto cleanup;
			}
			b = t;
			cap += 65536;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto cleanup;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
cleanup:
	close(fd);
	if (err) {
		free(b);
		errno = err;
		return NULL;
	}
	*len = n;
	return b ? b : malloc(1);
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

/*
 * One input file, read a sub-buffer at a time (no file is held in memory: a file of any
 * size decodes in the memory of one sub-buffer per file), its current event in ev.
 */
struct dec_in {
	const char *path;
	int fd, cpu;
	uint64_t len; /* bytes, at open */
	uint64_t off; /* offset of the sub-buffer being read */
	uint8_t *buf; /* chunk bytes of the file from buf_off: whole sub-buffers */
	uint64_t buf_off;
	size_t buf_len, chunk;
	bool loaded; /* it iterates the sub-buffer at off */
	bool has;    /* ev is its next event */
	struct kagg_rb_page_iter it;
	struct kagg_rb_event ev;
	const char *bad_what; /* the damage that ended it (NULL: none), at bad_off */
	uint64_t bad_off;
	int rerr; /* a read failed: errno */
};

static void dec_bad(struct dec_in *in, const char *what, uint64_t off)
{
	in->bad_what = what;
	in->bad_off = off;
	in->has = false;
}

/* The next event of in into in->ev (in->has), or its end: damage stays in bad_what. */
static void dec_next(struct dec_in *in, size_t subbuf)
{
	size_t got, want;
	ssize_t r;
	int err;

	in->has = false;
	for (;;) {
		if (in->loaded) {
			err = kagg_rb_page_iter__next(&in->it, &in->ev);
			if (!err) {
				in->ev.cpu = in->cpu;
				in->has = true;
				return;
			}
			if (err == -EBADMSG) {
				dec_bad(in, "record", in->off + KAGG_RB_PAGE_HDR + in->it.off);
				return;
			}
			in->loaded = false;
			in->off += subbuf;
		}
		if (in->off + subbuf > in->len) {
			if (in->off != in->len)
				dec_bad(in, "sub-buffer (the file ends inside it)", in->off);
			return;
		}
		if (in->off < in->buf_off || in->off + subbuf > in->buf_off + in->buf_len) {
			/* the next chunk: as many whole sub-buffers as the file still has */
			want = in->chunk;
			if (in->len - in->off < want)
				want = (size_t)(in->len - in->off);
			want -= want % subbuf;
			for (got = 0; got < want; got += (size_t)r) {
				r = pread(in->fd, in->buf + got, want - got,
					  (off_t)(in->off + got));
				if (r < 0 && errno == EINTR) {
					r = 0;
					continue;
				}
				if (r <= 0) {
					in->rerr = r < 0 ? errno : EIO; /* shrunk while read */
					return;
				}
			}
			in->buf_off = in->off;
			in->buf_len = want;
		}
		in->it = (struct kagg_rb_page_iter){ .sz = sizeof(in->it) };
		in->ev = (struct kagg_rb_event){ .sz = sizeof(in->ev) };
		if (kagg_rb_page_iter__init(&in->it, in->buf + (in->off - in->buf_off), subbuf)) {
			dec_bad(in, "sub-buffer commit size", in->off + 8);
			return;
		}
		in->loaded = true;
	}
}

/*
 * Open file i (cpuN.raw names its CPU, else CPU i), read chunk bytes at a time (whole
 * sub-buffers): a regular file, empty (a CPU that recorded nothing) or of at least one
 * sub-buffer.  0 or an exit code, said.
 */
static int dec_open(struct dec_in *in, int i, const char *file, size_t subbuf, size_t chunk)
{
	const char *base = strrchr(file, '/');
	struct stat st;

	base = base ? base + 1 : file;
	in->path = file;
	if (sscanf(base, "cpu%d", &in->cpu) != 1)
		in->cpu = i;
	/* O_NONBLOCK: a FIFO is refused below, not waited on */
	in->fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in->fd < 0 || fstat(in->fd, &st))
		return cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", file, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", file, strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return cli_err(CLI_EXIT_FAIL, "cannot read %s: not a regular file (%s)", file,
			       S_ISFIFO(st.st_mode)  ? "a FIFO: decode reads its files twice, "
						       "copy it to one first"
			       : S_ISCHR(st.st_mode) ? "a character device"
			       : S_ISBLK(st.st_mode) ? "a block device"
						     : "a socket");
	in->len = (uint64_t)st.st_size;
	if (in->len && in->len < subbuf)
		return cli_err(CLI_EXIT_FAIL,
			       "%s: %llu bytes, shorter than one %zu-byte sub-buffer", file,
			       (unsigned long long)in->len, subbuf);
	in->chunk = chunk;
	in->buf = malloc(chunk);
	if (!in->buf)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	return 0;
}

/*
 * Every event of the n files in timestamp order to fn (at equal times, the earlier file's
 * first; each file's in its own order: a CPU's buffer is in time order), from their start.
 */
static void dec_walk(struct dec_in *ins, int n, size_t subbuf,
		     void (*fn)(void *ctx, const struct kagg_rb_event *ev), void *ctx)
{
	struct dec_in *best;
	int i;

	for (i = 0; i < n; i++) {
		ins[i].off = 0;
		ins[i].buf_len = 0;
		ins[i].loaded = false;
		ins[i].bad_what = NULL;
		ins[i].rerr = 0;
		dec_next(&ins[i], subbuf);
	}
	for (;;) {
		best = NULL;
		for (i = 0; i < n; i++)
			if (ins[i].has && (!best || ins[i].ev.ts < best->ev.ts))
				best = &ins[i];
		if (!best)
			break;
		fn(ctx, &best->ev);
		dec_next(best, subbuf);
	}
}

static void dec_close(struct dec_in *ins, int n)
{
	int i;

	for (i = 0; ins && i < n; i++) {
		if (ins[i].fd > 0)
			close(ins[i].fd);
		free(ins[i].buf);
	}
	free(ins);
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

/* What learning comms from sched_switch records takes. */
struct learn {
	const struct kagg_rb_field *pp, *pc, *np, *nc;
	int sw_id;
	struct comms *comms;
};

static void learn_event(void *ctx, const struct kagg_rb_event *ev)
{
	struct learn *l = ctx;
	const uint8_t *r = ev->data;

	if (ev->len < 64 || *(const uint16_t *)r != l->sw_id)
		return;
	learn_comm(l->comms, l->pp, l->pc, r, ev->len);
	learn_comm(l->comms, l->np, l->nc, r, ev->len);
}

/* The comms every sched_switch record of the files names (a first pass over them). */
static void learn_switch_comms(const struct kagg_rb_events *evs, struct dec_in *ins, int n,
			       size_t subbuf, struct comms *comms)
{
	const struct kagg_rb_format *sw =
		kagg_rb_events__find_by_name(evs, "sched", "sched_switch");
	struct learn l = { .comms = comms };

	if (!sw || !(l.pp = kagg_rb_format__field(sw, "prev_pid")) ||
	    !(l.pc = kagg_rb_format__field(sw, "prev_comm")) ||
	    !(l.np = kagg_rb_format__field(sw, "next_pid")) ||
	    !(l.nc = kagg_rb_format__field(sw, "next_comm")))
		return;
	l.sw_id = kagg_rb_format__id(sw);
	dec_walk(ins, n, subbuf, learn_event, &l);
}

struct printing {
	const struct kagg_rb_events *evs;
	struct comms *comms;
};

static void print_event(void *ctx, const struct kagg_rb_event *ev)
{
	struct printing *p = ctx;

	if (ev->missed > 0)
		printf("CPU:%d [LOST %lld EVENTS]\n", ev->cpu, (long long)ev->missed);
	else if (ev->missed < 0)
		printf("CPU:%d [LOST EVENTS]\n", ev->cpu);
	kagg_rb_events__fprint_event(p->evs, stdout, ev, comm_get, p->comms);
}

/* Options into *dir: 0, -1 after --help, or a usage error's exit code. */
static int decode_parse(int argc, char **argv, const char **dir)
{
	static const struct option lo[] = {
		{ "events-dir", required_argument, NULL, 'e' },
		CLI_HELP_LONGOPT,
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
	struct comms comms = { 0 };
	struct printing pr = { .comms = &comms };
	struct dec_in *ins = NULL, *bad = NULL;
	int i, n, ret, failed = 0, nempty = 0;
	size_t subbuf, chunk;

	ret = decode_parse(argc, argv, &dir);
	if (ret)
		return ret < 0 ? CLI_EXIT_OK : ret;
	ret = CLI_EXIT_FAIL;
	n = argc - optind;
	evs = kagg_rb_events__new(NULL);
	ins = calloc((size_t)n, sizeof(*ins));
	if (!evs || !ins) {
		cli_err(CLI_EXIT_FAIL, "out of memory");
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		ins[i].fd = -1;
	if (kagg_rb_events__load_dir(evs, dir, &failed) <= 0) {
		cli_err(CLI_EXIT_FAIL, "no event formats under %s", dir);
		goto cleanup;
	}
	subbuf = subbuf_size(dir);
	if (!subbuf) {
		cli_err(CLI_EXIT_FAIL, "%s/header_page: sub-buffer size outside %d..%zu bytes", dir,
			SUBBUF_MIN, SUBBUF_MAX);
		goto cleanup;
	}
	load_cmdlines(dir, &comms);
	/* up to 1 MiB of each file at a time, 64 MiB in all */
	chunk = ((size_t)(64 << 20) / (size_t)n) / subbuf;
	chunk = (chunk<1 ? 1 : chunk>(1 << 20) / subbuf ? (1 << 20) / subbuf : chunk);
	chunk = (chunk ? chunk : 1) * subbuf;
	for (i = 0; i < n; i++) {
		if (dec_open(&ins[i], i, argv[optind + i], subbuf, chunk))
			goto cleanup;
		nempty += !ins[i].len;
	}
	if (nempty == n) {
		cli_err(CLI_EXIT_FAIL, "%s: 0 bytes, shorter than one %zu-byte sub-buffer",
			argv[argc - 1], subbuf);
		goto cleanup;
	}
	/* two passes: the comms of every sched_switch first, for the lines before it too */
	learn_switch_comms(evs, ins, n, subbuf, &comms);
	pr.evs = evs;
	dec_walk(ins, n, subbuf, print_event, &pr);
	ret = cli_output_done(0);
	for (i = 0; i < n && !bad; i++)
		if (ins[i].rerr || ins[i].bad_what)
			bad = &ins[i];
	if (ret == CLI_EXIT_OK && bad && bad->rerr)
		ret = cli_err(CLI_EXIT_FAIL, "reading %s failed at offset %llu: %s", bad->path,
			      (unsigned long long)bad->off, strerror(bad->rerr));
	else if (ret == CLI_EXIT_OK && bad)
		ret = cli_err(CLI_EXIT_FAIL, "%s: malformed %s at offset %llu", bad->path,
			      bad->bad_what, (unsigned long long)bad->bad_off);
cleanup:
	dec_close(ins, n);
	free(comms.pid);
	free(comms.comm);
	kagg_rb_events__free(evs);
	return ret;
}

static int rb_main(int argc, char **argv)
{
	if (argc < 2)
		return cli_err(CLI_EXIT_USAGE,
			       "missing subcommand: bench or decode (kagg rb --help)");
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
