// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The ring buffer benchmark of `kagg rb bench` (tools/rb_bench.h): the
 * counters of a short run agree with the writers' own count and the rows
 * sum to the totals, the printers write what the result holds (the JSON
 * parsed back field by field), bad options and results are refused, a
 * raw directory that cannot be written fails with the reason logged, and
 * a stop flag already set ends the run at once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include "rb_bench.h" /* tools/: the bench is the CLI's */
#include "unit_util.h"

static char logged[512];

static void log_cb(void *ctx, enum kagg_log_level level, const char *msg)
{
	if (level == KAGG_LOG_WARN)
		snprintf(logged, sizeof(logged), "%s", msg);
}

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The unsigned number after "key": in s, which must be there. */
static unsigned long long num_after(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(s, pat);
	assert_non_null(p);
	return strtoull(p + strlen(pat), NULL, 10);
}

static void test_run_counters_agree_and_rows_sum(void **state)
{
	KAGG_OPTS(rbb_opts, o, .writers = 2, .payload = 40, .nr_subbufs = 8, .seconds = 0.1,
		  .log = log_cb);
	struct rbb_result r = { .sz = sizeof(r) };
	struct rbb_cpu row = { .sz = sizeof(row) };
	uint64_t written = 0, read = 0, overrun = 0, dropped = 0, entries = 0;
	int cpu;

	assert_int_equal(rbb__run(&o, &r), 0);
	assert_int_equal(r.sz, sizeof(r));
	assert_int_equal(r.writers, 2);
	assert_int_equal(r.payload, 40);
	assert_int_equal(r.mode, KAGG_RB_OVERWRITE);
	assert_true(r.seconds == 0.1);
	assert_true(r.nr_cpus >= 1);
	assert_true(r.committed > 0);
	/* drained at the end: every commit was read, overwritten, or is still there */
	assert_int_equal(r.read + r.overrun + r.entries, r.committed);
	assert_int_equal(r.written, r.read + r.overrun + r.dropped + r.entries);
	assert_int_equal(r.dropped, 0); /* overwrite mode never refuses */
	assert_true(r.ns_per_event > 0);
	for (cpu = 0; cpu < r.nr_cpus; cpu++) {
		assert_int_equal(rbb_result__cpu(&r, cpu, &row), 0);
		assert_int_equal(row.sz, sizeof(row));
		assert_int_equal(row.written, row.read + row.overrun + row.dropped + row.entries);
		assert_non_null(row.write_path);
#if defined(__aarch64__)
		assert_true(!strcmp(row.write_path, "rseq") ||
			    !strcmp(row.write_path, "locked-casp") ||
			    !strcmp(row.write_path, "locked-llsc"));
#else
		assert_true(!strcmp(row.write_path, "rseq") || !strcmp(row.write_path, "locked"));
#endif
		written += row.written;
		read += row.read;
		overrun += row.overrun;
		dropped += row.dropped;
		entries += row.entries;
	}
	assert_int_equal(written, r.written);
	assert_int_equal(read, r.read);
	assert_int_equal(overrun, r.overrun);
	assert_int_equal(dropped, r.dropped);
	assert_int_equal(entries, r.entries);
	assert_int_equal(rbb_result__cpu(&r, r.nr_cpus, &row), -EINVAL);
	assert_int_equal(rbb_result__cpu(&r, -1, &row), -EINVAL);
	row.sz = 8;
	assert_int_equal(rbb_result__cpu(&r, 0, &row), -EINVAL);
	rbb_result__release(&r);
	assert_null(r.priv);
	assert_int_equal(r.sz, sizeof(r));
	assert_int_equal(rbb_result__cpu(&r, 0, &row), -EINVAL);
	rbb_result__release(NULL);
}

static void test_print_json_and_text(void **state)
{
	KAGG_OPTS(rbb_opts, o, .payload = 16, .mode = KAGG_RB_CONSUME, .seconds = 0.05);
	struct rbb_result r = { .sz = sizeof(r) };
	struct rbb_cpu row = { .sz = sizeof(row) };
	char *buf = NULL, *total, want[256];
	const char *head;
	size_t len = 0;
	FILE *f;

	assert_int_equal(rbb__run(&o, &r), 0);
	assert_int_equal(r.writers, 1); /* default */

	f = open_memstream(&buf, &len);
	assert_int_equal(rbb__print(&r, f, KAGG_FORMAT_JSON), 0);
	fclose(f);
	/* one line, ", " and ": " between members, seconds as %g */
	assert_non_null(strstr(buf, "{\"writers\": 1, \"payload\": 16, \"mode\": \"consume\", "
				    "\"seconds\": 0.05, \"cpus\": [{\"cpu\": 0, \"written\": "));
	assert_int_equal(strchr(buf, '\n') - buf, (long)len - 1);
	assert_int_equal(rbb_result__cpu(&r, 0, &row), 0);
	assert_int_equal(num_after(buf, "written"), row.written); /* cpu 0's comes first */
	total = strstr(buf, "], \"total\": {");
	assert_non_null(total);
	assert_int_equal(num_after(total, "written"), r.written);
	assert_int_equal(num_after(total, "read"), r.read);
	assert_int_equal(num_after(total, "overrun"), r.overrun);
	assert_int_equal(num_after(total, "dropped"), r.dropped);
	assert_int_equal(num_after(total, "commit_overrun"), r.commit_overrun);
	assert_string_equal(buf + len - 3, "}}\n");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(rbb__print(&r, f, KAGG_FORMAT_TEXT), 0);
	fclose(f);
	head = "CPU        written         read      overrun      dropped       ns/event  writers\n"
	       "0     ";
	assert_int_equal(strncmp(buf, head, strlen(head)), 0);
	snprintf(want, sizeof(want), "\ntotal %12llu %12llu %12llu %12llu ",
		 (unsigned long long)r.written, (unsigned long long)r.read,
		 (unsigned long long)r.overrun, (unsigned long long)r.dropped);
	assert_non_null(strstr(buf, want));
	snprintf(want, sizeof(want), "\n(commit overrun %llu; written = read + overrun + dropped; ",
		 (unsigned long long)r.commit_overrun);
	assert_non_null(strstr(buf, want));
	free(buf);

	assert_int_equal(rbb__print(&r, stdout, (enum kagg_format)7), -EINVAL);
	assert_int_equal(rbb__print(&r, NULL, KAGG_FORMAT_TEXT), -EINVAL);
	rbb_result__release(&r);
	assert_int_equal(rbb__print(&r, stdout, KAGG_FORMAT_TEXT), -EINVAL);
}

static void test_bad_opts_and_result(void **state)
{
	struct rbb_result r = { .sz = sizeof(r) };
	struct {
		struct rbb_opts o;
		int future;
	} big = { .o = { .sz = sizeof(big), .seconds = 0.01 }, .future = 1 };

	{
		KAGG_OPTS(rbb_opts, o, .payload = 4);
		assert_int_equal(rbb__run(&o, &r), -EINVAL);
	}
	{
		KAGG_OPTS(rbb_opts, o, .writers = 1025);
		assert_int_equal(rbb__run(&o, &r), -EINVAL);
	}
	{
		KAGG_OPTS(rbb_opts, o, .seconds = -1);
		assert_int_equal(rbb__run(&o, &r), -EINVAL);
	}
	{
		KAGG_OPTS(rbb_opts, o, .mode = (enum kagg_rb_mode)5);
		assert_int_equal(rbb__run(&o, &r), -EINVAL);
	}
	{
		KAGG_OPTS(rbb_opts, o, .payload = 5000, .seconds = 0.01, .log = log_cb);
		logged[0] = 0;
		assert_int_equal(rbb__run(&o, &r), -EINVAL);
		assert_non_null(strstr(logged, "payload 5000"));
	}
	/* unknown trailing bytes set: refused */
	assert_int_equal(rbb__run(&big.o, &r), -EINVAL);
	assert_int_equal(rbb__run(NULL, &r), -EINVAL);
	{
		KAGG_OPTS(rbb_opts, o, .seconds = 0.01);
		assert_int_equal(rbb__run(&o, NULL), -EINVAL);
		r.sz = sizeof(size_t);
		assert_int_equal(rbb__run(&o, &r), -EINVAL);
	}
	assert_null(r.priv);
}

static void test_unwritable_raw_dir_is_said(void **state)
{
	KAGG_OPTS(rbb_opts, o, .seconds = 0.01, .raw_dir = "/proc/kagg-no-such-dir", .log = log_cb);
	struct rbb_result r = { .sz = sizeof(r) };

	logged[0] = 0;
	assert_int_equal(rbb__run(&o, &r), -ENOENT);
	assert_string_equal(logged, "cannot write to /proc/kagg-no-such-dir: No such file or "
				    "directory");
	assert_null(r.priv);
}

/*
 * --rate: a paced writer sleeps when ahead, so it never attempts more than
 * rate x the run's wall time + one batch (256), however the scheduler ran it.
 */
static void test_rate_bounds_the_attempts(void **state)
{
	KAGG_OPTS(rbb_opts, o, .writers = 2, .seconds = 0.2, .rate = 20000,
		  .mode = KAGG_RB_CONSUME);
	struct rbb_result r = { .sz = sizeof(r) };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	double t0 = mono(), wall;

	assert_int_equal(rbb__run(&o, &r), 0);
	wall = mono() - t0;
	printf("# 2 writers paced to 20000/s for %.3f s: %llu written, %llu committed\n", wall,
	       (unsigned long long)r.written, (unsigned long long)r.committed);
	assert_true(r.committed > 0);
	assert_true((double)r.written <= 2 * (20000 * wall + 256));
	assert_true(r.rate == 20000);
	assert_int_equal(rbb__print(&r, f, KAGG_FORMAT_TEXT), 0);
	fclose(f);
	assert_non_null(strstr(text, "paced to 20000 events/s per writer; lost "));
	free(text);
	rbb_result__release(&r);
	{
		KAGG_OPTS(rbb_opts, bad, .rate = -1);
		struct rbb_result rb = { .sz = sizeof(rb) };

		assert_int_equal(rbb__run(&bad, &rb), -EINVAL);
	}
}

static void test_stop_flag_ends_the_run(void **state)
{
	static volatile sig_atomic_t stop = 1;
	KAGG_OPTS(rbb_opts, o, .seconds = 30, .stop = &stop);
	struct rbb_result r = { .sz = sizeof(r) };
	double t0 = mono();

	assert_int_equal(rbb__run(&o, &r), 0);
	assert_true(mono() - t0 < 10);
	assert_true(r.seconds == 30); /* as asked */
	assert_int_equal(r.read + r.overrun + r.entries, r.committed);
	rbb_result__release(&r);
}

UU_MAIN(cmocka_unit_test(test_run_counters_agree_and_rows_sum),
	cmocka_unit_test(test_print_json_and_text), cmocka_unit_test(test_bad_opts_and_result),
	cmocka_unit_test(test_unwritable_raw_dir_is_said),
	cmocka_unit_test(test_stop_flag_ends_the_run),
	cmocka_unit_test(test_rate_bounds_the_attempts))
