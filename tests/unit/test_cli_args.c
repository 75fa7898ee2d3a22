// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of the arguments people type from other tools' habits:
 * `kagg help TOOL` prints that tool's help (not the global list) and exits
 * 0, for every tool the dispatcher knows; libbpf-tools' positional
 * `interval [count]` is read like -i, and a bad one, or one given with -i or
 * -d, is a one-line usage error (exit 2) before anything is loaded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"
#include "unit_util.h"

static const char *const tools[] = {
	"funclat", "hist",   "offcpu",	"profile", "rb",
	"record",  "report", "runqlat", "stat",	   "syscount",
};

static void test_help_tool_prints_its_help(void **state)
{
	size_t i;

	for (i = 0; i < TU_NR(tools); i++) {
		char *hargv[] = { "help", (char *)tools[i], NULL };
		char *dargv[] = { (char *)tools[i], "--help", NULL };
		char *out = NULL, *err = NULL, *dout = NULL, want[64];

		snprintf(want, sizeof(want), "usage: kagg %s ", tools[i]);
		assert_int_equal(tu_run_kagg(hargv, &out, &err, 0, 0), 0);
		assert_non_null(out);
		if (strncmp(out, want, strlen(want)))
			printf("  kagg help %s: '%.60s'\n", tools[i], out);
		assert_int_equal(strncmp(out, want, strlen(want)), 0);
		assert_string_equal(err ? err : "", "");
		/* The same text as `kagg TOOL --help`. */
		assert_int_equal(tu_run_kagg(dargv, &dout, NULL, 0, 0), 0);
		assert_string_equal(out, dout);
		free(out);
		free(err);
		free(dout);
	}
}

/* Every tool with the shared options lists --quiet in its help. */
static void test_help_lists_quiet(void **state)
{
	static const char *const common[] = { "funclat", "hist",    "offcpu",
					      "profile", "runqlat", "syscount" };
	size_t i;

	for (i = 0; i < TU_NR(common); i++) {
		char *argv[] = { (char *)common[i], "--help", NULL };
		char *out = NULL;

		assert_int_equal(tu_run_kagg(argv, &out, NULL, 0, 0), 0);
		assert_non_null(strstr(out, "      --quiet "));
		free(out);
	}
}

/*
 * -T/--timestamp in every tool that takes -i; syscount has --timestamp alone:
 * its -T is libbpf-tools' top N (--top); folded output has no line for it.
 */
static void test_timestamp_option(void **state)
{
	static const char *const common[] = { "funclat", "hist", "offcpu", "profile", "runqlat" };
	static const struct tu_error_case cases[] = {
		{ 2, "invalid --top 'x'", { "syscount", "-T", "x" } },
		{ 2, "option '-T' needs a value", { "syscount", "-T" } },
		{ 2, "invalid --top '-1'", { "runqlat", "--top", "-1" } },
		{ 2, "--folded has no line for a timestamp", { "offcpu", "-f", "-T" } },
		{ 2, "--folded has no line for a timestamp", { "profile", "--timestamp", "-f" } },
		{ 2, "--delimiter goes with --folded", { "profile", "--delimiter" } },
		{ 2, "--delimiter goes with --folded", { "offcpu", "--stacks", "--delimiter" } },
		{ 2, "invalid option '-T'", { "stat", "-T", "--", "true" } },
	};
	char *sargv[] = { "syscount", "--help", NULL }, *out = NULL;
	size_t i;

	for (i = 0; i < TU_NR(common); i++) {
		char *argv[] = { (char *)common[i], "--help", NULL };

		assert_int_equal(tu_run_kagg(argv, &out, NULL, 0, 0), 0);
		assert_non_null(strstr(out, "  -T, --timestamp "));
		free(out);
	}
	assert_int_equal(tu_run_kagg(sargv, &out, NULL, 0, 0), 0);
	assert_non_null(strstr(out, "      --timestamp "));
	assert_non_null(strstr(out, "  -T, --top N "));
	assert_null(strstr(out, "-T, --timestamp"));
	free(out);
	tu_expect_errors(cases, TU_NR(cases));
}

static void test_help_unknown_tool(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "unknown command 'nosuch'", { "help", "nosuch" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

static void test_positional_interval_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "unexpected argument '3'", { "runqlat", "1", "2", "3" } },
		{ 2, "unexpected argument 'x'", { "runqlat", "x" } },
		{ 2, "unexpected argument '0'", { "runqlat", "0" } },
		{ 2, "invalid interval '0.0001'", { "runqlat", "0.0001" } },
		{ 2, "invalid count '0'", { "runqlat", "1", "0" } },
		{ 2, "invalid count 'x'", { "syscount", "1", "x" } },
		{ 2, "invalid count '1.5'", { "syscount", "1", "1.5" } },
		{ 2, "positional interval '1' and -i", { "runqlat", "-i", "1", "1" } },
		{ 2, "positional interval '2' and -d", { "runqlat", "2", "3", "-d", "1" } },
		{ 2, "positional interval '1' and -i", { "syscount", "1", "-i", "2" } },
		{ 2, "positional interval '1' and -d", { "syscount", "-d", "1", "1" } },
		/* offcputime's and profile's operand is a duration: one, and not with -d */
		{ 2, "unexpected argument '3' (one operand: the duration", { "offcpu", "2", "3" } },
		{ 2,
		  "unexpected argument '1.5' (one operand: the duration",
		  { "profile", "1", "1.5" } },
		{ 2, "unexpected argument 'x' (duration in seconds)", { "offcpu", "x" } },
		{ 2, "unexpected argument '0' (duration in seconds)", { "profile", "0" } },
		{ 2, "positional duration '2' and -d", { "offcpu", "2", "-d", "1" } },
		{ 2, "positional duration '1' and -d", { "profile", "-d", "1", "1" } },
		/* funclat: FUNC, then runqlat's interval [count] */
		{ 2,
		  "unexpected argument '3' (interval [count])",
		  { "funclat", "vfs_read", "1", "2", "3" } },
		{ 2, "invalid count 'x'", { "funclat", "vfs_read", "1", "x" } },
		{ 2, "positional interval '1' and -i", { "funclat", "-i", "1", "vfs_read", "1" } },
		/* Tools that take operands keep them: a third one is still refused. */
		{ 2, NULL, { "hist", "sched:sched_switch", "prev_pid", "1" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

/* The libbpf-tools letters kagg took: each reaches its long option's checks. */
static void test_libbpf_tools_letters(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "invalid cpu 'x'", { "profile", "-C", "x" } },
		{ 2, "--folded is a text format", { "profile", "-f", "--format", "json" } },
		{ 2, "--folded is a text format", { "offcpu", "-f", "--format", "ndjson" } },
		{ 2, "--folded prints once", { "offcpu", "-f", "-i", "1" } },
		{ 2, "option '-m' needs a value", { "offcpu", "-m" } }, /* offcputime's -m US */
		{ 2, "unexpected argument 'x'", { "runqlat", "-m", "x" } },
		{ 2, "unexpected argument 'x'", { "syscount", "-m", "x" } },
		{ 2, "invalid option '-z'", { "funclat", "-m", "-u", "-z", "vfs_read" } },
		/* libbpf-tools' runqlat -P -L keeps one silently; kagg says they exclude */
		{ 2,
		  "-P (per process), -L (per thread), -N (per command) and --per-cgroup exclude "
		  "each other",
		  { "runqlat", "-P", "-L" } },
		{ 2,
		  "-P (per process), -L (per thread), -N (per command) and --per-cgroup exclude "
		  "each other",
		  { "offcpu", "-L", "-P" } },
		/* syscount's -L is --latency: its per-thread key is named --per-thread */
		{ 2,
		  "-P (per process), --per-thread (per thread), -N (per command) and --per-cgroup "
		  "exclude each other",
		  { "syscount", "--per-thread", "-N" } },
		{ 2,
		  "per-command and per-cgroup histograms are the kernel path's",
		  { "syscount", "--per-cgroup", "--mode", "both" } },
		{ 2, "option '-c' needs a value", { "funclat", "vfs_read", "-c" } },
		/* libbpf-tools letters without a twin: refused, naming what kagg has */
		{ 2,
		  "-x counts failed calls per syscall and errno",
		  { "syscount", "-e", "ENOENT" } },
		{ 2, "--names-file", { "syscount", "-l" } },
		{ 2, "filters by -p PID", { "syscount", "-c", "/sys/fs/cgroup" } },
		{ 2, "-P gives one per process", { "runqlat", "--pidnss" } },
	};
	static const char *const helps[][2] = {
		{ "runqlat", "  -c, --cgroup PATH " },
		{ "funclat", "  -c, --cgroup PATH " },
		{ "runqlat", "      --cpu N " },
	};
	size_t i;

	for (i = 0; i < TU_NR(helps); i++) {
		char *argv[] = { (char *)helps[i][0], "--help", NULL }, *out = NULL;

		assert_int_equal(tu_run_kagg(argv, &out, NULL, 0, 0), 0);
		if (!strstr(out, helps[i][1]))
			printf("  kagg %s --help lacks '%s'\n", helps[i][0], helps[i][1]);
		assert_non_null(strstr(out, helps[i][1]));
		free(out);
	}

	tu_expect_errors(cases, TU_NR(cases));
}

/* --buckets on every histogram tool: a bad one is a usage error before anything loads. */
static void test_buckets_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "invalid --buckets 'exp:6'", { "offcpu", "--buckets", "exp:6" } },
		{ 2, "invalid --buckets 'exp:'", { "runqlat", "--buckets", "exp:" } },
		{ 2, "is for kagg hist only", { "runqlat", "--buckets", "linear:0:5" } },
		{ 2, "is for kagg hist only", { "syscount", "-L", "--buckets", "linear:0:5" } },
		{ 2, "--buckets goes with --latency", { "syscount", "--buckets", "exp:3" } },
		{ 2, "invalid --buckets 'log3'", { "funclat", "--buckets", "log3", "vfs_read" } },
		{ 2,
		  "linear:MIN:STEP, STEP a positive integer",
		  { "hist", "--buckets", "linear:5:0", "sched:sched_switch", "prev_prio" } },
		{ 2,
		  "linear:MIN:STEP, STEP a positive integer",
		  { "hist", "--buckets", "linear:x:1", "sched:sched_switch", "prev_prio" } },
		{ 2,
		  "exclude each other",
		  { "hist", "--buckets", "exp:3", "--linear", "sched:sched_switch", "prev_prio" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

/*
 * The long options cli.h declares once (CLI_PID_LONGOPT, CLI_CPU_LONGOPT, ...) reach each
 * table's own checks; record and report, parsed by cli_parse, name the nearest option;
 * serve's option values each say what they take.
 */
static void test_shared_long_options(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "did you mean --pid?", { "record", "--pidd", "1" } },
		{ 2, "did you mean --cpu?", { "report", "--cpuu", "1", "f.dat" } },
		{ 2,
		  "invalid pid list '1,x'",
		  { "record", "--pid", "1,x", "-o", "/nonexistent/x" } },
		{ 2, "invalid duration 'x'", { "record", "--duration", "x" } },
		{ 2, "--set needs --prog", { "record", "--set", "a=1", "-o", "/nonexistent/x" } },
		{ 2, "invalid pid 'x'", { "run", "--pid", "x", "p.bpf.o" } },
		{ 2, "invalid option '-p'", { "run", "-p", "1", "p.bpf.o" } },
		{ 2, "invalid pid '0'", { "list", "--pid", "0" } },
		{ 2, "invalid --cpu 'x'", { "report", "--cpu", "x", "f.dat" } },
		{ 2, "invalid cpu 'x'", { "stat", "--cpu", "x" } },
		{ 2, "invalid cpu 'x'", { "profile", "--cpu", "x" } },
		{ 2, "invalid duration 'x'", { "stat", "--duration", "x" } },
		{ 2, "invalid format 'x'", { "stat", "--format", "x" } },
		{ 2, "invalid unwind 'x'", { "profile", "--unwind", "x" } },
		{ 2, "invalid unwind 'x'", { "offcpu", "--unwind", "x" } },
		{ 2, "invalid --buckets 'x'", { "hist", "--buckets", "x", "a:b", "f" } },
		{ 2, "invalid option '--bogus'", { "funclat", "--milliseconds", "--bogus" } },
		{ 2, "invalid option '--bogus'", { "runqlat", "--milliseconds", "--bogus" } },
		{ 2, "invalid option '--bogus'", { "syscount", "--milliseconds", "--bogus" } },
		{ 2, "invalid option '--bogus'", { "serve", "--verbose", "--bogus" } },
		{ 2, "invalid --timeout '0' (1 to 86400 seconds)", { "serve", "--timeout", "0" } },
		{ 2,
		  "invalid --request-timeout '86401' (1 to 86400 seconds)",
		  { "serve", "--request-timeout", "86401" } },
		{ 2,
		  "invalid --key-ttl 'x' (seconds above 0, or inf)",
		  { "serve", "--key-ttl", "x" } },
		{ 2,
		  "invalid --max-bucket '0' (a bound above 0, or inf)",
		  { "serve", "--max-bucket", "0" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

/* --format svg|html|heatmap|pprof: each tool takes what it can draw, and says why not. */
static void test_picture_formats(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "invalid format 'png'", { "profile", "--format", "png" } },
		{ 2, "this tool draws no picture", { "syscount", "--format", "svg" } },
		{ 2, "this tool draws no picture", { "stat", "-e", "cycles", "--format", "html" } },
		{ 2,
		  "--format svg: not with these options (needs stacks)",
		  { "offcpu", "--format", "svg" } },
		{ 2,
		  "--format pprof: not with these options (needs stacks)",
		  { "offcpu", "--format", "pprof" } },
		{ 2,
		  "--format heatmap: not with these options",
		  { "profile", "--format", "heatmap" } },
		{ 2,
		  "--format heatmap draws intervals: add -i",
		  { "runqlat", "--format", "heatmap" } },
		{ 2,
		  "--format svg draws once: drop -i",
		  { "profile", "-i", "1", "--format", "svg" } },
		{ 2,
		  "--format html draws once: drop -i",
		  { "funclat", "-i", "1", "--format", "html", "vfs_read" } },
		{ 2,
		  "--folded and --format svg exclude each other",
		  { "offcpu", "-f", "--format", "svg" } },
		{ 2, "--format svg: not with these options", { "runqlat", "--format", "svg" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

UU_MAIN(cmocka_unit_test(test_help_tool_prints_its_help), cmocka_unit_test(test_picture_formats),
	cmocka_unit_test(test_help_unknown_tool), cmocka_unit_test(test_help_lists_quiet),
	cmocka_unit_test(test_timestamp_option), cmocka_unit_test(test_positional_interval_errors),
	cmocka_unit_test(test_libbpf_tools_letters), cmocka_unit_test(test_buckets_errors),
	cmocka_unit_test(test_shared_long_options))
