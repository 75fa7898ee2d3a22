/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/stat.h - counting perf events (no BPF): for a command from its exec,
 * or for a process / CPU over a time.
 *
 *	const char *evs[] = { "task-clock", "cycles" };
 *	char *cmd[] = { "sleep", "1", NULL };
 *	KAGG_OPTS(kagg_stat_opts, o, .events = evs, .nr_events = 2, .argv = cmd);
 *	struct kagg_stat *st = kagg_stat__open(&o);  // forks cmd (held), opens the counters
 *	kagg_stat__start(st);                        // cmd execs: counting starts at exec
 *	kagg_stat__wait(st);                         // cmd exited
 *	kagg_stat__stop(st);                         // read count, time enabled, time running
 *	kagg_stat__print(kagg_stat__report(st), stdout, KAGG_FORMAT_TEXT);
 *	kagg_stat__destroy(st);
 *
 * Each counter reports its raw count, the time it was enabled and the time it
 * actually ran on the PMU.  When the PMU has fewer counters than requested
 * the kernel multiplexes them (running < enabled) and the usual estimate is
 * count * enabled / running -- an estimate that assumes the unobserved time
 * behaved like the observed one.  With running == 0 there is no estimate:
 * it is "undefined", never 0 and never infinity.
 */
#ifndef KAGG_STAT_H
#define KAGG_STAT_H

#include <stdio.h>
#include <sys/types.h>
#include <kagg/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What kagg_stat__scale() made of a reading. */
enum kagg_stat_scale {
	KAGG_STAT_EXACT = 0,	 /* running >= enabled: the count is the measurement */
	KAGG_STAT_SCALED = 1,	 /* multiplexed, 0 < running < enabled: estimate scaled up */
	KAGG_STAT_UNDEFINED = 2, /* running == 0: the counter never ran, no estimate */
};

/*
 * The scaled estimate count * enabled / running, rounded to nearest, computed
 * in 128 bits (no intermediate overflow).  Returns the kagg_stat_scale, and
 * sets *estimate unless UNDEFINED (then *estimate is left alone).  -ERANGE
 * when the estimate does not fit in 64 bits (*estimate = UINT64_MAX).  Pure.
 */
KAGG_API int kagg_stat__scale(uint64_t count, uint64_t enabled, uint64_t running,
			      uint64_t *estimate);

/*
 * Resolve an event name to perf_event_attr type and config: software events
 * cpu-clock, task-clock, context-switches (cs), cpu-migrations (migrations),
 * page-faults (faults), minor-faults, major-faults; hardware events cycles
 * (cpu-cycles), instructions, cache-references, cache-misses, branches
 * (branch-instructions), branch-misses; and tracepoint:SYS:NAME, whose id is
 * read from TRACEFS/events/SYS/NAME/id (tracefs NULL: /sys/kernel/tracing).
 * 0, -EINVAL unknown name, -ENOENT no such tracepoint (or tracefs not
 * mounted), other -errno reading the id.  *hardware tells a PMU event.
 */
KAGG_API int kagg_stat__parse_event(const char *name, const char *tracefs, uint32_t *type,
				    uint64_t *config, bool *hardware);

/*
 * One counter's outcome.  Like the report below it starts with `size_t sz`:
 * the library sets it in what it hands out, a caller building one to print
 * sets it to sizeof; reached through the report's array of pointers, never
 * by indexing an array of structs, so it can grow at the end.
 */
struct kagg_stat_result {
	size_t sz;
	const char *name;
	bool supported;	     /* false: this machine lacks the event (err says how) */
	int err;	     /* 0, or the negative errno of perf_event_open */
	uint64_t count;	     /* raw count */
	uint64_t enabled_ns; /* PERF_FORMAT_TOTAL_TIME_ENABLED */
	uint64_t running_ns; /* PERF_FORMAT_TOTAL_TIME_RUNNING */
	int scale;	     /* enum kagg_stat_scale, or -ERANGE */
	uint64_t estimate;   /* valid unless scale == KAGG_STAT_UNDEFINED */
	/*
	 * Appended after 0.2: when the report's runs > 1, the count, times and estimate are
	 * means over the runs (rounded), and rel_stddev_pct is perf stat -r's "( +- X% )":
	 * the standard deviation of that mean (kagg_stat__rel_stddev) in percent of it.
	 */
	double rel_stddev_pct;
};

/*
 * What was measured, for printing.  Sized rather than opaque: a plain record
 * the caller reads, and may build itself to print (set sz then).
 */
struct kagg_stat_report {
	size_t sz;
	const char *target; /* "command 'sleep 1'", "pid 1234", "cpu 0" */
	int pid;	    /* the command's (or -p) pid, -1 for a CPU */
	int cpu;	    /* -1: any */
	bool has_exit;	    /* command: exit_status is set */
	int exit_status;    /* wait status decoded: exit code, or 128 + signal */
	double duration_s;  /* wall time counted */
	const char *kernel; /* uname -r */
	size_t nr_results;
	const struct kagg_stat_result *const *results; /* nr_results pointers */
	/*
	 * Appended after 0.2: runs > 1: the results are means of that many runs of the
	 * command (duration_s too; exit_status is the first non-zero one, else 0); 0 or 1:
	 * one run.  interval_s > 0: the counts are those of one interval ending interval_s
	 * seconds after the start (kagg stat -I), duration_s long.
	 */
	unsigned int runs;
	double interval_s;
};

struct kagg_stat_opts {
	size_t sz;
	const char *const *events; /* event names (see kagg_stat__parse_event) */
	size_t nr_events;
	char *const *argv;   /* command to run, NULL-terminated; or NULL */
	int pid;	     /* > 0: count this process (no argv) */
	int cpu;	     /* >= 0: count on this CPU only; -1: any CPU */
	const char *tracefs; /* NULL: /sys/kernel/tracing */
	kagg_log_fn log;
	void *log_ctx;
	/*
	 * Appended after 0.2: count every online CPU, all tasks (perf stat -a), the
	 * counts summed over the CPUs; with argv, while the command runs (from
	 * kagg_stat__start to its exit), else between start and stop.  Not with pid or cpu.
	 */
	bool all_cpus;
};
#define kagg_stat_opts__last_field all_cpus

struct kagg_stat;

/*
 * Open the counters (disabled).  With argv the command is forked and held
 * before exec; its counters are enabled by its exec (enable_on_exec) and
 * inherited by its children.  Events this machine lacks (ENOENT, EOPNOTSUPP,
 * ENODEV from perf_event_open) are kept as unsupported results.
 * NULL + errno: EINVAL bad opts or unknown event name (or pid and cpu both
 * unset without argv: set one), ESRCH no such pid, ENOENT no such tracepoint,
 * ENODEV no event could be opened, EPERM/EACCES privileges.  With all_cpus, pid and
 * cpu are left unset (argv optional): EINVAL otherwise.
 */
KAGG_API struct kagg_stat *kagg_stat__open(const struct kagg_stat_opts *opts);
/* Start counting: let the command exec, or enable the counters.  0 or -errno. */
KAGG_API int kagg_stat__start(struct kagg_stat *st);
/*
 * Wait for the command to exit (no-op without one).  0, -ECHILD when the
 * command could not be executed (the log says why), -EINTR on a signal.
 */
KAGG_API int kagg_stat__wait(struct kagg_stat *st);
/* Stop counting and read every counter.  0 or -errno. */
KAGG_API int kagg_stat__stop(struct kagg_stat *st);
/*
 * Read every counter now and keep counting: the report holds the counts
 * so far and duration_s the time since start (kagg stat -I takes the differences).
 * 0 or -errno (-EINVAL before start or after stop).
 */
KAGG_API int kagg_stat__read(struct kagg_stat *st);
/* The readings (valid after stop, or kagg_stat__read; owned by st). */
KAGG_API const struct kagg_stat_report *kagg_stat__report(const struct kagg_stat *st);
/* Number of events counted (supported and read). */
KAGG_API size_t kagg_stat__counted(const struct kagg_stat *st);
/* Kill a command still held or running, close everything.  NULL-safe. */
KAGG_API void kagg_stat__destroy(struct kagg_stat *st);

/*
 * perf stat -r's spread of n values: the standard deviation of their mean
 * (sample standard deviation / sqrt(n)) in percent of the mean; 0 when n < 2 or the
 * mean is 0.  Pure.
 */
KAGG_API double kagg_stat__rel_stddev(const double *v, size_t n);

/*
 * Print a report: text (one line per event) or one JSON document
 * {"meta": {...}, "events": [...]}.  0 or -errno (EINVAL, also when the sz
 * of rep or of a result is too small or bytes past what this library knows
 * are not zero; EIO).
 */
KAGG_API int kagg_stat__print(const struct kagg_stat_report *rep, FILE *f, enum kagg_format fmt);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_STAT_H */
