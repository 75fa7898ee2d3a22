// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg record: stream tracepoint events from BPF into the reference ftrace
 * ring buffer and write them as a trace-cmd trace.dat (v6), or as per-CPU
 * trace_pipe_raw page files with --raw-dir.  A thin CLI over a streaming
 * session (offcpu's for sched_switch alone, runqlat's when wakeups are asked
 * for, tprec's raw records for any other tracepoint), the ring buffer and the
 * trace.dat writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <kagg/kagg.h>
#include <kagg/prog.h>
#include <kagg/runqlat.h>
#include <kagg/tprec.h>
#include <kagg/tracedat.h>
#include "cli.h"

static const char usage_text[] =
	"usage: kagg record -o FILE.dat [-d SEC] [-e SYS:NAME ...] [OPTIONS]\n"
	"       kagg record --raw-dir DIR [-d SEC] ...\n"
	"\n"
	"Stream events from BPF into the reference ftrace ring buffer and write them\n"
	"as a trace-cmd trace.dat (version 6: `trace-cmd report -i FILE.dat` and\n"
	"`kagg report FILE.dat` read it), or as per-CPU raw page files.\n"
	"\n"
	"  -o, --output FILE      trace.dat to write\n"
	"      --raw-dir DIR      write cpuN.raw (trace_pipe_raw layout), header_page,\n"
	"                         header_event and events/SYS/NAME/format instead\n"
	"  -e, --event SYS:NAME   tracepoint to record, repeatable (8 at most; kagg list\n"
	"                         -t lists them); default sched:sched_switch.  Beyond\n"
	"                         sched_switch, sched_wakeup and sched_wakeup_new, the\n"
	"                         raw trace entry is copied as the kernel lays it out\n"
	"                         (dynamic fields included, 4096 bytes at most) and\n"
	"                         its tracefs format goes in FILE.dat\n"
	"      --prog PROG.bpf.o  record the observations of your own program instead\n"
	"                         (docs/sdk.md): one event per aggregation, its key's\n"
	"                         fields and value; --set NAME=VALUE sets its tunables\n"
	"  -p, --pid PID[,PID]    mark these processes' sched events as selected (every\n"
	"                         event is recorded; not with other tracepoints)\n"
	"  -d, --duration SEC     record for SEC seconds (default: until Ctrl-C)\n"
	"      --stream-bytes N   BPF ring buffer size (power of two, default 8388608)\n"
	"      --rb-subbufs N     reference buffer sub-buffers per CPU (default 512)\n"
	"  -v, --verbose          print libbpf and library messages\n"
	"  -h, --help             this text\n"
	"\n"
	"Losses are reported: records the BPF ring buffer could not take, and pages\n"
	"the reference buffer refused (it runs in producer/consumer mode here, so\n"
	"what is written is never overwritten).\n"
	"\n"
	"FILE.dat is written to an unnamed file in its directory, which takes its name\n"
	"when the first page is in: an existing FILE.dat survives a recording that\n"
	"fails to start, and one killed before that leaves nothing.  Every full page\n"
	"is then in FILE.dat as it is recorded: a killed recording leaves a trace.dat\n"
	"readable up to its last 100 ms (and the pages still being filled).  A FIFO, a\n"
	"device or /dev/stdout on a pipe gets the whole file at the end (pages spooled\n"
	"in $TMPDIR); it is never removed.  A second kagg record on the same FILE.dat\n"
	"or DIR is refused while the first runs.\n"
	"\n"
	"examples:\n"
	"  kagg record -o sched.dat -d 5 && trace-cmd report -i sched.dat | head\n"
	"  kagg record -e sched:sched_wakeup -e sched:sched_switch -o wake.dat -d 2\n"
	"  kagg record -e signal:signal_generate -e sched:sched_process_exec -o sig.dat -d 5\n"
	"  kagg record --raw-dir /tmp/pages -d 2 && kagg rb decode --events-dir /tmp/pages/events "
	"/tmp/pages/cpu0.raw\n";

enum { OPT_RAW_DIR = CLI_OPT_TOOL, OPT_STREAM_BYTES, OPT_RB_SUBBUFS, OPT_PROG, OPT_SET };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "raw-dir", required_argument, NULL, OPT_RAW_DIR },
	{ "event", required_argument, NULL, 'e' },
	CLI_PID_LONGOPT,
	CLI_DURATION_LONGOPT,
	{ "stream-bytes", required_argument, NULL, OPT_STREAM_BYTES },
	{ "rb-subbufs", required_argument, NULL, OPT_RB_SUBBUFS },
	{ "prog", required_argument, NULL, OPT_PROG },
	{ "set", required_argument, NULL, OPT_SET },
	CLI_VERBOSE_HELP_LONGOPTS,
	{},
};

/* Where pages go: a trace.dat writer, or one raw file per CPU. */
struct sink {
	struct kagg_tracedat_writer *w;
	const struct kagg_rb_events *evs;
	int *raw_fds;
	bool stream; /* -o is not a regular file: written to at the end */
	int nr_cpus;
	uint64_t pages, events;
	char comms[65536][16]; /* pid % 65536 -> last comm given to the writer */
};

/* Saved cmdlines: tell the writer each pid's comm once (again when it changes). */
static void note_comm(struct sink *k, int pid, const char *comm)
{
	char *slot = k->comms[(unsigned int)pid & 0xffff];

	if (!k->w || pid <= 0 || !comm[0] || !strncmp(slot, comm, 16))
		return;
	memcpy(slot, comm, 16);
	kagg_tracedat_writer__add_cmdline(k->w, pid, comm);
}

/* The (pid, comm) pair in fields pid_name/comm_name of an event, when it has them. */
static void learn(struct sink *k, const struct kagg_rb_format *fmt, const struct kagg_rb_event *ev,
		  const char *pid_name, const char *comm_name)
{
	const struct kagg_rb_field *fp = kagg_rb_format__field(fmt, pid_name);
	const struct kagg_rb_field *fc = kagg_rb_format__field(fmt, comm_name);
	char comm[17];
	int pid;

	if (!fp || !fc || fp->size != 4 || fc->size != 16 || fp->offset + 4 > (int)ev->len ||
	    fc->offset + 16 > (int)ev->len)
		return;
	memcpy(&pid, (const uint8_t *)ev->data + fp->offset, 4);
	memcpy(comm, (const uint8_t *)ev->data + fc->offset, 16);
	comm[16] = '\0';
	note_comm(k, pid, comm);
}

/* Count the page's events and learn the comms they name, before the page goes out. */
static void scan_page(struct sink *k, const void *page, size_t size)
{
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };

	if (kagg_rb_page_iter__init(&it, page, size))
		return;
	while (!kagg_rb_page_iter__next(&it, &ev)) {
		const struct kagg_rb_format *fmt;

		k->events++;
		if (ev.len < 2 || !(fmt = kagg_rb_events__find(k->evs, *(const uint16_t *)ev.data)))
			continue;
		learn(k, fmt, &ev, "prev_pid", "prev_comm");
		learn(k, fmt, &ev, "next_pid", "next_comm");
		learn(k, fmt, &ev, "pid", "comm");
	}
}

static int sink_page(struct sink *k, int cpu, const void *page, size_t size, size_t subbuf)
{
	ssize_t n;

	k->pages++;
	scan_page(k, page, subbuf);
	if (k->w)
		return kagg_tracedat_writer__add_page(k->w, cpu, page, size);
	n = write(k->raw_fds[cpu], page, size);
	return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
}

/* Move pages out of the reference buffer: full ones only, or all at the end. */
static int drain_pages(struct sink *k, struct kagg_rb *rb, bool all)
{
	size_t size = kagg_rb__subbuf_size(rb);
	void *page = malloc(size);
	int cpu, n, err = 0;

	if (!page)
		return -ENOMEM;
	for (cpu = 0; cpu < k->nr_cpus && !err; cpu++) {
		while (!err) {
			n = all ? kagg_rb__read_page(rb, cpu, page, size)
				: kagg_rb__read_full_page(rb, cpu, page, size);
			if (n < 0)
				break;
			err = sink_page(k, cpu, page, n, size);
		}
	}
	free(page);
	return err;
}

static int write_text(const char *path, void (*fn)(FILE *, const void *), const void *arg)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fn(f, arg);
	return fclose(f) ? -errno : 0;
}

static void header_page_fn(FILE *f, const void *arg)
{
	kagg_rb__fprint_header_page(*(const size_t *)arg, f);
}

static void header_event_fn(FILE *f, const void *arg)
{
	(void)arg;
	kagg_rb__fprint_header_event(f);
}

static void format_fn(FILE *f, const void *arg)
{
	kagg_rb_format__fprint(arg, f);
}

static int mkdir_p(const char *path)
{
	char buf[4096], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -errno : 0;
}

/* --raw-dir: per-CPU page files plus the texts a decoder needs. */
static int open_raw_dir(struct sink *k, const char *dir, struct kagg_rb *rb,
			const struct kagg_rb_events *evs)
{
	size_t subbuf = kagg_rb__subbuf_size(rb), i;
	char path[4096];
	int cpu, err;

	err = mkdir_p(dir);
	if (err)
		return cli_err(CLI_EXIT_FAIL, "cannot create %s: %s", dir, strerror(-err));
	k->raw_fds = calloc(k->nr_cpus, sizeof(int));
	if (!k->raw_fds)
		return CLI_EXIT_FAIL;
	for (cpu = 0; cpu < k->nr_cpus; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
		k->raw_fds[cpu] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (k->raw_fds[cpu] < 0)
			return cli_err(CLI_EXIT_FAIL, "cannot create %s: %s", path,
				       strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/header_page", dir);
	err = write_text(path, header_page_fn, &subbuf);
	snprintf(path, sizeof(path), "%s/header_event", dir);
	err = err ?: write_text(path, header_event_fn, NULL);
	for (i = 0; !err && i < kagg_rb_events__count(evs); i++) {
		const struct kagg_rb_format *fmt = kagg_rb_events__at(evs, i);

		const char *sys = kagg_rb_format__system(fmt), *name = kagg_rb_format__name(fmt);

		snprintf(path, sizeof(path), "%s/events/%s/%s", dir, sys, name);
		err = mkdir_p(path);
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sys, name);
		err = err ?: write_text(path, format_fn, fmt);
	}
	if (err)
		return cli_err(CLI_EXIT_FAIL, "writing %s: %s", dir, strerror(-err));
	return 0;
}

/* -e SYS:NAME -> KAGG_RUNQLAT_EV_* bit, 0 when it cannot be recorded. */
static unsigned int event_bit(const char *e)
{
	if (!strcmp(e, "sched:sched_switch"))
		return KAGG_RUNQLAT_EV_SWITCH;
	if (!strcmp(e, "sched:sched_wakeup"))
		return KAGG_RUNQLAT_EV_WAKEUP;
	if (!strcmp(e, "sched:sched_wakeup_new"))
		return KAGG_RUNQLAT_EV_WAKEUP_NEW;
	return 0;
}

static const char *const event_names[] = { "sched:sched_wakeup", "sched:sched_wakeup_new",
					   "sched:sched_switch" };

/* What the command line asks for. */
struct record_args {
	struct cli_args c; /* first: what cli_parse fills (-d, -v; -p's list in c.tk) */
	const char *out, *raw_dir;
	unsigned int events; /* KAGG_RUNQLAT_EV_* bits */
	/* every -e, as given; generic: one is not a sched event of the bits above */
	const char *tps[KAGG_TPREC_MAX_EVENTS];
	size_t nr_tps;
	bool generic;
	char what[1200]; /* the events, for messages */
	size_t stream_bytes, rb_subbufs;
	const char *prog;     /* --prog */
	const char *sets[64]; /* its --set */
	size_t nr_sets;
};

/* One -e SYS:NAME (or SYS/NAME): 0 or the usage error's exit code (said). */
static int add_event(struct record_args *a, const char *ev)
{
	size_t n = strcspn(ev, ":/"), i;
	unsigned int bit = event_bit(ev);

	if (!n || !ev[n] || !ev[n + 1] || strpbrk(ev + n + 1, ":/") || strstr(ev, ".."))
		return cli_err(CLI_EXIT_USAGE,
			       "invalid event '%s' (SYS:NAME, e.g. sched:sched_switch)", ev);
	for (i = 0; i < a->nr_tps; i++)
		if (!strcmp(a->tps[i], ev))
			return 0;
	if (a->nr_tps == KAGG_TPREC_MAX_EVENTS)
		return cli_err(CLI_EXIT_USAGE, "at most %d events (-e)", KAGG_TPREC_MAX_EVENTS);
	a->tps[a->nr_tps++] = ev;
	a->events |= bit;
	a->generic |= !bit;
	return 0;
}

/* The options that are record's (cli_parser.opt); -d and -v are the common ones. */
static int record_opt(struct cli_args *ca, int c, const char *arg)
{
	struct record_args *a = (struct record_args *)ca;

	switch (c) {
	case 'o':
		a->out = arg;
		return 0;
	case OPT_RAW_DIR:
		a->raw_dir = arg;
		return 0;
	case 'e':
		return add_event(a, arg);
	case 'p': /* a list, as the task filters' -p */
		return cli_tasks_opt(c, arg, &ca->tk);
	case OPT_STREAM_BYTES:
		return cli_parse_stream_bytes(arg, &a->stream_bytes) ? CLI_EXIT_USAGE : 0;
	case OPT_RB_SUBBUFS:
		return CLI_RANGE(arg, 2, 65534, "--rb-subbufs", true, &a->rb_subbufs);
	case OPT_PROG:
		a->prog = arg;
		return 0;
	case OPT_SET:
		if (!strchr(arg, '=') || *arg == '=' || a->nr_sets == 64)
			return cli_err(CLI_EXIT_USAGE,
				       "invalid --set '%s' (NAME=VALUE, 64 at most)", arg);
		a->sets[a->nr_sets++] = arg;
		return 0;
	}
	return -ENOENT;
}

/* The checks across options, no operand, and the events named in a->what. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct record_args *a = (struct record_args *)ca;
	size_t j;
	int i;

	if (a->nr_sets && !a->prog)
		return cli_err(CLI_EXIT_USAGE, "--set needs --prog");
	if (a->prog && (a->nr_tps || a->c.tk.nr_pids))
		return cli_err(CLI_EXIT_USAGE, "--prog records its own events: no -e or -p");
	if (a->generic && a->c.tk.nr_pids)
		return cli_err(CLI_EXIT_USAGE,
			       "-p marks the sched events' processes: not with other tracepoints");
	if (a->prog)
		snprintf(a->what, sizeof(a->what), "%s", a->prog);
	if (optind < argc)
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (!a->out == !a->raw_dir)
		return cli_err(CLI_EXIT_USAGE, "give one of -o FILE.dat or --raw-dir DIR");
	if (!a->events && !a->prog && !a->generic)
		a->events = KAGG_RUNQLAT_EV_SWITCH;
	for (j = 0; a->generic && j < a->nr_tps; j++)
		snprintf(a->what + strlen(a->what), sizeof(a->what) - strlen(a->what), "%s%s",
			 a->what[0] ? ", " : "", a->tps[j]);
	for (i = 0; !a->generic && i < 3; i++)
		if (a->events & (1u << i))
			snprintf(a->what + strlen(a->what), sizeof(a->what) - strlen(a->what),
				 "%s%s", a->what[0] ? ", " : "", event_names[i]);
	return 0;
}

static const struct cli_parser parser =
	CLI_PARSER(":o:e:p:d:vh", record_opt, finish_args, NULL, CLI_OPERANDS);

/*
 * The lock of one output: an abstract unix socket named after the output's directory
 * (device and inode: any spelling of it) and the name in it (FNV-1a), which a second
 * recorder cannot bind, and which goes with its process however it ends, leaving no file.
 * The socket's fd, or -exit code (said).
 */
static int record_lock(const char *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char real[PATH_MAX], dir[PATH_MAX], *slash;
	const char *base;
	uint64_t h = 14695981039346656037ull;
	struct stat st;
	socklen_t len;
	int fd, n;

	/* a FIFO or a device is written once, at the end, as each recorder's stdout may be */
	if (!stat(out, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;
	/* a symlink is written through: its target is the file locked */
	if (!realpath(out, real))
		snprintf(real, sizeof(real), "%s", out);
	slash = strrchr(real, '/');
	base = slash ? slash + 1 : real;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - real) + (slash == real) : 1,
		 slash ? real : ".");
	if (stat(dir, &st))
		return 0; /* where nothing can be written: the writer says why */
	for (; *base; base++)
		h = (h ^ (uint8_t)*base) * 1099511628211ull;
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "kagg-record:%llx:%llx:%016llx",
		     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		     (unsigned long long)h);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -cli_err(CLI_EXIT_FAIL, "cannot lock %s: %s", out, strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, len)) {
		int err = errno;

		close(fd);
		if (err == EADDRINUSE)
			return -cli_err(CLI_EXIT_FAIL,
					"%s is being recorded by another kagg "
					"record: one recording per file",
					out);
		return -cli_err(CLI_EXIT_FAIL, "cannot lock %s: %s", out, strerror(err));
	}
	return fd;
}

/* Each -e names a tracepoint of tracefs: 0, or the usage error's exit code (one line). */
static int tracepoints_exist(const struct record_args *a)
{
	char path[600];
	size_t i, n;

	if (cli_mount_tracefs())
		return cli_err(CLI_EXIT_FAIL, "tracefs is not mounted on /sys/kernel/tracing and "
					      "cannot be: the tracepoints' formats cannot be read");
	for (i = 0; i < a->nr_tps; i++) {
		n = strcspn(a->tps[i], ":/");
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%.*s/%s/format", (int)n,
			 a->tps[i], a->tps[i] + n + 1);
		if (access(path, R_OK))
			return cli_err(CLI_EXIT_USAGE,
				       "no tracepoint %s (no %s; kagg list -t lists them)",
				       a->tps[i], path);
	}
	return 0;
}

/* The streaming session that lands the events asked for; NULL with errno. */
static struct kagg_session *record_open(const struct record_args *a)
{
	cli_setup_signals();
	cli_route_libbpf_log();
	if (cli_mount_tracefs())
		fprintf(stderr,
			"%s: tracefs is not mounted and cannot be: using kagg's built-in "
			"sched formats\n",
			cli_prog);
	if (a->prog) {
		KAGG_OPTS(kagg_prog_opts, o, .mode = KAGG_MODE_STREAM, .rb_subbufs = a->rb_subbufs,
			  .rb_consume = true, .stream_bytes = a->stream_bytes, .sets = a->sets,
			  .nr_sets = a->nr_sets, .log = cli_log);

		return kagg_prog__open(a->prog, &o);
	}
	if (a->generic) {
		/* any tracepoint: its raw trace entry, under its tracefs format */
		KAGG_OPTS(kagg_tprec_opts, o, .events = a->tps, .nr_events = a->nr_tps,
			  .rb_subbufs = a->rb_subbufs, .rb_consume = true,
			  .stream_bytes = a->stream_bytes, .log = cli_log);

		return kagg_tprec__open(&o);
	}
	if (a->events == KAGG_RUNQLAT_EV_SWITCH) {
		/* sched_switch alone: offcpu's streaming program, one record per switch */
		KAGG_OPTS(kagg_offcpu_opts, o, .mode = KAGG_MODE_STREAM,
			  .rb_subbufs = a->rb_subbufs, .rb_consume = true,
			  .stream_bytes = a->stream_bytes, .pids = a->c.tk.pids,
			  .nr_pids = a->c.tk.nr_pids, .log = cli_log);

		return kagg_offcpu__open(&o);
	}
	/* wakeups: runqlat's streaming programs, landing only the events asked for */
	KAGG_OPTS(kagg_runqlat_opts, o, .mode = KAGG_MODE_STREAM, .rb_subbufs = a->rb_subbufs,
		  .rb_consume = true, .stream_bytes = a->stream_bytes, .pids = a->c.tk.pids,
		  .nr_pids = a->c.tk.nr_pids, .land_events = a->events, .log = cli_log);

	return kagg_runqlat__open(&o);
}

/* Point the sink at the trace.dat or the raw directory: 0 or an exit code. */
static int sink_open(struct sink *k, struct kagg_session *s, const struct record_args *a)
{
	struct stat st;

	k->evs = kagg_session__events(s);
	k->nr_cpus = kagg_rb__nr_cpus(kagg_session__ringbuf(s));
	if (a->raw_dir)
		return open_raw_dir(k, a->raw_dir, kagg_session__ringbuf(s), k->evs);

	KAGG_OPTS(kagg_tracedat_writer_opts, wo, .nr_cpus = k->nr_cpus,
		  .page_size = kagg_rb__subbuf_size(kagg_session__ringbuf(s)), .events = k->evs,
		  .trace_clock = "mono");

	/* not a regular file: written to at the end, its pages spooled meanwhile */
	k->stream = !stat(a->out, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	k->w = kagg_tracedat_writer__new(a->out, &wo);
	if (!k->w && k->stream) {
		const char *tmp = getenv("TMPDIR");

		return cli_err(CLI_EXIT_FAIL, "cannot record to %s: spooling in %s: %s", a->out,
			       tmp && *tmp ? tmp : "/tmp", strerror(errno));
	}
	if (!k->w)
		return cli_err(CLI_EXIT_FAIL, "cannot create %s: %s", a->out, strerror(errno));
	return 0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Consume records and move full pages out for `duration` seconds (0: until
 * Ctrl-C).  Each page is in the file when it has been moved (a killed
 * recording keeps it).  A consuming failure is said and ends the recording
 * early, what was recorded is still written out; a failed write is
 * returned (-errno).
 */
static int record_until(struct sink *k, struct kagg_session *s, double duration)
{
	double t = mono_s(), end = duration ? t + duration : 1e300;

	while (!cli_stop && t < end) {
		int err = kagg_session__poll(s, 100);

		if (err < 0 && err != -EINTR) {
			cli_err(CLI_EXIT_FAIL, "consuming records failed: %s", strerror(-err));
			break;
		}
		err = drain_pages(k, kagg_session__ringbuf(s), false);
		if (err)
			return err;
		t = mono_s();
	}
	return 0;
}

/* A write failed (-err): one line, saying what the file holds.  The exit code. */
static int write_failed(const struct sink *k, const struct record_args *a, int err)
{
	if (a->raw_dir || k->stream)
		return cli_err(CLI_EXIT_FAIL, "writing to %s failed: %s",
			       a->raw_dir ? a->raw_dir : a->out, strerror(-err));
	if (kagg_tracedat_writer__nr_pages(k->w, -1))
		return cli_err(CLI_EXIT_FAIL,
			       "writing %s failed: %s; it holds the %llu pages "
			       "recorded before",
			       a->out, strerror(-err),
			       (unsigned long long)kagg_tracedat_writer__nr_pages(k->w, -1));
	return cli_err(CLI_EXIT_FAIL, "writing %s failed: %s; it was left as it was", a->out,
		       strerror(-err));
}

/*
 * Stop the source, take every record still in flight, then every page, and
 * finish the trace.dat.  *snap: the session's counters.  0 or an exit code.
 */
static int record_finish(struct sink *k, struct kagg_session *s, const struct record_args *a,
			 struct kagg_snapshot **snap)
{
	int err;

	kagg_session__detach(s);
	while (kagg_session__poll(s, 0) > 0)
		;
	err = drain_pages(k, kagg_session__ringbuf(s), true);
	if (err)
		return write_failed(k, a, err);
	*snap = kagg_session__snapshot(s, 0);
	if (k->w) {
		err = kagg_tracedat_writer__finish(k->w);
		if (err)
			return write_failed(k, a, err);
	}
	return 0;
}

static void print_summary(const struct sink *k, const struct kagg_snapshot *snap,
			  const struct record_args *a)
{
	const struct kagg_meta *m = kagg_snapshot__meta(snap);

	fprintf(stderr,
		"%s: %llu events seen, %llu recorded in %llu pages to %s (%s; %llu streamed); "
		"lost %llu (BPF ring buffer full) + %llu (reference buffer full); format %s\n",
		cli_prog, (unsigned long long)m->stream_seen, (unsigned long long)k->events,
		(unsigned long long)k->pages, a->out ? a->out : a->raw_dir, a->what,
		(unsigned long long)m->stream_delivered, (unsigned long long)m->stream_dropped,
		(unsigned long long)m->rb_dropped, m->stream_format);
}

static void sink_free(struct sink *k)
{
	int cpu;

	if (!k)
		return;
	kagg_tracedat_writer__free(k->w);
	for (cpu = 0; k->raw_fds && cpu < k->nr_cpus; cpu++)
		if (k->raw_fds[cpu] > 0)
			close(k->raw_fds[cpu]);
	free(k->raw_fds);
	free(k);
}

static int record_main(int argc, char **argv)
{
	struct record_args a = { .rb_subbufs = 512 };
	struct kagg_snapshot *snap = NULL;
	struct kagg_session *s = NULL;
	struct sink *k = NULL;
	int ret, lock = 0;

	ret = cli_parse(&parser, argc, argv, &a.c);
	if (ret || CLI_PARSE_ONLY) {
		ret = ret < 0 ? CLI_EXIT_OK : ret;
		goto out;
	}
	/* one recorder per output, before anything is loaded */
	lock = record_lock(a.out ? a.out : a.raw_dir);
	if (lock < 0) {
		ret = -lock;
		goto out;
	}
	ret = a.generic ? tracepoints_exist(&a) : 0;
	if (ret)
		goto out;
	ret = CLI_EXIT_FAIL;
	k = calloc(1, sizeof(*k));
	if (!k)
		goto out;
	s = record_open(&a);
	if (!s) {
		ret = cli_open_failed(errno);
		goto out;
	}
	ret = sink_open(k, s, &a);
	if (ret)
		goto out;
	ret = CLI_EXIT_FAIL;
	if (kagg_session__attach(s))
		goto out;
	fprintf(stderr, "Recording %s... Hit Ctrl-C to end.\n", a.what);
	ret = record_until(k, s, a.c.cm.duration);
	ret = ret ? write_failed(k, &a, ret) : record_finish(k, s, &a, &snap);
	if (!ret && snap)
		print_summary(k, snap, &a);
out:
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	sink_free(k);
	cli_tasks_free(&a.c.tk);
	if (lock > 0)
		close(lock);
	return ret;
}

CLI_COMMAND(record, "record streamed events to a trace-cmd trace.dat", record_main);
