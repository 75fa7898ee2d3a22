// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg serve: run tools continuously and serve their metrics to Prometheus.
 * Each --tool line (or config line) is parsed by the tool's own main, whose
 * opened session cli_session_taker takes instead of running it.  A scrape
 * reads every session with an exact read-and-reset (under that session's
 * lock only), adds the intervals to a kagg_prom (under its own lock) and
 * writes it in the format the scraper's Accept header asks for.  HTTP is
 * libmicrohttpd's, one internal polling thread, connections limited and
 * timed out.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include <kagg/kagg.h>
#include "cli.h"

#define SERVE_DEFAULT_PORT "9436"
#define SERVE_MAX_TOOLS 64

static const char usage_text[] =
"usage: kagg serve [OPTIONS] --tool 'TOOL [ARGS]' | --prog 'PROG.bpf.o [ARGS]' ...\n"
"\n"
"Run tools continuously and serve their metrics over HTTP for Prometheus:\n"
"/metrics in the Prometheus text format 0.0.4, or OpenMetrics 1.0 or the\n"
"protobuf format (with native histograms) when the scraper's Accept header\n"
"asks for it; / lists the tools.  Every scrape reads\n"
"each tool with an exact read-and-reset and adds the interval to the totals\n"
"served, so counters never go backwards and no event is counted twice.\n"
"\n"
"  -l, --listen ADDR:PORT  where to listen (default :9436, every address;\n"
"                          [ADDR]:PORT for IPv6)\n"
"  -t, --tool 'LINE'       a tool and its options as on its own command line,\n"
"                          e.g. 'runqlat --cgroup /sys/fs/cgroup/db' (offcpu,\n"
"                          runqlat, syscount, funclat, hist, profile); repeat it\n"
"  -p, --prog 'LINE'       a program written with <kagg/bpf/kagg.bpf.h> and the\n"
"                          options of kagg run, e.g. 'biolat.bpf.o --set min_us=10';\n"
"                          its key fields are labels; repeat it\n"
"  -c, --config FILE       tool lines, one per line ('#' starts a comment; a\n"
"                          program: 'run PROG.bpf.o [ARGS]')\n"
"  -k, --max-keys N        per-key tools: at most N keyed series per tool, the\n"
"                          rest added to one key=\"other\" series (default 100)\n"
"      --connections N     at most N connections at once (default 16)\n"
"      --timeout SEC       close a connection idle for SEC seconds (default 10)\n"
"  -v, --verbose           print libbpf and library messages\n"
"  -h, --help              this text\n"
"\n"
"Tools run in aggregate mode, in nanoseconds, with their BPF run time\n"
"measured (--unit nsecs --overhead, which a line may override); -d, -i and\n"
"--mode are refused.  Metrics and their labels: docs/fleet.md.\n"
"\n"
"examples:\n"
"  kagg serve --tool 'runqlat' --tool 'offcpu -P' --max-keys 20\n"
"  kagg serve --listen 127.0.0.1:9436 --config /etc/kagg/serve.conf\n";

/* The tools whose main ends in cli_run_session (the others would just run). */
static const char *const served_tools[] = {
	"offcpu", "runqlat", "syscount", "funclat", "hist", "profile", "run",
};

struct inst {
	char *id;		/* the tool line, words joined by one space */
	char **argv;		/* the words, kept: options may point into them */
	int argc;
	struct kagg_session *s;
	pthread_mutex_t lock;	/* held for a read-and-reset or a poll only */
	/* For the / page: the latest meta's tool, event, attach, kernel, filters (prom_lock). */
	char *meta[5];
};

#define NR_META (sizeof(insts[0].meta) / sizeof(insts[0].meta[0]))

static struct inst insts[SERVE_MAX_TOOLS];
static int nr_insts;
static struct kagg_prom *prom;
static pthread_mutex_t prom_lock = PTHREAD_MUTEX_INITIALIZER;
static struct inst *taking; /* the instance whose tool main is running */
static const char *serve_prog;

/* cli_session_taker: keep the session the tool's main opened. */
static int take_session(struct kagg_session *s, const struct cli_args *a)
{
	if (a->cm.duration || a->cm.interval || a->cm.count)
		return kagg_session__destroy(s),
		       cli_err(CLI_EXIT_USAGE, "-d, -i and INTERVAL are not for kagg serve");
	if (a->st.mode != KAGG_MODE_AGG || a->st.print)
		return kagg_session__destroy(s),
		       cli_err(CLI_EXIT_USAGE, "--mode and --print are not for kagg serve");
	taking->s = s;
	return CLI_EXIT_OK;
}

/* Split line into words: blanks separate, '...' and "..." quote, \ escapes. -EINVAL, -ENOMEM. */
static int split_words(const char *line, char ***out, int *nr)
{
	size_t n = strlen(line);
	char *buf = malloc(n + 1), **v = NULL, **tmp, *o = buf;
	int cnt = 0;
	const char *p = line;

	if (!buf)
		return -ENOMEM;
	while (*p) {
		char q = 0, *start = o;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		for (; *p; p++) {
			if (q) {
				if (*p == q)
					q = 0;
				else if (*p == '\\' && q == '"' && p[1])
					*o++ = *++p;
				else
					*o++ = *p;
			} else if (*p == '\'' || *p == '"') {
				q = *p;
			} else if (*p == '\\' && p[1]) {
				*o++ = *++p;
			} else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
				break;
			} else {
				*o++ = *p;
			}
		}
		if (q) {
			free(buf);
			free(v);
			return -EINVAL;
		}
		*o++ = 0;
		tmp = realloc(v, (cnt + 2) * sizeof(*v));
		if (!tmp) {
			free(buf);
			free(v);
			return -ENOMEM;
		}
		v = tmp;
		v[cnt++] = start;
		v[cnt] = NULL;
	}
	if (!cnt) {
		free(buf);
		return -EINVAL;
	}
	*out = v;
	*nr = cnt;
	return 0;
}

static const struct cli_cmd *served_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(served_tools) / sizeof(served_tools[0]); i++)
		if (!strcmp(name, served_tools[i]))
			break;
	if (i == sizeof(served_tools) / sizeof(served_tools[0]))
		return NULL;
	return cli_find_cmd(name);
}

/*
 * Open the tool of one line (where: "--tool" or "FILE:LINE", for errors) through its own
 * main.  0 or the exit code.
 */
static int add_tool(const char *line, const char *where)
{
	static char unit_opt[] = "--unit", nsecs[] = "nsecs", overhead[] = "--overhead";
	const struct cli_cmd *c;
	struct inst *in;
	char **words, **argv, prog[512];
	int nr, ret, i, dup = 1;
	size_t len = 0;

	cli_prog = serve_prog;
	if (nr_insts >= SERVE_MAX_TOOLS)
		return cli_err(CLI_EXIT_USAGE, "%s: more than %d tools", where, SERVE_MAX_TOOLS);
	ret = split_words(line, &words, &nr);
	if (ret == -ENOMEM)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	if (ret)
		return cli_err(CLI_EXIT_USAGE, "%s: %s", where,
			       *line ? "unbalanced quote in the tool line" : "empty tool line");
	c = served_cmd(words[0]);
	if (!c) {
		cli_err(CLI_EXIT_USAGE, "%s: '%s' is not a tool kagg serve runs (offcpu, runqlat, "
			"syscount, funclat, hist, profile, run)", where, words[0]);
		free(words[0]);
		free(words);
		return CLI_EXIT_USAGE;
	}
	in = &insts[nr_insts];
	/* tool --unit nsecs --overhead ARGS...: the line's own options come after and win. */
	argv = calloc(nr + 4, sizeof(*argv));
	if (!argv)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	argv[0] = words[0];
	argv[1] = unit_opt;
	argv[2] = nsecs;
	argv[3] = overhead;
	for (i = 1; i < nr; i++)
		argv[i + 3] = words[i];
	in->argv = words;
	in->argc = nr;
	for (i = 0; i < nr; i++)
		len += strlen(words[i]) + 1;
	in->id = malloc(len + 16);
	if (!in->id)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	in->id[0] = 0;
	for (i = 0; i < nr; i++)
		strcat(strcat(in->id, i ? " " : ""), words[i]);
	len = strlen(in->id);
	for (i = 0; i < nr_insts; i++)
		if (!strncmp(insts[i].id, in->id, len) &&
		    (!insts[i].id[len] || !strncmp(insts[i].id + len, " #", 2)))
			dup++;
	if (dup > 1)
		sprintf(in->id + strlen(in->id), " #%d", dup);
	pthread_mutex_init(&in->lock, NULL);

	/* Errors read "kagg serve: WHERE: kagg TOOL: ...". */
	snprintf(prog, sizeof(prog), "%s: %s: kagg %s", serve_prog, where, c->name);
	cli_prog = prog;
	taking = in;
	cli_session_taker = take_session;
	ret = c->main(nr + 3, argv);
	cli_session_taker = NULL;
	cli_prog = serve_prog;
	free(argv);
	if (!ret && !in->s) {
		/* Parse-only (fuzzing): the line was checked; else the tool printed its help. */
		free(in->argv[0]);
		free(in->argv);
		free(in->id);
		pthread_mutex_destroy(&in->lock);
		memset(in, 0, sizeof(*in));
		return CLI_PARSE_ONLY ? 0 : -1;
	}
	if (ret)
		return ret;
	nr_insts++;
	return 0;
}

static int read_config(const char *path)
{
	char *line = NULL, where[512];
	size_t cap = 0;
	unsigned int lineno = 0;
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return cli_err(CLI_EXIT_USAGE, "cannot read %s: %s", path, strerror(errno));
	while (!ret && getline(&line, &cap, f) > 0) {
		char *p = line, *hash;

		lineno++;
		/* A '#' starts a comment unless quoted: only at a word's start. */
		for (hash = p; (hash = strchr(hash, '#')); hash++)
			if (hash == p || hash[-1] == ' ' || hash[-1] == '\t') {
				*hash = 0;
				break;
			}
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		ret = add_tool(p, where);
	}
	free(line);
	fclose(f);
	if (!ret && !lineno)
		return 0;
	return ret;
}

/* Bind and listen on ADDR:PORT (":PORT", "[V6]:PORT", "ADDR", ""). The fd, or -exit code. */
static int listen_on(const char *spec)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	char host[256], *port, *colon;
	struct addrinfo *res;
	int fd, one = 1, err;

	snprintf(host, sizeof(host), "%s", spec);
	if (host[0] == '[') {
		char *close = strchr(host, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%s' ([ADDR]:PORT)", spec);
		*close = 0;
		port = close[1] ? close + 2 : (char *)SERVE_DEFAULT_PORT;
		memmove(host, host + 1, strlen(host));
	} else if ((colon = strrchr(host, ':'))) {
		if (strchr(host, ':') != colon)
			return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%s' (IPv6: [ADDR]:PORT)",
					spec);
		*colon = 0;
		port = colon + 1;
	} else {
		port = (char *)SERVE_DEFAULT_PORT;
	}
	if (!*port)
		port = (char *)SERVE_DEFAULT_PORT;
	hints.ai_flags |= AI_NUMERICHOST;
	err = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (err)
		return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%s': %s", spec,
				gai_strerror(err));
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64)) {
		err = errno;
		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return -cli_err(CLI_EXIT_FAIL, "cannot listen on %s: %s", spec, strerror(err));
	}
	freeaddrinfo(res);
	return fd;
}

static void set_str(char **dst, const char *s)
{
	char *c = strdup(s ? s : "");

	if (c) {
		free(*dst);
		*dst = c;
	}
}

/* Keep the fields of m that the / page shows. */
static void keep_meta(struct inst *in, const struct kagg_meta *m)
{
	const char *v[NR_META] = { m->tool, m->event, m->attach, m->kernel, m->filters };
	size_t j;

	for (j = 0; j < NR_META; j++)
		set_str(&in->meta[j], v[j]);
}

/*
 * Read every session (read-and-reset under its own lock) and add the intervals to prom;
 * prom_lock held.  0 or -errno of the first failed read.
 */
static int collect(void)
{
	int i, err = 0;

	for (i = 0; i < nr_insts; i++) {
		struct inst *in = &insts[i];
		struct kagg_snapshot *snap;

		pthread_mutex_lock(&in->lock);
		snap = kagg_session__snapshot(in->s, KAGG_SNAP_RESET);
		pthread_mutex_unlock(&in->lock);
		if (!snap) {
			if (!err)
				err = -errno;
			cli_err(0, "reading '%s' failed: %s", in->id, strerror(errno));
			continue;
		}
		keep_meta(in, kagg_snapshot__meta(snap));
		if (kagg_prom__update(prom, i, snap) && !err)
			err = -ENOMEM;
		kagg_snapshot__free(snap);
	}
	return err;
}

static void write_index(FILE *f)
{
	static const char *const heads[] = { "tool_id", "tool", "event", "attach", "kernel",
					     "filters" };
	int i, j;

	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kagg serve"
		   "</title></head>\n<body><h1>kagg %s</h1>\n<p><a href=\"/metrics\">/metrics</a>"
		   "</p>\n<table border=\"1\">\n<tr>", kagg_version());
	for (j = 0; j < 6; j++)
		fprintf(f, "<th>%s</th>", heads[j]);
	fputs("</tr>\n", f);
	for (i = 0; i < nr_insts; i++) {
		fputs("<tr>", f);
		for (j = 0; j < 6; j++) {
			const char *v = j ? insts[i].meta[j - 1] : insts[i].id;

			fputs("<td>", f);
			if (v)
				kagg_html__puts(f, v);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n</body></html>\n", f);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	enum kagg_prom_format fmt;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		body = strdup("only GET\n");
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, body, body ? strlen(body) : 0,
			     "text/plain");
	}
	if (strcmp(url, "/metrics") && strcmp(url, "/")) {
		body = strdup("not found: try /metrics\n");
		return reply(conn, MHD_HTTP_NOT_FOUND, body, body ? strlen(body) : 0,
			     "text/plain");
	}
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	pthread_mutex_lock(&prom_lock);
	if (!strcmp(url, "/")) {
		write_index(f);
		pthread_mutex_unlock(&prom_lock);
		fclose(f);
		return reply(conn, MHD_HTTP_OK, body, len, "text/html; charset=utf-8");
	}
	fmt = kagg_prom__negotiate(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_ACCEPT));
	err = collect();
	if (!err)
		err = kagg_prom__write(prom, f, fmt);
	pthread_mutex_unlock(&prom_lock);
	fclose(f);
	if (err) {
		free(body);
		body = NULL;
		if (asprintf(&body, "kagg serve: reading the tools failed: %s\n",
			     strerror(-err)) < 0)
			return MHD_NO;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, body, strlen(body),
			     "text/plain");
	}
	return reply(conn, MHD_HTTP_OK, body, len, kagg_prom__content_type(fmt));
}

enum {
	OPT_CONNECTIONS = CLI_OPT_TOOL,
	OPT_TIMEOUT,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "tool", required_argument, NULL, 't' },
	{ "prog", required_argument, NULL, 'p' },
	{ "config", required_argument, NULL, 'c' },
	{ "max-keys", required_argument, NULL, 'k' },
	{ "connections", required_argument, NULL, OPT_CONNECTIONS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

static void free_all(void)
{
	size_t j;
	int i;

	for (i = 0; i < nr_insts + 1 && i < SERVE_MAX_TOOLS; i++) {
		struct inst *in = &insts[i];

		kagg_session__destroy(in->s);
		in->s = NULL;
		if (in->argv)
			free(in->argv[0]);
		free(in->argv);
		free(in->id);
		for (j = 0; j < NR_META; j++)
			free(in->meta[j]);
		memset(in, 0, sizeof(*in));
	}
	kagg_prom__free(prom);
	prom = NULL;
}

static int serve_main(int argc, char **argv)
{
	KAGG_OPTS(kagg_prom_opts, po);
	const char *listen_spec = ":" SERVE_DEFAULT_PORT, *config = NULL;
	uint64_t connections = 16, max_keys = 100;
	double timeout = 10;
	const char **lines = NULL;
	bool *progs = NULL;
	struct MHD_Daemon *d = NULL;
	int c, i, nr_lines = 0, fd = -1, ret = 0;

	serve_prog = cli_prog;
	lines = calloc(argc, sizeof(*lines));
	progs = calloc(argc, sizeof(*progs));
	if (!lines || !progs) {
		free(lines);
		free(progs);
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:t:p:c:k:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_spec = optarg;
			break;
		case 't':
			lines[nr_lines++] = optarg;
			break;
		case 'p':
			progs[nr_lines] = true;
			lines[nr_lines++] = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'k':
			if (cli_parse_range(optarg, 1, 100000, "--max-keys", true, &max_keys))
				ret = CLI_EXIT_USAGE;
			break;
		case OPT_CONNECTIONS:
			if (cli_parse_range(optarg, 1, 4096, "--connections", true, &connections))
				ret = CLI_EXIT_USAGE;
			break;
		case OPT_TIMEOUT:
			if (cli_parse_seconds(optarg, &timeout) || timeout < 1 || timeout > 86400)
				ret = cli_err(CLI_EXIT_USAGE,
					      "invalid --timeout '%s' (1 to 86400 seconds)", optarg);
			break;
		case 'v':
			cli_verbose = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free(lines);
			free(progs);
			return CLI_EXIT_OK;
		default:
			ret = cli_bad_opt(c, argv);
		}
		if (ret)
			goto out;
	}
	if (optind < argc) {
		ret = cli_err(CLI_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (!nr_lines && !config) {
		ret = cli_err(CLI_EXIT_USAGE, "no tool to serve (--tool or --config; see --help)");
		goto out;
	}
	po.max_keys = max_keys;
	prom = kagg_prom__new(&po);
	if (!prom) {
		ret = cli_err(CLI_EXIT_FAIL, "out of memory");
		goto out;
	}
	/* The port first: a taken one fails before anything is loaded. */
	fd = CLI_PARSE_ONLY ? -1 : listen_on(listen_spec);
	if (fd < 0 && !CLI_PARSE_ONLY) {
		ret = -fd;
		goto out;
	}
	for (i = 0; i < nr_lines && !ret; i++) {
		char *run;

		if (!progs[i]) {
			ret = add_tool(lines[i], "--tool");
			continue;
		}
		/* a program is kagg run's: its line is run's operand and options */
		if (asprintf(&run, "run %s", lines[i]) < 0) {
			ret = cli_err(CLI_EXIT_FAIL, "out of memory");
			break;
		}
		ret = add_tool(run, "--prog");
		free(run);
	}
	if (!ret && config)
		ret = read_config(config);
	if (ret < 0) {
		ret = CLI_EXIT_OK; /* a tool's --help */
		goto out;
	}
	if (ret || CLI_PARSE_ONLY)
		goto out;
	if (!nr_insts) {
		ret = cli_err(CLI_EXIT_USAGE, "%s: no tool line", config);
		goto out;
	}
	cli_setup_signals();
	cli_route_libbpf_log();
	for (i = 0; i < nr_insts; i++) {
		int err = kagg_prom__add_tool(prom, insts[i].id);

		if (err < 0) {
			ret = cli_err(CLI_EXIT_FAIL, "'%s': %s", insts[i].id, strerror(-err));
			goto out;
		}
		err = kagg_session__attach(insts[i].s);
		if (err) {
			ret = cli_err(CLI_EXIT_FAIL, "cannot attach '%s': %s", insts[i].id,
				      strerror(-err));
			goto out;
		}
	}
	/* The first interval, from attach: the meta for / and series from the start. */
	pthread_mutex_lock(&prom_lock);
	collect();
	pthread_mutex_unlock(&prom_lock);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY, 0,
			     NULL, NULL, handle, NULL,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)connections,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)timeout,
			     MHD_OPTION_END);
	if (!d) {
		ret = cli_err(CLI_EXIT_FAIL, "cannot start the HTTP server on %s", listen_spec);
		goto out;
	}
	fd = -1; /* the daemon's now */
	fprintf(stderr, "%s: serving %d tool%s on %s\n", serve_prog, nr_insts,
		nr_insts == 1 ? "" : "s", listen_spec);
	while (!cli_stop) {
		/* Sessions with user stacks read each new process's mappings here. */
		for (i = 0; i < nr_insts; i++) {
			pthread_mutex_lock(&insts[i].lock);
			kagg_session__poll(insts[i].s, 0);
			pthread_mutex_unlock(&insts[i].lock);
		}
		cli_sleep(0.1);
	}
out:
	if (d)
		MHD_stop_daemon(d);
	if (fd >= 0)
		close(fd);
	free_all();
	nr_insts = 0;
	free(lines);
	free(progs);
	return ret;
}

CLI_COMMAND(serve, "serve tools' metrics to Prometheus (/metrics)", serve_main);
