// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg stat: count perf events for a command, a process or a CPU; print the
 * raw count, time enabled, time running and the scaled estimate of each.
 * A thin CLI over kagg_stat__open() .. kagg_stat__print().
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <kagg/kagg.h>
#include <kagg/stat.h>
#include "cli.h"

/* perf stat's default set; the hardware ones are "not supported" without a PMU. */
#define STAT_DEFAULT_EVENTS                             \
	"task-clock,context-switches,cpu-migrations,\n" \
	"                         page-faults,cycles,instructions,branches,branch-misses"

static const char usage_text[] =
	"usage: kagg stat [-e EVENT[,EVENT...]] [OPTIONS] -- COMMAND [ARGS...]\n"
	"       kagg stat [-e EVENT[,EVENT...]] (-p PID | --cpu N | -a) [-d SEC]\n"
	"\n"
	"Count perf events (no sampling): for COMMAND from its exec (children included),\n"
	"or for a process, a CPU or every CPU (-a) for SEC seconds (or until Ctrl-C).\n"
	"With -a and COMMAND, every task of every CPU while COMMAND runs.  Each event shows\n"
	"its raw count, time enabled, time running and the estimate\n"
	"count * enabled / running: scaled when the kernel multiplexed the counter\n"
	"(running < enabled), \"undefined\" when it never ran.  Events this machine\n"
	"lacks (no hardware PMU) are listed as not supported; the others are counted.\n"
	"The report goes to standard error, as perf stat's does (COMMAND's standard\n"
	"output stays its own), or to FILE with -o.  Under the text report, the metrics\n"
	"perf derives: CPUs utilized (task-clock, cpu-clock), the rate per second of\n"
	"the other events, and insn per cycle when cycles and instructions both counted.\n"
	"Without privileges, where perf_event_paranoid is 2, the user space of COMMAND\n"
	"or PID is counted alone, as perf does: the event is named EVENT:u.\n"
	"\n"
	"  -e, --event LIST       events, comma separated (repeatable):\n"
	"                         cpu-clock task-clock context-switches cpu-migrations\n"
	"                         page-faults minor-faults major-faults (software)\n"
	"                         cycles instructions cache-references cache-misses\n"
	"                         branches branch-misses (hardware), tracepoint:SYS:NAME\n"
	"                         or SYS:NAME as perf takes it (kagg list -t lists them)\n"
	"                         default: " STAT_DEFAULT_EVENTS "\n"
	"  -p, --pid PID          count this process\n"
	"      --cpu N            count on CPU N only (all tasks unless -p)\n"
	"  -a, --all-cpus         count every online CPU, all tasks (perf stat -a), summed\n"
	"  -d, --duration SEC     with -p/--cpu/-a: count SEC seconds (default: until Ctrl-C)\n"
	"  -I, --interval-print MS\n"
	"                         also print the counts of each MS milliseconds (10 at\n"
	"                         least), a time column first (seconds since the start)\n"
	"  -r, --repeat N         run COMMAND N times: mean counts and the standard\n"
	"                         deviation of the mean, as perf stat -r's ( +- X% )\n"
	"  -o, --output FILE      write the report to FILE (created or truncated)\n"
	"  -x, --field-separator SEP\n"
	"                         one line per event, fields separated by SEP, as perf\n"
	"                         stat -x: count, unit, event, running ns, % running,\n"
	"                         metric, metric unit (\"<not supported>\" counts)\n"
	"      --format FMT       text (default), json, or ndjson (one line)\n"
	"  -v, --verbose          print library messages\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: with COMMAND, COMMAND's (128+N when signal N killed it, 127 when\n"
	"it could not be run; 1 when it exited 0 but nothing could be counted);\n"
	"with -p/--cpu/-a, 0 when at least one event was counted, 1 otherwise; 2 usage.\n"
	"With -r, the first non-zero status of the runs.\n"
	"With a COMMAND, SIGINT/SIGTERM sent to kagg is passed on to it (a Ctrl-C\n"
	"reaches it from the terminal); once it exits, what was counted is printed\n"
	"and kagg ends by the same signal (128+N).  A second one kills COMMAND.\n"
	"\n"
	"examples:\n"
	"  kagg stat -- make                    # the default events, report on stderr\n"
	"  kagg stat -e task-clock,context-switches,cycles -- sleep 1\n"
	"  kagg stat -e page-faults,tracepoint:syscalls:sys_enter_openat -- ls\n"
	"  kagg stat -e cpu-clock --cpu 0 -d 2 --format json -o cpu0.json\n"
	"  kagg stat -a -e cpu-clock,context-switches -I 1000 -d 5\n"
	"  kagg stat -r 5 -- ./bench           # mean of 5 runs, ( +- X% )\n";

/* Not every byte is a good separator: one printable character, or a short string. */
#define STAT_SEP_MAX 8

static const struct option long_opts[] = {
	{ "event", required_argument, NULL, 'e' },
	CLI_PID_LONGOPT,
	CLI_CPU_LONGOPT,
	CLI_DURATION_LONGOPT,
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "interval-print", required_argument, NULL, 'I' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "output", required_argument, NULL, 'o' },
	{ "field-separator", required_argument, NULL, 'x' },
	CLI_FORMAT_LONGOPT,
	CLI_VERBOSE_HELP_LONGOPTS,
	{},
};

struct stat_args {
	struct cli_args c; /* first: what cli_parse fills (-d, --format, -v) */
	struct kagg_stat_opts o;
	char *evbuf[64]; /* strdup'd pieces of -e */
	const char *events[64];
	size_t nr;
	bool tracepoints;
	const char *output;	  /* -o FILE; NULL: stderr */
	const char *sep;	  /* -x SEP: perf's CSV lines instead of the table */
	unsigned int interval_ms; /* -I MS; 0: none */
	unsigned int repeat;	  /* -r N; 0: once */
};

/* perf stat -I's floor */
#define STAT_MIN_INTERVAL_MS 10

static int add_events(struct stat_args *a, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (!copy)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->nr == 64) {
			free(copy);
			return cli_err(CLI_EXIT_USAGE, "at most 64 events");
		}
		/* perf's SYS:NAME is a tracepoint, as tracepoint:SYS:NAME is */
		if (strchr(tok, ':') && strncmp(tok, "tracepoint:", 11)) {
			if (asprintf(&a->evbuf[a->nr], "tracepoint:%s", tok) < 0)
				a->evbuf[a->nr] = NULL;
			tok = a->evbuf[a->nr] ? a->evbuf[a->nr] : tok;
		} else {
			a->evbuf[a->nr] = strdup(tok);
		}
		if (!a->evbuf[a->nr]) {
			free(copy);
			return cli_err(CLI_EXIT_FAIL, "out of memory");
		}
		a->events[a->nr] = a->evbuf[a->nr];
		if (!strncmp(tok, "tracepoint:", 11))
			a->tracepoints = true;
		a->nr++;
	}
	free(copy);
	if (!*list || list[strlen(list) - 1] == ',' || list[0] == ',')
		return cli_err(CLI_EXIT_USAGE, "invalid event list '%s'", list);
	return 0;
}

/* The options that are stat's alone (cli_parser.opt); -d, --format and -v are common. */
static int stat_opt(struct cli_args *ca, int c, const char *arg)
{
	struct stat_args *a = (struct stat_args *)ca;

	switch (c) {
	case 'e':
		return add_events(a, arg);
	case 'p':
		return CLI_RANGE(arg, 1, INT32_MAX, "pid", false, &a->o.pid);
	case 'o':
		a->output = arg;
		return 0;
	case 'x':
		if (!*arg || strlen(arg) > STAT_SEP_MAX)
			return cli_err(CLI_EXIT_USAGE,
				       "invalid separator '%s' (1 to %d characters)", arg,
				       STAT_SEP_MAX);
		a->sep = arg;
		return 0;
	case CLI_OPT_CPU:
		return CLI_RANGE(arg, 0, 65535, "cpu", false, &a->o.cpu);
	case 'a':
		a->o.all_cpus = true;
		return 0;
	case 'I':
		if (CLI_RANGE(arg, 0, 86400000, "-I", false, &a->interval_ms))
			return CLI_EXIT_USAGE;
		if (a->interval_ms < STAT_MIN_INTERVAL_MS)
			return cli_err(CLI_EXIT_USAGE,
				       "-I %s: the print interval must be %d ms at least", arg,
				       STAT_MIN_INTERVAL_MS);
		return 0;
	case 'r':
		return CLI_RANGE(arg, 1, 100000, "-r", true, &a->repeat);
	}
	return -ENOENT;
}

/* The checks that span several options, the command (operands) and a->o. */
static int finish_args(struct cli_args *ca, int argc, char **argv)
{
	struct stat_args *a = (struct stat_args *)ca;
	int ret;

	if (!a->nr) {
		char list[] = STAT_DEFAULT_EVENTS, *src, *dst;

		/* the help text's list, without its line break and indent */
		for (src = dst = list; *src; src++)
			if (*src != '\n' && *src != ' ')
				*dst++ = *src;
		*dst = '\0';
		ret = add_events(a, list);
		if (ret)
			return ret;
	}
	a->o.events = a->events;
	a->o.nr_events = a->nr;
	if (a->sep && a->c.cm.print.format != KAGG_FORMAT_TEXT)
		return cli_err(CLI_EXIT_USAGE, "-x is its own format: drop --format");
	if (a->o.all_cpus && (a->o.pid || a->o.cpu >= 0))
		return cli_err(CLI_EXIT_USAGE, "-a counts every CPU: drop -p/--cpu");
	if (optind < argc) {
		if (a->o.pid || a->o.cpu >= 0)
			return cli_err(CLI_EXIT_USAGE, "give a command or -p/--cpu, not both");
		if (a->c.cm.duration)
			return cli_err(CLI_EXIT_USAGE,
				       "-d is for -p/--cpu/-a: a command is counted "
				       "until it exits");
		a->o.argv = argv + optind;
	} else if (!a->o.pid && a->o.cpu < 0 && !a->o.all_cpus) {
		return cli_err(CLI_EXIT_USAGE, "nothing to count: give -- COMMAND, -p PID, "
					       "--cpu N or -a");
	}
	if (a->repeat && !a->o.argv)
		return cli_err(CLI_EXIT_USAGE, "-r runs a command: give -- COMMAND");
	if (a->repeat > 1 && a->interval_ms)
		return cli_err(CLI_EXIT_USAGE, "-I prints the intervals of one run: drop -r");
	return 0;
}

/* '+': stop at the command's name, its options are its own. */
static const struct cli_parser parser =
	CLI_PARSER("+:e:p:d:o:x:aI:r:vh", stat_opt, finish_args, NULL, CLI_OPERANDS);

/* -I: when the next interval ends, and the counts at the end of the last one. */
struct ticker {
	struct kagg_stat *st;
	const struct stat_args *a;
	FILE *out;
	double period, next; /* seconds; next: CLOCK_MONOTONIC */
	double prev_s;	     /* the last interval's end, since the start */
	uint64_t prev[64][3];
	bool printed; /* the text header is out */
	int err;      /* writing failed: -errno */
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_interval(struct ticker *t, const struct kagg_stat_report *rep);

/*
 * The interval that ended: read the counters, print their growth since the last one.
 * The next end is one period later, or, when this one came late by more than a period,
 * the first end still ahead (as perf's timer, no burst of short intervals).
 */
static void tick(struct ticker *t)
{
	const struct kagg_stat_report *cur;
	struct kagg_stat_result res[64];
	const struct kagg_stat_result *ptrs[64];
	struct kagg_stat_report rep;
	double now = mono_now();
	size_t i;

	t->next += t->period;
	if (t->next <= now)
		t->next += t->period * (double)(unsigned long)((now - t->next) / t->period + 1);
	if (kagg_stat__read(t->st))
		return;
	cur = kagg_stat__report(t->st);
	rep = *cur;
	rep.results = ptrs;
	rep.interval_s = cur->duration_s;
	rep.duration_s = cur->duration_s - t->prev_s;
	rep.has_exit = false;
	for (i = 0; i < cur->nr_results && i < 64; i++) {
		const struct kagg_stat_result *r = cur->results[i];

		res[i] = *r;
		res[i].count = r->count - t->prev[i][0];
		res[i].enabled_ns = r->enabled_ns - t->prev[i][1];
		res[i].running_ns = r->running_ns - t->prev[i][2];
		res[i].scale = kagg_stat__scale(res[i].count, res[i].enabled_ns, res[i].running_ns,
						&res[i].estimate);
		t->prev[i][0] = r->count;
		t->prev[i][1] = r->enabled_ns;
		t->prev[i][2] = r->running_ns;
		ptrs[i] = &res[i];
	}
	t->prev_s = cur->duration_s;
	print_interval(t, &rep);
	if (!t->err && fflush(t->out))
		t->err = -errno;
}

/* Seconds to the next interval's end (-I), or -1 without -I. */
static double tick_wait(const struct ticker *t)
{
	double d;

	if (!t)
		return -1;
	d = t->next - mono_now();
	return d > 0 ? d : 0;
}

/*
 * Wait for the command to exit with SIGINT, SIGTERM and SIGCHLD blocked and
 * taken here with sigtimedwait() (no race between a handler and waitpid).
 * The first SIGINT/SIGTERM sent by a process (kill: si_code <= 0) is passed
 * on to the command; one from the terminal (SI_KERNEL) already reached the
 * command, which runs in kagg's process group, and is not sent twice.  A
 * second SIGINT/SIGTERM kills the command (SIGKILL).  With -I, each interval
 * that ends meanwhile is printed.  Returns the first SIGINT/SIGTERM received,
 * 0 when none came.  The command is left to reap.
 */
static int wait_command(pid_t pid, const sigset_t *set, struct ticker *t)
{
	int got = 0, n = 0;
	siginfo_t si;

	for (;;) {
		double w = tick_wait(t);
		struct timespec ts = { (time_t)w, (long)((w - (double)(time_t)w) * 1e9) };
		int sig = w < 0 ? sigwaitinfo(set, &si) : sigtimedwait(set, &si, &ts);

		if (sig < 0 && errno == EAGAIN && t) {
			tick(t);
		} else if (sig == SIGCHLD) {
			siginfo_t ci = {};

			/* SIGCHLD coalesces (a stop, then the exit): ask, without reaping */
			if (!waitid(P_PID, pid, &ci, WEXITED | WNOHANG | WNOWAIT) &&
			    ci.si_pid == pid)
				return got;
		} else if (sig == SIGINT || sig == SIGTERM) {
			if (!got)
				got = sig;
			if (++n > 1)
				kill(pid, SIGKILL);
			else if (si.si_code <= 0 && si.si_pid != pid)
				kill(pid, sig);
		}
	}
}

/* -p/--cpu/-a: count for the duration (0: until Ctrl-C), printing intervals with -I. */
static void wait_duration(double duration, struct ticker *t)
{
	double end = mono_now() + (duration ? duration : 1e9), now;

	while (!cli_stop && (now = mono_now()) < end) {
		if (!t || t->next > end) {
			cli_sleep(end - now);
			break;
		}
		if (t->next > now)
			cli_sleep(t->next - now);
		if (!cli_stop && mono_now() >= t->next)
			tick(t);
	}
}

/*
 * The exit code once the report is out: with a command, the command's status
 * (1 instead of 0 when nothing was counted); else 0 when something was counted.
 */
static int exit_code(const struct kagg_stat_report *rep, bool counted)
{
	if (!counted)
		cli_err(0, "no event could be counted");
	if (rep->has_exit && rep->exit_status > 0)
		return rep->exit_status;
	return counted ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* r's estimate, when it has one. */
static bool stat_value(const struct kagg_stat_result *r, double *v)
{
	if (!r->supported || r->err || r->scale < 0 || r->scale == KAGG_STAT_UNDEFINED)
		return false;
	*v = (double)r->estimate;
	return true;
}

/* task-clock or cpu-clock, with or without ":u" (counted in user space only). */
static bool stat_is_clock(const char *name)
{
	size_t n = strcspn(name, ":");

	return (n == 10 && !strncmp(name, "task-clock", n)) ||
	       (n == 9 && !strncmp(name, "cpu-clock", n));
}

/* The named event's estimate, when counted. */
static bool stat_find(const struct kagg_stat_report *rep, const char *name, double *v)
{
	size_t i;

	for (i = 0; i < rep->nr_results; i++)
		if (!strcmp(rep->results[i]->name, name))
			return stat_value(rep->results[i], v);
	return false;
}

/* r's metric as perf derives it: CPUs utilized for a clock, else a rate; false: none. */
static bool stat_metric(const struct kagg_stat_report *rep, const struct kagg_stat_result *r,
			double *m, const char **unit)
{
	double v;

	if (!stat_value(r, &v) || rep->duration_s <= 0)
		return false;
	if (stat_is_clock(r->name)) {
		*m = v / (rep->duration_s * 1e9);
		*unit = "CPUs utilized";
	} else {
		*m = v / rep->duration_s;
		*unit = "/sec";
	}
	return true;
}

/* A rate with perf's K, M, G prefixes (clocks: CPUs utilized, as they are). */
static int metric_prefix(const struct kagg_stat_result *r, double *m)
{
	int k;

	for (k = 0; !stat_is_clock(r->name) && *m >= 1000 && k < 3; k++)
		*m /= 1000;
	return k;
}

static const char *const metric_pfx[] = { "", "K", "M", "G" };

/* Under the table: "#  task-clock  0.998 CPUs utilized", rates, insn per cycle. */
static void print_derived(const struct kagg_stat_report *rep, FILE *f)
{
	double m, cyc, ins;
	const char *unit;
	size_t i;
	int k;

	for (i = 0; i < rep->nr_results; i++) {
		if (!stat_metric(rep, rep->results[i], &m, &unit))
			continue;
		k = metric_prefix(rep->results[i], &m);
		fprintf(f, "# %20s  %10.3f %s%s\n", rep->results[i]->name, m, metric_pfx[k], unit);
	}
	if (stat_find(rep, "cycles", &cyc) && stat_find(rep, "instructions", &ins) && cyc > 0)
		fprintf(f, "# %20s  %10.2f insn per cycle\n", "instructions", ins / cyc);
}

/*
 * perf stat -x: count,unit,event,running ns,% running,metric,metric unit per event,
 * after the interval's time with -I; with -r, the spread after the event, as perf's.
 */
static void print_sep(const struct kagg_stat_report *rep, const char *sep, FILE *f)
{
	bool runs = KAGG_HAS_FIELD(rep, kagg_stat_report, runs) && rep->runs > 1;
	bool iv = KAGG_HAS_FIELD(rep, kagg_stat_report, interval_s) && rep->interval_s > 0;
	size_t i;

	for (i = 0; i < rep->nr_results; i++) {
		const struct kagg_stat_result *r = rep->results[i];
		double v, m;
		const char *unit = "";

		if (iv)
			fprintf(f, "%.9f%s", rep->interval_s, sep);
		if (!stat_value(r, &v)) {
			fprintf(f, "<%s>%s%s%s%s%s%s0%s0.00%s%s\n",
				r->supported ? "not counted" : "not supported", sep,
				stat_is_clock(r->name) ? "ns" : "", sep, r->name, sep,
				runs ? sep : "", sep, sep, sep);
			continue;
		}
		fprintf(f, "%.0f%s%s%s%s%s", v, sep, stat_is_clock(r->name) ? "ns" : "", sep,
			r->name, sep);
		if (runs)
			fprintf(f, "%.2f%%%s", r->rel_stddev_pct, sep);
		fprintf(f, "%llu%s%.2f%s", (unsigned long long)r->running_ns, sep,
			r->enabled_ns ? 100.0 * r->running_ns / r->enabled_ns : 100.0, sep);
		if (stat_metric(rep, r, &m, &unit))
			fprintf(f, "%.3f%s%s\n", m, sep, unit);
		else
			fprintf(f, "%s\n", sep);
	}
}

/* -I's lines: perf stat -I's, the interval's end (seconds since the start) first. */
static void print_interval(struct ticker *t, const struct kagg_stat_report *rep)
{
	enum kagg_format fmt = t->a->c.cm.print.format;
	size_t i;
	int err;

	if (t->a->sep) {
		print_sep(rep, t->a->sep, t->out);
		return;
	}
	if (fmt != KAGG_FORMAT_TEXT) {
		err = kagg_stat__print(rep, t->out, fmt);
		if (err && !t->err)
			t->err = err;
		return;
	}
	if (!t->printed)
		fprintf(t->out, "#%15s %20s %-20s  %s\n", "time", "counts", "event", "metric");
	t->printed = true;
	for (i = 0; i < rep->nr_results; i++) {
		const struct kagg_stat_result *r = rep->results[i];
		const char *unit;
		double v, m;
		int k;

		if (!stat_value(r, &v)) {
			fprintf(t->out, "%16.9f %20s %s\n", rep->interval_s,
				r->supported ? "<not counted>" : "<not supported>", r->name);
			continue;
		}
		fprintf(t->out, "%16.9f %20.0f %-20s", rep->interval_s, v, r->name);
		if (stat_metric(rep, r, &m, &unit)) {
			k = metric_prefix(r, &m);
			fprintf(t->out, "  # %10.3f %s%s", m, metric_pfx[k], unit);
		}
		fputc('\n', t->out);
	}
	if (ferror(t->out) && !t->err)
		t->err = -EIO;
}

/* The report to -o FILE or stderr, then the exit code. */
static int report(const struct kagg_stat_report *rep, bool counted, FILE *out,
		  const struct stat_args *a)
{
	int err = 0;

	if (a->sep)
		print_sep(rep, a->sep, out);
	else
		err = kagg_stat__print(rep, out, a->c.cm.print.format);
	if (!err && !a->sep && a->c.cm.print.format == KAGG_FORMAT_TEXT)
		print_derived(rep, out);
	if (!err && ferror(out))
		err = -EIO;

	if (!err && fflush(out))
		err = -errno;
	if (err)
		return cli_err(CLI_EXIT_FAIL, "writing the report to %s: %s",
			       a->output ? a->output : "standard error", strerror(-err));
	return exit_code(rep, counted);
}

/* The blocked signals of a command's wait, and the mask before. */
struct sigs {
	sigset_t wait, old;
	bool blocked;
};

/*
 * Once the command is forked (held before exec: it keeps kagg's mask) and before it
 * can exit: its SIGCHLD, and SIGINT/SIGTERM, are taken by wait_command().
 */
static void block_signals(struct sigs *sg)
{
	sigemptyset(&sg->wait);
	sigaddset(&sg->wait, SIGINT);
	sigaddset(&sg->wait, SIGTERM);
	sigaddset(&sg->wait, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sg->wait, &sg->old);
	sg->blocked = true;
}

static void unblock_signals(struct sigs *sg)
{
	if (sg->blocked)
		sigprocmask(SIG_SETMASK, &sg->old, NULL);
	sg->blocked = false;
}

/*
 * One run of the command: start it, wait for its exit (printing intervals with t),
 * stop the counters.  0, or the exit code when it could not be run or waited for.
 * *stop_sig: the first SIGINT/SIGTERM received.
 */
static int run_command(struct kagg_stat *st, struct sigs *sg, struct ticker *t, int *stop_sig,
		       int *stop_err)
{
	int err = kagg_stat__start(st);

	if (err)
		return cli_err(CLI_EXIT_FAIL, "starting the counters failed: %s", strerror(-err));
	if (t)
		t->next = mono_now() + t->period;
	*stop_sig = wait_command(kagg_stat__report(st)->pid, &sg->wait, t);
	err = kagg_stat__wait(st);
	if (err == -ECHILD) /* not run (the log said why): as a shell, 127 */
		return kagg_stat__report(st)->exit_status;
	if (err)
		return cli_err(CLI_EXIT_FAIL, "waiting for the command: %s", strerror(-err));
	*stop_err = kagg_stat__stop(st);
	return 0;
}

/* -r: what the runs counted, event by event, to be averaged. */
struct runs {
	struct kagg_stat_report rep;
	struct kagg_stat_result res[64];
	const struct kagg_stat_result *ptrs[64];
	char *names[64];
	double *est[64]; /* per event: the estimate of each run that counted it */
	unsigned int n[64];
	double sum[64][3], dur;
	bool scaled[64];
};

/* Add the counts of one run (its report) to ru; -ENOMEM. */
static int runs_add(struct runs *ru, const struct kagg_stat_report *rep, unsigned int max)
{
	size_t i;

	if (!ru->rep.sz) {
		ru->rep = *rep;
		ru->rep.results = ru->ptrs;
		ru->rep.has_exit = false;
		ru->rep.exit_status = 0;
		ru->rep.runs = 0;
		for (i = 0; i < rep->nr_results && i < 64; i++) {
			ru->res[i] = *rep->results[i];
			ru->names[i] = strdup(rep->results[i]->name);
			ru->est[i] = calloc(max, sizeof(double));
			if (!ru->names[i] || !ru->est[i])
				return -ENOMEM;
			ru->res[i].name = ru->names[i];
			ru->res[i].supported = false;
			ru->ptrs[i] = &ru->res[i];
		}
	}
	ru->rep.runs++;
	ru->dur += rep->duration_s;
	ru->rep.has_exit |= rep->has_exit;
	if (rep->has_exit && !ru->rep.exit_status)
		ru->rep.exit_status = rep->exit_status;
	for (i = 0; i < ru->rep.nr_results && i < rep->nr_results; i++) {
		const struct kagg_stat_result *r = rep->results[i];
		double v;

		if (!r->supported) {
			ru->res[i].err = r->err;
			continue;
		}
		ru->res[i].supported = true;
		ru->res[i].err = 0;
		if (!stat_value(r, &v))
			continue;
		ru->est[i][ru->n[i]++] = v;
		ru->sum[i][0] += (double)r->count;
		ru->sum[i][1] += (double)r->enabled_ns;
		ru->sum[i][2] += (double)r->running_ns;
		ru->scaled[i] |= r->scale == KAGG_STAT_SCALED;
	}
	return 0;
}

/* The means, and their spread; true when an event was counted in some run. */
static bool runs_finish(struct runs *ru)
{
	bool counted = false;
	size_t i, j;

	ru->rep.duration_s = ru->rep.runs ? ru->dur / ru->rep.runs : 0;
	for (i = 0; i < ru->rep.nr_results; i++) {
		struct kagg_stat_result *r = &ru->res[i];
		double est = 0, n = ru->n[i];

		if (!ru->n[i]) {
			r->scale = KAGG_STAT_UNDEFINED;
			r->running_ns = 0;
			continue;
		}
		counted = true;
		for (j = 0; j < ru->n[i]; j++)
			est += ru->est[i][j];
		r->count = (uint64_t)(ru->sum[i][0] / n + 0.5);
		r->enabled_ns = (uint64_t)(ru->sum[i][1] / n + 0.5);
		r->running_ns = (uint64_t)(ru->sum[i][2] / n + 0.5);
		r->estimate = (uint64_t)(est / n + 0.5);
		r->scale = ru->scaled[i] ? KAGG_STAT_SCALED : KAGG_STAT_EXACT;
		r->rel_stddev_pct = kagg_stat__rel_stddev(ru->est[i], ru->n[i]);
	}
	return counted;
}

static void runs_free(struct runs *ru)
{
	size_t i;

	for (i = 0; i < 64; i++) {
		free(ru->names[i]);
		free(ru->est[i]);
	}
}

/* -r N: the command N times (until a signal ends one), then the means.  The exit code. */
static int repeat_main(struct stat_args *a, FILE *out, int *stop_sig, struct sigs *sg)
{
	struct runs *ru = calloc(1, sizeof(*ru));
	unsigned int i;
	int ret = 0, stop_err;

	if (!ru)
		return cli_err(CLI_EXIT_FAIL, "out of memory");
	for (i = 0; i < a->repeat && !*stop_sig && !cli_stop && !ret; i++) {
		struct kagg_stat *st = kagg_stat__open(&a->o);

		if (!st) {
			ret = cli_open_failed(errno);
			break;
		}
		block_signals(sg);
		if (!i)
			cli_setup_signals();
		stop_err = 0;
		ret = run_command(st, sg, NULL, stop_sig, &stop_err);
		/* the next command is forked with kagg's own mask */
		unblock_signals(sg);
		if (!ret && runs_add(ru, kagg_stat__report(st), a->repeat))
			ret = cli_err(CLI_EXIT_FAIL, "out of memory");
		kagg_stat__destroy(st);
	}
	if (!ret && ru->rep.runs) {
		bool counted = runs_finish(ru);

		ret = report(&ru->rep, counted, out, a);
	}
	runs_free(ru);
	free(ru);
	return ret;
}

static int stat_main(int argc, char **argv)
{
	struct stat_args a = {};
	struct kagg_stat *st = NULL;
	struct ticker tk = {}, *t = NULL;
	struct sigs sg = {};
	int ret, err, stop_sig = 0, stop_err = 0;
	FILE *out = stderr;
	size_t i;

	a.o.sz = sizeof(a.o);
	a.o.cpu = -1;
	a.o.log = cli_log;
	ret = cli_parse(&parser, argc, argv, &a.c);
	if (ret || CLI_PARSE_ONLY) {
		ret = ret < 0 ? CLI_EXIT_OK : ret;
		goto out;
	}
	/* before anything runs: a path that cannot be written loses nothing */
	if (a.output && !(out = fopen(a.output, "we"))) {
		out = stderr;
		ret = cli_err(CLI_EXIT_FAIL, "cannot write %s: %s", a.output, strerror(errno));
		goto out;
	}
	if (a.tracepoints && cli_mount_tracefs())
		cli_err(0, "tracefs is not mounted on /sys/kernel/tracing and mounting it failed: "
			   "tracepoint ids cannot be read");
	if (a.repeat > 1) {
		ret = repeat_main(&a, out, &stop_sig, &sg);
		goto out;
	}
	/* The command is forked here: it gets kagg's signal dispositions, not cli's. */
	st = kagg_stat__open(&a.o);
	if (!st) {
		ret = cli_open_failed(errno);
		goto out;
	}
	if (a.o.argv)
		block_signals(&sg);
	cli_setup_signals();
	if (a.interval_ms) {
		tk = (struct ticker){
			.st = st, .a = &a, .out = out, .period = a.interval_ms / 1e3
		};
		t = &tk;
	}
	if (a.o.argv) {
		ret = run_command(st, &sg, t, &stop_sig, &stop_err);
		if (ret)
			goto out;
	} else {
		err = kagg_stat__start(st);
		if (err) {
			ret = cli_err(CLI_EXIT_FAIL, "starting the counters failed: %s",
				      strerror(-err));
			goto out;
		}
		if (t)
			t->next = mono_now() + t->period;
		wait_duration(a.c.cm.duration, t);
		stop_err = kagg_stat__stop(st);
	}
	if (tk.err) {
		ret = cli_err(CLI_EXIT_FAIL, "writing the intervals to %s: %s",
			      a.output ? a.output : "standard error", strerror(-tk.err));
		goto out;
	}
	ret = report(kagg_stat__report(st), kagg_stat__counted(st) && !stop_err, out, &a);
out:
	kagg_stat__destroy(st);
	for (i = 0; i < a.nr; i++)
		free(a.evbuf[i]);
	if (out != stderr && fclose(out) && !ret)
		ret = cli_err(CLI_EXIT_FAIL, "writing %s: %s", a.output, strerror(errno));
	unblock_signals(&sg);
	if (stop_sig) {
		/* as perf stat: what was counted is out; die of the signal that ended it */
		fflush(NULL);
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	return ret;
}

CLI_COMMAND(stat, "count perf events (raw, enabled, running, scaled estimate)", stat_main);
