// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg funclat against ground truth.
 *
 * User functions (uprobes, run on the host): tests/helpers/funclat_target
 * has functions that sleep known times; each call must land in the log2
 * bucket of its duration, every level of a recursion in its own bucket, and
 * a glob must give one histogram per function.
 *
 * Kernel functions (fentry, kprobe, kprobe.multi): run in the kernel matrix
 * guests (tests/vm); on a kernel without the path they skip with the reason,
 * unless KAGG_REQUIRE_ATTACH names it (then they fail).  Ground truth: N
 * getpgid(2) calls from this process give N latencies of __x64_sys_getpgid
 * (__arm64_sys_getpgid on arm64).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <kagg/kagg.h>
#include <kagg/funclat.h>
#include "census.h"
#include "testutil.h"

/* The syscall wrappers' prefix: __x64_sys_NAME, __arm64_sys_NAME. */
#if defined(__aarch64__)
#define SYSW "__arm64_sys_"
#else
#define SYSW "__x64_sys_"
#endif

static char target[PATH_MAX];
/* KAGG_TARGET_TIMES: where funclat_target writes each sleeping call's wall time. */
static char times_path[] = "/tmp/kagg-funclat-times.XXXXXX";

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	if (level == KAGG_LOG_WARN || getenv("KAGG_TEST_VERBOSE"))
		fprintf(stderr, "  kagg: %s\n", msg);
}

static int find_target(void **state)
{
	const char *dir = getenv("KAGG_HELPERS");
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/funclat_target",
		 dir && *dir ? dir : "build/tests/helpers");
	if (!realpath(path, target) || access(target, X_OK)) {
		printf("funclat_target not found (%s): build it with make\n", path);
		return -1;
	}
	if (times_path[sizeof(times_path) - 2] == 'X') {
		int fd = mkstemp(times_path);

		if (fd < 0)
			return -1;
		close(fd);
		setenv("KAGG_TARGET_TIMES", times_path, 1);
	}
	return 0;
}

static int drop_times(void **state)
{
	unlink(times_path);
	return 0;
}

/* Forget the wall times noted so far (before the runs a check looks at). */
static void walls_reset(void)
{
	assert_int_equal(truncate(times_path, 0), 0);
}

/*
 * h (microseconds) against the wall times funclat_target (process pid; 0: any) noted for func
 * since walls_reset():
 * one count per call, none below slot first (the calls' shortest possible latency), and at
 * or below every slot k as many as there were calls whose wall time ended below the slot's
 * end (a call's latency lies within its wall time), however late the scheduler woke some.
 */
static unsigned int walls_read(const char *func, int pid, unsigned long long *walls,
			       unsigned int max)
{
	unsigned long long ns;
	unsigned int n = 0;
	char name[64];
	int who;
	FILE *f = fopen(times_path, "r");

	assert_non_null(f);
	while (fscanf(f, "%63s %d %llu", name, &who, &ns) == 3)
		if (!strcmp(name, func) && (!pid || who == pid) && n < max)
			walls[n++] = ns;
	fclose(f);
	return n;
}

/* How many of func's noted calls took less than us microseconds of wall time. */
static unsigned int walls_under(const char *func, double us)
{
	unsigned long long walls[256];
	unsigned int n = walls_read(func, 0, walls, 256), i, under = 0;

	for (i = 0; i < n; i++)
		under += walls[i] < us * 1000;
	return under;
}

static void walls_check(const struct kagg_hist *h, const char *func, unsigned int first, int pid)
{
	unsigned long long walls[256];
	uint64_t cum = 0;
	unsigned int k, n = walls_read(func, pid, walls, 256), i, under;

	assert_true(n > 0);
	assert_int_equal(h->total, n);
	for (k = 0; k < first; k++)
		assert_int_equal(h->slots[k], 0);
	for (k = first; k < 40; k++) {
		cum += h->slots[k];
		for (i = 0, under = 0; i < n; i++)
			under += walls[i] < (2ULL << k) * 1000;
		if (cum < under)
			printf("  %s: %llu counted up to slot %u, but %u calls took less than %llu "
			       "us\n",
			       func, (unsigned long long)cum, k, under, 2ULL << k);
		assert_true(cum >= under);
	}
}

/*
 * Tracing more than one function tells them apart by attach cookie
 * (bpf_get_attach_cookie, 5.15): without it (5.10) a glob is refused, and the
 * tests that need several functions skip naming the feature.
 */
static void skip_unless_attach_cookies(void)
{
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) > 0)
		return;
	printf("skip: this kernel lacks BPF attach cookies (bpf_get_attach_cookie): "
	       "one function at a time\n");
	fflush(stdout);
	skip();
}

/* Run funclat_target with args; its exit status. */
static int run_target(const char *a0, const char *a1, const char *a2, const char *a3)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execl(target, target, a0, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct kagg_session *open_user(const char *func, enum kagg_funclat_attach attach, int pid)
{
	char pattern[PATH_MAX + 64];
	struct kagg_session *s;

	snprintf(pattern, sizeof(pattern), "%s:%s", target, func);
	KAGG_OPTS(kagg_funclat_opts, o, .pattern = pattern, .attach = attach, .pid = pid,
		  .log = quiet_log);
	s = kagg_funclat__open(&o);
	tu_attach(s);
	return s;
}

/*
 * The run of the two-call tests: the wall times emptied, funclat_target run with a0 a1,
 * then with b0 b1 (each exits 0), then a snapshot of s (reset).
 */
static struct kagg_snapshot *snap_after_two_runs(struct kagg_session *s, const char *a0,
						 const char *a1, const char *b0, const char *b1)
{
	walls_reset();
	assert_int_equal(run_target(a0, a1, NULL, NULL), 0);
	assert_int_equal(run_target(b0, b1, NULL, NULL), 0);
	return tu_snapshot(s, KAGG_SNAP_RESET);
}

static const struct kagg_hist *hist_by_label(const struct kagg_snapshot *snap, const char *label)
{
	const struct kagg_hist *h = tu_find_label(snap, label);

	if (!h)
		fail_msg("no histogram labelled %s", label);
	return h;
}

/*
 * The default user path: uprobe.multi, or single uprobes on kernels without
 * it (before 6.6), and then meta says uprobe.multi failed.
 */
static void assert_auto_user_path(const struct kagg_meta *m)
{
	if (!strcmp(m->attach, "uprobe")) {
		printf("  auto path: uprobe (%s)\n", m->attach_note ? m->attach_note : "no note");
		assert_non_null(m->attach_note);
		assert_non_null(strstr(m->attach_note, "uprobe.multi"));
		return;
	}
	assert_string_equal(m->attach, "uprobe.multi");
}

/* Slot of log2 bucket [low, 2 * low - 1] for low a power of two. */
static unsigned int slot_of(uint64_t low)
{
	unsigned int k = 0;

	while ((1ULL << (k + 1)) <= low)
		k++;
	return k;
}

static void test_sleep20_lands_in_bucket(void **state)
{
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct kagg_session *s;
	uint64_t wall;

	TU_SKIP_UNLESS_ROOT();
	s = open_user("target_sleep_20ms", KAGG_FUNCLAT_AUTO, 0);
	walls_reset();
	wall = tu_now_ns();
	assert_int_equal(run_target("sleep20", "12", NULL, NULL), 0);
	wall = tu_now_ns() - wall;
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	h = hist_by_label(snap, "target_sleep_20ms");
	assert_int_equal(h->key.id, 0);
	/* 20 ms = 20000 us: [16384, 32767], unless the wall time says it took longer */
	assert_int_equal(h->total, 12);
	walls_check(h, "target_sleep_20ms", slot_of(16384), 0);
	/* The sum (us): 12 calls of at least 20 ms each, within the target's run time. */
	printf("  sum %.0f us, wall %.0f us\n", h->sum, wall / 1e3);
	assert_true(h->has_sum);
	assert_true(h->sum >= 12 * 20000.0 && h->sum <= wall / 1e3);
	assert_auto_user_path(kagg_snapshot__meta(snap));
	assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/*
 * --buckets exp:3, recursion of depth 5 (levels of 4.5 * 2^k ms): no call in a bucket
 * below 4.5 ms, the buckets from the bottom hold the levels as with log2 (a late wakeup
 * may lift one call), the exact sum lies within the buckets' bounds (one dense array for
 * the one function); with the sparse form capped at one cell the calls of every other
 * bucket are dropped as "exp_cells", and counted.
 */
static void test_exp_buckets_recursion(void **state)
{
	char pattern[PATH_MAX + 64];
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct kagg_session *s;
	double low, high, lv;
	unsigned int k, i;
	uint64_t cum;

	TU_SKIP_UNLESS_ROOT();
	snprintf(pattern, sizeof(pattern), "%s:target_recurse", target);
	for (i = 0; i < 2; i++) {
		KAGG_OPTS(kagg_funclat_opts, o, .pattern = pattern, .buckets = KAGG_BUCKETS_EXP,
			  .exp_scale = 3, .exp_cells = i ? 1 : 0, .log = quiet_log);

		s = kagg_funclat__open(&o);
		tu_attach(s);
		snap = snap_after_two_runs(s, "recurse", "5", "recurse", "5");
		h = hist_by_label(snap, "target_recurse");
		printf("  exp:3, %s: %llu counted, sum %.0f us, exp_cells dropped %lld\n",
		       i ? "1 sparse cell" : "dense", (unsigned long long)h->total, h->sum,
		       (long long)tu_drop_count(snap, "exp_cells"));
		assert_true(h->has_exp);
		if (!i) {
			assert_int_equal(h->total, 10);
			/* dense: nothing to drop, no such cause */
			assert_int_equal(tu_drop_count(snap, "exp_cells"), ~0ULL);
			assert_true(tu_sum_within_buckets(h));
			/* levels 4.5, 9, 18, 36, 72 ms: count them from the bottom, as above */
			for (k = 0, cum = 0, lv = 4500; k < h->nr_slots; k++) {
				kagg_hist__bounds(h, k, &low, &high);
				if (high < 4500)
					assert_int_equal(h->slots[k], 0);
				if (high >= lv * 2 && lv <= 72000) {
					unsigned int lvl = (unsigned int)(lv / 4500 + 0.5);
					unsigned int n = 0;

					while (lvl >>= 1)
						n++;
					assert_true(cum <= 2 * (n + 1));
					lv *= 2;
				}
				cum += h->slots[k];
			}
			assert_int_equal(cum, 10);
			/* at or below each bucket: every call whose wall time ended in it */
			for (k = 0, cum = 0; k < h->nr_slots; k++) {
				kagg_hist__bounds(h, k, &low, &high);
				cum += h->slots[k];
				assert_true(cum >= walls_under("target_recurse", high));
			}
		} else {
			/* one bucket counted: at most its level's 2 calls and one lifted call */
			assert_true(h->total >= 1 && h->total <= 3);
			assert_int_equal(h->total + tu_drop_count(snap, "exp_cells"), 10);
		}
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
	}
}

/* Recursion of depth 5: level k lasts 4.5 * 2^k ms, so each level has its own bucket. */
static void recursion_levels(enum kagg_funclat_attach attach, const char *path)
{
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct kagg_session *s;
	unsigned int k;
	uint64_t cum;

	TU_SKIP_UNLESS_ROOT();
	s = open_user("target_recurse", attach, 0);
	snap = snap_after_two_runs(s, "recurse", "5", "recurse", "5");
	if (path)
		assert_string_equal(kagg_snapshot__meta(snap)->attach, path);
	else
		assert_auto_user_path(kagg_snapshot__meta(snap));
	h = hist_by_label(snap, "target_recurse");
	assert_int_equal(h->total, 10);
	/*
	 * 4.5, 9, 18, 36, 72 ms -> [4096,8191] [8192,16383] ... [65536,131071] us,
	 * two calls each.  No call can be shorter than its level; a wakeup late
	 * by a few ms (a loaded host) can put one a bucket up.  So counted from
	 * the bottom, the buckets up to level k hold at most the 2(k+1) calls of
	 * levels <= k, and at least every call whose wall time (noted by its
	 * caller) ended inside them.
	 */
	for (k = 0, cum = 0; k < 5; k++) {
		cum += h->slots[slot_of(4096) + k];
		assert_true(cum <= 2 * (k + 1));
	}
	walls_check(h, "target_recurse", slot_of(4096), 0);
	assert_int_equal(h->slots[slot_of(4096) - 1], 0);
	assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

static void test_recursion_each_level_timed_multi(void **state)
{
	recursion_levels(KAGG_FUNCLAT_AUTO, NULL);
}

static void test_recursion_each_level_timed_single_uprobes(void **state)
{
	recursion_levels(KAGG_FUNCLAT_UPROBE, "uprobe");
}

/*
 * After `nested 4` and `nop 1000` under a session on target_*: one histogram per function,
 * nested calls of different functions timed apart.
 */
static void assert_glob_hists(const struct kagg_snapshot *snap)
{
	static const char *const names[] = { "target_nop", "target_outer", "target_recurse",
					     "target_sleep_20ms", "target_sleep_5ms" };
	const struct kagg_hist *h;
	size_t i;

	assert_int_equal(kagg_snapshot__hist_cnt(snap), 5);
	for (i = 0; i < 5; i++) {
		h = kagg_snapshot__hist(snap, i);
		assert_string_equal(h->key.label, names[i]);
		assert_int_equal(h->key.id, i);
	}
	/*
	 * outer: 2 + 5 + 2 ms = 9 ms -> [8192, 16383]; inner 5 ms -> [4096, 8191].
	 * Never shorter; a sleep woken late (seen under TCG in the 6.1 guest) may
	 * land higher, but only as high as its wall time.
	 */
	h = hist_by_label(snap, "target_outer");
	assert_int_equal(h->total, 4);
	walls_check(h, "target_outer", slot_of(8192), 0);
	h = hist_by_label(snap, "target_sleep_5ms");
	assert_int_equal(h->total, 4);
	walls_check(h, "target_sleep_5ms", slot_of(4096), 0);
	assert_int_equal(hist_by_label(snap, "target_nop")->total, 1000);
	assert_int_equal(hist_by_label(snap, "target_recurse")->total, 0);
	assert_int_equal(kagg_snapshot__meta(snap)->events_recorded, 1008);
}

/* A glob: one histogram per function, nested calls of different functions timed apart. */
static void glob_per_function(enum kagg_funclat_attach attach)
{
	struct kagg_snapshot *snap;
	struct kagg_session *s;

	TU_SKIP_UNLESS_ROOT();
	skip_unless_attach_cookies();
	s = open_user("target_*", attach, 0);
	snap = snap_after_two_runs(s, "nested", "4", "nop", "1000");
	assert_glob_hists(snap);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

static void test_glob_one_hist_per_function_multi(void **state)
{
	glob_per_function(KAGG_FUNCLAT_AUTO);
}

static void test_glob_one_hist_per_function_single_uprobes(void **state)
{
	glob_per_function(KAGG_FUNCLAT_UPROBE);
}

/*
 * The same glob in two sessions at once, one with per-CPU histograms (the default here) and
 * one whose memory bound makes them shared by the CPUs (hist_all, atomic adds): each
 * session's histograms hold every call, each in the bucket its wall time allows, and the
 * extremes of those that counted (each session times a call with its own probes: their
 * values differ by the nanoseconds between them).
 */
static void test_shared_histograms(void **state)
{
	char pattern[PATH_MAX + 64];
	KAGG_OPTS(kagg_funclat_opts, po, .pattern = pattern, .log = quiet_log, .overhead = true);
	KAGG_OPTS(kagg_funclat_opts, so, .pattern = pattern, .log = quiet_log, .overhead = true,
		  .percpu_max_bytes = 1);
	struct kagg_snapshot *sp, *ss;
	const struct kagg_hist *b;
	const struct kagg_meta *m;
	struct kagg_session *p, *s;
	bool shared = false;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	skip_unless_attach_cookies();
	snprintf(pattern, sizeof(pattern), "%s:target_*", target);
	p = kagg_funclat__open(&po);
	s = kagg_funclat__open(&so);
	assert_non_null(p);
	assert_non_null(s);
	tu_attach(p);
	tu_attach(s);
	sp = snap_after_two_runs(p, "nested", "4", "nop", "1000");
	ss = tu_snapshot(s, KAGG_SNAP_RESET);
	/* the second session's histograms are in hist_all, 2 generations x 5 functions */
	m = kagg_snapshot__meta(ss);
	for (i = 0; i < m->nr_maps; i++)
		if (!strcmp(m->maps[i]->map, "hist_all")) {
			shared = m->maps[i]->max_entries == 10 && m->maps[i]->copies == 1;
			printf("  hist_all: %s, %u entries x%u\n", m->maps[i]->type,
			       m->maps[i]->max_entries, m->maps[i]->copies);
		}
	assert_true(shared);
	assert_glob_hists(sp);
	assert_glob_hists(ss);
	for (i = 0; i < 5; i++) {
		b = kagg_snapshot__hist(ss, i);
		assert_true(b->has_minmax == (b->total > 0));
		assert_true(!b->has_minmax || b->min <= b->max);
	}
	printf("  per-CPU and shared: every call of the 5 functions counted in its bucket\n");
	kagg_snapshot__free(sp);
	kagg_snapshot__free(ss);
	kagg_session__destroy(p);
	kagg_session__destroy(s);
}

/* Work that is the target program: exec it (arg: its NULL-terminated argv). */
static void exec_target(void *arg)
{
	execv(target, arg);
	_exit(127);
}

/*
 * Release mine (the target sleeping 5 ms 6 times), run the target's 9 sleeps in another
 * process to its end, wait for mine: then a snapshot of s.
 */
static struct kagg_snapshot *mine_and_other(struct kagg_session *s, struct tu_child *mine)
{
	pid_t other;
	int st;

	tu_go(mine);
	other = fork();
	if (other == 0) {
		execl(target, target, "sleep5", "9", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(other, &st, 0), other);
	assert_int_equal(tu_wait(mine), 0);
	return tu_snapshot(s, 0);
}

/* -p: only the chosen process's calls count, another running the same binary does not. */
static void test_pid_filter(void **state)
{
	char *mine_argv[] = { target, "sleep5", "6", NULL };
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child mine;

	TU_SKIP_UNLESS_ROOT();
	walls_reset();
	mine = tu_spawn(exec_target, mine_argv);
	s = open_user("target_sleep_5ms", KAGG_FUNCLAT_AUTO, mine.pid);
	snap = mine_and_other(s, &mine);
	assert_int_equal(hist_by_label(snap, "target_sleep_5ms")->total, 6);
	/* 5 ms: [4096, 8191] us; a wakeup late by 3.2 ms (a loaded host) goes higher */
	walls_check(hist_by_label(snap, "target_sleep_5ms"), "target_sleep_5ms", slot_of(4096),
		    mine.pid);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/*
 * -c/--cgroup, as funclatency's: the calls of the process in the cgroup are timed, those
 * of the same function in a process outside it are not.
 */
static void test_cgroup_filter(void **state)
{
	char *mine_argv[] = { target, "sleep5", "6", NULL };
	char dir[128], pattern[PATH_MAX + 64];
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child mine;

	TU_SKIP_UNLESS_ROOT();
	tu_cgroup_dir(__func__, "kagg-funclat-test", dir, sizeof(dir));
	mine = tu_spawn(exec_target, mine_argv);
	assert_int_equal(tu_cgroup_add(dir, mine.pid), 0);
	snprintf(pattern, sizeof(pattern), "%s:target_sleep_5ms", target);
	{
		KAGG_OPTS(kagg_funclat_opts, o, .pattern = pattern, .cgroup = dir,
			  .log = quiet_log);

		s = kagg_funclat__open(&o);
	}
	tu_attach(s);
	snap = mine_and_other(s, &mine);
	printf("  in the cgroup: 6 calls; outside: 9; timed: %llu; filters: %s\n",
	       (unsigned long long)hist_by_label(snap, "target_sleep_5ms")->total,
	       kagg_snapshot__meta(snap)->filters);
	assert_int_equal(hist_by_label(snap, "target_sleep_5ms")->total, 6);
	assert_non_null(strstr(kagg_snapshot__meta(snap)->filters, "cgroup="));
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	rmdir(dir);
}

/* Interval snapshots: every call lands in exactly one of them. */
static void test_interval_snapshots_exact(void **state)
{
	struct kagg_session *s;
	uint64_t sum = 0;
	pid_t pid;
	int st, i;

	TU_SKIP_UNLESS_ROOT();
	s = open_user("target_nop", KAGG_FUNCLAT_AUTO, 0);
	pid = fork();
	if (pid == 0) {
		execl(target, target, "nop", "200000", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 50; i++) {
		struct kagg_snapshot *snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);

		assert_non_null(snap);
		sum += kagg_snapshot__hist(snap, 0)->total;
		kagg_snapshot__free(snap);
		tu_sleep_ms(5);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	{
		struct kagg_snapshot *snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);

		sum += kagg_snapshot__hist(snap, 0)->total;
		kagg_snapshot__free(snap);
	}
	assert_int_equal(sum, 200000);
	kagg_session__destroy(s);
}

/* ------------------------------------------------------------ CLI */

/* The count of the JSON bucket [low, high] in out (0 when it is not there). */
static long json_bucket(const char *out, long low, long high)
{
	char key[96];
	const char *p;

	snprintf(key, sizeof(key), "{\"low\":%ld,\"high\":%ld,\"count\":", low, high);
	p = strstr(out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

static void test_cli_json_and_clean_exit(void **state)
{
	char pattern[PATH_MAX + 64], *out = NULL, *err = NULL;
	int rc, st;
	char *argv[] = { "funclat", pattern, "-d", "60", "--format", "json", "--overhead", NULL };
	char *argv_int[] = { "funclat", pattern, "-i", "0.5", NULL };
	char *work[] = { target, "sleep5", "7", NULL };
	const struct tu_on_child on = { .fn = exec_target,
					.arg = work,
					.attached = "funclat_",
					.stop_sig = SIGINT,
					.child_rc = &st };
	static struct tu_census before;
	pid_t pid;

	TU_SKIP_UNLESS_ROOT();
	snprintf(pattern, sizeof(pattern), "%s:target_sleep_5ms", target);
	walls_reset();
	rc = tu_run_kagg_on(argv, &on, &pid, &out, &err);
	assert_int_equal(st, 0);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"label\": \"target_sleep_5ms\""));
	/* uprobe.multi, or single uprobes with the reason in the note (before 6.6) */
	if (strstr(out, "\"attach\": \"uprobe\"")) {
		assert_non_null(strstr(out, "\"attach_note\": \"uprobe.multi "));
		assert_non_null(strstr(out, "funclat_uprobe"));
	} else {
		assert_non_null(strstr(out, "\"attach\": \"uprobe.multi\""));
		assert_non_null(strstr(out, "funclat_uprobe_multi"));
	}
	/* funclatency's unit by default: nanoseconds */
	assert_non_null(strstr(out, "\"unit\": \"nsecs\""));
	/*
	 * 7 calls of 5 ms: [4194304, 8388607] ns; a wakeup late by 3.3 ms (a loaded
	 * host, a TCG guest) goes higher, never below, and never past its wall time
	 */
	{
		long low, cum = 0;

		for (low = 4194304; low <= (1L << 34); low *= 2) {
			cum += json_bucket(out, low, 2 * low - 1);
			if (cum < (long)walls_under("target_sleep_5ms", 2 * low / 1e3))
				printf("  %ld counted up to %ld ns, but %u calls took less; kagg "
				       "said:\n%s\n",
				       cum, 2 * low - 1,
				       walls_under("target_sleep_5ms", 2 * low / 1e3), out);
			assert_true(cum >= (long)walls_under("target_sleep_5ms", 2 * low / 1e3));
		}
		assert_int_equal(cum, 7);
	}
	assert_int_equal(json_bucket(out, 2097152, 4194303), 0);
	free(out);
	free(err);
	/* SIGINT during an interval run: exit 0, nothing of its own left loaded */
	tu_census_take(&before, "funclat_", "funclat");
	rc = tu_run_kagg(argv_int, &out, &err, SIGINT, 1200);
	assert_int_equal(rc, 0);
	tu_assert_nothing_left(&before, "funclat_", "funclat", "SIGINT, interval run");
	free(out);
	free(err);
}

static void expect_error(char **argv, int want_rc, const char *needle)
{
	char *out = NULL, *err = NULL;
	int rc = tu_run_kagg(argv, &out, &err, 0, 0);

	if (rc != want_rc || tu_lines(err) != 1 || !strstr(err, needle))
		fail_msg("%s %s: rc %d (want %d), stderr: %s", argv[0], argv[1], rc, want_rc, err);
	free(out);
	free(err);
}

static void test_errors_one_line(void **state)
{
	char pattern[PATH_MAX + 64];
	char *nofunc[] = { "funclat", pattern, "-d", "1", NULL };
	char *nolib[] = { "funclat", "nosuchlibkagg:foo", "-d", "1", NULL };
	char *nopid[] = { "funclat", "-p", "2147483000", "c:malloc", "-d", "1", NULL };
	char *nokfunc[] = { "funclat", "kagg_no_such_kernel_function", "-d", "1", NULL };
	char *noarg[] = { "funclat", "-d", "1", NULL };
	char *badattach[] = { "funclat", "--attach", "magic", "vfs_read", NULL };
	char *nocg[] = { "funclat", "-c", "/nonexistent/cg", "c:malloc", "-d", "1", NULL };

	TU_SKIP_UNLESS_ROOT();
	snprintf(pattern, sizeof(pattern), "%s:no_such_function_*", target);
	expect_error(nofunc, 1, "no function matches");
	expect_error(nolib, 1, "no library or program 'nosuchlibkagg'");
	expect_error(nopid, 1, "no such process");
	expect_error(nokfunc, 1, "no kernel function matches");
	expect_error(noarg, 2, "missing FUNC");
	expect_error(badattach, 2, "invalid attach type");
	expect_error(nocg, 1, "/nonexistent/cg");
}

/*
 * Library and program lookup runs nothing and trusts no relative $PATH
 * entry: with PATH=":.:/usr/bin:/bin" and, in the current directory, an
 * `ldconfig` that leaves a mark and a program, c:malloc resolves without
 * running the fake ldconfig, and the program is not found.
 */
static void test_lookup_runs_nothing_from_cwd(void **state)
{
	char dir[] = "/tmp/kagg-test-cwd-XXXXXX", cwd[PATH_MAX], kagg[PATH_MAX],
	     path[PATH_MAX + 32];
	char mark[PATH_MAX + 32], *old_path = getenv("PATH"), *saved = NULL;
	char *libc[] = { "funclat", "c:malloc", "-d", "0.3", NULL };
	char *prog[] = { "funclat", "kaggfakeprog:target_sleep_5ms", "-d", "0.3", NULL };
	char *err = NULL;
	bool ran;
	FILE *f;
	int rc, rc_libc;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(realpath(tu_kagg(), kagg));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	snprintf(mark, sizeof(mark), "%s/ldconfig-ran", dir);
	snprintf(path, sizeof(path), "%s/ldconfig", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\ntouch %s\n", mark);
	fclose(f);
	chmod(path, 0755);
	snprintf(path, sizeof(path), "%s/kaggfakeprog", dir);
	assert_int_equal(symlink(target, path), 0);
	saved = old_path ? strdup(old_path) : NULL;
	setenv("KAGG", kagg, 1);
	setenv("PATH", ":.:/usr/bin:/bin", 1);
	assert_int_equal(chdir(dir), 0);

	rc_libc = tu_run_kagg(libc, NULL, &err, 0, 0);
	ran = !access(mark, F_OK);
	printf("  funclat c:malloc: exit %d; the fake ldconfig %s\n", rc_libc,
	       ran ? "RAN" : "did not run");
	free(err);
	err = NULL;
	rc = tu_run_kagg(prog, NULL, &err, 0, 0);
	printf("  funclat kaggfakeprog:...: exit %d: %s", rc, err ? err : "\n");

	assert_int_equal(chdir(cwd), 0);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	unlink(mark);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ldconfig", dir);
	unlink(path);
	rmdir(dir);
	assert_int_equal(rc_libc, 0);
	assert_false(ran);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(err, "no library or program 'kaggfakeprog'"));
	free(err);
}

/* ------------------------------------------------------------ kernel functions (guests) */

static bool required(const char *name)
{
	const char *req = getenv("KAGG_REQUIRE_ATTACH");
	size_t n = strlen(name);
	const char *p;

	if (!req)
		return false;
	if (!strcmp(req, "all"))
		return true;
	for (p = req; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		p = end ? end + 1 : p + len;
	}
	return false;
}

struct kcase {
	const char *pattern;
	enum kagg_funclat_attach attach;
	const char *require; /* path that must work when KAGG_REQUIRE_ATTACH names it */
};

/* Open a kernel-function session for this process; NULL after skip/fail. */
static struct kagg_session *open_kernel(const struct kcase *kc)
{
	struct kagg_session *s;
	int err;

	KAGG_OPTS(kagg_funclat_opts, o, .pattern = kc->pattern, .attach = kc->attach,
		  .pid = getpid(), .unit = KAGG_UNIT_NSECS, .log = quiet_log);
	s = kagg_funclat__open(&o);
	if (!s) {
		err = errno;
		if (err == EOPNOTSUPP && !required(kc->require)) {
			printf("skip: %s: kernel function tracing via %s unavailable on this "
			       "kernel "
			       "(%s; see the message above)\n",
			       kc->pattern, kc->require, strerrorname_np(err));
			fflush(stdout);
			skip();
		}
		fail_msg("%s via %s: open failed: %s", kc->pattern, kc->require, strerror(err));
	}
	assert_int_equal(kagg_session__attach(s), 0);
	return s;
}

static void kernel_getpgid(const struct kcase *kc, const char *want_path)
{
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	struct kagg_session *s;
	int i;

	TU_SKIP_UNLESS_ROOT();
	if (strchr(kc->pattern, '*'))
		skip_unless_attach_cookies();
	s = open_kernel(kc);
	for (i = 0; i < 64; i++)
		syscall(SYS_getpgid, 0);
	for (i = 0; i < 32; i++)
		syscall(SYS_getpid);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	m = kagg_snapshot__meta(snap);
	printf("KAGG-FUNCLAT pattern=%s attach=%s functions=%zu note=%s\n", kc->pattern, m->attach,
	       kagg_snapshot__hist_cnt(snap), m->attach_note ? m->attach_note : "none");
	if (want_path)
		assert_string_equal(m->attach, want_path);
	/* A glob matches getpid, getppid, getpgid, getpgrp, getpriority, getpeername. */
	if (strchr(kc->pattern, '*'))
		assert_true(kagg_snapshot__hist_cnt(snap) >= 2);
	assert_non_null(hist_by_label(snap, SYSW "getpgid"));
	assert_int_equal(hist_by_label(snap, SYSW "getpgid")->total, 64);
	if (tu_find_label(snap, SYSW "getpid"))
		assert_int_equal(tu_find_label(snap, SYSW "getpid")->total, 32);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

static void test_kernel_fentry(void **state)
{
	const struct kcase kc = { SYSW "getpgid", KAGG_FUNCLAT_FENTRY, "fentry" };

	kernel_getpgid(&kc, "fentry");
}

static void test_kernel_kprobe(void **state)
{
	const struct kcase kc = { SYSW "getpgid", KAGG_FUNCLAT_KPROBE, "kprobe" };

	kernel_getpgid(&kc, "kprobe");
}

static void test_kernel_kprobe_multi(void **state)
{
	const struct kcase kc = { SYSW "getp*", KAGG_FUNCLAT_KPROBE_MULTI, "kprobe.multi" };

	kernel_getpgid(&kc, "kprobe.multi");
}

/* What the tool does by default for a glob: kprobe.multi, else single kprobes. */
static void test_kernel_glob_auto(void **state)
{
	const struct kcase kc = { SYSW "getp*", KAGG_FUNCLAT_AUTO, "kprobe" };

	kernel_getpgid(&kc, NULL);
}

/*
 * exp:5 on libc's getp* (24 functions, more than the 7 dense histograms that fit in
 * 256 KiB per CPU, so in exp cells), this process only: 3000 getpgid() (frequent: it
 * moves on to a dense histogram) and 40 getppid() (stays in cells) show exactly those
 * counts, their sums within their buckets, nothing dropped.
 */
static void test_exp_cells_then_dense(void **state)
{
	KAGG_OPTS(kagg_funclat_opts, o, .pattern = "c:getp*", .pid = getpid(),
		  .unit = KAGG_UNIT_NSECS, .buckets = KAGG_BUCKETS_EXP, .exp_scale = 5,
		  .log = quiet_log);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct kagg_session *s;
	int i;

	TU_SKIP_UNLESS_ROOT();
	skip_unless_attach_cookies();
	s = kagg_funclat__open(&o);
	tu_attach(s);
	for (i = 0; i < 3000; i++)
		getpgid(0);
	for (i = 0; i < 40; i++)
		getppid();
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	printf("  exp:5, %zu functions: exp_cells dropped %lld\n", kagg_snapshot__hist_cnt(snap),
	       (long long)tu_drop_count(snap, "exp_cells"));
	assert_true(kagg_snapshot__hist_cnt(snap) > 7);
	assert_int_equal(tu_drop_count(snap, "exp_cells"), 0);
	h = hist_by_label(snap, "getpgid");
	assert_true(h->has_exp && h->exp_scale == 5);
	assert_int_equal(h->total, 3000);
	assert_true(tu_sum_within_buckets(h));
	h = hist_by_label(snap, "getppid");
	assert_int_equal(h->total, 40);
	assert_true(tu_sum_within_buckets(h));
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* Host without kprobes and fentry: the error names both paths. */
static void test_kernel_unavailable_message(void **state)
{
	char *argv[] = { "funclat", "vfs_read", "-d", "1", NULL };
	char *out = NULL, *err = NULL;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	if (!access("/sys/bus/event_source/devices/kprobe", F_OK)) {
		printf("skip: this kernel has kprobes: the unavailable message cannot show\n");
		skip();
	}
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	assert_int_equal(rc, 1);
	assert_int_equal(tu_lines(err), 1);
	assert_non_null(strstr(err, "kernel function tracing unavailable: fentry"));
	assert_non_null(strstr(err, "kprobes not built (CONFIG_KPROBES)"));
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sleep20_lands_in_bucket),
		cmocka_unit_test(test_recursion_each_level_timed_multi),
		cmocka_unit_test(test_exp_buckets_recursion),
		cmocka_unit_test(test_exp_cells_then_dense),
		cmocka_unit_test(test_recursion_each_level_timed_single_uprobes),
		cmocka_unit_test(test_glob_one_hist_per_function_multi),
		cmocka_unit_test(test_shared_histograms),
		cmocka_unit_test(test_glob_one_hist_per_function_single_uprobes),
		cmocka_unit_test(test_pid_filter),
		cmocka_unit_test(test_cgroup_filter),
		cmocka_unit_test(test_interval_snapshots_exact),
		cmocka_unit_test(test_cli_json_and_clean_exit),
		cmocka_unit_test(test_errors_one_line),
		cmocka_unit_test(test_lookup_runs_nothing_from_cwd),
		cmocka_unit_test(test_kernel_fentry),
		cmocka_unit_test(test_kernel_kprobe),
		cmocka_unit_test(test_kernel_kprobe_multi),
		cmocka_unit_test(test_kernel_glob_auto),
		cmocka_unit_test(test_kernel_unavailable_message),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!getenv("KAGG_TEST_VERBOSE"))
		kagg_libbpf_set_log(NULL, NULL);
	return cmocka_run_group_tests_name("funclat", tests, find_target, drop_times);
}
