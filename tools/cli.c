// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Shared CLI plumbing (see cli.h): errors, value parsing, signals, the
 * options every tool has, and the attach/sleep/print loop.
 */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mount.h>
#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>

#include <kagg/kagg.h>
#include "cli.h"

const char *cli_prog = "kagg";
volatile sig_atomic_t cli_stop;
int cli_verbose;
int cli_logged;
int (*cli_session_taker)(struct kagg_session *s, const struct cli_args *a);

const struct cli_cmd *cli_find_cmd(const char *name)
{
	const struct cli_cmd *c;

	for (c = __start_cli_cmds; c < __stop_cli_cmds; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int cli_run_cmd(const struct cli_cmd *c, int argc, char **argv)
{
	static char prog[64];

	snprintf(prog, sizeof(prog), "kagg %s", c->name);
	cli_prog = prog;
	return c->main(argc, argv);
}

int cli_err(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_output_done(int err)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	/*
	 * The printers see only ferror(), and glibc drops the buffer after a
	 * failed write (a later fflush succeeds), so errno is long gone: a
	 * pipe whose reader left (head(1)) is told apart by poll's POLLERR.
	 */
	if (fflush(stdout) && !err)
		err = -errno;
	if (!err && !ferror(stdout))
		return CLI_EXIT_OK;
	if (err == -EPIPE || (poll(&p, 1, 0) == 1 && (p.revents & POLLERR)))
		return CLI_EXIT_PIPE;
	return cli_err(CLI_EXIT_FAIL, "writing output failed: %s", strerror(err < 0 ? -err : EIO));
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_range(const char *s, uint64_t lo, uint64_t hi, const char *what, bool say_range,
		    uint64_t *out)
{
	uint64_t v;

	if (cli_parse_u64(s, &v) || v < lo || v > hi) {
		if (say_range)
			return cli_err(CLI_EXIT_USAGE,
				       "invalid %s '%s' (%" PRIu64 " to %" PRIu64 ")", what, s, lo,
				       hi);
		return cli_err(CLI_EXIT_USAGE, "invalid %s '%s'", what, s);
	}
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > 1e7)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_int_list(const char *s, int **out, size_t *n)
{
	int *v = NULL, *tmp;
	size_t cnt = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		long x;

		errno = 0;
		x = strtol(p, &end, 10);
		if (errno || end == p || x <= 0 || x > INT32_MAX || (*end && *end != ','))
			goto bad;
		tmp = realloc(v, (cnt + 1) * sizeof(*v));
		if (!tmp)
			goto bad;
		v = tmp;
		v[cnt++] = (int)x;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	*out = v;
	*n = cnt;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

static void on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cli_sleep(double seconds)
{
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	end.tv_sec = now.tv_sec + (time_t)seconds;
	end.tv_nsec = now.tv_nsec + (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!cli_stop) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL);

		if (err != EINTR)
			break;
	}
}

void cli_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level <= (cli_verbose ? KAGG_LOG_DEBUG : KAGG_LOG_WARN)) {
		fflush(stdout);
		fprintf(stderr, "%s: %s\n", cli_prog, msg);
	}
	if (level == KAGG_LOG_WARN)
		cli_logged = 1;
}

void cli_route_libbpf_log(void)
{
	kagg_libbpf_set_log(cli_verbose ? cli_log : NULL, NULL);
}

int cli_parse_buckets(const char *arg, enum kagg_buckets *b, int *scale)
{
	return cli_parse_buckets_lin(arg, b, scale, NULL, NULL);
}

int cli_parse_buckets_lin(const char *arg, enum kagg_buckets *b, int *scale, int64_t *lin_min,
			  uint64_t *lin_step)
{
	uint64_t step;
	long long min;
	char *end;
	long s;

	if (!strcmp(arg, "log2")) {
		*b = KAGG_BUCKETS_LOG2;
		if (lin_step)
			*lin_step = 0;
		return 0;
	}
	if (!strncmp(arg, "linear:", 7)) {
		if (!lin_step)
			return cli_err(CLI_EXIT_USAGE, "--buckets linear:MIN:STEP is for kagg hist "
						       "only (here: log2 or exp:S)");
		errno = 0;
		min = strtoll(arg + 7, &end, 0);
		if (!errno && end != arg + 7 && *end == ':' && !cli_parse_u64(end + 1, &step) &&
		    step) {
			*b = KAGG_BUCKETS_LOG2;
			*lin_min = min;
			*lin_step = step;
			return 0;
		}
		return cli_err(CLI_EXIT_USAGE,
			       "invalid --buckets '%s' (linear:MIN:STEP, STEP a "
			       "positive integer)",
			       arg);
	}
	if (!strncmp(arg, "exp:", 4)) {
		errno = 0;
		s = strtol(arg + 4, &end, 10);
		if (!errno && end != arg + 4 && !*end && s >= 0 && s <= 5) {
			*b = KAGG_BUCKETS_EXP;
			*scale = (int)s;
			return 0;
		}
	}
	return cli_err(CLI_EXIT_USAGE, "invalid --buckets '%s' (log2, exp:S with S 0 to 5%s)", arg,
		       lin_step ? ", or linear:MIN:STEP" : "");
}

/* --percentiles "p50,90,p99.9,max": each in (0, 100], max = 100; up to 16. */
static int parse_percentiles(const char *arg, struct cli_common *cm)
{
	const char *p = arg;
	size_t n = 0;
	char *end;
	double q;

	while (*p) {
		if (n == sizeof(cm->pcts) / sizeof(cm->pcts[0]))
			return cli_err(CLI_EXIT_USAGE, "too many percentiles in '%s' (16 at most)",
				       arg);
		if (!strncmp(p, "max", 3)) {
			q = 100;
			end = (char *)p + 3;
		} else {
			errno = 0;
			q = strtod(p + (*p == 'p'), &end);
			if (errno || end == p + (*p == 'p') || !(q > 0 && q <= 100))
				goto bad;
		}
		if (*end && *end != ',')
			goto bad;
		cm->pcts[n++] = q;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	if (!n)
		goto bad;
	cm->print.percentiles = cm->pcts;
	cm->print.nr_percentiles = n;
	return 0;
bad:
	return cli_err(
		CLI_EXIT_USAGE,
		"invalid percentiles '%s' (a list such as p50,p90,p99.9,max; each in (0, 100])",
		arg);
}

int cli_pick(const char *s, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return (int)i;
	return -1;
}

int cli_choose(const char *s, const char *const *names, size_t n, const char *what,
	       const char *choices, int *out)
{
	int i = cli_pick(s, names, n);

	if (i < 0)
		return cli_err(CLI_EXIT_USAGE, "invalid %s '%s' (%s)", what, s, choices);
	*out = i;
	return 0;
}

/* --format: a printer's format, or a picture (then the format stays as it was). */
static int parse_format(const char *arg, struct cli_common *cm)
{
	static const char *const formats[] = {
		[KAGG_FORMAT_TEXT] = "text",
		[KAGG_FORMAT_JSON] = "json",
		[KAGG_FORMAT_NDJSON] = "ndjson",
	};
	static const char *const pictures[] = {
		[CLI_PIC_SVG] = "svg",
		[CLI_PIC_HTML] = "html",
		[CLI_PIC_HEATMAP] = "heatmap",
		[CLI_PIC_PPROF] = "pprof",
	};
	int fmt = CLI_PICK(arg, formats), pic = CLI_PICK(arg, pictures);

	if (fmt < 0 && pic < 0)
		return cli_err(
			CLI_EXIT_USAGE,
			"invalid format '%s' (text, json, ndjson, svg, html, heatmap or pprof)",
			arg);
	cm->picture = pic < 0 ? CLI_PIC_NONE : (unsigned int)pic; /* the last --format wins */
	if (fmt >= 0)
		cm->print.format = (enum kagg_format)fmt;
	return 0;
}

int cli_common_opt(int c, const char *arg, struct cli_common *cm)
{
	uint64_t v;

	switch (c) {
	case 'd':
		if (cli_parse_seconds(arg, &cm->duration))
			return cli_err(CLI_EXIT_USAGE, "invalid duration '%s'", arg);
		return 0;
	case 'i':
		if (cli_parse_seconds(arg, &cm->interval))
			return cli_err(CLI_EXIT_USAGE, "invalid interval '%s'", arg);
		if (cm->interval < CLI_MIN_INTERVAL)
			return cli_err(CLI_EXIT_USAGE, "invalid interval '%s' (at least %g s)", arg,
				       CLI_MIN_INTERVAL);
		return 0;
	case CLI_OPT_UNIT:
		if (kagg_unit__parse(arg, &cm->unit))
			return cli_err(CLI_EXIT_USAGE, "invalid unit '%s' (nsecs, usecs or msecs)",
				       arg);
		cm->unit_given = true;
		return 0;
	case CLI_OPT_FORMAT:
		return parse_format(arg, cm);
	case CLI_OPT_OVERHEAD:
		cm->overhead = true;
		return 0;
	case CLI_OPT_PERCENTILES:
		return parse_percentiles(arg, cm);
	case CLI_OPT_QUIET:
		cm->print.no_meta = true;
		return 0;
	case 'T':
	case CLI_OPT_TIMESTAMP:
		cm->print.timestamp = true;
		return 0;
	case 'v':
		cli_verbose = 1;
		return 0;
	case 'f': /* in the tools that have -f (CLI_STACKS_LONGOPTS) */
	case CLI_OPT_FOLDED:
		cm->print.folded = true;
		return 0;
	case CLI_OPT_ADDRS:
		cm->addrs = true;
		return 0;
	case CLI_OPT_DELIMITER:
		cm->delimiter = true;
		return 0;
	case CLI_OPT_TOP:
		return cli_parse_range(arg, 0, UINT32_MAX, "--top", false, &v)
			       ?: (cm->print.top = (size_t)v, 0);
	}
	return -ENOENT;
}

int cli_folded_ready(struct cli_common *cm)
{
	if (cm->print.folded && cm->print.format != KAGG_FORMAT_TEXT)
		return cli_err(CLI_EXIT_USAGE, "--folded is a text format; drop --format json");
	if (cm->print.folded && cm->interval)
		return cli_err(CLI_EXIT_USAGE, "--folded prints once: drop -i");
	if (cm->delimiter && !cm->print.folded)
		return cli_err(CLI_EXIT_USAGE, "--delimiter goes with --folded");
	cm->print.no_delimiter = !cm->delimiter;
	return 0;
}

/* A -p/-t list into *ids, replacing the one an earlier option gave. */
static int parse_task_list(const char *arg, const char *what, int **ids, size_t *n)
{
	free(*ids);
	*ids = NULL;
	*n = 0;
	if (cli_parse_int_list(arg, ids, n))
		return cli_err(CLI_EXIT_USAGE, "invalid %s list '%s'", what, arg);
	return 0;
}

int cli_tasks_opt(int c, const char *arg, struct cli_tasks *tk)
{
	switch (c) {
	case 'P':
	case 'L':
	case 'N':
	case CLI_OPT_PER_CGROUP: {
		enum kagg_key_mode k = c == 'P'	  ? KAGG_KEY_PID
				       : c == 'L' ? KAGG_KEY_TID
				       : c == 'N' ? KAGG_KEY_COMM
						  : KAGG_KEY_CGROUP;

		/* libbpf-tools' runqlat -P -L silently keeps one: say so instead */
		if (tk->key != KAGG_KEY_NONE && tk->key != k)
			return cli_err(CLI_EXIT_USAGE,
				       "-P (per process), %s (per thread), -N (per "
				       "command) and --per-cgroup exclude each other",
				       tk->thread_opt ? tk->thread_opt : "-L");
		tk->key = k;
		return 0;
	}
	case 'p':
		return parse_task_list(arg, "pid", &tk->pids, &tk->nr_pids);
	case 't':
		return parse_task_list(arg, "tid", &tk->tids, &tk->nr_tids);
	}
	return -ENOENT;
}

void cli_tasks_free(struct cli_tasks *tk)
{
	free(tk->pids);
	free(tk->tids);
	tk->pids = tk->tids = NULL;
	tk->nr_pids = tk->nr_tids = 0;
}

/* One option of p's tool: 0, an exit code, or -ENOENT when nobody knows c. */
static int parse_one(const struct cli_parser *p, struct cli_args *a, int c, const char *arg)
{
	int rc = p->opt ? p->opt(a, c, arg) : -ENOENT;

	if (rc == -ENOENT)
		rc = cli_common_opt(c, arg, &a->cm);
	if (rc == -ENOENT && (p->flags & CLI_STREAMS))
		rc = cli_stream_opt(c, arg, &a->st);
	if (rc == -ENOENT && (p->flags & CLI_TASKS))
		rc = cli_tasks_opt(c, arg, &a->tk);
	if (rc == -ENOENT && (p->flags & CLI_MSECS) && c == 'm') {
		a->cm.unit = KAGG_UNIT_MSECS;
		a->cm.unit_given = true;
		rc = 0;
	}
	return rc;
}

int cli_parse(const struct cli_parser *p, int argc, char **argv, struct cli_args *a)
{
	int c, rc;

	a->cm.print.sz = sizeof(a->cm.print);
	/*
	 * 0, not 1: glibc then also forgets where it was inside a cluster of
	 * short options ("-hi" left at 'h' by --help), which would otherwise
	 * point into the previous argv (kagg serve parses one tool line after
	 * another and frees each).
	 */
	optind = 0;
	opterr = 0; /* our one-line errors instead of getopt's */
	while ((c = getopt_long(argc, argv, p->shortopts, p->longopts, NULL)) != -1) {
		rc = parse_one(p, a, c, optarg);
		if (rc == -ENOENT && c == 'h') {
			fputs(p->usage, stdout);
			return -1;
		}
		if (rc == -ENOENT)
			return cli_bad_opt_near(c, argv, p->longopts);
		if (rc)
			return rc;
	}
	if (a->cm.print.timestamp && a->cm.print.folded)
		return cli_err(CLI_EXIT_USAGE, "--folded has no line for a timestamp: drop -T");
	if (a->cm.picture && !(p->flags & CLI_PICTURES))
		return cli_err(CLI_EXIT_USAGE,
			       "this tool draws no picture: --format text, json or ndjson");
	if (!(p->flags & CLI_OPERANDS) && optind < argc) {
		rc = (p->flags & CLI_POS_DURATION
			      ? cli_positional_duration
			      : cli_positional_interval)(argc - optind, argv + optind, &a->cm);
		if (rc)
			return rc;
	}
	return p->finish ? p->finish(a, argc, argv) : 0;
}

int cli_positional_interval(int argc, char **argv, struct cli_common *cm)
{
	uint64_t count = 0;
	double iv;

	if (argc > 2)
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s' (interval [count])",
			       argv[2]);
	if (cli_parse_seconds(argv[0], &iv))
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s' (interval [count])",
			       argv[0]);
	if (iv < CLI_MIN_INTERVAL)
		return cli_err(CLI_EXIT_USAGE, "invalid interval '%s' (seconds, at least %g)",
			       argv[0], CLI_MIN_INTERVAL);
	if (argc == 2 && (cli_parse_u64(argv[1], &count) || !count || count > UINT32_MAX))
		return cli_err(CLI_EXIT_USAGE, "invalid count '%s' (a positive integer)", argv[1]);
	if (cm->interval || cm->duration)
		return cli_err(CLI_EXIT_USAGE,
			       "positional interval '%s' and %s: give one or the other", argv[0],
			       cm->interval ? "-i" : "-d");
	cm->interval = iv;
	cm->count = (unsigned long)count;
	return 0;
}

int cli_positional_duration(int argc, char **argv, struct cli_common *cm)
{
	double d;

	if (argc > 1)
		return cli_err(CLI_EXIT_USAGE,
			       "unexpected argument '%s' (one operand: the "
			       "duration in seconds; intervals: -i SEC)",
			       argv[1]);
	if (cli_parse_seconds(argv[0], &d))
		return cli_err(CLI_EXIT_USAGE, "unexpected argument '%s' (duration in seconds)",
			       argv[0]);
	if (cm->duration)
		return cli_err(CLI_EXIT_USAGE,
			       "positional duration '%s' and -d: give one or the "
			       "other",
			       argv[0]);
	cm->duration = d;
	return 0;
}

int cli_parse_attach(const char *arg, enum kagg_attach *out)
{
	static const char *const names[] = {
		[KAGG_ATTACH_AUTO] = "auto",
		[KAGG_ATTACH_TP_BTF] = "tp_btf",
		[KAGG_ATTACH_RAW_TP] = "raw_tp",
	};

	return CLI_CHOOSE(arg, names, "attach type", "auto, tp_btf, raw_tp", out);
}

int cli_parse_stream_bytes(const char *arg, size_t *out)
{
	uint64_t v;

	if (cli_parse_u64(arg, &v) || v < 4096 || (v & (v - 1)) || v > (1ULL << 30))
		return cli_err(CLI_EXIT_USAGE,
			       "invalid --stream-bytes '%s' (a power of two, 4096 to 1 GiB)", arg);
	*out = (size_t)v;
	return 0;
}

int cli_stream_opt(int c, const char *arg, struct cli_stream *st)
{
	static const char *const modes[] = {
		[KAGG_MODE_AGG] = "agg",
		[KAGG_MODE_STREAM] = "stream",
		[KAGG_MODE_BOTH] = "both",
	};

	switch (c) {
	case CLI_OPT_MODE:
		return CLI_CHOOSE(arg, modes, "mode", "agg, stream or both", &st->mode);
	case CLI_OPT_PRINT:
		st->print = true;
		return 0;
	case CLI_OPT_STREAM_BYTES:
		return cli_parse_stream_bytes(arg, &st->stream_bytes) ? CLI_EXIT_USAGE : 0;
	case CLI_OPT_ATTACH:
		return cli_parse_attach(arg, &st->attach) ? CLI_EXIT_USAGE : 0;
	case CLI_OPT_BUCKETS:
		return cli_parse_buckets(arg, &st->buckets, &st->exp_scale);
	}
	return -ENOENT;
}

int cli_stream_ready(const struct cli_stream *st)
{
	if (st->print && st->mode != KAGG_MODE_STREAM)
		return cli_err(CLI_EXIT_USAGE, "--print needs --mode stream");
	if (st->mode != KAGG_MODE_AGG && !CLI_PARSE_ONLY)
		cli_mount_tracefs();
	return 0;
}

bool cli_start(int parsed, const struct cli_stream *st, int *ret)
{
	*ret = parsed < 0 ? CLI_EXIT_OK : parsed;
	if (parsed)
		return false;
	if (st) {
		*ret = cli_stream_ready(st);
		if (*ret)
			return false;
	}
	if (CLI_PARSE_ONLY)
		return false;
	cli_setup_signals();
	cli_route_libbpf_log();
	return true;
}

int cli_stream_run(struct kagg_session *s, const struct cli_common *cm, const struct cli_stream *st,
		   const char *banner)
{
	return st->print ? cli_run_printing(s, cm) : cli_run(s, cm, banner);
}

int cli_run_session(struct kagg_session *s, const struct cli_args *a, const char *banner)
{
	int ret;

	if (!s)
		return cli_open_failed(errno);
	if (cli_session_taker)
		return cli_session_taker(s, a);
	ret = cli_stream_run(s, &a->cm, &a->st, banner);
	kagg_session__destroy(s);
	return ret;
}

int cli_session_main(const struct cli_parser *p, int argc, char **argv, struct cli_args *a)
{
	struct kagg_session *s;
	int ret;

	if (cli_start(cli_parse(p, argc, argv, a), &a->st, &ret)) {
		s = p->open(a); /* first: open may set a->banner */
		ret = cli_run_session(s, a, a->banner);
	}
	cli_tasks_free(&a->tk);
	return ret;
}

/* Levenshtein distance of a and b (their first 63 bytes). */
static size_t cli_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 63), lb = strnlen(b, 63), row[64], i, j;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], up;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = diag + (a[i - 1] != b[j - 1]);

			up = row[j];
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

void cli_near_init(struct cli_near *n, const char *want)
{
	size_t len = strlen(want);

	n->want = want;
	n->best[0] = '\0';
	/* near enough: a third of the word wrong, at least one edit allowed */
	n->dist = (len / 3 > 1 ? len / 3 : 1) + 1;
	n->prefix = 0;
}

void cli_near_add(struct cli_near *n, const char *cand)
{
	const char *colon = strchr(cand, ':');
	size_t d = cli_distance(n->want, cand);

	if (colon && !strchr(n->want, ':')) {
		size_t e = cli_distance(n->want, colon + 1);

		d = e < d ? e : d;
	}
	const char *w = n->want, *e = colon && !strchr(w, ':') ? colon + 1 : cand;
	size_t p = 0;

	while (w[p] && w[p] == e[p])
		p++;
	if (*w && (d < n->dist || (d == n->dist && n->best[0] && p > n->prefix))) {
		n->dist = d;
		n->prefix = p;
		snprintf(n->best, sizeof(n->best), "%s", cand);
	}
}

int cli_bad_opt_near(int c, char **argv, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	struct cli_near n;
	char want[64];

	if (c == ':' || strncmp(arg, "--", 2) || !longopts)
		return cli_bad_opt(c, argv);
	snprintf(want, sizeof(want), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	cli_near_init(&n, want);
	for (; longopts->name; longopts++)
		cli_near_add(&n, longopts->name);
	if (!n.best[0])
		return cli_bad_opt(c, argv);
	return cli_err(CLI_EXIT_USAGE, "invalid option '%s' (see --help); did you mean --%s?", arg,
		       n.best);
}

int cli_bad_opt(int c, char **argv)
{
	if (c == ':')
		return cli_err(CLI_EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
	return cli_err(CLI_EXIT_USAGE, "invalid option '%s' (see --help)", argv[optind - 1]);
}

void cli_trim_heap(void)
{
	malloc_trim(0);
}

int cli_open_failed(int err)
{
	if (!cli_logged)
		cli_err(0, "cannot start: %s", strerror(err));
	return err == EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

static int print_snapshot(struct kagg_session *s, const struct cli_common *cm)
{
	struct kagg_snapshot *snap;
	int err;

	snap = kagg_session__snapshot(s, KAGG_SNAP_RESET | (cm->addrs ? KAGG_SNAP_ADDRS : 0));
	if (!snap)
		return cli_err(CLI_EXIT_FAIL, "reading the aggregates failed: %s", strerror(errno));
	err = (cm->printer ? cm->printer : kagg_snapshot__print)(snap, stdout, &cm->print);
	/* folded lines have no room for the meta: what was measured and lost goes to stderr */
	if (!err && cm->print.folded && !cm->print.no_meta)
		kagg_meta__print(kagg_snapshot__meta(snap), stderr);
	kagg_snapshot__free(snap);
	cli_trim_heap();
	return cli_output_done(err);
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Poll the session (consuming streamed records) until the deadline or a signal. */
static int poll_until(struct kagg_session *s, double deadline)
{
	double now;

	while (!cli_stop && (now = mono_now()) < deadline) {
		double left_ms = (deadline - now) * 1000;
		int err = kagg_session__poll(s, left_ms > 100 ? 100 : (int)left_ms + 1);

		if (err < 0 && err != -EINTR)
			return cli_err(CLI_EXIT_FAIL, "consuming records failed: %s",
				       strerror(-err));
	}
	return 0;
}

int cli_run(struct kagg_session *s, const struct cli_common *cm, const char *banner)
{
	double start, end, next;
	unsigned long printed = 0;
	int ret;

	if (kagg_session__attach(s))
		return CLI_EXIT_FAIL;
	if (banner && !cm->picture && cm->print.format == KAGG_FORMAT_TEXT && !cm->print.folded &&
	    !cm->print.no_meta)
		fprintf(stderr, "%s... Hit Ctrl-C to end.\n", banner);
	start = mono_now();
	end = cm->duration ? start + cm->duration : 1e300;
	next = cm->interval ? start + cm->interval : end;
	while (!cli_stop) {
		ret = poll_until(s, next < end ? next : end);
		if (ret)
			return ret;
		/* The count-th interval is the final snapshot's. */
		if (cli_stop || mono_now() >= end || (cm->count && printed + 1 >= cm->count))
			break;
		ret = print_snapshot(s, cm);
		if (ret)
			return ret;
		printed++;
		next += cm->interval;
	}
	/* Duration over or Ctrl-C: stop the sources, then print what was collected. */
	kagg_session__detach(s);
	ret = print_snapshot(s, cm);
	if (!ret && cm->finish)
		ret = cli_output_done(cm->finish(stdout));
	return ret;
}

int cli_mount_tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK))
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		int err = -errno;

		if (cli_verbose)
			fprintf(stderr, "%s: cannot mount tracefs on /sys/kernel/tracing: %s\n",
				cli_prog, strerror(errno));
		return err;
	}
	return 0;
}

/* ---------------------------------------------------------------- --print */

#define PRINTER_COMMS 4096 /* pid -> comm, direct-mapped, like the kernel's saved_cmdlines */

struct printer {
	struct kagg_rb *rb;
	const struct kagg_rb_events *evs;
	const struct kagg_rb_event *cur;
	volatile int done;
	uint64_t printed;
	struct {
		int pid;
		char comm[16];
	} comms[PRINTER_COMMS];
};

/* Remember the (pid, comm) pair of fields pid_name/comm_name of the current record. */
static void printer_learn(struct printer *p, const struct kagg_rb_format *fmt, const char *pid_name,
			  const char *comm_name)
{
	const struct kagg_rb_field *fp = kagg_rb_format__field(fmt, pid_name);
	const struct kagg_rb_field *fc = kagg_rb_format__field(fmt, comm_name);
	const uint8_t *d = p->cur->data;
	int pid;

	if (!fp || !fc || fp->size != 4 || fc->size < 16 || fc->offset + 16 > (int)p->cur->len ||
	    fp->offset + 4 > (int)p->cur->len)
		return;
	memcpy(&pid, d + fp->offset, 4);
	if (pid <= 0)
		return;
	p->comms[pid % PRINTER_COMMS].pid = pid;
	memcpy(p->comms[pid % PRINTER_COMMS].comm, d + fc->offset, 16);
}

/* The common_pid's comm, learned from the sched records' comm fields. */
static const char *printer_comm(void *ctx, int pid)
{
	struct printer *p = ctx;
	const struct kagg_rb_format *fmt;
	static __thread char comm[17];

	fmt = kagg_rb_events__find(p->evs, *(const uint16_t *)p->cur->data);
	if (fmt) {
		printer_learn(p, fmt, "prev_pid", "prev_comm");
		printer_learn(p, fmt, "next_pid", "next_comm");
		printer_learn(p, fmt, "pid", "comm");
	}
	if (pid <= 0 || p->comms[pid % PRINTER_COMMS].pid != pid)
		return NULL;
	memcpy(comm, p->comms[pid % PRINTER_COMMS].comm, 16);
	comm[16] = '\0';
	return comm;
}

static void *printer_main(void *arg)
{
	struct printer *p = arg;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };

	for (;;) {
		bool done = p->done;

		while (!kagg_rb__consume(p->rb, -1, &ev)) {
			p->cur = &ev;
			kagg_rb_events__fprint_event(p->evs, stdout, &ev, printer_comm, p);
			p->printed++;
		}
		/* Output gone (a closed pipe): end the run, as SIGPIPE would have. */
		if (fflush(stdout) || ferror(stdout)) {
			cli_stop = 1;
			break;
		}
		if (done)
			break;
		kagg_rb__wait(p->rb, -1, 0, 100);
	}
	return NULL;
}

int cli_run_printing(struct kagg_session *s, const struct cli_common *cm)
{
	struct printer *p = calloc(1, sizeof(*p));
	pthread_t th;
	double end;
	int ret;

	if (!p)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	p->rb = kagg_session__ringbuf(s);
	p->evs = kagg_session__events(s);
	if (!p->rb || !p->evs)
		ret = cli_err(CLI_EXIT_FAIL, "--print needs a streaming session");
	else if (kagg_session__attach(s))
		ret = CLI_EXIT_FAIL;
	else if (pthread_create(&th, NULL, printer_main, p))
		ret = cli_err(CLI_EXIT_FAIL, "cannot start the printer thread");
	else
		ret = -1;
	if (ret >= 0) {
		free(p);
		return ret;
	}
	end = cm->duration ? mono_now() + cm->duration : 1e300;
	ret = poll_until(s, end);
	kagg_session__detach(s);
	while (kagg_session__poll(s, 0) > 0)
		;
	p->done = 1;
	pthread_join(th, NULL);
	free(p);
	if (ret)
		return ret;
	fprintf(stdout, "\n");
	return print_snapshot(s, cm);
}

int cli_unwind(const char *arg, enum kagg_unwind *u)
{
	static const char *const names[] = {
		[KAGG_UNWIND_AUTO] = "auto",
		[KAGG_UNWIND_FP] = "fp",
		[KAGG_UNWIND_TABLE] = "table",
	};

	return CLI_CHOOSE(arg, names, "unwind", "auto, table or fp", u);
}
