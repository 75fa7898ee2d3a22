// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg serve: run tools continuously and serve their metrics to Prometheus.
 * Each --tool line (or config line) is parsed by the tool's own main, whose
 * opened session cli_session_taker takes instead of running it.  A scrape
 * reads every session with an exact read-and-reset (under that session's
 * lock only), adds the intervals to a kagg_prom (under its own lock) and
 * writes it in the format the scraper's Accept header asks for.  HTTP is
 * libmicrohttpd's, one internal polling thread woken by an inter-thread
 * channel (so a stop never waits for a connection), connections limited in
 * all and per client address, timed out when idle, and each request cut
 * when it is not answered whole within its deadline (conns, below: MHD
 * times connections out only when idle, so a client sending a header line
 * a second would otherwise hold its slot for ever).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <microhttpd.h>

#include <kagg/kagg.h>
#include "cli.h"

#define SERVE_DEFAULT_HOST "127.0.0.1"
#define SERVE_DEFAULT_PORT "9436"
#define SERVE_MAX_TOOLS 64
#define SERVE_MAX_LINE 4096	   /* bytes of one tool line, in a config file too */
#define SERVE_MAX_CONFIG (1 << 20) /* bytes of a config file */
#define SERVE_MAX_URI 2048	   /* longer request targets are answered 414 */
#define SERVE_POOL (32 * 1024)	   /* MHD's memory per connection: request, headers */

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
	"  -l, --listen ADDR:PORT  where to listen (default 127.0.0.1:9436, this\n"
	"                          machine only; 0.0.0.0:9436 or [::]:9436 for every\n"
	"                          address, [ADDR]:PORT for IPv6; port 0: any free\n"
	"                          port, printed at start)\n"
	"  -t, --tool 'LINE'       a tool and its options as on its own command line,\n"
	"                          e.g. 'runqlat --cgroup /sys/fs/cgroup/db' (offcpu,\n"
	"                          runqlat, syscount, funclat, hist, profile); repeat it\n"
	"  -p, --prog 'LINE'       a program written with <kagg/bpf/kagg.bpf.h> and the\n"
	"                          options of kagg run, e.g. 'biolat.bpf.o --set min_us=10';\n"
	"                          its key fields are labels; repeat it\n"
	"  -c, --config FILE       tool lines, one per line ('#' starts a comment; a\n"
	"                          program: 'run PROG.bpf.o [ARGS]'); a regular file of at\n"
	"                          most 1 MiB, lines of at most 4096 bytes\n"
	"  -k, --max-keys N        per-key tools: at most N keyed series per tool, the\n"
	"                          rest added to one key=\"other\" series (default 100)\n"
	"      --key-ttl SEC       retire a keyed series that counted nothing for SEC\n"
	"                          seconds (default 300; 'inf': never): it stops, its\n"
	"                          place is free, and its key starts again from zero\n"
	"      --max-bucket LE     histograms list every bucket from the first scrape,\n"
	"                          up to the first whose le reaches LE: seconds for\n"
	"                          times (default 60), kagg hist's unit for its values\n"
	"                          (default: all); 'inf': all\n"
	"      --connections N     at most N connections at once (default 64)\n"
	"      --connections-per-ip N\n"
	"                          at most N of them from one client address (default 8)\n"
	"      --timeout SEC       close a connection idle for SEC seconds (default 10)\n"
	"      --request-timeout SEC\n"
	"                          close a connection whose request is not received and\n"
	"                          answered whole within SEC seconds of its start (of the\n"
	"                          connection, or of the previous answer; default 10)\n"
	"  -v, --verbose           print libbpf and library messages\n"
	"  -h, --help              this text\n"
	"\n"
	"Tools run in aggregate mode, in nanoseconds, with their BPF run time\n"
	"measured (--unit nsecs --overhead, which a line may override; hist counts\n"
	"its field's own values and gets --overhead only); -d, -i and --mode are\n"
	"refused.  SIGINT or SIGTERM stops the server at once, whatever its\n"
	"connections are doing.  Metrics and their labels: docs/fleet.md.\n"
	"\n"
	"examples:\n"
	"  kagg serve --tool 'runqlat' --tool 'offcpu -P' --max-keys 20\n"
	"  kagg serve --listen 127.0.0.1:9436 --config /etc/kagg/serve.conf\n";

/* The tools whose main ends in cli_run_session (the others would just run). */
static const char *const served_tools[] = {
	"offcpu", "runqlat", "syscount", "funclat", "hist", "profile", "run",
};

struct inst {
	char *id;    /* the tool line, words joined by one space */
	char **argv; /* the words, kept: options may point into them */
	int argc;
	struct kagg_session *s;
	pthread_mutex_t lock; /* held for a read-and-reset or a poll only */
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
	int nr, ret, i, dup = 1, extra;
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
		cli_err(CLI_EXIT_USAGE,
			"%s: '%s' is not a tool kagg serve runs (offcpu, runqlat, "
			"syscount, funclat, hist, profile, run)",
			where, words[0]);
		free(words[0]);
		free(words);
		return CLI_EXIT_USAGE;
	}
	in = &insts[nr_insts];
	/*
	 * tool --unit nsecs --overhead ARGS...: the line's own options come after and win.
	 * hist counts raw field values and refuses --unit: --overhead alone.
	 */
	argv = calloc(nr + 4, sizeof(*argv));
	if (!argv)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	extra = strcmp(c->name, "hist") ? 3 : 1;
	argv[0] = words[0];
	argv[extra] = overhead;
	if (extra == 3) {
		argv[1] = unit_opt;
		argv[2] = nsecs;
	}
	for (i = 1; i < nr; i++)
		argv[i + extra] = words[i];
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
	ret = c->main(nr + extra, argv);
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

/*
 * Tool lines from path: a regular file of at most SERVE_MAX_CONFIG bytes, lines of at most
 * SERVE_MAX_LINE.  0 or the exit code.
 */
static int read_config(const char *path)
{
	char line[SERVE_MAX_LINE + 2], where[512];
	unsigned int lineno = 0;
	size_t total = 0;
	struct stat st;
	FILE *f = NULL;
	int fd, ret = 0;

	/* O_NONBLOCK: a FIFO is refused below, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		ret = cli_err(CLI_EXIT_USAGE, "cannot read %s: %s", path, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = cli_err(CLI_EXIT_USAGE, "cannot read %s: %s", path,
			      S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
		goto cleanup;
	}
	if (st.st_size > SERVE_MAX_CONFIG) {
		ret = cli_err(CLI_EXIT_USAGE, "%s: %lld bytes, more than a config file's %d", path,
			      (long long)st.st_size, SERVE_MAX_CONFIG);
		goto cleanup;
	}
	f = fdopen(fd, "r");
	if (!f) {
		ret = cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", path, strerror(errno));
		goto cleanup;
	}
	fd = -1;
	while (!ret && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		char *p = line, *hash;

		lineno++;
		total += n;
		if (total > SERVE_MAX_CONFIG) {
			ret = cli_err(CLI_EXIT_USAGE, "%s: more than a config file's %d bytes",
				      path, SERVE_MAX_CONFIG);
			break;
		}
		if (n == SERVE_MAX_LINE + 1 && line[n - 1] != '\n') {
			ret = cli_err(CLI_EXIT_USAGE, "%s:%u: line longer than %d bytes", path,
				      lineno, SERVE_MAX_LINE);
			break;
		}
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
	if (!ret && ferror(f))
		ret = cli_err(CLI_EXIT_FAIL, "cannot read %s: %s", path, strerror(errno));
cleanup:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Bind and listen on spec: "ADDR:PORT", "[V6ADDR]:PORT", or either without ":PORT" (the
 * default port).  The address is numeric and never empty (0.0.0.0 and [::] say "every
 * address"); the port is 0 to 65535, 0 for any free one.  What was bound, "ADDR:PORT", in
 * bound.  The fd, or -exit code.
 */
static int listen_on(const char *spec, char *bound, size_t bound_sz)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST };
	char host[256], *port = NULL, *colon, hbuf[NI_MAXHOST], pbuf[NI_MAXSERV];
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	struct addrinfo *res;
	unsigned long pn;
	int fd, one = 1, err;

	if (strlen(spec) >= sizeof(host))
		return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%.40s...': too long", spec);
	strcpy(host, spec);
	if (host[0] == '[') {
		char *close = strchr(host, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%s' ([ADDR]:PORT)",
					spec);
		*close = 0;
		if (close[1])
			port = close + 2;
		memmove(host, host + 1, strlen(host));
	} else if ((colon = strrchr(host, ':'))) {
		if (strchr(host, ':') != colon)
			return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%s' (IPv6: [ADDR]:PORT)",
					spec);
		*colon = 0;
		port = colon + 1;
	}
	if (!*host)
		return -cli_err(CLI_EXIT_USAGE,
				"invalid --listen '%s': no address "
				"(127.0.0.1:PORT for this machine only, 0.0.0.0:PORT or "
				"[::]:PORT for every address)",
				spec);
	if (!port)
		port = (char *)SERVE_DEFAULT_PORT;
	errno = 0;
	pn = strtoul(port, &colon, 10);
	if (!*port || *colon || *port < '0' || *port > '9' || errno || pn > 65535)
		return -cli_err(CLI_EXIT_USAGE,
				"invalid --listen '%s': port '%s' is not 1 "
				"to 65535 (or 0 for any free one)",
				spec, port);
	err = getaddrinfo(host, port, &hints, &res);
	if (err == EAI_NONAME)
		return -cli_err(CLI_EXIT_USAGE,
				"invalid --listen '%s': '%s' is not a numeric "
				"address (127.0.0.1, [::1], 0.0.0.0, [::]...)",
				spec, host);
	if (err)
		return -cli_err(CLI_EXIT_USAGE, "invalid --listen '%s': %s", spec,
				gai_strerror(err));
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen)) {
		err = errno;
		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return -cli_err(CLI_EXIT_FAIL, "cannot listen on %s: %s", spec, strerror(err));
	}
	freeaddrinfo(res);
	if (getnameinfo((struct sockaddr *)&sa, salen, hbuf, sizeof(hbuf), pbuf, sizeof(pbuf),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(bound, bound_sz, "%s", spec);
	else
		snprintf(bound, bound_sz, sa.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", hbuf,
			 pbuf);
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
	cli_trim_heap();
	return err;
}

static void write_index(FILE *f)
{
	static const char *const heads[] = { "tool_id", "tool",	  "event",
					     "attach",	"kernel", "filters" };
	int i, j;

	fprintf(f,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kagg serve"
		"</title></head>\n<body><h1>kagg %s</h1>\n<p><a href=\"/metrics\">/metrics</a>"
		"</p>\n<table border=\"1\">\n<tr>",
		kagg_version());
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

/*
 * Every open connection, for the request deadline.  MHD calls conn_notify from its thread
 * as it accepts a connection and again before it closes the socket, both under conn_lock,
 * so an fd found in the list is still that connection's, and the main loop may shut it down.
 */
struct sconn {
	struct sconn *prev, *next;
	int fd;
	double since; /* start of the current request: accept, or the previous answer sent */
	bool cut;     /* shut down: its deadline passed */
};

static struct sconn conns = { &conns, &conns, -1, 0, false };
static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static double request_timeout = 10;

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct sconn *c;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		c = *socket_ctx;
		if (!c)
			return;
		pthread_mutex_lock(&conn_lock);
		c->prev->next = c->next;
		c->next->prev = c->prev;
		pthread_mutex_unlock(&conn_lock);
		free(c);
		*socket_ctx = NULL;
		return;
	}
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return;
	c = calloc(1, sizeof(*c));
	if (!c) {
		/* no deadline to keep: not served */
		shutdown(ci->connect_fd, SHUT_RDWR);
		return;
	}
	c->fd = ci->connect_fd;
	c->since = mono_now();
	pthread_mutex_lock(&conn_lock);
	c->next = &conns;
	c->prev = conns.prev;
	conns.prev->next = c;
	conns.prev = c;
	pthread_mutex_unlock(&conn_lock);
	*socket_ctx = c;
}

/* A request answered (or abandoned): the connection's next request starts now. */
static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct sconn *c;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	c = ci ? ci->socket_context : NULL;
	if (!c)
		return;
	pthread_mutex_lock(&conn_lock);
	c->since = mono_now();
	pthread_mutex_unlock(&conn_lock);
}

/*
 * Shut down every connection whose request has outlived request_timeout; MHD sees the end
 * of its stream and closes it.  Main thread.
 */
static void cut_late(void)
{
	double now = mono_now();
	struct sconn *c;

	pthread_mutex_lock(&conn_lock);
	for (c = conns.next; c != &conns; c = c->next)
		if (!c->cut && now - c->since >= request_timeout) {
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
		}
	pthread_mutex_unlock(&conn_lock);
}

/* A request's context (*con_cls) through its calls: its target's length, then seen. */
static char req_ok, req_too_long, req_seen;

/*
 * MHD's first look at a request target, before it parses the query: the query is cut here
 * (/metrics and / take no arguments), so a long one cannot fill the connection's memory
 * with its pairs, which MHD would then neither answer nor close.  uri is MHD's own buffer.
 */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
	char *q = strchr(uri, '?');
	size_t len = strlen(uri);

	if (q)
		q[1] = 0;
	return len > SERVE_MAX_URI ? &req_too_long : &req_ok;
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

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	char *body = strdup(text);

	return reply(conn, status, body, body ? strlen(body) : 0, "text/plain");
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

	if (*con_cls == &req_too_long)
		return reply_text(conn, MHD_HTTP_URI_TOO_LONG, "request target too long\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	/*
	 * The first call has the headers: answered at the next, once any body is read, so the
	 * connection stays open for the next request (MHD closes it after an early answer).
	 */
	if (*con_cls != &req_seen) {
		*con_cls = &req_seen;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics") && strcmp(url, "/"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
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
	fmt = kagg_prom__negotiate(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	err = collect();
	if (!err)
		err = kagg_prom__write(prom, f, fmt);
	pthread_mutex_unlock(&prom_lock);
	fclose(f);
	if (err) {
		free(body);
		body = NULL;
		if (asprintf(&body, "kagg serve: reading the tools failed: %s\n", strerror(-err)) <
		    0)
			return MHD_NO;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, body, strlen(body),
			     "text/plain");
	}
	return reply(conn, MHD_HTTP_OK, body, len, kagg_prom__content_type(fmt));
}

enum {
	OPT_CONNECTIONS = CLI_OPT_TOOL,
	OPT_PER_IP,
	OPT_TIMEOUT,
	OPT_MAX_BUCKET,
	OPT_REQUEST_TIMEOUT,
	OPT_KEY_TTL,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "tool", required_argument, NULL, 't' },
	{ "prog", required_argument, NULL, 'p' },
	{ "config", required_argument, NULL, 'c' },
	{ "max-keys", required_argument, NULL, 'k' },
	{ "key-ttl", required_argument, NULL, OPT_KEY_TTL },
	{ "max-bucket", required_argument, NULL, OPT_MAX_BUCKET },
	{ "connections", required_argument, NULL, OPT_CONNECTIONS },
	{ "connections-per-ip", required_argument, NULL, OPT_PER_IP },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
	CLI_VERBOSE_HELP_LONGOPTS,
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

/*
 * --max-bucket or --key-ttl (name): a bound above 0, or inf; else the usage error
 * "invalid --NAME 'S' (WHAT above 0, or inf)".  0 or CLI_EXIT_USAGE.
 */
static int parse_bound(const char *s, const char *name, const char *what, double *out)
{
	char *end;
	double v;

	if (!strcmp(s, "inf")) {
		*out = INFINITY;
		return 0;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0)
		return cli_err(CLI_EXIT_USAGE, "invalid --%s '%s' (%s above 0, or inf)", name, s,
			       what);
	*out = v;
	return 0;
}

/* --timeout or --request-timeout (name): 1 to 86400 seconds.  0 or CLI_EXIT_USAGE. */
static int parse_timeout(const char *s, const char *name, double *out)
{
	double v;

	if (cli_parse_seconds(s, &v) || v < 1 || v > 86400)
		return cli_err(CLI_EXIT_USAGE, "invalid --%s '%s' (1 to 86400 seconds)", name, s);
	*out = v;
	return 0;
}

static int serve_main(int argc, char **argv)
{
	KAGG_OPTS(kagg_prom_opts, po);
	const char *listen_spec = SERVE_DEFAULT_HOST ":" SERVE_DEFAULT_PORT, *config = NULL;
	uint64_t connections = 64, per_ip = 8, max_keys = 100;
	char bound[NI_MAXHOST + NI_MAXSERV + 4] = "";
	double timeout = 10;
	const char **lines = NULL;
	bool *progs = NULL;
	struct MHD_Daemon *d = NULL;
	int c, i, nr_lines = 0, fd = -1, ret = 0;

	serve_prog = cli_prog;
	request_timeout = 10;
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
			ret = cli_parse_range(optarg, 1, 100000, "--max-keys", true, &max_keys);
			break;
		case OPT_KEY_TTL:
			ret = parse_bound(optarg, "key-ttl", "seconds", &po.key_ttl);
			break;
		case OPT_CONNECTIONS:
			ret = cli_parse_range(optarg, 1, 4096, "--connections", true, &connections);
			break;
		case OPT_MAX_BUCKET:
			ret = parse_bound(optarg, "max-bucket", "a bound", &po.max_bucket);
			break;
		case OPT_PER_IP:
			ret = cli_parse_range(optarg, 1, 4096, "--connections-per-ip", true,
					      &per_ip);
			break;
		case OPT_TIMEOUT:
			ret = parse_timeout(optarg, "timeout", &timeout);
			break;
		case OPT_REQUEST_TIMEOUT:
			ret = parse_timeout(optarg, "request-timeout", &request_timeout);
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
	fd = CLI_PARSE_ONLY ? -1 : listen_on(listen_spec, bound, sizeof(bound));
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
	/* ITC: a stop wakes the polling thread, even when it polls no listening socket */
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY | MHD_USE_ITC, 0, NULL,
		NULL, handle, NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)timeout,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_POOL,
		MHD_OPTION_NOTIFY_CONNECTION, conn_notify, NULL, MHD_OPTION_NOTIFY_COMPLETED,
		request_done, NULL, MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL, MHD_OPTION_END);
	if (!d) {
		ret = cli_err(CLI_EXIT_FAIL, "cannot start the HTTP server on %s", listen_spec);
		goto out;
	}
	fd = -1; /* the daemon's now */
	fprintf(stderr, "%s: serving %d tool%s on %s\n", serve_prog, nr_insts,
		nr_insts == 1 ? "" : "s", bound);
	while (!cli_stop) {
		/* Sessions with user stacks read each new process's mappings here. */
		for (i = 0; i < nr_insts; i++) {
			pthread_mutex_lock(&insts[i].lock);
			kagg_session__poll(insts[i].s, 0);
			pthread_mutex_unlock(&insts[i].lock);
		}
		cut_late();
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
