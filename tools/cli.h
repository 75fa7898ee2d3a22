/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Shared CLI plumbing for kagg subcommands: registration, errors, option
 * value parsing, signal handling.  Written once here, used by every tool.
 *
 * A subcommand is one file in tools/ that ends with
 *	CLI_COMMAND(name, "one-line summary", name_main);
 * The dispatcher (tools/kagg.c) finds it through a linker section, so adding
 * a tool touches no other file.
 *
 * Exit codes: 0 success, 1 runtime failure (privileges, missing kernel
 * feature, unknown pid...), 2 usage error.
 */
#ifndef KAGG_CLI_H
#define KAGG_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <getopt.h>
#include <kagg/kagg.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2
/*
 * The reader of stdout went away (`kagg offcpu | head -1`): said by no line,
 * the dispatcher ends kagg by SIGPIPE once the tool has cleaned up, as
 * coreutils end (the shell's status 141).
 */
#define CLI_EXIT_PIPE (128 + SIGPIPE)

struct cli_cmd {
	const char *name;
	const char *summary;
	int (*main)(int argc, char **argv);
};

#define CLI_COMMAND(NAME, SUMMARY, FN)                                     \
	static const struct cli_cmd cli_cmd_##NAME                         \
		__attribute__((used, section("cli_cmds"), aligned(8))) = { \
			.name = #NAME,                                     \
			.summary = SUMMARY,                                \
			.main = FN,                                        \
		}

/* The registered commands (the "cli_cmds" section), in link order. */
extern const struct cli_cmd __start_cli_cmds[];
extern const struct cli_cmd __stop_cli_cmds[];
/* The command called name, or NULL. */
const struct cli_cmd *cli_find_cmd(const char *name);
/* Run c's main with cli_prog set to "kagg NAME"; returns its exit code. */
int cli_run_cmd(const struct cli_cmd *c, int argc, char **argv);

/* Print "kagg CMD: <msg>" on stderr (one line). Returns code, for `return cli_err(...)`. */
int cli_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Flush stdout and report a failed write (err: a printer's -errno, or 0 to
 * rely on ferror()) in one line; a reader that closed the pipe is no error
 * to report: CLI_EXIT_PIPE, silently.  Returns CLI_EXIT_OK, CLI_EXIT_FAIL or
 * CLI_EXIT_PIPE.
 */
int cli_output_done(int err);

/* Program name for messages, "kagg offcpu"; set by the dispatcher. */
extern const char *cli_prog;

/* Parse helpers: return 0 or -EINVAL (the caller reports a usage error). */
int cli_parse_u64(const char *s, uint64_t *out);
/*
 * s as a number from lo to hi into *out; else a usage error "invalid WHAT 'S'",
 * followed by " (LO to HI)" when say_range.  Returns 0 or CLI_EXIT_USAGE.
 */
int cli_parse_range(const char *s, uint64_t lo, uint64_t hi, const char *what, bool say_range,
		    uint64_t *out);
/* cli_parse_range() into *dst of any integer type, left as it was on an error. */
#define CLI_RANGE(s, lo, hi, what, say_range, dst)                         \
	({                                                                 \
		uint64_t v_;                                               \
		int r_ = cli_parse_range(s, lo, hi, what, say_range, &v_); \
		if (!r_)                                                   \
			*(dst) = v_;                                       \
		r_;                                                        \
	})
int cli_parse_seconds(const char *s, double *out); /* > 0, decimals allowed */
/* Comma separated list of positive ints; *out is malloc'd. */
int cli_parse_int_list(const char *s, int **out, size_t *n);
/* The index of s in names[n] (NULL entries are skipped), or -1. */
int cli_pick(const char *s, const char *const *names, size_t n);
/* cli_pick over a whole array, e.g. { [KAGG_MODE_AGG] = "agg", ... } (index: the value). */
#define CLI_PICK(s, names) cli_pick(s, names, sizeof(names) / sizeof((names)[0]))
/*
 * s as one of names[n] into *out (its index), else the usage error
 * "invalid WHAT 'S' (CHOICES)".  Returns 0 or CLI_EXIT_USAGE.
 */
int cli_choose(const char *s, const char *const *names, size_t n, const char *what,
	       const char *choices, int *out);
/*
 * Option c, -A or -B, two that exclude each other, into *dst (0 until one is given): va for
 * -A, vb for -B.  Returns 0, or the usage error "-A and -B exclude each other" once *dst is set.
 */
#define CLI_EITHER(c, A, B, va, vb, dst)                                          \
	(*(dst) ? cli_err(CLI_EXIT_USAGE, "-%c and -%c exclude each other", A, B) \
		: (*(dst) = (c) == (A) ? (va) : (vb), 0))

/* cli_choose() over a whole array (as CLI_PICK) into *dst of any enum type. */
#define CLI_CHOOSE(s, names, what, choices, dst)                                                 \
	({                                                                                       \
		int i_;                                                                          \
		int r_ = cli_choose(s, names, sizeof(names) / sizeof((names)[0]), what, choices, \
				    &i_);                                                        \
		if (!r_)                                                                         \
			*(dst) = (__typeof__(*(dst)))i_;                                         \
		r_;                                                                              \
	})

/*
 * Install SIGINT/SIGTERM handlers that set cli_stop (and SIGPIPE ignored).
 * The handler does nothing else: tools poll cli_stop and exit through their
 * normal cleanup path so no BPF object stays loaded.
 */
extern volatile sig_atomic_t cli_stop;
void cli_setup_signals(void);

/* Sleep up to `seconds`, returning early when cli_stop is set. */
void cli_sleep(double seconds);

/* Log callback for libkagg handles: prints warnings (all with -v) to stderr. */
void cli_log(void *ctx, enum kagg_log_level level, const char *msg);
extern int cli_verbose;
/* Set once cli_log printed a warning: the failure was explained already. */
extern int cli_logged;
/* Send libbpf's (process-wide) messages through cli_log. */
void cli_route_libbpf_log(void);

/*
 * Options every tool has: -d/--duration, -i/--interval, --unit, --format,
 * --overhead, -v/--verbose (-h/--help stays with the tool).
 */
enum {
	CLI_OPT_UNIT = 1000,
	CLI_OPT_FORMAT,
	CLI_OPT_OVERHEAD,
	CLI_OPT_MODE, /* streaming tools: --mode, --print, --stream-bytes */
	CLI_OPT_PRINT,
	CLI_OPT_STREAM_BYTES,
	CLI_OPT_PERCENTILES,
	CLI_OPT_QUIET,	   /* --quiet: no "# ..." meta lines, no banner */
	CLI_OPT_TIMESTAMP, /* --timestamp (-T, but in syscount) */
	CLI_OPT_ATTACH,	   /* streaming tools: --attach, --buckets (also hist, funclat) */
	CLI_OPT_BUCKETS,
	CLI_OPT_FOLDED, /* stack tools: --folded (-f), --addrs */
	CLI_OPT_ADDRS,
	CLI_OPT_TOP,	     /* --top N (-T N in syscount) */
	CLI_OPT_DELIMITER,   /* stack tools: --delimiter */
	CLI_OPT_PER_CGROUP,  /* offcpu, runqlat, syscount: --per-cgroup */
	CLI_OPT_UNWIND,	     /* stack tools: --unwind (CLI_UNWIND_LONGOPT) */
	CLI_OPT_CPU,	     /* profile, report, runqlat, stat: --cpu N (CLI_CPU_LONGOPT) */
	CLI_OPT_TOOL = 1100, /* tools number their own long options from here */
};

/*
 * Long options that several tables declare alike.  Of CLI_COMMON_LONGOPTS, those that the
 * tables without it take one by one: -d/--duration, --format, -v/--verbose, and -h/--help,
 * which every table has.
 */
#define CLI_HELP_LONGOPT { "help", no_argument, NULL, 'h' }
#define CLI_VERBOSE_HELP_LONGOPTS { "verbose", no_argument, NULL, 'v' }, CLI_HELP_LONGOPT
#define CLI_DURATION_LONGOPT { "duration", required_argument, NULL, 'd' }
#define CLI_FORMAT_LONGOPT { "format", required_argument, NULL, CLI_OPT_FORMAT }
/* -p/--pid: one process, or a list (CLI_TASKS, record); each tool parses the value. */
#define CLI_PID_LONGOPT { "pid", required_argument, NULL, 'p' }
/* -m/--milliseconds: --unit msecs, parsed by cli_parse in the CLI_MSECS tools. */
#define CLI_MSECS_LONGOPT { "milliseconds", no_argument, NULL, 'm' }
/* --buckets: parsed by cli_stream_opt in the streaming tools, else by the tool. */
#define CLI_BUCKETS_LONGOPT { "buckets", required_argument, NULL, CLI_OPT_BUCKETS }
/* --cpu N: one CPU; the tool parses N. */
#define CLI_CPU_LONGOPT { "cpu", required_argument, NULL, CLI_OPT_CPU }

#define CLI_COMMON_SHORTOPTS ":d:i:Tvh"
#define CLI_COMMON_LONGOPTS                                                            \
	CLI_DURATION_LONGOPT, { "interval", required_argument, NULL, 'i' },            \
		{ "unit", required_argument, NULL, CLI_OPT_UNIT }, CLI_FORMAT_LONGOPT, \
		{ "overhead", no_argument, NULL, CLI_OPT_OVERHEAD },                   \
		{ "percentiles", required_argument, NULL, CLI_OPT_PERCENTILES },       \
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },                         \
		{ "timestamp", no_argument, NULL, CLI_OPT_TIMESTAMP },                 \
		{ "top", required_argument, NULL, CLI_OPT_TOP }, CLI_VERBOSE_HELP_LONGOPTS

/* --unwind fp|table|auto of the tools that walk user stacks: 0 or a usage error. */
int cli_unwind(const char *arg, enum kagg_unwind *u);
#define CLI_UNWIND_LONGOPT { "unwind", required_argument, NULL, CLI_OPT_UNWIND }
#define CLI_UNWIND_HELP                                                                   \
	"      --unwind HOW       user stacks by: auto (default: unwind tables where a\n" \
	"                         file has one, else frame pointers), table or fp\n"

/* --folded and --addrs of the tools that aggregate stacks (offcpu, profile; -f is theirs). */
#define CLI_STACKS_LONGOPTS                                       \
	{ "folded", no_argument, NULL, CLI_OPT_FOLDED },          \
		{ "addrs", no_argument, NULL, CLI_OPT_ADDRS },    \
	{                                                         \
		"delimiter", no_argument, NULL, CLI_OPT_DELIMITER \
	}

/*
 * -P/-L/-N/--per-cgroup/-p/-t of the tools that take them all (offcpu, runqlat), parsed
 * under CLI_TASKS.
 */
#define CLI_TASKS_HELP                                                                      \
	"  -P, --per-process      one histogram per process\n"                              \
	"  -L, --per-thread       one histogram per thread\n"                               \
	"  -N, --per-comm         one histogram per command name\n"                         \
	"      --per-cgroup       one histogram per cgroup v2, by its path (kernel path,\n" \
	"                         log2 buckets, as -N)\n"                                   \
	"  -p, --pid PID[,PID]    only these processes\n"                                   \
	"  -t, --tid TID[,TID]    only these threads\n"
#define CLI_TASKS_SHORTOPTS "PLNp:t:"
#define CLI_TASKS_LONGOPTS                                                                   \
	{ "per-process", no_argument, NULL, 'P' }, { "per-thread", no_argument, NULL, 'L' }, \
		{ "per-comm", no_argument, NULL, 'N' },                                      \
		{ "per-cgroup", no_argument, NULL, CLI_OPT_PER_CGROUP }, CLI_PID_LONGOPT,    \
		{ "tid", required_argument, NULL, 't' }

/*
 * The options of the tools that stream (offcpu, runqlat, syscount), with the
 * --attach and --buckets of their tracepoint programs; help text is the tool's.
 */
#define CLI_STREAM_LONGOPTS                                                         \
	{ "attach", required_argument, NULL, CLI_OPT_ATTACH }, CLI_BUCKETS_LONGOPT, \
		{ "mode", required_argument, NULL, CLI_OPT_MODE },                  \
		{ "print", no_argument, NULL, CLI_OPT_PRINT },                      \
	{                                                                           \
		"stream-bytes", required_argument, NULL, CLI_OPT_STREAM_BYTES       \
	}

struct cli_stream {
	enum kagg_mode mode;
	size_t stream_bytes; /* 0: the library's default */
	bool print;
	enum kagg_attach attach;   /* --attach */
	enum kagg_buckets buckets; /* --buckets, and exp:S's scale */
	int exp_scale;
};

/* T: "-T," or "   " (syscount, where -T is libbpf-tools' top N: then TOP is "-T,"). */
#define CLI_COMMON_HELP CLI_COMMON_HELP_U(CLI_UNITS_USECS)
/* UNITS: the --unit line's text, which says the tool's default. */
#define CLI_UNITS_USECS "nsecs, usecs (default) or msecs"
#define CLI_COMMON_HELP_U(UNITS) CLI_COMMON_HELP_T("-T,", "   ", "all", UNITS)
#define CLI_COMMON_HELP_T(T, TOP, TOPDFL, UNITS)                                              \
	"  -d, --duration SEC     run for SEC seconds, print, exit\n"                         \
	"  -i, --interval SEC     print and reset every SEC >= 0.001 s (exact snapshots)\n"   \
	"  " T " --timestamp        print the local time, HH:MM:SS, before each output\n"     \
	"                         (JSON: \"timestamp\" in the meta)\n"                        \
	"  " TOP " --top N          only the N heaviest keys and stacks (default " TOPDFL     \
	"); text\n"                                                                           \
	"                         lists keys by total, heaviest first\n"                      \
	"      --unit UNIT        " UNITS "\n"                                                \
	"      --format FMT       text (default), json, or ndjson (one line each)\n"          \
	"      --overhead         report the BPF programs' run time per event\n"              \
	"      --percentiles LIST percentiles under each histogram, e.g. p50,p99,p99.9,max\n" \
	"                         (default p50,p90,p99,p99.9,max; min, max: exact values)\n"  \
	"      --quiet            text: no '#' meta lines (and no banner on stderr)\n"        \
	"  -v, --verbose          print libbpf and library messages\n"                        \
	"  -h, --help             this text\n"

/*
 * The shortest -i: a read-and-reset of the aggregates takes well under a
 * millisecond, so 1 ms is honoured; below it the deadlines cannot advance
 * (1e-300 added to the clock is the clock) and the tool prints in a loop.
 */
#define CLI_MIN_INTERVAL 0.001

struct cli_common {
	double duration;
	double interval;
	unsigned long count; /* positional `interval count`: end after count intervals */
	enum kagg_unit unit;
	bool unit_given; /* --unit (or -m, -u): a tool may then not pick its own default */
	bool overhead;
	struct kagg_print_opts print; /* sz set by the tool */
	double pcts[16];	      /* --percentiles: print.percentiles points here */
	bool addrs;		      /* --addrs: stack frames by address (KAGG_SNAP_ADDRS) */
	bool delimiter;		      /* --delimiter: ";--" between user and kernel frames */
	/* The snapshot printer of cli_run (NULL: kagg_snapshot__print). */
	int (*printer)(const struct kagg_snapshot *snap, FILE *f,
		       const struct kagg_print_opts *opts);
	/* --format svg|html|heatmap|pprof (CLI_PIC_*): taken by the tools that call cli_pictures */
	unsigned int picture;
	int (*finish)(FILE *f); /* after the last snapshot (heatmap: draws the columns) */
};

/* The pictures of --format (tools/pictures.c). */
enum { CLI_PIC_NONE, CLI_PIC_SVG, CLI_PIC_HTML, CLI_PIC_HEATMAP, CLI_PIC_PPROF };
#define CLI_PIC_BIT(p) (1u << (p))
/*
 * After parsing: take cm->picture when allowed has its bit (else a one-line usage error, 2):
 * svg, html and pprof print once (not with -i), heatmap needs -i.  cold: off-CPU palette and
 * pprof type; by_count: stacks valued by samples.  0 or the exit code.
 */
int cli_pictures(struct cli_common *cm, unsigned int allowed, bool cold, bool by_count);

/* --buckets log2|exp:S (S 0..5): 0, or a one-line usage error (2). */
int cli_parse_buckets(const char *arg, enum kagg_buckets *b, int *scale);
/* Same, and linear:MIN:STEP into *lin_min, *lin_step (log2 and exp set *lin_step 0). */
int cli_parse_buckets_lin(const char *arg, enum kagg_buckets *b, int *scale, int64_t *lin_min,
			  uint64_t *lin_step);
/*
 * libbpf-tools' positional `interval [count]` (tools without operands):
 * `interval` alone is -i interval, with `count` the run ends after count
 * intervals.  Either with -i or -d is a usage error.  0 or the exit code 2.
 */
int cli_positional_interval(int argc, char **argv, struct cli_common *cm);
/*
 * bcc's offcputime and profile: a bare number is -d (trace that long, print
 * once).  More than one, or one with -d, is a usage error; with -i it prints
 * every interval and ends after the duration.  0 or the exit code 2.
 */
int cli_positional_duration(int argc, char **argv, struct cli_common *cm);

/* 0 when c was a common option, -ENOENT when it is not one, 2 on a usage error. */
int cli_common_opt(int c, const char *arg, struct cli_common *cm);
/* After parsing, in a stack tool: --folded is text printed once (else a usage error, 2); 0. */
int cli_folded_ready(struct cli_common *cm);

/*
 * The task filters: -P/--per-process, -L/--per-thread, -N/--per-comm and
 * --per-cgroup (the histogram key), -p/--pid and -t/--tid (lists of processes
 * and threads).  A list given twice replaces the first one: the last one wins.
 */
struct cli_tasks {
	enum kagg_key_mode key;
	const char *thread_opt; /* the per-thread option's name in errors; NULL: "-L" */
	int *pids;
	size_t nr_pids;
	int *tids;
	size_t nr_tids;
};

/* The parsed task filters into a tool's opts struct o (fields key, pids, tids, nr_*). */
#define CLI_TASKS_INTO(o, tk)               \
	do {                                \
		(o).key = (tk).key;         \
		(o).pids = (tk).pids;       \
		(o).nr_pids = (tk).nr_pids; \
		(o).tids = (tk).tids;       \
		(o).nr_tids = (tk).nr_tids; \
	} while (0)

/*
 * The parsed common and streaming options of cli_args a into a streaming
 * tool's opts o (fields unit, overhead, MODE, stream_bytes, attach, buckets,
 * exp_scale).
 */
#define CLI_STREAM_INTO(o, a, MODE)                     \
	do {                                            \
		(o).unit = (a).cm.unit;                 \
		(o).overhead = (a).cm.overhead;         \
		(o).MODE = (a).st.mode;                 \
		(o).stream_bytes = (a).st.stream_bytes; \
		(o).attach = (a).st.attach;             \
		(o).buckets = (a).st.buckets;           \
		(o).exp_scale = (a).st.exp_scale;       \
	} while (0)

/*
 * 'P', 'L', 'N', CLI_OPT_PER_CGROUP, 'p' or 't': 0, or a one-line usage error (2); -ENOENT for
 * any other c.
 */
int cli_tasks_opt(int c, const char *arg, struct cli_tasks *tk);
/* Free the lists (tk itself is the caller's). */
void cli_tasks_free(struct cli_tasks *tk);

/*
 * What cli_parse() reads every tool's shared options into.  A tool's own
 * arguments struct starts with one, so that its option callback can cast
 * the pointer it gets back to the tool's struct.
 */
struct cli_args {
	struct cli_common cm;
	struct cli_stream st; /* stays agg, 0, false for tools that do not stream */
	struct cli_tasks tk;
	const char *banner; /* cli_session_main: what cli_run prints as it starts */
};

/* cli_parser flags: the tool streams, filters tasks, takes operands. */
#define CLI_STREAMS 0x1
#define CLI_TASKS 0x2
#define CLI_OPERANDS 0x4
#define CLI_PICTURES 0x8      /* takes --format svg|html|heatmap|pprof (cli_pictures) */
#define CLI_MSECS 0x10	      /* -m/--milliseconds is --unit msecs (libbpf-tools' -m) */
#define CLI_POS_DURATION 0x20 /* a bare number is the duration, as bcc's offcputime/profile */

/* A tool's command line, as cli_parse reads it. */
struct cli_parser {
	const char *shortopts; /* getopt_long's, ':' first (CLI_COMMON_SHORTOPTS has it) */
	const struct option *longopts;
	const char *usage; /* what -h/--help prints */
	/* The tool's own options, asked first: 0, an exit code, or -ENOENT: not one of them. */
	int (*opt)(struct cli_args *a, int c, const char *arg);
	/* After the options (operands from optind): checks across options; 0 or an exit code. */
	int (*finish)(struct cli_args *a, int argc, char **argv);
	/* cli_session_main: the tool's session (NULL: errno says why); may set a->banner. */
	struct kagg_session *(*open)(struct cli_args *a);
	unsigned int flags; /* CLI_STREAMS | CLI_TASKS | CLI_OPERANDS | CLI_PICTURES | CLI_MSECS
			     * | CLI_POS_DURATION */
};

/* A tool's cli_parser, with the tool's long_opts[] and usage_text[]. */
#define CLI_PARSER(SHORTOPTS, OPT, FINISH, OPEN, FLAGS) \
	{ .shortopts = SHORTOPTS,                       \
	  .longopts = long_opts,                        \
	  .usage = usage_text,                          \
	  .opt = OPT,                                   \
	  .finish = FINISH,                             \
	  .open = OPEN,                                 \
	  .flags = FLAGS }

/*
 * Read argv's options into a (and the tool's struct around it): the tool's,
 * then the common, streaming and task options, each a one-line usage error
 * when wrong, then p->finish.  0 with the operands from optind; -1 once
 * --help is printed; else the exit code (2: usage).  A tool without operands
 * takes the positional `interval [count]` (cli_positional_interval), or with
 * CLI_POS_DURATION `[duration]` (cli_positional_duration).
 */
int cli_parse(const struct cli_parser *p, int argc, char **argv, struct cli_args *a);
/*
 * A session tool's main once a (and the tool's struct around it) is set up:
 * cli_parse, cli_start, p->open run by cli_run_session under a->banner, and
 * the task lists freed.  Returns the exit code.
 */
int cli_session_main(const struct cli_parser *p, int argc, char **argv, struct cli_args *a);

/* --attach auto|tp_btf|raw_tp for tracepoint tools: 0, or a one-line usage error (2). */
int cli_parse_attach(const char *arg, enum kagg_attach *out);
/* --stream-bytes (a power of two, 4 KiB to 1 GiB): 0, or a one-line usage error (2). */
int cli_parse_stream_bytes(const char *arg, size_t *out);
/* 0 when c was a streaming option, -ENOENT when it is not one, 2 on a usage error. */
int cli_stream_opt(int c, const char *arg, struct cli_stream *st);
/*
 * After parsing, before opening: --print needs --mode stream (else a
 * one-line usage error, 2); when streaming, tracefs is mounted so records
 * take the kernel's own formats.  0 otherwise.
 */
int cli_stream_ready(const struct cli_stream *st);
/*
 * What every tool's main does between parsing its arguments and opening its
 * session: take parse_args()'s verdict (< 0: help was printed, exit 0; > 0:
 * that exit code), check the streaming options (st may be NULL), install the
 * signal handlers and route libbpf's log.  true to go on; false with the
 * exit code in *ret.
 */
bool cli_start(int parsed, const struct cli_stream *st, int *ret);
/*
 * 1 in the parse-only build of the tools (tests/fuzz/fuzz_cli.c, compiled with
 * -DKAGG_CLI_PARSE_ONLY): every main returns once its arguments are parsed
 * and checked (cli_start() returns false, tracefs is not mounted).  0 in kagg.
 */
#ifdef KAGG_CLI_PARSE_ONLY
#define CLI_PARSE_ONLY 1
#else
#define CLI_PARSE_ONLY 0
#endif
/* cli_run, or with --print cli_run_printing. */
int cli_stream_run(struct kagg_session *s, const struct cli_common *cm, const struct cli_stream *st,
		   const char *banner);
/*
 * The end of a session tool's main: s, from its kagg_TOOL__open() (NULL:
 * the open failed and errno says why, cli_open_failed), run with
 * cli_stream_run, then destroyed.  Returns the exit code.
 */
int cli_run_session(struct kagg_session *s, const struct cli_args *a, const char *banner);
/*
 * kagg serve: when set, cli_run_session hands each opened session to this
 * function, which owns it from then on, instead of running it; its return
 * is the tool main's.
 */
extern int (*cli_session_taker)(struct kagg_session *s, const struct cli_args *a);
/* Usage error for getopt's '?' or ':' (call with opterr = 0): one line, returns 2. */
int cli_bad_opt(int c, char **argv);
/* The same, naming the nearest of longopts to an unknown --option ("did you mean --X?"). */
int cli_bad_opt_near(int c, char **argv, const struct option *longopts);

/* "Did you mean": the candidate nearest to want, by edit distance, if near enough. */
struct cli_near {
	const char *want;
	char best[128]; /* "" while none is near enough */
	size_t dist;
	size_t prefix; /* of best with want: breaks a tie in distance */
};
void cli_near_init(struct cli_near *n, const char *want);
/* Offer cand (a "SYS:EVENT" is also compared by its EVENT alone). */
void cli_near_add(struct cli_near *n, const char *cand);
/* Exit code for a failed kagg_*__open (errno err): the library logged why. */
int cli_open_failed(int err);
/*
 * After an interval's snapshot is printed or exported and freed: give the heap that is
 * free back to the system.  glibc keeps freed heap (and raises its mmap threshold after a
 * large free), so a long run's RSS would otherwise hold the high-water of its busiest
 * interval (its kept values, their sort's scratch, the output buffers).
 */
void cli_trim_heap(void);
/*
 * Attach, then print a snapshot every interval and at the end (duration
 * over, SIGINT or SIGTERM).  Returns the exit code; does not destroy s.
 */
int cli_run(struct kagg_session *s, const struct cli_common *cm, const char *banner);
/*
 * Streaming sessions: print each record as a kernel `trace` line from a
 * printer thread while this thread keeps consuming, so a slow stdout loses
 * the oldest buffered records (counted in the meta) instead of stalling the
 * kernel side; then print the final snapshot.
 */
int cli_run_printing(struct kagg_session *s, const struct cli_common *cm);
/* Mount tracefs on /sys/kernel/tracing unless it is there; 0 or -errno. */
int cli_mount_tracefs(void);

#endif
