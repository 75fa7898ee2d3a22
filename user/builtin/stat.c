// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg stat: counting perf events with read_format TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING, for a command from its exec (fork, hold, enable_on_exec,
 * inherit) or for a pid / CPU between start and stop.
 *
 * What it guarantees: each reading is the kernel's own (count, enabled,
 * running) triple; the estimate is derived from it by kagg_stat__scale(),
 * and the raw triple is always kept next to it.  What it does not: an
 * estimate under multiplexing is only as good as the assumption that the
 * counter's running time was representative of its enabled time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kagg/stat.h>
#include "util/cpus.h"
#include "util/json.h"
#include "util/opts.h"
#include "util/text.h"

/* sz of the report and result structs of the first release (0.1) */
#define REPORT_MIN_SZ offsetofend(struct kagg_stat_report, results)
#define RESULT_MIN_SZ offsetofend(struct kagg_stat_result, estimate)

struct kagg_stat {
	kagg_log_fn log;
	void *log_ctx;
	int *fds; /* nfd per event (one per CPU with all_cpus); -1 for unsupported events */
	int nfd;
	int *cpus; /* all_cpus: the nfd online CPUs */
	bool all;
	struct kagg_stat_result *res;
	const struct kagg_stat_result **res_ptrs; /* rep.results */
	size_t nr;
	char **names;
	pid_t child; /* command, or 0 */
	int go_fd;   /* write end: releases the held child */
	int err_fd;  /* read end: errno of a failed exec (CLOEXEC pipe) */
	bool started, stopped, waited;
	struct timespec t0;
	char target[256];
	struct utsname uts;
	struct kagg_stat_report rep;
};

static void st_log(struct kagg_stat *st, enum kagg_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void st_log(struct kagg_stat *st, enum kagg_log_level lvl, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!st->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	st->log(st->log_ctx, lvl, buf);
}

/* ------------------------------------------------------------ pure parts */

int kagg_stat__scale(uint64_t count, uint64_t enabled, uint64_t running, uint64_t *estimate)
{
	unsigned __int128 q;

	if (!running)
		return KAGG_STAT_UNDEFINED;
	if (running >= enabled) {
		*estimate = count;
		return KAGG_STAT_EXACT;
	}
	q = ((unsigned __int128)count * enabled + running / 2) / running;
	if (q > UINT64_MAX) {
		*estimate = UINT64_MAX;
		return -ERANGE;
	}
	*estimate = (uint64_t)q;
	return KAGG_STAT_SCALED;
}

/* The square root of x >= 0 by Newton's method (libkagg does not link libm). */
static double root(double x)
{
	double r = x > 1 ? x : 1, prev;
	int i;

	if (!(x > 0))
		return 0;
	for (i = 0; i < 2000; i++) {
		prev = r;
		r = (r + x / r) / 2;
		if (r >= prev)
			break;
	}
	return r;
}

double kagg_stat__rel_stddev(const double *v, size_t n)
{
	double mean = 0, m2 = 0;
	size_t i;

	if (!v || n < 2)
		return 0;
	for (i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	if (mean == 0)
		return 0;
	for (i = 0; i < n; i++)
		m2 += (v[i] - mean) * (v[i] - mean);
	/* the sample variance over n: the variance of the mean */
	return 100.0 * root(m2 / (double)(n - 1) / (double)n) / (mean < 0 ? -mean : mean);
}

struct ev_name {
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct ev_name ev_names[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
};

int kagg_stat__parse_event(const char *name, const char *tracefs, uint32_t *type, uint64_t *config,
			   bool *hardware)
{
	char sys[128], ev[128], path[512];
	const char *p, *colon;
	unsigned long long id;
	size_t i;
	FILE *f;
	int n;

	if (!name || !type || !config || !hardware)
		return -EINVAL;
	for (i = 0; i < sizeof(ev_names) / sizeof(ev_names[0]); i++) {
		if (!strcmp(name, ev_names[i].name)) {
			*type = ev_names[i].type;
			*config = ev_names[i].config;
			*hardware = ev_names[i].type == PERF_TYPE_HARDWARE;
			return 0;
		}
	}
	if (strncmp(name, "tracepoint:", 11))
		return -EINVAL;
	p = name + 11;
	colon = strchr(p, ':');
	if (!colon || colon == p || !colon[1] || (size_t)(colon - p) >= sizeof(sys) ||
	    strlen(colon + 1) >= sizeof(ev) || strchr(colon + 1, ':') || strchr(p, '/') ||
	    strstr(p, ".."))
		return -EINVAL;
	memcpy(sys, p, colon - p);
	sys[colon - p] = '\0';
	snprintf(ev, sizeof(ev), "%s", colon + 1);
	snprintf(path, sizeof(path), "%s/events/%s/%s/id",
		 tracefs ? tracefs : "/sys/kernel/tracing", sys, ev);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	n = fscanf(f, "%llu", &id);
	fclose(f);
	if (n != 1)
		return -EIO;
	*type = PERF_TYPE_TRACEPOINT;
	*config = id;
	*hardware = false;
	return 0;
}

/* ------------------------------------------------------------ printing */

static const char *err_name(int err)
{
	const char *n = strerrorname_np(-err);

	return n ? n : "E?";
}

static const char *unsupported_why(const struct kagg_stat_result *r)
{
	return r->err == -ENOENT || r->err == -EOPNOTSUPP || r->err == -ENODEV
		       ? "this machine lacks the event (no hardware PMU?)"
		       : "cannot be opened";
}

/* The fields appended after 0.2, 0 when rep (or r) predates them. */
static unsigned int rep_runs(const struct kagg_stat_report *rep)
{
	return rep->sz >= offsetofend(struct kagg_stat_report, runs) ? rep->runs : 0;
}

static double rep_interval(const struct kagg_stat_report *rep)
{
	return rep->sz >= offsetofend(struct kagg_stat_report, interval_s) ? rep->interval_s : 0;
}

static double res_stddev(const struct kagg_stat_result *r)
{
	return r->sz >= offsetofend(struct kagg_stat_result, rel_stddev_pct) ? r->rel_stddev_pct
									     : 0;
}

static void print_text(const struct kagg_stat_report *rep, FILE *f)
{
	bool runs = rep_runs(rep) > 1;
	struct text_esc e = {};
	size_t i;

	fprintf(f, "# kagg stat: %s", text_esc(&e, rep->target, SIZE_MAX));
	if (runs)
		fprintf(f, ", mean of %u runs", rep->runs);
	if (rep_interval(rep) > 0)
		fprintf(f, ", interval ending at %.3f s", rep->interval_s);
	if (rep->has_exit)
		fprintf(f, ", exit status %d", rep->exit_status);
	fprintf(f, ", %.3f s, kernel %s\n", rep->duration_s,
		rep->kernel ? text_esc(&e, rep->kernel, SIZE_MAX) : "?");
	fprintf(f, "# estimate = count * enabled / running (undefined when running is 0)\n");
	for (i = 0; i < rep->nr_results; i++) {
		const struct kagg_stat_result *r = rep->results[i];

		const char *name = text_esc(&e, r->name, SIZE_MAX);

		if (!r->supported) {
			fprintf(f, "%20s  not supported: perf_event_open: %s (%s): %s\n", name,
				err_name(r->err), strerror(-r->err), unsupported_why(r));
			continue;
		}
		fprintf(f, "%20s  %20" PRIu64 "  enabled %" PRIu64 " ns  running %" PRIu64 " ns",
			name, r->count, r->enabled_ns, r->running_ns);
		switch (r->scale) {
		case KAGG_STAT_EXACT:
			fprintf(f, "  estimate %" PRIu64, r->estimate);
			if (runs)
				fprintf(f, "  ( +- %.2f%% )", res_stddev(r));
			fputc('\n', f);
			break;
		case KAGG_STAT_SCALED:
			fprintf(f,
				"  estimate %" PRIu64 "  (multiplexed: ran %.2f%% of enabled "
				"time, scaled)",
				r->estimate, 100.0 * r->running_ns / r->enabled_ns);
			if (runs)
				fprintf(f, "  ( +- %.2f%% )", res_stddev(r));
			fputc('\n', f);
			break;
		case KAGG_STAT_UNDEFINED:
			fprintf(f, "  estimate undefined  (never ran: running time is 0%s)\n",
				r->enabled_ns ? ", multiplexed out" : "");
			break;
		default:
			fprintf(f,
				"  estimate > %" PRIu64 " (out of range)  (multiplexed: ran "
				"%.2f%% of enabled time)\n",
				r->estimate, 100.0 * r->running_ns / r->enabled_ns);
		}
	}
	text_esc_free(&e);
}

static void print_json(const struct kagg_stat_report *rep, FILE *f, bool pretty)
{
	static const char *const scale[] = { "exact", "scaled", "undefined" };
	struct jw w;
	size_t i;

	jw_init(&w, f, pretty);
	jw_obj_begin(&w, NULL);
	jw_obj_begin(&w, "meta");
	jw_str(&w, "tool", "stat");
	jw_str(&w, "target", rep->target);
	jw_i64(&w, "pid", rep->pid);
	jw_i64(&w, "cpu", rep->cpu);
	if (rep->has_exit)
		jw_i64(&w, "exit_status", rep->exit_status);
	if (rep_runs(rep) > 1)
		jw_u64(&w, "runs", rep->runs);
	if (rep_interval(rep) > 0)
		jw_double(&w, "interval_s", rep->interval_s, 6);
	jw_double(&w, "duration_s", rep->duration_s, 6);
	jw_str(&w, "kernel", rep->kernel);
	jw_str(&w, "estimate", "count * time_enabled / time_running; null when running is 0");
	jw_obj_end(&w);
	jw_arr_begin(&w, "events");
	for (i = 0; i < rep->nr_results; i++) {
		const struct kagg_stat_result *r = rep->results[i];

		jw_obj_begin(&w, NULL);
		jw_str(&w, "name", r->name);
		jw_bool(&w, "supported", r->supported);
		if (!r->supported) {
			jw_str(&w, "error", err_name(r->err));
			jw_str(&w, "reason", unsupported_why(r));
			jw_obj_end(&w);
			continue;
		}
		jw_u64(&w, "count", r->count);
		jw_u64(&w, "time_enabled_ns", r->enabled_ns);
		jw_u64(&w, "time_running_ns", r->running_ns);
		jw_bool(&w, "multiplexed", r->running_ns < r->enabled_ns);
		if (r->scale == KAGG_STAT_UNDEFINED)
			jw_str(&w, "estimate", NULL);
		else
			jw_u64(&w, "estimate", r->estimate);
		jw_str(&w, "scale", r->scale >= 0 && r->scale <= 2 ? scale[r->scale] : "overflow");
		if (rep_runs(rep) > 1)
			jw_double(&w, "rel_stddev_pct", res_stddev(r), 2);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_finish(&w);
}

/* A report (and its results) built by a caller: sized and known to this library. */
static bool report_valid(const struct kagg_stat_report *rep)
{
	size_t i;

	if (!sz_in_valid(rep, REPORT_MIN_SZ, sizeof(*rep)) || (rep->nr_results && !rep->results))
		return false;
	for (i = 0; i < rep->nr_results; i++)
		if (!sz_in_valid(rep->results[i], RESULT_MIN_SZ, sizeof(*rep->results[i])))
			return false;
	return true;
}

int kagg_stat__print(const struct kagg_stat_report *rep, FILE *f, enum kagg_format fmt)
{
	if (!report_valid(rep) || !f || (unsigned int)fmt > KAGG_FORMAT_NDJSON)
		return -EINVAL;
	if (fmt != KAGG_FORMAT_TEXT)
		print_json(rep, f, fmt == KAGG_FORMAT_JSON);
	else
		print_text(rep, f);
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------ counting */

static long perf_open(struct perf_event_attr *a, int pid, int cpu)
{
	return syscall(__NR_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Fork the command, held on a pipe until kagg_stat__start(). 0 or -errno. */
static int fork_command(struct kagg_stat *st, char *const *argv)
{
	int go[2], ex[2], e;
	char b;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	st->child = fork();
	if (st->child < 0) {
		e = -errno;
		st->child = 0;
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return e;
	}
	if (st->child == 0) {
		close(go[1]);
		close(ex[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	st->go_fd = go[1];
	st->err_fd = ex[0];
	return 0;
}

static void describe_target(struct kagg_stat *st, const struct kagg_stat_opts *o)
{
	char *p = st->target, *end = st->target + sizeof(st->target);
	size_t i;

#define ADD(...) (p += snprintf(p, p < end ? (size_t)(end - p) : 0, __VA_ARGS__))
	if (o->argv) {
		ADD("command '");
		for (i = 0; o->argv[i]; i++)
			ADD("%s%s", i ? " " : "", o->argv[i]);
		ADD("' (pid %d)", (int)st->child);
	} else if (o->pid > 0) {
		ADD("pid %d", o->pid);
	}
	if (o->cpu >= 0)
		ADD("%scpu %d", p == st->target ? "" : " on ", o->cpu);
	if (st->all)
		ADD("%sall CPUs (%d)", p == st->target ? "" : ", ", st->nfd);
#undef ADD
}

/* Online CPUs into st->cpus and st->nfd.  0 or -errno. */
static int online_cpus(struct kagg_stat *st)
{
	int n = util_online_cpus(65536, &st->cpus);

	if (n < 0)
		return n;
	st->nfd = n;
	return 0;
}

/* Events, and one of a command, a pid or a cpu.  0 or -EINVAL (logged). */
static int check_opts(struct kagg_stat *st, const struct kagg_stat_opts *o)
{
	if (o->all_cpus && (o->pid > 0 || o->cpu >= 0)) {
		st_log(st, KAGG_LOG_WARN,
		       "invalid stat options: all_cpus is not for a pid or a cpu");
		return -EINVAL;
	}
	if (!o->nr_events || !o->events || (o->argv && (!o->argv[0] || o->pid > 0)) ||
	    (!o->argv && o->pid <= 0 && o->cpu < 0 && !o->all_cpus) || o->nr_events > 64) {
		st_log(st, KAGG_LOG_WARN,
		       "invalid stat options: give events and one of a "
		       "command, a pid or a cpu");
		return -EINVAL;
	}
	return 0;
}

/* Room for nr counters, none open yet.  0 or -ENOMEM. */
static int alloc_counters(struct kagg_stat *st, size_t nr)
{
	size_t i;

	st->nr = nr;
	st->fds = malloc(nr * (size_t)st->nfd * sizeof(*st->fds));
	st->res = calloc(nr, sizeof(*st->res));
	st->res_ptrs = calloc(nr, sizeof(*st->res_ptrs));
	st->names = calloc(nr, sizeof(*st->names));
	for (i = 0; st->fds && i < nr * (size_t)st->nfd; i++)
		st->fds[i] = -1; /* before a failure: kagg_stat__destroy() closes the others */
	return st->fds && st->res && st->res_ptrs && st->names ? 0 : -ENOMEM;
}

/* Event i's name into st and its perf_event_attr into *a.  0 or -errno (logged). */
static int resolve_event(struct kagg_stat *st, const struct kagg_stat_opts *o, size_t i,
			 struct perf_event_attr *a)
{
	const char *name = o->events[i];
	uint32_t type;
	uint64_t config;
	bool hw;
	int err;

	err = kagg_stat__parse_event(name, o->tracefs, &type, &config, &hw);
	if (err == -EINVAL) {
		st_log(st, KAGG_LOG_WARN,
		       "unknown event '%s' (cpu-clock, task-clock, "
		       "context-switches, cpu-migrations, page-faults, minor-faults, "
		       "major-faults, cycles, instructions, cache-references, "
		       "cache-misses, branches, branch-misses, tracepoint:SYS:NAME)",
		       name ? name : "(null)");
		return err;
	}
	if (err == -ENOENT) {
		st_log(st, KAGG_LOG_WARN,
		       "no tracepoint %s in %s/events (is tracefs "
		       "mounted? mount -t tracefs nodev /sys/kernel/tracing)",
		       name + 11, o->tracefs ? o->tracefs : "/sys/kernel/tracing");
		return err;
	}
	if (err) {
		st_log(st, KAGG_LOG_WARN, "reading the id of %s: %s", name, strerror(-err));
		return err;
	}
	st->names[i] = strdup(name);
	if (!st->names[i])
		return -ENOMEM;
	st->res[i].sz = sizeof(st->res[i]);
	st->res[i].name = st->names[i];
	st->res_ptrs[i] = &st->res[i];
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->disabled = 1;
	/* a command's counting starts at exec and covers its children; a CPU's, at start */
	a->enable_on_exec = o->argv != NULL && !o->all_cpus;
	a->inherit = o->argv != NULL && !o->all_cpus;
	return 0;
}

/* Every name first: a typo fails before anything runs.  0 or -errno (logged). */
static int resolve_events(struct kagg_stat *st, const struct kagg_stat_opts *o,
			  struct perf_event_attr *attrs)
{
	size_t i;
	int err;

	for (i = 0; i < st->nr; i++) {
		err = resolve_event(st, o, i, &attrs[i]);
		if (err)
			return err;
	}
	return 0;
}

/* The pid exists, or the command is forked and held.  0 or -errno (logged). */
static int prepare_target(struct kagg_stat *st, const struct kagg_stat_opts *o)
{
	int err;

	if (o->pid > 0 && kill(o->pid, 0) && errno == ESRCH) {
		st_log(st, KAGG_LOG_WARN, "no such process: %d", o->pid);
		return -ESRCH;
	}
	if (o->argv) {
		err = fork_command(st, o->argv);
		if (err) {
			st_log(st, KAGG_LOG_WARN, "cannot fork: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The command's pid, the -p pid, or -1 (every task of a CPU). */
static int target_pid(const struct kagg_stat *st, const struct kagg_stat_opts *o)
{
	return o->all_cpus ? -1 : o->argv ? st->child : o->pid > 0 ? o->pid : -1;
}

/*
 * Open counter i.  An event this machine lacks stays as an unsupported
 * result (0); any other failure is -errno (logged).
 */
static int open_counter(struct kagg_stat *st, size_t i, struct perf_event_attr *a, int pid, int cpu,
			int *slot)
{
	int fd = perf_open(a, pid, cpu), err;
	char *uname;

	/*
	 * As perf does: where perf_event_paranoid (2: user space only) refuses an unprivileged
	 * user the kernel side of a task's events, count its user space alone, named "EVENT:u".
	 */
	if (fd < 0 && (errno == EACCES || errno == EPERM) && pid > 0 && !a->exclude_kernel) {
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		fd = perf_open(a, pid, cpu);
		if (fd >= 0 && asprintf(&uname, "%s:u", st->names[i]) > 0) {
			free(st->names[i]);
			st->names[i] = uname;
			st->res[i].name = uname;
		} else if (fd < 0) {
			a->exclude_kernel = 0;
			a->exclude_hv = 0;
			errno = errno == ENOENT || errno == EOPNOTSUPP ? errno : EACCES;
		}
	}
	if (fd >= 0) {
		*slot = fd;
		st->res[i].supported = true;
		return 0;
	}
	err = -errno;
	if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) {
		st->res[i].err = err;
		st_log(st, KAGG_LOG_INFO, "%s not supported here: %s", st->names[i],
		       strerror(-err));
		return 0;
	}
	if (err == -EPERM || err == -EACCES)
		st_log(st, KAGG_LOG_WARN,
		       "perf_event_open(%s): %s: run as root or with "
		       "CAP_PERFMON, or lower /proc/sys/kernel/perf_event_paranoid",
		       st->names[i], strerror(-err));
	else if (err == -ESRCH)
		st_log(st, KAGG_LOG_WARN, "no such process: %d", pid);
	else
		st_log(st, KAGG_LOG_WARN, "perf_event_open(%s): %s", st->names[i], strerror(-err));
	return err;
}

/* Every counter; -ENODEV (logged, naming each error) when none could be opened. */
static int open_counters(struct kagg_stat *st, const struct kagg_stat_opts *o,
			 struct perf_event_attr *attrs)
{
	int pid = target_pid(st, o), err;
	char list[256] = "";
	size_t i, len = 0;

	for (i = 0; i < st->nr; i++) {
		int c, cpu = o->cpu >= 0 ? o->cpu : -1, *slot = &st->fds[i * (size_t)st->nfd];

		/* all_cpus: one counter per CPU, the event unsupported when the first says so */
		for (c = 0; c < st->nfd && (!c || st->res[i].supported); c++) {
			err = open_counter(st, i, &attrs[i], pid, st->all ? st->cpus[c] : cpu,
					   &slot[c]);
			if (err)
				return err;
		}
	}
	for (i = 0; i < st->nr; i++)
		if (st->res[i].supported)
			return 0;
	for (i = 0; i < st->nr && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s: %s", i ? ", " : "",
				st->names[i], err_name(st->res[i].err));
	st_log(st, KAGG_LOG_WARN, "none of the events is supported on this machine (%s)", list);
	return -ENODEV;
}

static void fill_report(struct kagg_stat *st, const struct kagg_stat_opts *o)
{
	describe_target(st, o);
	st->rep.target = st->target;
	st->rep.pid = st->child ? st->child : target_pid(st, o); /* -a: the command's too */
	st->rep.cpu = o->cpu >= 0 ? o->cpu : -1;
	st->rep.runs = 1;
	st->rep.kernel = st->uts.release;
	st->rep.sz = sizeof(st->rep);
	st->rep.results = st->res_ptrs;
	st->rep.nr_results = st->nr;
}

struct kagg_stat *kagg_stat__open(const struct kagg_stat_opts *opts)
{
	struct kagg_stat_opts o = {};
	struct perf_event_attr *attrs = NULL;
	struct kagg_stat *st;
	int err;

	if (!opts_copy(&o, OPTS_END(kagg_stat_opts), opts)) {
		errno = EINVAL;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL; /* errno ENOMEM, from calloc */
	st->log = o.log;
	st->log_ctx = o.log_ctx;
	st->go_fd = st->err_fd = -1;
	st->nfd = 1;
	st->all = o.all_cpus;
	uname(&st->uts);
	err = check_opts(st, &o);
	if (!err && st->all && (err = online_cpus(st)))
		st_log(st, KAGG_LOG_WARN, "reading the online CPUs: %s", strerror(-err));
	err = err ?: alloc_counters(st, o.nr_events);
	if (!err && !(attrs = calloc(st->nr, sizeof(*attrs))))
		err = -ENOMEM;
	err = err ?: resolve_events(st, &o, attrs);
	err = err ?: prepare_target(st, &o);
	err = err ?: open_counters(st, &o, attrs);
	free(attrs);
	if (err) {
		kagg_stat__destroy(st);
		errno = -err;
		return NULL;
	}
	fill_report(st, &o);
	return st;
}

int kagg_stat__start(struct kagg_stat *st)
{
	char b = 'g';
	size_t i;

	if (!st || st->started)
		return -EINVAL;
	st->started = true;
	/* all_cpus with a command: the CPUs' counters run from here to its exit */
	for (i = 0; st->all && i < st->nr * (size_t)st->nfd; i++)
		if (st->fds[i] >= 0 && ioctl(st->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	clock_gettime(CLOCK_MONOTONIC, &st->t0);
	if (st->child) {
		/* The counters enable themselves at exec. */
		if (write(st->go_fd, &b, 1) != 1)
			return -errno;
		close(st->go_fd);
		st->go_fd = -1;
		return 0;
	}
	for (i = 0; !st->all && i < st->nr; i++)
		if (st->fds[i] >= 0 && ioctl(st->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	return 0;
}

int kagg_stat__wait(struct kagg_stat *st)
{
	int status, e;
	ssize_t n;

	if (!st || !st->started)
		return -EINVAL;
	if (!st->child || st->waited)
		return 0;
	if (waitpid(st->child, &status, 0) != st->child)
		return -errno;
	st->waited = true;
	st->rep.has_exit = true;
	st->rep.exit_status = WIFEXITED(status)	    ? WEXITSTATUS(status)
			      : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
						    : -1;
	n = read(st->err_fd, &e, sizeof(e));
	if (n == sizeof(e)) {
		st_log(st, KAGG_LOG_WARN, "cannot run the command: %s", strerror(e));
		return -ECHILD;
	}
	return 0;
}

/* Every counter into the results, summed over its CPUs.  0 or the last -errno (logged). */
static int read_counters(struct kagg_stat *st)
{
	uint64_t v[3], sum[3];
	size_t i;
	int c, err = 0;

	for (i = 0; i < st->nr; i++) {
		struct kagg_stat_result *r = &st->res[i];
		const int *fds = &st->fds[i * (size_t)st->nfd];
		bool ok = true;

		if (fds[0] < 0)
			continue;
		sum[0] = sum[1] = sum[2] = 0;
		for (c = 0; c < st->nfd && fds[c] >= 0; c++) {
			if (read(fds[c], v, sizeof(v)) != sizeof(v)) {
				err = errno ? -errno : -EIO;
				st_log(st, KAGG_LOG_WARN, "reading %s: %s", r->name,
				       strerror(-err));
				ok = false;
				break;
			}
			sum[0] += v[0];
			sum[1] += v[1];
			sum[2] += v[2];
		}
		if (!ok)
			continue;
		r->count = sum[0];
		r->enabled_ns = sum[1];
		r->running_ns = sum[2];
		r->scale = kagg_stat__scale(sum[0], sum[1], sum[2], &r->estimate);
	}
	return err;
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

int kagg_stat__read(struct kagg_stat *st)
{
	if (!st || !st->started || st->stopped)
		return -EINVAL;
	st->rep.duration_s = since(&st->t0);
	return read_counters(st);
}

int kagg_stat__stop(struct kagg_stat *st)
{
	size_t i;

	if (!st || !st->started)
		return -EINVAL;
	for (i = 0; i < st->nr * (size_t)st->nfd; i++)
		if (st->fds[i] >= 0)
			ioctl(st->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (!st->stopped)
		st->rep.duration_s = since(&st->t0);
	st->stopped = true;
	return read_counters(st);
}

const struct kagg_stat_report *kagg_stat__report(const struct kagg_stat *st)
{
	if (!st) {
		errno = EINVAL;
		return NULL;
	}
	return &st->rep;
}

size_t kagg_stat__counted(const struct kagg_stat *st)
{
	size_t i, n = 0;

	for (i = 0; st && st->stopped && i < st->nr; i++)
		n += st->res[i].supported;
	return n;
}

void kagg_stat__destroy(struct kagg_stat *st)
{
	size_t i;

	if (!st)
		return;
	if (st->child && !st->waited) {
		kill(st->child, SIGKILL);
		waitpid(st->child, NULL, 0);
	}
	if (st->go_fd >= 0)
		close(st->go_fd);
	if (st->err_fd >= 0)
		close(st->err_fd);
	for (i = 0; st->fds && i < st->nr * (size_t)st->nfd; i++)
		if (st->fds[i] >= 0)
			close(st->fds[i]);
	free(st->cpus);
	for (i = 0; st->names && i < st->nr; i++)
		free(st->names[i]);
	free(st->names);
	free(st->fds);
	free(st->res);
	free(st->res_ptrs);
	free(st);
}
