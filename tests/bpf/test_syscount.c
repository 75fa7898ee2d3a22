// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg syscount against ground truth: a child making exactly
 * N getppid() calls is counted N times under "getppid"; M failing openat()
 * calls land under "openat:ENOENT"; K 20 ms sleeps land in the
 * [16384, 32767] us bucket of clock_nanosleep -- in the kernel path and in
 * the streamed one; with --mode both the two paths agree call for call; a
 * stalled consumer's losses are all counted; streamed records land as the
 * kernel's raw_syscalls events; keyed per command name or per cgroup, each
 * name's and cgroup's calls are counted exactly; no BPF object outlives the
 * tool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include <kagg/kagg.h>
#include <kagg/syscount.h>
#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>
#include "testutil.h"
#include "census.h"

#define N_GETPPID 1234
#define M_OPENAT 321
#define K_SLEEPS 20
#define SLOT_16MS 14

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == KAGG_LOG_WARN)
		printf("  kagg: %s\n", msg);
}

static void getppid_work(void *arg)
{
	int i;

	for (i = 0; i < N_GETPPID; i++)
		syscall(SYS_getppid);
}

static void openat_work(void *arg)
{
	int i;

	for (i = 0; i < M_OPENAT; i++)
		if (syscall(SYS_openat, AT_FDCWD, "/nonexistent/kagg-syscount", O_RDONLY) >= 0)
			_exit(3);
}

/* Wall time of each of sleep_work's calls, shared with the parent (tu_shared_u64). */
static uint64_t *sleep_took_ns;

static void sleep_work(void *arg)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	uint64_t t0;
	int i;

	for (i = 0; i < K_SLEEPS; i++) {
		t0 = tu_now_ns();
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
		if (sleep_took_ns)
			sleep_took_ns[i] = tu_now_ns() - t0;
	}
}

/* Run fn in a child under a session with opts o (pid filter set here); snapshot. */
static struct kagg_snapshot *run_child(struct kagg_syscount_opts *o, tu_work_fn fn, int *pid)
{
	struct tu_child ch = tu_spawn(fn, NULL);
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	int pids[1] = { ch.pid };

	assert_true(ch.pid > 0);
	o->pids = pids;
	o->nr_pids = 1;
	o->log = quiet_log;
	s = kagg_syscount__open(o);
	assert_non_null(s);
	/* Names are built in (the kernel's UAPI table at build time). */
	assert_non_null(kagg_syscount__name(s, SYS_getppid));
	assert_string_equal(kagg_syscount__name(s, SYS_getppid), "getppid");
	snap = tu_snap_after_child(s, &ch, KAGG_SNAP_RESET);
	assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
	kagg_session__destroy(s);
	*pid = ch.pid;
	return snap;
}

static void count_getppid(enum kagg_attach attach, enum kagg_key_mode key, enum kagg_mode path)
{
	KAGG_OPTS(kagg_syscount_opts, o, .attach = attach, .key = key, .stream_mode = path);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	int pid;

	snap = run_child(&o, getppid_work, &pid);
	h = tu_find_label(snap, "getppid");
	assert_non_null(h);
	printf("  %s, key %d, mode %s: getppid counted %llu of %d\n",
	       kagg_snapshot__meta(snap)->attach, key, kagg_snapshot__meta(snap)->mode,
	       (unsigned long long)h->total, N_GETPPID);
	assert_int_equal(h->total, N_GETPPID);
	assert_int_equal(h->key.id, SYS_getppid);
	assert_int_equal(h->nr_slots, 0);
	if (key == KAGG_KEY_PID)
		assert_int_equal(h->key.pid, pid);
	assert_string_equal(kagg_snapshot__meta(snap)->attach,
			    attach == KAGG_ATTACH_RAW_TP ? "raw_tp" : "tp_btf");
	kagg_snapshot__free(snap);
}

static void test_getppid_counted_exactly(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	count_getppid(KAGG_ATTACH_AUTO, KAGG_KEY_NONE, KAGG_MODE_AGG);
	count_getppid(KAGG_ATTACH_AUTO, KAGG_KEY_PID, KAGG_MODE_AGG);
	count_getppid(KAGG_ATTACH_RAW_TP, KAGG_KEY_NONE, KAGG_MODE_AGG);
	/* the same ground truth from the streamed path alone */
	count_getppid(KAGG_ATTACH_AUTO, KAGG_KEY_NONE, KAGG_MODE_STREAM);
	count_getppid(KAGG_ATTACH_RAW_TP, KAGG_KEY_PID, KAGG_MODE_STREAM);
}

static void openat_enoent(enum kagg_mode path)
{
	KAGG_OPTS(kagg_syscount_opts, o, .mode = KAGG_SYSCOUNT_ERRORS, .key = KAGG_KEY_PID,
		  .stream_mode = path);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	int pid;

	snap = run_child(&o, openat_work, &pid);
	h = tu_find_label(snap, "openat:ENOENT");
	assert_non_null(h);
	printf("  openat:ENOENT counted %llu of %d\n", (unsigned long long)h->total, M_OPENAT);
	assert_int_equal(h->total, M_OPENAT);
	assert_int_equal(h->key.pid, pid);
	assert_int_equal(h->key.id, SYS_openat | ((uint64_t)ENOENT << 32));
	/* Successful calls are not counted in errors mode. */
	assert_null(tu_find_label(snap, "getppid"));
	kagg_snapshot__free(snap);
}

static void test_openat_enoent_errors(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	openat_enoent(KAGG_MODE_AGG);
	openat_enoent(KAGG_MODE_STREAM);
}

static void sleeps_in_bucket(enum kagg_attach attach, enum kagg_key_mode key, enum kagg_mode path)
{
	KAGG_OPTS(kagg_syscount_opts, o, .mode = KAGG_SYSCOUNT_LATENCY, .attach = attach,
		  .key = key, .stream_mode = path);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	int pid;

	struct tu_sleeps took = { .count = K_SLEEPS };
	uint64_t cum;
	int k;

	if (!sleep_took_ns)
		sleep_took_ns = tu_shared_u64(3 * K_SLEEPS);
	assert_non_null(sleep_took_ns);
	memset(sleep_took_ns, 0, 3 * K_SLEEPS * sizeof(*sleep_took_ns));
	took.took_ns = sleep_took_ns;
	snap = run_child(&o, sleep_work, &pid);
	h = tu_find_label(snap, "clock_nanosleep");
	assert_non_null(h);
	printf("  %s, key %d, mode %s: clock_nanosleep %llu calls, %llu in [16384, 32767] us\n",
	       kagg_snapshot__meta(snap)->attach, key, kagg_snapshot__meta(snap)->mode,
	       (unsigned long long)h->total, (unsigned long long)h->slots[SLOT_16MS]);
	assert_int_equal(h->nr_slots, 64);
	/*
	 * 20 ms: [16384, 32767] us.  None can be shorter; a wakeup late by
	 * 12.8 ms goes one bucket up, as in test_funclat and test_offcpu, but
	 * not a call whose wall time (measured around it by the child) stayed
	 * below 32.8 ms: the syscall's latency lies within it.
	 */
	for (k = 0; k < SLOT_16MS; k++)
		assert_int_equal(h->slots[k], 0);
	for (k = SLOT_16MS, cum = 0; k < 40; k++) {
		cum += h->slots[k];
		assert_true(cum >= (uint64_t)tu_sleeps_under(&took, (2ULL << k) * 1000));
	}
	assert_int_equal(h->total, K_SLEEPS);
	/*
	 * The exact extremes, on either path: no call shorter than its 20 ms, none longer
	 * than the longest wall time the child measured around one
	 */
	for (k = 0, cum = 0; k < K_SLEEPS; k++)
		cum = sleep_took_ns[k] > cum ? sleep_took_ns[k] : cum;
	printf("  min %.3f us, max %.3f us, longest wall time %.3f us\n", h->min, h->max,
	       cum / 1e3);
	assert_true(h->has_minmax);
	assert_true(h->min >= 20000 && h->min <= h->max && h->max <= cum / 1e3);
	kagg_snapshot__free(snap);
}

static void test_sleep_latency_bucket(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	sleeps_in_bucket(KAGG_ATTACH_AUTO, KAGG_KEY_NONE, KAGG_MODE_AGG);
	sleeps_in_bucket(KAGG_ATTACH_AUTO, KAGG_KEY_PID, KAGG_MODE_AGG);
	sleeps_in_bucket(KAGG_ATTACH_RAW_TP, KAGG_KEY_NONE, KAGG_MODE_AGG);
	sleeps_in_bucket(KAGG_ATTACH_AUTO, KAGG_KEY_PID, KAGG_MODE_STREAM);
}

/* 200 clock_nanosleep(3 ms), each timed by the child itself (in shared memory). */
struct timed_sleeps {
	uint64_t ns[200];
};

static void timed_sleeper(void *arg)
{
	struct timespec ts = { 0, 3 * 1000 * 1000 };
	struct timed_sleeps *t = arg;

	for (int i = 0; i < 200; i++) {
		uint64_t t0 = tu_now_ns();

		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
		t->ns[i] = tu_now_ns() - t0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The exp:3 session on the timed sleeper: its snapshot; cells caps the cells (0: default),
 * mode is the path (--mode).  A streaming session is polled while the child runs: the
 * stream carries every process's syscalls, which would fill its buffer meanwhile.
 */
static struct kagg_snapshot *exp_sleeps(struct timed_sleeps *t, unsigned int cells,
					enum kagg_mode mode)
{
	struct tu_child ch = tu_spawn(timed_sleeper, t);
	int pids[1] = { ch.pid };
	KAGG_OPTS(kagg_syscount_opts, o, .mode = KAGG_SYSCOUNT_LATENCY, .pids = pids, .nr_pids = 1,
		  .buckets = KAGG_BUCKETS_EXP, .exp_scale = 3, .exp_cells = cells,
		  .stream_mode = mode, .log = quiet_log);
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	int st;

	s = kagg_syscount__open(&o);
	assert_non_null(s);
	if (mode == KAGG_MODE_AGG) {
		snap = tu_snap_after_child(s, &ch, KAGG_SNAP_RESET);
	} else {
		tu_attach(s);
		tu_go(&ch);
		while (waitpid(ch.pid, &st, WNOHANG) != ch.pid)
			assert_true(kagg_session__poll(s, 20) >= 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		snap = tu_snapshot(s, KAGG_SNAP_RESET);
	}
	kagg_session__destroy(s);
	return snap;
}

/*
 * -L --buckets exp:3: all 200 sleeps counted; none in a bucket below 3 ms; the p50
 * bucket overlaps [3 ms, the child's own median] (the syscall lies within the child's
 * measurement) and is no wider than 2^(1/8) - 1 of its low bound; the exact sum lies
 * within the buckets' bounds.
 */
static void test_exp_latency_median_of_known_sleeps(void **state)
{
	struct timed_sleeps *t =
		mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	double v, low, high, med_us;
	unsigned int k;

	TU_SKIP_UNLESS_ROOT();
	assert_true(t != MAP_FAILED);
	snap = exp_sleeps(t, 0, KAGG_MODE_AGG);
	h = tu_find_label(snap, "clock_nanosleep");
	assert_non_null(h);
	qsort(t->ns, 200, sizeof(t->ns[0]), cmp_u64);
	med_us = (t->ns[99] + t->ns[100]) / 2e3;
	assert_int_equal(kagg_hist__percentile(h, 50, &v, &low, &high), 0);
	printf("  exp:3 p50 %.1f us in (%.1f, %.1f], measured median %.1f us, sum %.0f us\n", v,
	       low, high, med_us, h->sum);
	assert_true(h->has_exp);
	assert_int_equal(h->exp_scale, 3);
	assert_int_equal(h->total, 200);
	assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
	assert_int_equal(tu_drop_count(snap, "exp_cells"), 0);
	for (k = 0; k < h->nr_slots; k++) {
		kagg_hist__bounds(h, k, &low, &high);
		if (high < 3000)
			assert_int_equal(h->slots[k], 0);
	}
	assert_int_equal(kagg_hist__percentile(h, 50, &v, &low, &high), 0);
	assert_true(high - low <= low * (0.0905077326652577 + 1e-12));
	assert_true(low < med_us && high >= 3000);
	assert_true(tu_sum_within_buckets(h));
	kagg_snapshot__free(snap);
	munmap(t, sizeof(*t));
}

/*
 * -L --buckets exp:3 --mode both on the 200 timed sleeps: the streamed clock_nanosleep
 * histogram is the kernel's, bucket by bucket; each exact percentile lies in the kernel's
 * bucket (low, high] for it; the p50 bucket is within 2^(1/8) - 1 and the exact median
 * between 3 ms and the child's own median (which holds the syscall).
 */
static void test_exp_latency_both_known_sleeps(void **state)
{
	struct timed_sleeps *t =
		mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const struct kagg_hist *h, *sh;
	struct kagg_snapshot *snap;
	double med_us, low = 0, high = 0, x;

	TU_SKIP_UNLESS_ROOT();
	assert_true(t != MAP_FAILED);
	snap = exp_sleeps(t, 0, KAGG_MODE_BOTH);
	assert_non_null(kagg_snapshot__stream(snap));
	h = tu_find_label(snap, "clock_nanosleep");
	sh = tu_find_label(kagg_snapshot__stream(snap), "clock_nanosleep");
	assert_true(h && sh);
	qsort(t->ns, 200, sizeof(t->ns[0]), cmp_u64);
	med_us = (t->ns[99] + t->ns[100]) / 2e3;
	printf("  kernel %llu sleeps, stream %llu; measured median %.1f us\n",
	       (unsigned long long)h->total, (unsigned long long)sh->total, med_us);
	assert_int_equal(h->exp_scale, 3);
	assert_int_equal(h->total, 200);
	assert_int_equal(kagg_snapshot__meta(snap)->stream_dropped, 0);
	x = tu_assert_exact_in_exp_buckets(h, sh, &low, &high);
	assert_true(high - low <= low * (0.0905077326652577 + 1e-12));
	assert_true(x >= 3000 && x <= med_us);
	kagg_snapshot__free(snap);
	munmap(t, sizeof(*t));
}

/* 10 getppid(), then 20 clock_nanosleep(3 ms). */
static void getppid_then_sleeps(void *arg)
{
	struct timespec ts = { 0, 3 * 1000 * 1000 };
	int i;

	(void)arg;
	for (i = 0; i < 10; i++)
		syscall(SYS_getppid);
	for (i = 0; i < 20; i++)
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
}

/*
 * exp_cells caps the (syscall, bucket) cells: with 1, the first getppid() takes the only
 * cell, and every latency that needs another -- all 20 sleeps at least -- is dropped as
 * "exp_cells"; recorded + dropped is every one of the child's 30 calls.
 */
static void test_exp_cells_cap_counted(void **state)
{
	struct tu_child ch;
	KAGG_OPTS(kagg_syscount_opts, o, .mode = KAGG_SYSCOUNT_LATENCY, .nr_pids = 1,
		  .buckets = KAGG_BUCKETS_EXP, .exp_scale = 3, .exp_cells = 1, .log = quiet_log);
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	struct kagg_session *s;
	uint64_t cells;
	int pids[1];

	TU_SKIP_UNLESS_ROOT();
	ch = tu_spawn(getppid_then_sleeps, NULL);
	pids[0] = ch.pid;
	o.pids = pids;
	s = kagg_syscount__open(&o);
	assert_non_null(s);
	snap = tu_snap_after_child(s, &ch, KAGG_SNAP_RESET);
	kagg_session__destroy(s);
	m = kagg_snapshot__meta(snap);
	cells = tu_drop_count(snap, "exp_cells");
	printf("  1 cell: %zu histogram(s), %llu recorded, exp_cells dropped %llu\n",
	       kagg_snapshot__hist_cnt(snap), (unsigned long long)m->events_recorded,
	       (unsigned long long)cells);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	assert_non_null(tu_find_label(snap, "getppid"));
	assert_true(m->events_recorded >= 1 && m->events_recorded <= 10);
	assert_int_equal(kagg_snapshot__hist(snap, 0)->total, m->events_recorded);
	assert_true(cells >= 20);
	assert_int_equal(m->events_recorded + cells, 30);
	assert_int_equal(m->drops_total, cells);
	kagg_snapshot__free(snap);
}

/* Twelve cheap syscalls, the k-th (0-based) of them made k + 2000 times. */
static const struct {
	long nr;
	const char *name;
} twelve[] = {
	{ SYS_getppid, "getppid" },	    { SYS_getpid, "getpid" },
	{ SYS_getuid, "getuid" },	    { SYS_getgid, "getgid" },
	{ SYS_geteuid, "geteuid" },	    { SYS_getegid, "getegid" },
#ifdef SYS_getpgrp
	{ SYS_gettid, "gettid" },	    { SYS_getpgrp, "getpgrp" },
#else /* arm64 has getpgid only */
	{ SYS_gettid, "gettid" },	    { SYS_getpgid, "getpgid" },
#endif
	{ SYS_getsid, "getsid" },	    { SYS_sched_yield, "sched_yield" },
	{ SYS_getpriority, "getpriority" }, { SYS_umask, "umask" },
};

static void twelve_syscalls(void *arg)
{
	unsigned int k, i;

	(void)arg;
	for (k = 0; k < 12; k++)
		for (i = 0; i < k + 2000; i++)
			syscall(twelve[k].nr, 0, 0);
}

/*
 * exp:5 has 7 dense histograms (256 KiB per CPU): a child making twelve syscalls, the
 * k-th k + 2000 times (frequent: up to 7 move from the cells to a dense histogram, the
 * others stay in cells), shows each of them with exactly that count and its sum within
 * its buckets, nothing dropped; the same with every syscall in cells (.exp_cells set).
 */
static void test_exp_dense_then_cells(void **state)
{
	unsigned int cells, k;

	TU_SKIP_UNLESS_ROOT();
	for (cells = 0; cells <= 16384; cells += 16384) {
		struct tu_child ch = tu_spawn(twelve_syscalls, NULL);
		int pids[1] = { ch.pid };
		KAGG_OPTS(kagg_syscount_opts, o, .mode = KAGG_SYSCOUNT_LATENCY, .pids = pids,
			  .nr_pids = 1, .buckets = KAGG_BUCKETS_EXP, .exp_scale = 5,
			  .exp_cells = cells, .log = quiet_log);
		struct kagg_snapshot *snap;
		struct kagg_session *s;

		s = kagg_syscount__open(&o);
		assert_non_null(s);
		snap = tu_snap_after_child(s, &ch, KAGG_SNAP_RESET);
		kagg_session__destroy(s);
		printf("  exp:5, exp_cells %u: %zu histograms, %llu recorded, %llu dropped\n",
		       cells, kagg_snapshot__hist_cnt(snap),
		       (unsigned long long)kagg_snapshot__meta(snap)->events_recorded,
		       (unsigned long long)kagg_snapshot__meta(snap)->drops_total);
		assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
		assert_int_equal(kagg_snapshot__hist_cnt(snap), 12);
		for (k = 0; k < 12; k++) {
			const struct kagg_hist *h = tu_find_label(snap, twelve[k].name);

			assert_non_null(h);
			assert_true(h->has_exp && h->has_sum);
			assert_int_equal(h->exp_scale, 5);
			assert_int_equal(h->total, k + 2000);
			assert_true(tu_sum_within_buckets(h));
		}
		kagg_snapshot__free(snap);
	}
}

/* Names come from the table given: 110 -> "my_getppid"; numbers it lacks are "syscall_<nr>". */
static void test_names_file(void **state)
{
	char path[] = "/tmp/kagg-syscount-names-XXXXXX";
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	char label[32];
	int fd;

	TU_SKIP_UNLESS_ROOT();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	dprintf(fd, "/* test */\n#define __NR_my_getppid %d\n", (int)SYS_getppid);
	close(fd);
	{
		KAGG_OPTS(kagg_syscount_opts, o, .names_file = path);
		struct tu_child ch = tu_spawn(getppid_work, NULL);
		struct kagg_session *s;
		int pids[1] = { ch.pid };

		o.pids = pids;
		o.nr_pids = 1;
		o.log = quiet_log;
		s = kagg_syscount__open(&o);
		assert_non_null(s);
		assert_string_equal(kagg_syscount__name(s, SYS_getppid), "my_getppid");
		assert_null(kagg_syscount__name(s, SYS_exit_group));
		snap = tu_snap_after_child(s, &ch, 0);
		kagg_session__destroy(s);
	}
	h = tu_find_label(snap, "my_getppid");
	assert_non_null(h);
	assert_int_equal(h->total, N_GETPPID);
	snprintf(label, sizeof(label), "syscall_%d", (int)SYS_exit_group);
	assert_non_null(tu_find_label(snap, label));
	assert_null(tu_find_label(snap, "getppid"));
	kagg_snapshot__free(snap);
	unlink(path);
	/* An unreadable names file given explicitly is an error. */
	{
		KAGG_OPTS(kagg_syscount_opts, o, .names_file = "/nonexistent/unistd_64.h",
			  .log = quiet_log);

		assert_null(kagg_syscount__open(&o));
		assert_int_equal(errno, ENOENT);
	}
}

/* getppid until told to stop (arg: a struct tu_shared), counting the calls. */
static void getppid_loop(void *arg)
{
	struct tu_shared *sh = arg;

	while (!sh->stop) {
		syscall(SYS_getppid);
		sh->done++;
	}
}

static uint64_t getppid_total(struct kagg_session *s, unsigned int flags)
{
	struct kagg_snapshot *snap = kagg_session__snapshot(s, flags);
	const struct kagg_hist *h;
	uint64_t n;

	assert_non_null(snap);
	assert_true(kagg_snapshot__meta(snap)->snapshot_exact);
	h = tu_find_label(snap, "getppid");
	n = h ? h->total : 0;
	kagg_snapshot__free(snap);
	return n;
}

/*
 * Two sessions on the same calls: A never resets, B reads and resets in a
 * loop.  B's snapshots add up to A's count exactly (array path and hash path).
 */
static void resets_lose_nothing(enum kagg_key_mode b_key)
{
	struct tu_shared *sh = tu_shared_work();
	struct tu_child ch = tu_spawn(getppid_loop, sh);
	struct kagg_session *a, *b;
	uint64_t a_total, b_total = 0, resets = 0;
	int pids[1] = { ch.pid };

	KAGG_OPTS(kagg_syscount_opts, oa, .pids = pids, .nr_pids = 1, .log = quiet_log);
	KAGG_OPTS(kagg_syscount_opts, ob, .pids = pids, .nr_pids = 1, .key = b_key,
		  .log = quiet_log);
	a = kagg_syscount__open(&oa);
	b = kagg_syscount__open(&ob);
	tu_attach(a);
	tu_attach(b);
	tu_go(&ch);
	/* read-and-reset while the child calls: at least 20 times, over 10000 calls */
	while (resets < 20 || sh->done < 10000) {
		b_total += getppid_total(b, KAGG_SNAP_RESET);
		resets++;
		if (resets >= 20)
			tu_sleep_ms(1);
	}
	sh->stop = 1;
	assert_int_equal(tu_wait(&ch), 0);
	b_total += getppid_total(b, KAGG_SNAP_RESET);
	resets++;
	a_total = getppid_total(a, 0);
	printf("  key %d: A %llu getppid, B %llu over %llu read-and-resets\n", b_key,
	       (unsigned long long)a_total, (unsigned long long)b_total,
	       (unsigned long long)resets);
	assert_int_equal(a_total, sh->done);
	assert_int_equal(b_total, a_total);
	tu_shared_free(sh);
	kagg_session__destroy(a);
	kagg_session__destroy(b);
}

static void test_interval_resets_lose_nothing(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	resets_lose_nothing(KAGG_KEY_NONE);
	resets_lose_nothing(KAGG_KEY_PID);
}

/* ------------------------------------------------------------ streaming */

/* A mix with successes, failures and sleeps, slow enough for a lossless stream. */
static void mixed_work(void *arg)
{
	struct timespec ts = { 0, 1000 * 1000 };
	int i;

	for (i = 0; i < 5000; i++) {
		syscall(SYS_getppid);
		if (i % 16 == 0)
			syscall(SYS_openat, AT_FDCWD, "/nonexistent/kagg-syscount", O_RDONLY);
		if (i % 500 == 0)
			syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	}
}

/* System-wide session in `path` mode while a mixed_work child runs, polled; a snapshot. */
static struct kagg_snapshot *run_stream(struct kagg_syscount_opts *o, bool poll,
					struct kagg_session **sp, int *child_pid)
{
	struct tu_child ch = tu_spawn(mixed_work, NULL);
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	int st;

	o->log = quiet_log;
	s = kagg_syscount__open(o);
	tu_attach(s);
	tu_go(&ch);
	if (poll) {
		while (waitpid(ch.pid, &st, WNOHANG) != ch.pid)
			assert_true(kagg_session__poll(s, 20) >= 0);
	} else {
		assert_int_equal(waitpid(ch.pid, &st, 0), ch.pid);
	}
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kagg_session__detach(s);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	*sp = s;
	if (child_pid)
		*child_pid = ch.pid;
	return snap;
}

static void both_identical(enum kagg_syscount_mode mode, enum kagg_attach attach,
			   enum kagg_key_mode key)
{
	KAGG_OPTS(kagg_syscount_opts, o, .mode = mode, .attach = attach, .key = key,
		  .stream_mode = KAGG_MODE_BOTH, .overhead = true);
	const struct kagg_meta *m;
	struct kagg_snapshot *snap;
	struct kagg_session *s;

	snap = run_stream(&o, true, &s, NULL);
	m = kagg_snapshot__meta(snap);
	printf("  mode %d, %s, key %d: %zu keys, %llu calls; stream seen %llu delivered %llu "
	       "dropped %llu; BPF ns/event agg %.1f stream %.1f\n",
	       mode, m->attach, key, kagg_snapshot__hist_cnt(snap),
	       (unsigned long long)m->events_recorded, (unsigned long long)m->stream_seen,
	       (unsigned long long)m->stream_delivered, (unsigned long long)m->stream_dropped,
	       m->agg_ns_per_event, m->stream_ns_per_event);
	assert_string_equal(m->mode, "both");
	assert_int_equal(m->stream_dropped, 0);
	assert_int_equal(m->stream_seen, m->stream_delivered);
	assert_true(kagg_snapshot__hist_cnt(snap) > 0);
	tu_assert_hists_equal(snap, kagg_snapshot__stream(snap));
	assert_true(m->agg_ns_per_event > 0 && m->stream_ns_per_event > 0);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

static void test_both_modes_identical(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	both_identical(KAGG_SYSCOUNT_COUNT, KAGG_ATTACH_AUTO, KAGG_KEY_NONE);
	both_identical(KAGG_SYSCOUNT_COUNT, KAGG_ATTACH_RAW_TP, KAGG_KEY_TID);
	both_identical(KAGG_SYSCOUNT_ERRORS, KAGG_ATTACH_AUTO, KAGG_KEY_PID);
	both_identical(KAGG_SYSCOUNT_LATENCY, KAGG_ATTACH_AUTO, KAGG_KEY_NONE);
	both_identical(KAGG_SYSCOUNT_LATENCY, KAGG_ATTACH_RAW_TP, KAGG_KEY_PID);
}

/* Nobody reads: a 4 KiB ring overflows; seen = delivered + dropped, the kernel path exact. */
static void test_stream_drops_counted(void **state)
{
	KAGG_OPTS(kagg_syscount_opts, o, .stream_mode = KAGG_MODE_BOTH, .stream_bytes = 4096,
		  .key = KAGG_KEY_PID);
	const struct kagg_meta *m;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	const struct kagg_hist *h = NULL;
	int pid;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	snap = run_stream(&o, false, &s, &pid);
	m = kagg_snapshot__meta(snap);
	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++)
		if (kagg_snapshot__hist(snap, i)->key.pid == pid &&
		    kagg_snapshot__hist(snap, i)->key.id == SYS_getppid)
			h = kagg_snapshot__hist(snap, i);
	printf("  seen %llu = delivered %llu + dropped %llu; kernel path: the child's getppid "
	       "%llu of 5000\n",
	       (unsigned long long)m->stream_seen, (unsigned long long)m->stream_delivered,
	       (unsigned long long)m->stream_dropped, h ? (unsigned long long)h->total : 0ULL);
	assert_true(m->stream_dropped > 0);
	assert_int_equal(m->stream_seen, m->stream_delivered + m->stream_dropped);
	assert_non_null(h);
	assert_int_equal(h->total, 5000);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/*
 * Streamed records land as the kernel's raw_syscalls events: the child's
 * 5000 getppid entries are all in the reference buffer as sys_enter with
 * id = getppid and common_pid = the child.
 */
static void land_as_kernel_events(const char *events_dir)
{
	KAGG_OPTS(kagg_syscount_opts, o, .stream_mode = KAGG_MODE_STREAM, .events_dir = events_dir);
	const struct kagg_rb_field *id;
	const struct kagg_rb_format *f;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	long n = 0, read = 0;
	int pid;

	snap = run_stream(&o, true, &s, &pid);
	printf("  formats: %s\n", kagg_snapshot__meta(snap)->stream_format);
	if (events_dir) /* not there: the built-in copies */
		assert_non_null(strstr(kagg_snapshot__meta(snap)->stream_format, "built-in"));
	f = kagg_rb_events__find_by_name(kagg_session__events(s), "raw_syscalls", "sys_enter");
	assert_non_null(f);
	id = kagg_rb_format__field(f, "id");
	assert_non_null(id);
	while (!kagg_rb__consume(kagg_session__ringbuf(s), -1, &ev)) {
		int32_t cpid;
		int64_t nr;

		read++;
		memcpy(&cpid, (const uint8_t *)ev.data + 4, 4);
		memcpy(&nr, (const uint8_t *)ev.data + id->offset, 8);
		n += *(const uint16_t *)ev.data == kagg_rb_format__id(f) && cpid == pid &&
		     nr == SYS_getppid;
	}
	printf("  read back %ld (+ %llu overwritten) of %llu delivered; the child's getppid "
	       "entries: %ld of 5000\n",
	       read, (unsigned long long)kagg_snapshot__meta(snap)->rb_overrun,
	       (unsigned long long)kagg_snapshot__meta(snap)->stream_delivered, n);
	assert_int_equal(read + kagg_snapshot__meta(snap)->rb_overrun,
			 kagg_snapshot__meta(snap)->stream_delivered);
	if (!kagg_snapshot__meta(snap)->rb_overrun)
		assert_int_equal(n, 5000);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

static void test_stream_records_land_as_kernel_events(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	tu_each_events_dir(land_as_kernel_events);
}

/* ------------------------------------------------------------ per command, per cgroup */

/* A child renamed to name making calls getppid() calls and fails fails openat() calls. */
struct named_calls {
	const char *name;
	int calls, fails;
};

static void named_calls(void *arg)
{
	const struct named_calls *w = arg;
	int i;

	prctl(PR_SET_NAME, w->name);
	for (i = 0; i < w->calls; i++)
		syscall(SYS_getppid);
	for (i = 0; i < w->fails; i++)
		if (syscall(SYS_openat, AT_FDCWD, "/nonexistent/kagg-syscount", O_RDONLY) >= 0)
			_exit(3);
}

/*
 * The histogram of snap for syscall label and the key of want: its comm (KAGG_KEY_COMM) or
 * its cgroup's path (KAGG_KEY_CGROUP); asserted to be the only one.
 */
static const struct kagg_hist *find_keyed(const struct kagg_snapshot *snap, const char *label,
					  enum kagg_key_mode key, const char *want)
{
	const struct kagg_hist *found = NULL;
	size_t i;

	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		assert_int_equal(h->key.mode, key);
		assert_int_equal(h->key.pid, 0);
		if (!h->key.label || strcmp(h->key.label, label))
			continue;
		if (key == KAGG_KEY_COMM ? strcmp(h->key.comm, want)
					 : !h->cgroup || strcmp(h->cgroup, want))
			continue;
		assert_null(found);
		found = h;
	}
	if (!found)
		printf("  no %s histogram for %s\n", label, want);
	assert_non_null(found);
	return found;
}

/*
 * Children a and b under a session keyed by key in mode mode (filtered to their pids), run
 * to the end; the snapshot.  Neither is known to the session but by the key.
 */
static struct kagg_snapshot *run_two_keyed(enum kagg_key_mode key, enum kagg_syscount_mode mode,
					   struct tu_child *a, struct tu_child *b)
{
	int pids[2] = { a->pid, b->pid };
	KAGG_OPTS(kagg_syscount_opts, o, .key = key, .mode = mode, .pids = pids, .nr_pids = 2,
		  .log = quiet_log);
	struct kagg_snapshot *snap;
	struct kagg_session *s;

	s = kagg_syscount__open(&o);
	tu_attach_run_two(s, a, b);
	snap = tu_snapshot(s, 0);
	assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
	kagg_session__destroy(s);
	return snap;
}

/* The calls of a and b, counted by name: count, errors and latency modes. */
static const enum kagg_syscount_mode keyed_modes[] = { KAGG_SYSCOUNT_COUNT, KAGG_SYSCOUNT_ERRORS,
						       KAGG_SYSCOUNT_LATENCY };

/* The syscall id of the keyed histograms: getppid, or openat:ENOENT in errors mode. */
static uint64_t keyed_id(bool errs)
{
	return errs ? SYS_openat | (uint64_t)ENOENT << 32 : SYS_getppid;
}

/*
 * -N (KAGG_KEY_COMM): two children renamed by prctl make 700 and 300 getppid() calls and 40
 * and 90 failing openat() calls; each name's histogram (no pid) counts its own, exactly, in
 * every mode (latency: the histogram's total).
 */
static void test_per_comm(void **state)
{
	struct named_calls wa = { "kagg-scomm-a", 700, 40 }, wb = { "kagg-scomm-b", 300, 90 };
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct tu_child a, b;
	size_t m;

	TU_SKIP_UNLESS_ROOT();
	for (m = 0; m < TU_NR(keyed_modes); m++) {
		bool errs = keyed_modes[m] == KAGG_SYSCOUNT_ERRORS;
		const char *label = errs ? "openat:ENOENT" : "getppid";

		a = tu_spawn(named_calls, &wa);
		b = tu_spawn(named_calls, &wb);
		snap = run_two_keyed(KAGG_KEY_COMM, keyed_modes[m], &a, &b);
		h = find_keyed(snap, label, KAGG_KEY_COMM, wa.name);
		assert_int_equal(h->total, errs ? wa.fails : wa.calls);
		assert_int_equal(h->key.id, keyed_id(errs));
		h = find_keyed(snap, label, KAGG_KEY_COMM, wb.name);
		assert_int_equal(h->total, errs ? wb.fails : wb.calls);
		kagg_snapshot__free(snap);
	}
}

/*
 * --per-cgroup (KAGG_KEY_CGROUP): a child in a cgroup the test made makes 500 getppid() and
 * 60 failing openat() calls, another one outside it 200 and 10; the histogram with the
 * cgroup's path from the cgroup2 mount (kagg_hist.cgroup) counts the first one's, exactly,
 * in every mode, under the syscall's id and name.
 */
static void test_per_cgroup(void **state)
{
	struct named_calls wc = { "kagg-scg-in", 500, 60 }, wo = { "kagg-scg-out", 200, 10 };
	const char *want;
	char cg[128];
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct tu_child c, other;
	size_t m;

	TU_SKIP_UNLESS_ROOT();
	tu_cgroup_dir(__func__, "kagg-sccg", cg, sizeof(cg));
	want = tu_cgroup_path(cg);
	for (m = 0; m < TU_NR(keyed_modes); m++) {
		bool errs = keyed_modes[m] == KAGG_SYSCOUNT_ERRORS;

		c = tu_spawn(named_calls, &wc);
		other = tu_spawn(named_calls, &wo);
		assert_int_equal(tu_cgroup_add(cg, c.pid), 0);
		snap = run_two_keyed(KAGG_KEY_CGROUP, keyed_modes[m], &c, &other);
		h = find_keyed(snap, errs ? "openat:ENOENT" : "getppid", KAGG_KEY_CGROUP, want);
		printf("  mode %d: %s %llu calls (cgroup id %llu)\n", (int)keyed_modes[m], want,
		       (unsigned long long)h->total, (unsigned long long)h->cgroup_id);
		assert_int_equal(h->total, errs ? wc.fails : wc.calls);
		assert_int_equal(h->key.id, keyed_id(errs));
		assert_true(h->cgroup_id > 1);
		kagg_snapshot__free(snap);
	}
	assert_int_equal(rmdir(cg), 0);
}

/* ------------------------------------------------------------ CLI */

/* The CLI: a table row with the exact count; JSON carries id and label. */
static void test_cli_table_and_json(void **state)
{
	char *text[] = { "syscount", "-p", "PID", "-d", "60", NULL };
	char *json[] = { "syscount", "-p", "PID", "-d", "60", "--format", "json", NULL };
	char *top1[] = { "syscount", "-p", "PID", "-d", "60", "-T", "1", NULL };
	char *lat[] = { "syscount", "-L", "-p", "PID", "-d", "60", "--format", "json", NULL };
	/* the child makes its calls once the CLI has attached; SIGINT once it is done */
	const struct tu_on_child on = { .fn = getppid_work,
					.attached = "syscount_",
					.stop_sig = SIGINT };
	char *out = NULL, *err = NULL, *row;
	pid_t pid;

	TU_SKIP_UNLESS_ROOT();
	assert_int_equal(tu_run_kagg_on(text, &on, &pid, &out, &err), 0);
	row = strstr(out, "\ngetppid ");
	assert_non_null(row);
	assert_int_equal(strtol(row + 8, NULL, 10), N_GETPPID);
	free(out);
	free(err);
	assert_int_equal(tu_run_kagg_on(json, &on, &pid, &out, &err), 0);
	assert_non_null(strstr(out, "\"label\": \"getppid\""));
	assert_non_null(strstr(out, "\"total\": 1234"));
	free(out);
	free(err);
	/* libbpf-tools' -T 1: the one row of the most calls, and how many were left out */
	assert_int_equal(tu_run_kagg_on(top1, &on, &pid, &out, &err), 0);
	row = strstr(out, "\nSYSCALL ");
	assert_non_null(row);
	row = strchr(row + 1, '\n');
	assert_int_equal(strncmp(row, "\ngetppid ", 9), 0);
	assert_int_equal(strtol(row + 8, NULL, 10), N_GETPPID);
	row = strchr(row + 1, '\n');
	assert_non_null(strstr(row, " more rows, fewer calls: --top 1 shows the most)\n"));
	assert_int_equal(strncmp(row, "\n(", 2), 0);
	free(out);
	free(err);
	/*
	 * -L in nanoseconds by default: getppid takes well under a microsecond, so in usecs
	 * every call would land in [0, 1]; no syscall takes under 2 ns.
	 */
	assert_int_equal(tu_run_kagg_on(lat, &on, &pid, &out, &err), 0);
	assert_non_null(strstr(out, "\"unit\": \"nsecs\""));
	row = strstr(out, "\"label\": \"getppid\"");
	assert_non_null(row);
	assert_non_null(strstr(row, "\"total\": 1234"));
	assert_non_null(strstr(row, "{\"low\":0,\"high\":1,\"count\":0}"));
	free(out);
	free(err);
}

/* ------------------------------------------------------------ leaks */

static void test_nothing_stays_loaded_after_exit(void **state)
{
	static const struct tu_exit_case cases[] = {
		{ "duration", 0, 0, { "syscount", "-P", "-d", "0.5" } },
		{ "latency raw_tp", 0, 0, { "syscount", "-L", "--attach", "raw_tp", "-d", "0.5" } },
		{ "SIGINT", SIGINT, 0, { "syscount", "-x" } },
		{ "SIGINT, --mode both", SIGINT, 0, { "syscount", "--mode", "both" } },
		{ "SIGTERM", SIGTERM, 0, { "syscount", "-x" } },
		{ "unknown pid", 0, 1, { "syscount", "-p", "2147483647" } },
	};

	TU_SKIP_UNLESS_ROOT();
	/* the object's maps: "syscount_bp.bss", "syscount.rodata"..., and key_counts */
	tu_expect_clean_exits(cases, TU_NR(cases), "syscount_", "syscoun|key_counts", "SYSCALL");
}

static void test_errors_one_line(void **state)
{
	char *table[] = { "syscount", "--mode", "both", "-d", "0.5", NULL };
	char *live[] = { "syscount", "--mode", "stream", "--print", "-d", "0.5", NULL };
	static const struct tu_error_case print[] = {
		{ 2, "--print needs --mode stream", { "syscount", "--print" } },
	};
	static const struct tu_error_case errors[] = {
		{ 1, "no such process: 2147483647", { "syscount", "-p", "2147483647" } },
		{ 2, NULL, { "syscount", "-x", "-L" } },
		{ 2, NULL, { "syscount", "--bogus" } },
	};

	TU_SKIP_UNLESS_ROOT();
	tu_expect_errors(print, TU_NR(print));
	/* --mode both: the table has the streamed count and the difference */
	TU_KAGG_PRINTS(table, "STREAMED", "# stream (mode both)");
	/* --print: the kernel's raw_syscalls lines */
	TU_KAGG_PRINTS(live, ": sys_enter: NR ");
	tu_expect_errors(errors, TU_NR(errors));
}

TU_MAIN(cmocka_unit_test(test_getppid_counted_exactly), cmocka_unit_test(test_openat_enoent_errors),
	cmocka_unit_test(test_sleep_latency_bucket),
	cmocka_unit_test(test_exp_latency_median_of_known_sleeps),
	cmocka_unit_test(test_exp_latency_both_known_sleeps),
	cmocka_unit_test(test_exp_cells_cap_counted), cmocka_unit_test(test_exp_dense_then_cells),
	cmocka_unit_test(test_names_file), cmocka_unit_test(test_interval_resets_lose_nothing),
	cmocka_unit_test(test_both_modes_identical), cmocka_unit_test(test_stream_drops_counted),
	cmocka_unit_test(test_per_comm), cmocka_unit_test(test_per_cgroup),
	cmocka_unit_test(test_stream_records_land_as_kernel_events),
	cmocka_unit_test(test_cli_table_and_json),
	cmocka_unit_test(test_nothing_stays_loaded_after_exit),
	cmocka_unit_test(test_errors_one_line), )
