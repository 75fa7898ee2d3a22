// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of kagg stat: the scaled-estimate arithmetic (exact,
 * multiplexed, never ran, 128-bit intermediates, out of range), event name
 * resolution (against a fake tracefs), the text and JSON printers on
 * hand-built reports, and CLI usage errors.
 */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include <kagg/stat.h>
#include "testutil.h"

#ifndef offsetofend
#define offsetofend(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#endif
#include "unit_util.h"

/*
 * kagg_stat__scale(count, enabled, running): the estimate count * enabled /
 * running, rounded to nearest, and what it was made of.  Each case starts
 * with the estimate at UNTOUCHED, which an undefined one keeps.
 */
#define UNTOUCHED 0xdeadbeefULL
static void test_scale(void **state)
{
	static const struct {
		uint64_t count, enabled, running;
		int rc;
		uint64_t est;
	} c[] = {
		/* exact: ran all the time it was enabled */
		{ 12345, 1000, 1000, KAGG_STAT_EXACT, 12345 },
		{ 0, 5, 5, KAGG_STAT_EXACT, 0 },
		/* The seed's example: 300,000 counted in 1 s of 2 s enabled -> 600,000. */
		{ 300000, 2000000000ULL, 1000000000ULL, KAGG_STAT_SCALED, 600000 },
		/* Rounded to nearest: 10 * 3 / 2 = 15; 1 * 3 / 2 = 1.5 -> 2; 1 * 4 / 3 = 1.33 -> 1.
		 */
		{ 10, 3, 2, KAGG_STAT_SCALED, 15 },
		{ 1, 3, 2, KAGG_STAT_SCALED, 2 },
		{ 1, 4, 3, KAGG_STAT_SCALED, 1 },
		/* running == 0: undefined, estimate untouched (not 0, not infinity). */
		{ 0, 1000000, 0, KAGG_STAT_UNDEFINED, UNTOUCHED },
		{ 0, 0, 0, KAGG_STAT_UNDEFINED, UNTOUCHED },
		{ UINT64_MAX, UINT64_MAX, 0, KAGG_STAT_UNDEFINED, UNTOUCHED },
		/*
		 * count * enabled overflows 64 bits although the estimate fits: still
		 * exact.  1e18 * 3e9 / 2e9 = 1.5e18 (the product is 3e27, far past 2^64).
		 */
		{ 1000000000000000000ULL, 3000000000ULL, 2000000000ULL, KAGG_STAT_SCALED,
		  1500000000000000000ULL },
		/* The largest products: (2^64 - 1)^2 / (2^64 - 2) > 2^64 - 1 is out of range. */
		{ UINT64_MAX, UINT64_MAX, UINT64_MAX - 1, -ERANGE, UINT64_MAX },
		{ UINT64_MAX - 1, UINT64_MAX - 1, UINT64_MAX, KAGG_STAT_EXACT, UINT64_MAX - 1 },
		/* (2^63 - 1) * (2^64 - 2) / 2^63 = 2^64 - 4 + 2/2^63 -> 2^64 - 4 (rounded). */
		{ UINT64_MAX / 2, UINT64_MAX - 1, UINT64_MAX / 2 + 1, KAGG_STAT_SCALED,
		  UINT64_MAX - 3 },
		/* Doubling 2^63 overflows: reported, not wrapped. */
		{ 1ULL << 63, 2, 1, -ERANGE, UINT64_MAX },
	};
	size_t i;

	for (i = 0; i < TU_NR(c); i++) {
		uint64_t est = UNTOUCHED;
		int rc = kagg_stat__scale(c[i].count, c[i].enabled, c[i].running, &est);

		if (rc != c[i].rc || est != c[i].est)
			fail_msg("scale(%llu, %llu, %llu): %d, estimate %llu; expected %d, %llu",
				 (unsigned long long)c[i].count, (unsigned long long)c[i].enabled,
				 (unsigned long long)c[i].running, rc, (unsigned long long)est,
				 c[i].rc, (unsigned long long)c[i].est);
	}
}

static void test_parse_event_names(void **state)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} cases[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	};
	uint32_t type;
	uint64_t config;
	bool hw;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(kagg_stat__parse_event(cases[i].name, NULL, &type, &config, &hw),
				 0);
		assert_int_equal(type, cases[i].type);
		assert_int_equal(config, cases[i].config);
		assert_int_equal(hw, cases[i].type == PERF_TYPE_HARDWARE);
	}
	assert_int_equal(kagg_stat__parse_event("cycle", NULL, &type, &config, &hw), -EINVAL);
	assert_int_equal(kagg_stat__parse_event("", NULL, &type, &config, &hw), -EINVAL);
	assert_int_equal(kagg_stat__parse_event("tracepoint:sched", NULL, &type, &config, &hw),
			 -EINVAL);
	assert_int_equal(kagg_stat__parse_event("tracepoint:../x:y", NULL, &type, &config, &hw),
			 -EINVAL);
	assert_int_equal(kagg_stat__parse_event("tracepoint::x", NULL, &type, &config, &hw),
			 -EINVAL);
}

/* tracepoint:SYS:NAME reads SYS/NAME/id under the given tracefs. */
static void test_parse_tracepoint_fake_tracefs(void **state)
{
	char dir[] = "/tmp/kagg-stat-tracefs-XXXXXX", path[256];
	uint32_t type;
	uint64_t config;
	bool hw = true;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/events/sched", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("317\n", f);
	fclose(f);
	assert_int_equal(
		kagg_stat__parse_event("tracepoint:sched:sched_switch", dir, &type, &config, &hw),
		0);
	assert_int_equal(type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(config, 317);
	assert_false(hw);
	assert_int_equal(
		kagg_stat__parse_event("tracepoint:sched:sched_nope", dir, &type, &config, &hw),
		-ENOENT);
	assert_int_equal(kagg_stat__parse_event("tracepoint:nosys:x", dir, &type, &config, &hw),
			 -ENOENT);
	unlink(path);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/events/sched", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/events", dir);
	rmdir(path);
	rmdir(dir);
}

static char *print_report(const struct kagg_stat_report *rep, enum kagg_format fmt)
{
	struct uu_mem m;

	assert_int_equal(kagg_stat__print(rep, uu_mem_open(&m), fmt), 0);
	return uu_mem_text(&m);
}

/* A report with each case: exact, multiplexed, never ran, not supported. */
#define RSZ .sz = sizeof(struct kagg_stat_result)
static const struct kagg_stat_result results[] = {
	{ RSZ, .name = "task-clock", .supported = true, .count = 5000, .enabled_ns = 5000,
	  .running_ns = 5000, .scale = KAGG_STAT_EXACT, .estimate = 5000 },
	{ RSZ, .name = "instructions", .supported = true, .count = 300000, .enabled_ns = 2000000000,
	  .running_ns = 1000000000, .scale = KAGG_STAT_SCALED, .estimate = 600000 },
	{ RSZ, .name = "branches", .supported = true, .count = 0, .enabled_ns = 2000000000,
	  .running_ns = 0, .scale = KAGG_STAT_UNDEFINED, .estimate = 0 },
	{ RSZ, .name = "cycles", .supported = false, .err = -ENOENT },
};
static const struct kagg_stat_result *const result_ptrs[] = {
	&results[0],
	&results[1],
	&results[2],
	&results[3],
};

static const struct kagg_stat_report report = {
	.sz = sizeof(struct kagg_stat_report),
	.target = "command 'x' (pid 42)",
	.pid = 42,
	.cpu = -1,
	.has_exit = true,
	.exit_status = 0,
	.duration_s = 2.0,
	.kernel = "6.18",
	.nr_results = 4,
	.results = result_ptrs,
};

static const char *line_of(const char *out, const char *name)
{
	const char *p = strstr(out, name);

	assert_non_null(p);
	return p;
}

static void test_print_text_cases(void **state)
{
	char *out = print_report(&report, KAGG_FORMAT_TEXT);
	const char *l;

	l = line_of(out, "task-clock");
	assert_true(strstr(l, "estimate 5000\n") != NULL);
	l = line_of(out, "instructions");
	assert_non_null(strstr(l, "estimate 600000  (multiplexed: ran 50.00% of enabled time"));
	l = line_of(out, "branches");
	assert_non_null(strstr(l, "estimate undefined"));
	assert_true(strstr(l, "estimate undefined") < strchr(l, '\n'));
	l = line_of(out, "   cycles");
	assert_non_null(strstr(l, "not supported: perf_event_open: ENOENT"));
	assert_null(strstr(out, "inf"));
	assert_int_equal(tu_lines(out), 2 + 4);
	free(out);
}

static void test_print_json_cases(void **state)
{
	char *out = print_report(&report, KAGG_FORMAT_JSON);

	TU_ASSERT_HAS(out, "\"tool\": \"stat\"", "\"exit_status\": 0",
		      "\"estimate\": 600000,\n      \"scale\": \"scaled\"", "\"multiplexed\": true",
		      "\"time_running_ns\": 0",
		      "\"estimate\": null,\n      \"scale\": \"undefined\"",
		      "\"supported\": false,\n      \"error\": \"ENOENT\"");
	free(out);
}

/* A supported event counted n times, never multiplexed. */
static struct kagg_stat_result exact_result(const char *name, uint64_t n)
{
	return (struct kagg_stat_result){ .sz = sizeof(struct kagg_stat_result),
					  .name = name,
					  .supported = true,
					  .count = n,
					  .enabled_ns = n,
					  .running_ns = n,
					  .scale = KAGG_STAT_EXACT,
					  .estimate = n };
}

/* A report of pid 1 on every CPU with the one result *ptrs, its header naming target. */
static struct kagg_stat_report one_result_report(const char *target,
						 const struct kagg_stat_result *const *ptrs)
{
	return (struct kagg_stat_report){ .sz = sizeof(struct kagg_stat_report),
					  .target = target,
					  .pid = 1,
					  .cpu = -1,
					  .kernel = "6.18",
					  .nr_results = 1,
					  .results = ptrs };
}

/* The header names the command as given, and event names: escaped. */
static void test_print_text_escapes_command(void **state)
{
	struct kagg_stat_result res = exact_result("task\033-clock", 1);
	const struct kagg_stat_result *ptrs[] = { &res };
	struct kagg_stat_report rep = one_result_report("command 'printf \033]0;pwned\007'", ptrs);
	char *out = print_report(&rep, KAGG_FORMAT_TEXT);

	assert_non_null(strstr(out, "# kagg stat: command 'printf \\033]0;pwned\\007', "));
	assert_non_null(strstr(out, "task\\033-clock  "));
	assert_null(strpbrk(out, "\033\007"));
	free(out);
}

/* A report built by a caller: its sz and each result's are checked before printing. */
static void test_print_checks_sizes(void **state)
{
	struct kagg_stat_result bad = results[0];
	const struct kagg_stat_result *ptrs[] = { &results[0], &bad };
	struct kagg_stat_report rep = report;
	struct {
		struct kagg_stat_report rep;
		long extra;
	} big = { .rep = report, .extra = 1 };
	FILE *f = fopen("/dev/null", "w");

	assert_non_null(f);
	assert_int_equal(kagg_stat__print(&rep, f, KAGG_FORMAT_TEXT), 0);
	rep.sz = offsetof(struct kagg_stat_report, results);
	assert_int_equal(kagg_stat__print(&rep, f, KAGG_FORMAT_TEXT), -EINVAL);
	big.rep.sz = sizeof(big);
	assert_int_equal(kagg_stat__print(&big.rep, f, KAGG_FORMAT_TEXT), -EINVAL);
	big.extra = 0;
	assert_int_equal(kagg_stat__print(&big.rep, f, KAGG_FORMAT_JSON), 0);
	rep = report;
	rep.nr_results = 2;
	rep.results = ptrs;
	assert_int_equal(kagg_stat__print(&rep, f, KAGG_FORMAT_TEXT), 0);
	bad.sz = 0;
	assert_int_equal(kagg_stat__print(&rep, f, KAGG_FORMAT_TEXT), -EINVAL);
	fclose(f);
}

/* a within 1e-9 of b, in double precision */
#define NEAR(a, b) assert_true((a) - (b) < 1e-9 && (b) - (a) < 1e-9)

/* perf stat -r's spread: the standard deviation of the mean, in percent of the mean. */
static void test_rel_stddev(void **state)
{
	const double v[] = { 1, 2, 3 }, same[] = { 5, 5, 5 }, zero[] = { -1, 1 };
	const double neg[] = { -1, -2, -3 }, two[] = { 10, 30 };

	/* mean 2, sample variance 1, of the mean 1/3: sqrt(1/3) / 2 */
	NEAR(kagg_stat__rel_stddev(v, 3), 100.0 * 0.5773502691896258 / 2);
	NEAR(kagg_stat__rel_stddev(neg, 3), 100.0 * 0.5773502691896258 / 2);
	/* mean 20, sample variance 200, of the mean 100: 10 / 20 */
	NEAR(kagg_stat__rel_stddev(two, 2), 50.0);
	NEAR(kagg_stat__rel_stddev(same, 3), 0);
	NEAR(kagg_stat__rel_stddev(v, 1), 0);
	NEAR(kagg_stat__rel_stddev(zero, 2), 0);
	NEAR(kagg_stat__rel_stddev(NULL, 3), 0);
}

/*
 * rep printed as fmt has each string of has and none of lacks (TU_STRS lists); returns
 * how many lines it printed.
 */
static int assert_report(const struct kagg_stat_report *rep, enum kagg_format fmt,
			 const char *const *has, const char *const *lacks)
{
	char *out = print_report(rep, fmt);
	int lines = tu_lines(out);

	tu_assert_has(out, has);
	tu_assert_lacks(out, lacks);
	free(out);
	return lines;
}

/* Means of runs and one interval: the header says so, each line its "( +- X% )". */
static void test_print_runs_and_interval(void **state)
{
	struct kagg_stat_result res = exact_result("task-clock", 300);
	const struct kagg_stat_result *ptrs[] = { &res };
	struct kagg_stat_report rep = one_result_report("command 'true'", ptrs);

	res.rel_stddev_pct = 12.345;
	rep.runs = 3;
	assert_report(&rep, KAGG_FORMAT_TEXT,
		      TU_STRS("# kagg stat: command 'true', mean of 3 runs, ",
			      "estimate 300  ( +- 12.35% )\n"),
		      TU_STRS(NULL));
	assert_report(&rep, KAGG_FORMAT_JSON, TU_STRS("\"runs\": 3", "\"rel_stddev_pct\": 12.35"),
		      TU_STRS(NULL));
	/* a report of the first release: neither */
	rep.sz = offsetofend(struct kagg_stat_report, results);
	res.sz = offsetofend(struct kagg_stat_result, estimate);
	assert_report(&rep, KAGG_FORMAT_TEXT, TU_STRS(NULL), TU_STRS("runs", "+-"));
	rep.sz = sizeof(rep);
	rep.runs = 0;
	rep.interval_s = 1.5;
	assert_report(&rep, KAGG_FORMAT_TEXT, TU_STRS(", interval ending at 1.500 s, "),
		      TU_STRS("+-"));
	assert_int_equal(assert_report(&rep, KAGG_FORMAT_NDJSON, TU_STRS("\"interval_s\":1.5"),
				       TU_STRS(NULL)),
			 1);
}

/* Usage errors: exit 2, one line, before anything runs. */
static void test_cli_usage_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, NULL, { "stat", "-e", "task-clock" } },
		{ 2, NULL, { "stat" } }, /* the default events, but nothing to count */
		{ 2, NULL, { "stat", "-o" } },
		{ 2, NULL, { "stat", "-e", "task-clock", "-p", "1", "--", "true" } },
		{ 2, NULL, { "stat", "-e", "task-clock,nosuch", "--", "true" } },
		{ 2, NULL, { "stat", "-e", "task-clock,", "--", "true" } },
		{ 2, NULL, { "stat", "-e", "task-clock", "-d", "1", "--", "true" } },
		{ 2, "10 ms at least", { "stat", "-I", "9", "--", "true" } },
		{ 2, NULL, { "stat", "-I", "x", "--", "true" } },
		{ 2, "-r runs a command", { "stat", "-r", "3", "-a", "-d", "1" } },
		{ 2, NULL, { "stat", "-r", "0", "--", "true" } },
		{ 2, "drop -r", { "stat", "-r", "2", "-I", "100", "--", "true" } },
		{ 2, "drop -p/--cpu", { "stat", "-a", "--cpu", "0", "-d", "1" } },
		{ 2, "drop -p/--cpu", { "stat", "-a", "-p", "1", "-d", "1" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

UU_MAIN(cmocka_unit_test(test_scale), cmocka_unit_test(test_parse_event_names),
	cmocka_unit_test(test_parse_tracepoint_fake_tracefs),
	cmocka_unit_test(test_print_text_cases), cmocka_unit_test(test_print_json_cases),
	cmocka_unit_test(test_print_checks_sizes),
	cmocka_unit_test(test_print_text_escapes_command), cmocka_unit_test(test_rel_stddev),
	cmocka_unit_test(test_print_runs_and_interval), cmocka_unit_test(test_cli_usage_errors))
