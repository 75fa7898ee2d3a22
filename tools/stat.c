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

#include <kagg/kagg.h>
#include <kagg/stat.h>
#include "cli.h"

/* perf stat's default set; the hardware ones are "not supported" without a PMU. */
#define STAT_DEFAULT_EVENTS                             \
	"task-clock,context-switches,cpu-migrations,\n" \
	"                         page-faults,cycles,instructions,branches,branch-misses"

static const char usage_text[] =
	"usage: kagg stat [-e EVENT[,EVENT...]] [OPTIONS] -- COMMAND [ARGS...]\n"
	"       kagg stat [-e EVENT[,EVENT...]] (-p PID | --cpu N) [-d SEC]\n"
	"\n"
	"Count perf events (no sampling): for COMMAND from its exec (children included),\n"
	"or for a process or a CPU for SEC seconds (or until Ctrl-C).  Each event shows\n"
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
	"  -d, --duration SEC     with -p/--cpu: count SEC seconds (default: until Ctrl-C)\n"
	"  -o, --output FILE      write the report to FILE (created or truncated)\n"
	"  -x, --field-separator SEP\n"
	"                         one line per event, fields separated by SEP, as perf\n"
	"                         stat -x: count, unit, event, running ns, %% running,\n"
	"                         metric, metric unit (\"<not supported>\" counts)\n"
	"      --format FMT       text (default), json, or ndjson (one line)\n"
	"  -v, --verbose          print library messages\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: with COMMAND, COMMAND's (128+N when signal N killed it, 127 when\n"
	"it could not be run; 1 when it exited 0 but nothing could be counted);\n"
	"with -p/--cpu, 0 when at least one event was counted, 1 otherwise; 2 usage.\n"
	"With a COMMAND, SIGINT/SIGTERM sent to kagg is passed on to it (a Ctrl-C\n"
	"reaches it from the terminal); once it exits, what was counted is printed\n"
	"and kagg ends by the same signal (128+N).  A second one kills COMMAND.\n"
	"\n"
	"examples:\n"
	"  kagg stat -- make                    # the default events, report on stderr\n"
	"  kagg stat -e task-clock,context-switches,cycles -- sleep 1\n"
	"  kagg stat -e page-faults,tracepoint:syscalls:sys_enter_openat -- ls\n"
	"  kagg stat -e cpu-clock --cpu 0 -d 2 --format json -o cpu0.json\n";

enum {
	OPT_CPU = CLI_OPT_TOOL,
};

/* Not every byte is a good separator: one printable character, or a short string. */
#define STAT_SEP_MAX 8

static const struct option long_opts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "pid", required_argument, NULL, 'p' },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "field-separator", required_argument, NULL, 'x' },
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

struct stat_args {
	struct cli_args c; /* first: what cli_parse fills (-d, --format, -v) */
	struct kagg_stat_opts o;
	char *evbuf[64]; /* strdup'd pieces of -e */
	const char *events[64];
	size_t nr;
	bool tracepoints;
	const char *output; /* -o FILE; NULL: stderr */
	const char *sep;    /* -x SEP: perf's CSV lines instead of the table */
};

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
	case OPT_CPU:
		return CLI_RANGE(arg, 0, 65535, "cpu", false, &a->o.cpu);
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
	if (optind < argc) {
		if (a->o.pid || a->o.cpu >= 0)
			return cli_err(CLI_EXIT_USAGE, "give a command or -p/--cpu, not both");
		if (a->c.cm.duration)
			return cli_err(CLI_EXIT_USAGE, "-d is for -p/--cpu: a command is counted "
						       "until it exits");
		a->o.argv = argv + optind;
	} else if (!a->o.pid && a->o.cpu < 0) {
		return cli_err(CLI_EXIT_USAGE, "nothing to count: give -- COMMAND, -p PID or "
					       "--cpu N");
	}
	return 0;
}

/* '+': stop at the command's name, its options are its own. */
static const struct cli_parser parser =
	CLI_PARSER("+:e:p:d:o:x:vh", stat_opt, finish_args, NULL, CLI_OPERANDS);

/*
 * Wait for the command to exit with SIGINT, SIGTERM and SIGCHLD blocked and
 * taken here with sigwaitinfo() (no race between a handler and waitpid).
 * The first SIGINT/SIGTERM sent by a process (kill: si_code <= 0) is passed
 * on to the command; one from the terminal (SI_KERNEL) already reached the
 * command, which runs in kagg's process group, and is not sent twice.  A
 * second SIGINT/SIGTERM kills the command (SIGKILL).  Returns the first
 * SIGINT/SIGTERM received, 0 when none came.  The command is left to reap.
 */
static int wait_command(pid_t pid, const sigset_t *set)
{
	int got = 0, n = 0;
	siginfo_t si;

	for (;;) {
		int sig = sigwaitinfo(set, &si);

		if (sig == SIGCHLD) {
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

/*
 * The exit code once the report is out: with a command, the command's status
 * (1 instead of 0 when nothing was counted); else 0 when something was counted.
 */
static int exit_code(struct kagg_stat *st, int stop_err)
{
	const struct kagg_stat_report *rep = kagg_stat__report(st);
	bool counted = kagg_stat__counted(st) && !stop_err;

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

/* Under the table: "#  task-clock  0.998 CPUs utilized", rates, insn per cycle. */
static void print_derived(const struct kagg_stat_report *rep, FILE *f)
{
	static const char *const pfx[] = { "", "K", "M", "G" };
	double m, cyc, ins;
	const char *unit;
	size_t i;
	int k;

	for (i = 0; i < rep->nr_results; i++) {
		if (!stat_metric(rep, rep->results[i], &m, &unit))
			continue;
		for (k = 0; !stat_is_clock(rep->results[i]->name) && m >= 1000 && k < 3; k++)
			m /= 1000;
		fprintf(f, "# %20s  %10.3f %s%s\n", rep->results[i]->name, m, pfx[k], unit);
	}
	if (stat_find(rep, "cycles", &cyc) && stat_find(rep, "instructions", &ins) && cyc > 0)
		fprintf(f, "# %20s  %10.2f insn per cycle\n", "instructions", ins / cyc);
}

/* perf stat -x: count,unit,event,running ns,% running,metric,metric unit per event. */
static void print_sep(const struct kagg_stat_report *rep, const char *sep, FILE *f)
{
	size_t i;

	for (i = 0; i < rep->nr_results; i++) {
		const struct kagg_stat_result *r = rep->results[i];
		double v, m;
		const char *unit = "";

		if (!stat_value(r, &v)) {
			fprintf(f, "<%s>%s%s%s%s%s0%s0.00%s%s\n",
				r->supported ? "not counted" : "not supported", sep,
				stat_is_clock(r->name) ? "ns" : "", sep, r->name, sep, sep, sep,
				sep);
			continue;
		}
		fprintf(f, "%.0f%s%s%s%s%s%llu%s%.2f%s", v, sep, stat_is_clock(r->name) ? "ns" : "",
			sep, r->name, sep, (unsigned long long)r->running_ns, sep,
			r->enabled_ns ? 100.0 * r->running_ns / r->enabled_ns : 100.0, sep);
		if (stat_metric(rep, r, &m, &unit))
			fprintf(f, "%.3f%s%s\n", m, sep, unit);
		else
			fprintf(f, "%s\n", sep);
	}
}

/* The report to -o FILE or stderr, then the exit code. */
static int report(struct kagg_stat *st, FILE *out, const struct stat_args *a, int stop_err)
{
	const struct kagg_stat_report *rep = kagg_stat__report(st);
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
	return exit_code(st, stop_err);
}

static int stat_main(int argc, char **argv)
{
	struct stat_args a = {};
	struct kagg_stat *st = NULL;
	sigset_t wait_set, old_mask;
	int ret, err, stop_sig = 0;
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
	/* The command is forked here: it gets kagg's signal dispositions, not cli's. */
	st = kagg_stat__open(&a.o);
	if (!st) {
		ret = cli_open_failed(errno);
		goto out;
	}
	if (a.o.argv) {
		sigemptyset(&wait_set);
		sigaddset(&wait_set, SIGINT);
		sigaddset(&wait_set, SIGTERM);
		sigaddset(&wait_set, SIGCHLD);
		sigprocmask(SIG_BLOCK, &wait_set, &old_mask);
	}
	cli_setup_signals();
	err = kagg_stat__start(st);
	if (err) {
		ret = cli_err(CLI_EXIT_FAIL, "starting the counters failed: %s", strerror(-err));
		goto out;
	}
	if (a.o.argv) {
		stop_sig = wait_command(kagg_stat__report(st)->pid, &wait_set);
		err = kagg_stat__wait(st);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (err == -ECHILD) {
			/* not run (the log said why): as a shell, 127 */
			ret = kagg_stat__report(st)->exit_status;
			goto out;
		}
		if (err) {
			ret = cli_err(CLI_EXIT_FAIL, "waiting for the command: %s", strerror(-err));
			goto out;
		}
	} else {
		cli_sleep(a.c.cm.duration ? a.c.cm.duration : 1e9);
	}
	ret = report(st, out, &a, kagg_stat__stop(st));
out:
	kagg_stat__destroy(st);
	for (i = 0; i < a.nr; i++)
		free(a.evbuf[i]);
	if (out != stderr && fclose(out) && !ret)
		ret = cli_err(CLI_EXIT_FAIL, "writing %s: %s", a.output, strerror(errno));
	if (stop_sig) {
		/* as perf stat: what was counted is out; die of the signal that ended it */
		fflush(NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	return ret;
}

CLI_COMMAND(stat, "count perf events (raw, enabled, running, scaled estimate)", stat_main);
