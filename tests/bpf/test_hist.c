// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg hist against ground truth: a child writes known sizes
 * to known descriptors, and syscalls:sys_enter_write's count field, filtered
 * to that child, lands in the right log2 or linear buckets, per fd with
 * --key, with its exact extremes (not its buckets' bounds) as min and max;
 * errors name what exists; nothing outlives the tool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include <kagg/kagg.h>
#include <kagg/field_hist.h>
#include "testutil.h"
#include "session/session_internal.h" /* session_no_bpf_atomics */
#include "census.h"

#define EVENT "syscalls:sys_enter_write"
#define FD_A 40 /* the child's two descriptors on /dev/null */
#define FD_B 41

/* Writes: 10 x 100 bytes and 3 x 1 byte on FD_A, 7 x 5000 bytes on FD_B. */
static void writer(void *arg)
{
	static char buf[5000];
	int fd = open("/dev/null", O_WRONLY), i;

	(void)arg;
	if (fd < 0 || dup2(fd, FD_A) < 0 || dup2(fd, FD_B) < 0)
		_exit(1);
	for (i = 0; i < 10; i++)
		if (write(FD_A, buf, 100) != 100)
			_exit(1);
	for (i = 0; i < 3; i++)
		if (write(FD_A, buf, 1) != 1)
			_exit(1);
	for (i = 0; i < 7; i++)
		if (write(FD_B, buf, 5000) != 5000)
			_exit(1);
	_exit(0);
}

/* 9 openat() calls that fail with ENOENT (ret -2) and 4 that return an fd (>= 3). */
static void opener(void *arg)
{
	int i, fd;

	(void)arg;
	for (i = 0; i < 9; i++)
		if (openat(AT_FDCWD, "/nonexistent/kagg-test-hist", O_RDONLY) != -1)
			_exit(1);
	for (i = 0; i < 4; i++) {
		fd = openat(AT_FDCWD, "/dev/null", O_RDONLY);
		if (fd < 3)
			_exit(1);
		close(fd);
	}
	_exit(0);
}

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == KAGG_LOG_WARN)
		printf("  kagg: %s\n", msg);
}

static bool have_event(void)
{
	return !access("/sys/kernel/tracing/events/syscalls/sys_enter_write/format", R_OK) ||
	       !access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_write/format", R_OK);
}

/* Run fn in a child under a session opened with o (filter set here); the snapshot. */
static struct kagg_snapshot *run_child(struct kagg_field_hist_opts *o, tu_work_fn fn)
{
	struct tu_child child = tu_spawn(fn, NULL);
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	char filter[64];

	assert_true(child.pid > 0);
	snprintf(filter, sizeof(filter), "common_pid == %d", child.pid);
	o->filter = filter;
	o->log = quiet_log;
	s = kagg_field_hist__open(o);
	if (!s && errno == ENOENT && !have_event()) {
		kill(child.pid, SIGKILL);
		tu_wait(&child);
		printf("SKIP: no %s tracepoint (kernel without CONFIG_FTRACE_SYSCALLS)\n",
		       o->event);
		skip();
	}
	snap = tu_snap_after_child(s, &child, KAGG_SNAP_RESET);
	kagg_session__destroy(s);
	return snap;
}

/* h's exact extremes are min and max (the writer's sizes, whatever the buckets). */
static void assert_minmax(const struct kagg_hist *h, double min, double max)
{
	double v;

	printf("  min %g, max %g\n", h->min, h->max);
	assert_true(KAGG_HAS_FIELD(h, kagg_hist, max));
	assert_true(h->has_minmax);
	assert_true(h->min == min);
	assert_true(h->max == max);
	/* the percentiles hold within them: p100 is the maximum, not its bucket's bound */
	assert_int_equal(kagg_hist__percentile(h, 100, &v, NULL, NULL), 0);
	assert_true(v == max);
	assert_int_equal(kagg_hist__percentile(h, 0.01, &v, NULL, NULL), 0);
	assert_true(v >= min);
}

/* Printed, in text and JSON: min and max are the extremes, max not 8191 of [4096, 8191]. */
static void assert_minmax_printed(const struct kagg_snapshot *snap)
{
	KAGG_OPTS(kagg_print_opts, json, .format = KAGG_FORMAT_JSON);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(kagg_snapshot__print(snap, f, NULL), 0);
	assert_int_equal(kagg_snapshot__print(snap, f, &json), 0);
	fclose(f);
	TU_ASSERT_HAS(buf, "\nmin   = 1 count\n", "\nmax   = 5000 count\n", "\"min\": 1,",
		      "\"max\": 5000,");
	assert_null(strstr(buf, "max   = 8191"));
	free(buf);
}

static void test_log2_buckets_of_known_writes(void **state)
{
	KAGG_OPTS(kagg_field_hist_opts, o, .event = EVENT, .field = "count");
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	const struct kagg_hist *h;

	TU_SKIP_UNLESS_ROOT();
	snap = run_child(&o, writer);
	m = kagg_snapshot__meta(snap);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	h = kagg_snapshot__hist(snap, 0);
	printf("  %s via %s: total %llu, [0,1] %llu, [64,127] %llu, [4096,8191] %llu\n", m->event,
	       m->attach, (unsigned long long)h->total, (unsigned long long)h->slots[0],
	       (unsigned long long)h->slots[6], (unsigned long long)h->slots[12]);
	assert_string_equal(m->attach, "tracepoint");
	assert_string_equal(h->value, "count");
	assert_int_equal(h->lin_step, 0);
	assert_int_equal(h->total, 20);
	assert_int_equal(h->slots[0], 3);  /* 1 byte: [0, 1] */
	assert_int_equal(h->slots[6], 10); /* 100: [64, 127] */
	assert_int_equal(h->slots[12], 7); /* 5000: [4096, 8191] */
	assert_minmax(h, 1, 5000);
	assert_minmax_printed(snap);
	assert_int_equal(m->events_recorded, 20);
	assert_true(m->events_filtered > 0 || m->events_seen == 20); /* others' writes */
	assert_int_equal(m->drops_total, 0);
	kagg_snapshot__free(snap);
}

static void test_linear_buckets(void **state)
{
	KAGG_OPTS(kagg_field_hist_opts, o, .event = EVENT, .field = "count", .lin_min = 50,
		  .lin_step = 1000);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	snap = run_child(&o, writer);
	h = kagg_snapshot__hist(snap, 0);
	assert_non_null(h);
	assert_int_equal(h->lin_min, 50);
	assert_int_equal(h->lin_step, 1000);
	/* 100 -> [50, 1049]; 5000 -> [4050, 5049]; 1 is below 50 */
	assert_int_equal(h->slots[0], 10);
	assert_int_equal(h->slots[4], 7);
	assert_int_equal(h->total, 17);
	assert_minmax(h, 100, 5000); /* 1 was not counted */
	for (i = 0; i < kagg_snapshot__meta(snap)->nr_drops; i++) {
		const struct kagg_drop *d = kagg_snapshot__meta(snap)->drops[i];

		if (!strcmp(d->cause, "below_range"))
			assert_int_equal(d->count, 3);
		if (!strcmp(d->cause, "above_range"))
			assert_int_equal(d->count, 0);
	}
	kagg_snapshot__free(snap);
}

/* Slot of OpenTelemetry bucket index i in exp histogram h. */
static unsigned int exp_slot(const struct kagg_hist *h, int64_t i)
{
	return (unsigned int)(i - h->exp_base_index + 1);
}

/*
 * --buckets exp:S: 1, 100 and 5000 land in the buckets whose bounds hold them; at scale 3
 * those are the OpenTelemetry indexes -1, 53 and 98 (ceil(8 log2 v) - 1, worked by hand);
 * the sum is exact.
 */
static void test_exp_buckets_of_known_writes(void **state)
{
	static const int scales[] = { 0, 3, 5 };
	static const double width[] = { 1.0, 0.0905077326652577, 0.0218971486541166 };
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	double low, high;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < TU_NR(scales); i++) {
		KAGG_OPTS(kagg_field_hist_opts, o, .event = EVENT, .field = "count",
			  .buckets = KAGG_BUCKETS_EXP, .exp_scale = scales[i]);

		snap = run_child(&o, writer);
		h = kagg_snapshot__hist(snap, 0);
		assert_non_null(h);
		printf("  exp:%d: total %llu, sum %.0f, slots of 1/100/5000: %d %d %d\n", scales[i],
		       (unsigned long long)h->total, h->sum, tu_slot_of(h, 1), tu_slot_of(h, 100),
		       tu_slot_of(h, 5000));
		assert_true(h->has_exp);
		assert_int_equal(h->exp_scale, scales[i]);
		assert_int_equal(h->total, 20);
		assert_int_equal(h->slots[tu_slot_of(h, 1)], 3);
		assert_int_equal(h->slots[tu_slot_of(h, 100)], 10);
		assert_int_equal(h->slots[tu_slot_of(h, 5000)], 7);
		assert_true(h->has_sum);
		assert_true(h->sum == 3 * 1 + 10 * 100 + 7 * 5000);
		assert_minmax(h, 1, 5000);
		kagg_hist__bounds(h, (unsigned int)tu_slot_of(h, 100), &low, &high);
		assert_true(high - low <= low * (width[i] + 1e-12)); /* 2^(2^-S) - 1 */
		if (scales[i] == 3) {
			assert_int_equal(h->slots[exp_slot(h, -1)], 3);
			assert_int_equal(h->slots[exp_slot(h, 53)], 10);
			assert_int_equal(h->slots[exp_slot(h, 98)], 7);
		}
		assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
		kagg_snapshot__free(snap);
	}
}

/* Teardown: BPF atomics probed again, whether the test passed or not. */
static int atomics_back(void **state)
{
	session_no_bpf_atomics = false;
	return 0;
}

/* The histograms of keys FD_A and FD_B, the only keys of snap. */
static void fd_hists(const struct kagg_snapshot *snap, const struct kagg_hist **a,
		     const struct kagg_hist **b)
{
	size_t i;

	*a = *b = NULL;
	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		printf("  key %s: %llu, sum %.0f\n", h->key.label, (unsigned long long)h->total,
		       h->sum);
		if (h->key.id == FD_A)
			*a = h;
		else if (h->key.id == FD_B)
			*b = h;
		else
			fail_msg("unexpected key %s", h->key.label);
	}
	assert_non_null(*a);
	assert_non_null(*b);
}

/*
 * --key fd --buckets exp:3: each descriptor its own exp histogram, the writes in the
 * buckets of their sizes (indexes -1, 53 and 98 as above), the sums exact, nothing dropped.
 */
static void test_exp_buckets_key_per_fd(void **state)
{
	KAGG_OPTS(kagg_field_hist_opts, o, .event = EVENT, .field = "count", .key_field = "fd",
		  .buckets = KAGG_BUCKETS_EXP, .exp_scale = 3);
	const struct kagg_hist *a = NULL, *b = NULL;
	struct kagg_snapshot *snap;
	double low, high;

	TU_SKIP_UNLESS_ROOT();
	snap = run_child(&o, writer);
	fd_hists(snap, &a, &b);
	assert_true(a->has_exp && b->has_exp);
	assert_int_equal(a->exp_scale, 3);
	assert_int_equal(b->exp_scale, 3);
	assert_string_equal(a->key.label, "40");
	assert_int_equal(a->total, 13);
	assert_int_equal(a->slots[exp_slot(a, -1)], 3);
	assert_int_equal(a->slots[exp_slot(a, 53)], 10);
	assert_true(a->sum == 3 * 1 + 10 * 100);
	assert_int_equal(b->total, 7);
	assert_int_equal(b->slots[exp_slot(b, 98)], 7);
	assert_true(b->sum == 7 * 5000);
	assert_minmax(a, 1, 100);
	assert_minmax(b, 5000, 5000);
	kagg_hist__bounds(b, exp_slot(b, 98), &low, &high);
	assert_true(low < 5000 && 5000 <= high);
	assert_true(high - low <= low * (0.0905077326652577 + 1e-12));
	assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
	kagg_snapshot__free(snap);
}

static void test_key_per_fd(void **state)
{
	KAGG_OPTS(kagg_field_hist_opts, o, .event = EVENT, .field = "count", .key_field = "fd");
	struct kagg_snapshot *snap;
	const struct kagg_hist *a = NULL, *b = NULL;

	TU_SKIP_UNLESS_ROOT();
	snap = run_child(&o, writer);
	fd_hists(snap, &a, &b);
	assert_string_equal(a->key.label, "40");
	assert_int_equal(a->total, 13);
	assert_int_equal(a->slots[0], 3);
	assert_int_equal(a->slots[6], 10);
	assert_int_equal(b->total, 7);
	assert_int_equal(b->slots[12], 7);
	assert_minmax(a, 1, 100);
	assert_minmax(b, 5000, 5000);
	kagg_snapshot__free(snap);
}

/*
 * The per-descriptor tests with BPF atomics taken as missing, as on 5.10: the programs
 * load with session_atomics_fallback()'s rewrite (a compare-and-swap as a plain store,
 * exact with one writer) and give the same histograms and extremes.
 */
static void test_key_per_fd_without_atomics(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	session_no_bpf_atomics = true;
	test_key_per_fd(state);
	test_exp_buckets_key_per_fd(state);
	session_no_bpf_atomics = false;
}

/* A signed field: negative values have no log2 bucket (counted apart), linear ones take them. */
static void test_signed_negative_values(void **state)
{
	KAGG_OPTS(kagg_field_hist_opts, lg, .event = "syscalls:sys_exit_openat", .field = "ret");
	KAGG_OPTS(kagg_field_hist_opts, ln, .event = "syscalls:sys_exit_openat", .field = "ret",
		  .lin_min = -4, .lin_step = 1);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	uint64_t negative, above, fds = 0;
	size_t i, last = 0;

	TU_SKIP_UNLESS_ROOT();
	snap = run_child(&lg, opener);
	h = kagg_snapshot__hist(snap, 0);
	negative = tu_drop_count(snap, "negative");
	printf("  log2: %llu recorded, negative %llu\n", (unsigned long long)h->total,
	       (unsigned long long)negative);
	assert_int_equal(negative, 9);
	assert_int_equal(h->total, 4);
	assert_true(h->has_minmax && h->min >= 3 && h->max == h->min); /* one fd, 4 times */
	kagg_snapshot__free(snap);

	snap = run_child(&ln, opener);
	h = kagg_snapshot__hist(snap, 0);
	above = tu_drop_count(snap, "above_range");
	for (i = 7; i < 64; i++) { /* [3, ...]: the fds */
		fds += h->slots[i];
		last = h->slots[i] ? i : last;
	}
	printf("  linear from -4: [-2] %llu, fds %llu, above %llu\n",
	       (unsigned long long)h->slots[2], (unsigned long long)fds, (unsigned long long)above);
	assert_int_equal(h->slots[2], 9); /* -ENOENT: [-2, -2] */
	assert_int_equal(fds + above, 4);
	assert_int_equal(h->total, 9 + fds);
	/* signed: -2 is the smallest (not the largest, as its bits compare unsigned) */
	assert_true(h->has_minmax);
	assert_true(h->min == -2);
	assert_true(fds ? h->max == (double)(h->lin_min + (int64_t)last) : h->max == -2);
	kagg_snapshot__free(snap);
}

/* ------------------------------------------------------------ CLI */

static void test_cli_errors(void **state)
{
	/* Unknown event or field: say so and list what exists. */
	static const struct tu_error_case cases[] = {
		{ 1,
		  "no such event sched:no_such_event",
		  { "hist", "sched:no_such_event", "x", "-d", "1" } },
		{ 1, "prev_prio", { "hist", "sched:sched_switch", "no_such_field", "-d", "1" } },
		{ 1, "no_such_system", { "hist", "no_such_system:x", "x", "-d", "1" } },
		/* a typo: the nearest name */
		{ 1,
		  "no such event sched:sched_swich; did you mean sched:sched_switch?",
		  { "hist", "sched:sched_swich", "prev_pid", "-d", "1" } },
		{ 1,
		  "did you mean prev_pid?",
		  { "hist", "sched:sched_switch", "prev_pdi", "-d", "1" } },
		{ 2,
		  "filter",
		  { "hist", "sched:sched_switch", "prev_prio", "--filter", "prev_prio ~ 3" } },
		{ 2,
		  "prev_prio, a 4-byte signed field",
		  { "hist", "sched:sched_switch", "prev_prio", "--filter",
		    "prev_prio == 4294967296" } }, /* an int */
		{ 2,
		  "--step",
		  { "hist", "sched:sched_switch", "prev_prio", "--linear", "--step", "0" } },
		{ 2, "--linear", { "hist", "sched:sched_switch", "prev_prio", "--min", "5" } },
		{ 2, "FIELD", { "hist", "sched:sched_switch" } },
		{ 2,
		  "linear:MIN:STEP",
		  { "hist", "sched:sched_switch", "prev_prio", "--buckets", "linear:5:0" } },
		{ 2, "exp:S", { "hist", "sched:sched_switch", "prev_prio", "--buckets", "exp:6" } },
		{ 2,
		  "not both",
		  { "hist", "sched:sched_switch", "prev_prio", "--buckets", "linear:5:1",
		    "--linear" } },
		{ 2,
		  "numeric key",
		  { "hist", "sched:sched_switch", "prev_prio", "--buckets", "exp:3", "--key",
		    "prev_comm", "-d", "1" } },
	};
	static const struct tu_error_case negmin[] = {
		{ 2, "unsigned", { "hist", EVENT, "count", "--linear", "--min", "-10" } },
	};

	TU_SKIP_UNLESS_ROOT();
	tu_expect_errors(cases, TU_NR(cases));
	if (have_event())
		tu_expect_errors(negmin, 1); /* count is a size_t */
}

/* The CLI with JSON on a live event, then SIGINT and SIGTERM: exit 0, nothing left. */
static void test_cli_json_and_clean_exit(void **state)
{
	char *json[] = { "hist", "sched:sched_switch", "prev_prio", "--linear", "--min",
			 "100",	 "--format",	       "json",	    "-d",	"1",
			 NULL };
	char *loop[] = {
		"hist", "sched:sched_switch", "prev_pid", "--key", "prev_comm", "-i", "0.2", NULL
	};
	static struct tu_census before;
	char *out = NULL, *err = NULL;
	int rc, sigs[] = { SIGINT, SIGTERM }, i;
	pid_t child;

	TU_SKIP_UNLESS_ROOT();
	tu_census_take(&before, "hist_", "hist_");
	rc = tu_run_kagg(json, &out, &err, 0, 0);
	assert_int_equal(rc, 0);
	TU_ASSERT_HAS(out, "\"field\": \"prev_prio\"", "\"scale\": \"linear\"",
		      "{\"low\":100,\"high\":100,\"count\":", "\"attach\": \"tracepoint\"");
	free(out);
	free(err);
	for (i = 0; i < 2; i++) {
		/* the signal once kagg has attached and a child has slept 3 x 200 ms */
		struct tu_sleeps sl = { .count = 3, .ms = 200 };
		const struct tu_on_child on = {
			.fn = tu_sleeper, .arg = &sl, .attached = "hist_", .stop_sig = sigs[i]
		};

		rc = tu_run_kagg_on(loop, &on, &child, &out, &err);
		printf("  signal %d: exit %d\n", sigs[i], rc);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "prev_pid"));
		free(out);
		free(err);
	}
	tu_assert_nothing_left(&before, "hist_", "hist_", "json, SIGINT, SIGTERM");
}

TU_MAIN(cmocka_unit_test(test_log2_buckets_of_known_writes), cmocka_unit_test(test_linear_buckets),
	cmocka_unit_test(test_exp_buckets_of_known_writes), cmocka_unit_test(test_key_per_fd),
	cmocka_unit_test(test_exp_buckets_key_per_fd),
	cmocka_unit_test_teardown(test_key_per_fd_without_atomics, atomics_back),
	cmocka_unit_test(test_signed_negative_values), cmocka_unit_test(test_cli_errors),
	cmocka_unit_test(test_cli_json_and_clean_exit), )
