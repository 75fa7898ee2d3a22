// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg offcpu against ground truth: children that block a
 * known number of times for a known duration land in the right bucket with
 * the right count; filters exclude others; read-and-reset snapshots lose
 * and duplicate nothing; stacks start at the scheduler, name C++ methods and
 * outlive the process they came from; no BPF object outlives the tool on any
 * exit path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include <kagg/kagg.h>
#include "testutil.h"
#include "census.h"

#define SLOT_16MS 14 /* usecs slot [16384, 32767]: the KNOWN_SLEEP_MS sleeps here */

/*
 * The sleeps of the tests that expect the 16 ms bucket: 24 ms, the middle of [16.4, 32.8) ms, so
 * that a sleep lands in SLOT_16MS with 7.6 ms to spare either way.  A sleep's timer is armed when
 * it is asked for, so its interval off the CPU is shorter by whatever stalled it before it blocked:
 * a preemption or CPU time charged to it (the child counts both), or a virtual CPU stalled by
 * its host inside an interrupt, which nothing in the guest charges to the task (8 to 16 ms
 * for a 20 ms sleep once, in a TCG guest with one host CPU kept busy).
 */
#define KNOWN_SLEEP_MS 24

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == KAGG_LOG_WARN)
		printf("  kagg: %s\n", msg);
}

static uint64_t slot_sum(struct kagg_snapshot *snap, unsigned int slot, int pid)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		if (pid && h->key.pid != pid)
			continue;
		n += h->slots[slot];
	}
	return n;
}

/* 50 sleeps of 24 ms by one child -> 50 intervals in [16384, 32767] us. */
static void known_sleeps(enum kagg_attach attach)
{
	struct tu_sleeps work = { .count = 50,
				  .ms = KNOWN_SLEEP_MS,
				  .took_ns = tu_sleeps_shared(50) };
	struct tu_child child = tu_spawn(tu_sleeper, &work);
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	const struct kagg_meta *m;
	int pids[1] = { child.pid };
	uint64_t all = 0, t0;
	double lo_sum = 0, hi_sum = 0;
	const struct kagg_hist *h;

	KAGG_OPTS(kagg_offcpu_opts, o, .key = KAGG_KEY_PID, .pids = pids, .nr_pids = 1,
		  .states = "S", .attach = attach, .log = quiet_log);

	assert_true(child.pid > 0);
	s = kagg_offcpu__open(&o);
	t0 = tu_now_ns();
	snap = tu_snap_after_child(s, &child, KAGG_SNAP_RESET);
	t0 = tu_now_ns() - t0;
	m = kagg_snapshot__meta(snap);
	printf("  attach %s: %zu histograms, slot[14] = %llu, seen %llu recorded %llu, dropped "
	       "%llu\n",
	       m->attach, kagg_snapshot__hist_cnt(snap),
	       (unsigned long long)slot_sum(snap, SLOT_16MS, 0), (unsigned long long)m->events_seen,
	       (unsigned long long)m->events_recorded, (unsigned long long)m->drops_total);
	for (size_t i = 0; i < kagg_snapshot__hist_cnt(snap); i++)
		for (int k = 0; k < 64; k++)
			if (kagg_snapshot__hist(snap, i)->slots[k] && k != SLOT_16MS)
				printf("  also slot %d: %llu\n", k,
				       (unsigned long long)kagg_snapshot__hist(snap, i)->slots[k]);
	assert_string_equal(m->attach, attach == KAGG_ATTACH_RAW_TP ? "raw_tp" : "tp_btf");
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	assert_int_equal(kagg_snapshot__hist(snap, 0)->key.pid, child.pid);
	/*
	 * Every sleep that blocked (the child counted its voluntary switches: one
	 * whose timer fired before it got the CPU back never blocks) is recorded
	 * once, or counted as lost (on a loaded machine a switch-in is
	 * occasionally not seen: switch_in_missed).  None that ran until it
	 * blocked can be shorter than its 24 ms by 7.6 ms (only one preempted between
	 * arming its timer and blocking can); a slow machine (a TCG guest) may
	 * wake one late past 32.8 ms into the next bucket, but a sleep whose wall
	 * time (as the child measured it) stayed below 32.8 ms, not preempted, is
	 * in [16, 32) ms, or dropped.
	 */
	assert_true(m->drops_total <= 2);
	for (unsigned int k = 0; k < 64; k++)
		all += slot_sum(snap, k, child.pid);
	assert_non_null(work.took_ns);
	for (unsigned int k = 0, below = 0; k < SLOT_16MS; k++) {
		below += slot_sum(snap, k, child.pid);
		assert_true(below <= (unsigned int)tu_sleeps_preempted(&work));
	}
	assert_true(tu_sleeps_blocked(&work) > 0);
	assert_int_equal(all + m->drops_total, tu_sleeps_blocked(&work));
	assert_true(slot_sum(snap, SLOT_16MS, child.pid) + m->drops_total >=
		    (uint64_t)tu_sleeps_whole_under(&work, 32768000ULL));
	/*
	 * The sum: within the bounds of the buckets its intervals were counted in, and all of
	 * them fit in the wall time from releasing the child to the snapshot (us).
	 */
	h = kagg_snapshot__hist(snap, 0);
	for (unsigned int k = 0; k < h->nr_slots; k++) {
		lo_sum += k ? (double)h->slots[k] * (double)(1ULL << k) : 0;
		hi_sum += (double)h->slots[k] * (double)(2ULL << k);
	}
	printf("  sum %.0f us over %llu sleeps, wall %.0f us\n", h->sum,
	       (unsigned long long)h->total, t0 / 1e3);
	assert_true(h->has_sum);
	assert_int_equal(h->total, all);
	assert_true(h->sum >= lo_sum && h->sum < hi_sum);
	assert_true(h->sum <= t0 / 1e3);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* 200 sleeps of 3 ms, each timed by the child itself (in shared memory). */
struct timed_sleeps {
	uint64_t ns[200];
};

static void timed_sleeper(void *arg)
{
	struct timed_sleeps *t = arg;

	for (int i = 0; i < 200; i++) {
		uint64_t t0 = tu_now_ns();

		tu_sleep_ms(3);
		t->ns[i] = tu_now_ns() - t0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * --buckets exp:3: the median bucket holds the child's own median sleep (its off-CPU
 * interval is that sleep less the few us of the syscall around it), and is no wider than
 * the promised 2^(1/8) - 1 of its low bound.
 */
static void test_exp_buckets_median_of_known_sleeps(void **state)
{
	struct timed_sleeps *t =
		mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct tu_child child;
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	struct kagg_session *s;
	double v, low, high, med_us;
	int pids[1];

	TU_SKIP_UNLESS_ROOT();
	assert_true(t != MAP_FAILED);
	child = tu_spawn(timed_sleeper, t);
	pids[0] = child.pid;
	{
		KAGG_OPTS(kagg_offcpu_opts, o, .pids = pids, .nr_pids = 1, .states = "S",
			  .buckets = KAGG_BUCKETS_EXP, .exp_scale = 3, .log = quiet_log);

		s = kagg_offcpu__open(&o);
	}
	snap = tu_snap_after_child(s, &child, KAGG_SNAP_RESET);
	h = kagg_snapshot__hist(snap, 0);
	qsort(t->ns, 200, sizeof(t->ns[0]), cmp_u64);
	med_us = (t->ns[99] + t->ns[100]) / 2e3;
	assert_int_equal(kagg_hist__percentile(h, 50, &v, &low, &high), 0);
	printf("  exp:3 p50 %.1f us in (%.1f, %.1f], measured median %.1f us; %llu intervals, "
	       "dropped %llu\n",
	       v, low, high, med_us, (unsigned long long)h->total,
	       (unsigned long long)kagg_snapshot__meta(snap)->drops_total);
	assert_true(h->has_exp);
	assert_int_equal(h->exp_scale, 3);
	/*
	 * One interval per sleep, or a drop; on a loaded machine a sleeper preempted on its way
	 * to sleep leaves in state R, which --state S leaves out: a few may be missing.
	 */
	assert_true(h->total + kagg_snapshot__meta(snap)->drops_total <= 200);
	assert_true(h->total + kagg_snapshot__meta(snap)->drops_total >= 190);
	assert_true(high - low <= low * (0.0905077326652577 + 1e-12)); /* 2^(1/8) - 1 */
	/*
	 * The median off-CPU interval lies between the 3 ms asked for (less the few us
	 * between arming the timer and leaving the CPU) and the child's own median
	 * measurement, which also holds the syscall around the sleep: some us natively,
	 * ~300 us under TCG, more than a bucket.  The p50 bucket must overlap that range.
	 */
	assert_true(low < med_us && high >= 3000 - 50);
	assert_true(low >= 3000 - 1e-9 || high > 3000); /* no 3 ms sleep is shorter */
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	munmap(t, sizeof(*t));
}

/*
 * --mode both on 200 sleeps of 3 ms: the stream keeps every value, each exact percentile
 * lies in the bucket the kernel histogram gives for the same point (log2 bounds count whole
 * usecs: [low, high] holds the values in [low, high + 1)), and the exact median is the
 * child's own median sleep less the syscall around it: at most that, and within 12% of it
 * (some us natively, ~300 us under TCG).
 */
static void test_both_exact_percentiles_of_known_sleeps(void **state)
{
	static const double q[] = { 50, 90, 99, 99.9, 100 };
	struct timed_sleeps *t =
		mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const struct kagg_hist *h, *sh;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child child;
	double med_us, x50 = 0;
	int pids[1];
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	assert_true(t != MAP_FAILED);
	child = tu_spawn(timed_sleeper, t);
	pids[0] = child.pid;
	{
		KAGG_OPTS(kagg_offcpu_opts, o, .pids = pids, .nr_pids = 1, .states = "S",
			  .mode = KAGG_MODE_BOTH, .log = quiet_log);

		s = kagg_offcpu__open(&o);
	}
	snap = tu_snap_after_child(s, &child, KAGG_SNAP_RESET);
	tu_both_single(snap, &h, &sh);
	qsort(t->ns, 200, sizeof(t->ns[0]), cmp_u64);
	med_us = (t->ns[99] + t->ns[100]) / 2e3;
	printf("  kernel %llu intervals (dropped %llu), stream %llu (dropped %llu); "
	       "measured median %.1f us\n",
	       (unsigned long long)h->total,
	       (unsigned long long)kagg_snapshot__meta(snap)->drops_total,
	       (unsigned long long)sh->total,
	       (unsigned long long)kagg_snapshot__meta(snap)->stream_dropped, med_us);
	assert_int_equal(sh->exact, KAGG_EXACT_KEPT);
	assert_true(sh->nr_values == sh->total);
	assert_true(sh->total >= 190 && sh->total <= 200);
	/* both paths see the same switches: the same intervals, so the same ranks */
	assert_true(h->total == sh->total);
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		double v, low, high, x;

		assert_int_equal(kagg_hist__percentile(h, q[i], &v, &low, &high), 0);
		assert_int_equal(kagg_hist__exact_percentile(sh, q[i], &x), 0);
		printf("  p%g: kernel %.1f us [%.0f, %.0f], exact %.3f us\n", q[i], v, low, high,
		       x);
		assert_true(x >= low && x < high + 1);
		if (q[i] == 50)
			x50 = x;
	}
	assert_true(x50 <= med_us);
	assert_true(x50 >= med_us * 0.88);
	assert_true(x50 >= 3000 - 50); /* no 3 ms sleep is shorter, less arming the timer */
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	munmap(t, sizeof(*t));
}

/* offcpu --mode both --buckets exp:3 (key) on the timed sleeper, whose pid goes to *pid. */
static struct kagg_snapshot *exp_both_sleeps(struct timed_sleeps *t, enum kagg_key_mode key,
					     int *pid)
{
	struct tu_child child = tu_spawn(timed_sleeper, t);
	int pids[1] = { child.pid };
	KAGG_OPTS(kagg_offcpu_opts, o, .key = key, .pids = pids, .nr_pids = 1, .states = "S",
		  .mode = KAGG_MODE_BOTH, .buckets = KAGG_BUCKETS_EXP, .exp_scale = 3,
		  .log = quiet_log);
	struct kagg_session *s = kagg_offcpu__open(&o);
	struct kagg_snapshot *snap;

	assert_non_null(s);
	*pid = child.pid;
	snap = tu_snap_after_child(s, &child, KAGG_SNAP_RESET);
	kagg_session__destroy(s);
	return snap;
}

/*
 * --buckets exp:3 --mode both on 200 sleeps of 3 ms, system-wide (state: KAGG_KEY_NONE) or
 * -P (KAGG_KEY_PID): both paths count the same intervals in the same exp buckets, the -P
 * histogram is the child's own pid's; the p50 bucket holds the child's median sleep and is
 * no wider than 2^(1/8) - 1 of its low bound; each streamed exact percentile lies in the
 * bucket (low, high] the kernel histogram gives for it.
 */
static void test_exp_both_known_sleeps(void **state)
{
	enum kagg_key_mode key = (enum kagg_key_mode)TU_ARG(state);
	struct timed_sleeps *t =
		mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const struct kagg_hist *h, *sh;
	const struct kagg_snapshot *st;
	struct kagg_snapshot *snap;
	double med_us, low = 0, high = 0, x;
	int pid;

	TU_SKIP_UNLESS_ROOT();
	assert_true(t != MAP_FAILED);
	snap = exp_both_sleeps(t, key, &pid);
	st = kagg_snapshot__stream(snap);
	assert_true(st && kagg_snapshot__hist_cnt(snap) == 1 && kagg_snapshot__hist_cnt(st) == 1);
	h = kagg_snapshot__hist(snap, 0);
	sh = kagg_snapshot__hist(st, 0);
	qsort(t->ns, 200, sizeof(t->ns[0]), cmp_u64);
	med_us = (t->ns[99] + t->ns[100]) / 2e3;
	printf("  %s: kernel %llu intervals (dropped %llu), stream %llu; measured median %.1f us\n",
	       key == KAGG_KEY_PID ? "-P" : "system-wide", (unsigned long long)h->total,
	       (unsigned long long)kagg_snapshot__meta(snap)->drops_total,
	       (unsigned long long)sh->total, med_us);
	assert_int_equal(h->exp_scale, 3);
	if (key == KAGG_KEY_PID) {
		assert_int_equal(h->key.pid, pid);
		assert_int_equal(sh->key.pid, pid);
		assert_int_equal(tu_drop_count(snap, "exp_cells"), 0);
	}
	assert_true(h->total >= 190 && h->total <= 200);
	/* the same switches, the same intervals: the same buckets */
	x = tu_assert_exact_in_exp_buckets(h, sh, &low, &high);
	assert_true(high - low <= low * (0.0905077326652577 + 1e-12)); /* 2^(1/8) - 1 */
	/* as test_exp_buckets_median_of_known_sleeps: between 3 ms and the median */
	assert_true(low < med_us && high >= 3000 - 50);
	assert_true(x <= med_us && x >= 3000 - 50);
	kagg_snapshot__free(snap);
	munmap(t, sizeof(*t));
}

/* state: the attach type (TU_TEST_ARG) */
static void test_known_sleeps_land_in_bucket(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	known_sleeps((enum kagg_attach)TU_ARG(state));
}

/*
 * The intervals of h against sl's KNOWN_SLEEP_MS sleeps as the child measured them (the ground
 * truth of test_known_sleeps): at most one of 16 ms or more per sleep; one at least per sleep that
 * blocked once and was never preempted (its whole sleep in state S), or a drop; one of any
 * length per sleep that blocked, or a drop.
 */
static void assert_sleeps(const struct kagg_snapshot *snap, const struct kagg_hist *h,
			  const struct tu_sleeps *sl)
{
	uint64_t n = 0, all = 0, drops = kagg_snapshot__meta(snap)->drops_total;
	unsigned int k;

	assert_non_null(h);
	for (k = 0; k < h->nr_slots; k++) {
		all += h->slots[k];
		n += k >= SLOT_16MS ? h->slots[k] : 0;
	}
	if (n != (uint64_t)sl->count)
		printf("  %llu of %d sleeps (%d blocked, %d of them once and never preempted, %d "
		       "preempted), %llu intervals, %llu drops\n",
		       (unsigned long long)n, sl->count, tu_sleeps_blocked(sl),
		       tu_sleeps_whole_under(sl, UINT64_MAX), tu_sleeps_preempted(sl),
		       (unsigned long long)all, (unsigned long long)drops);
	if (n != (uint64_t)sl->count) {
		uint64_t lo = UINT64_MAX, hi = 0;
		int i;

		/* the buckets against the sleeps' wall times, to tell where time went */
		for (k = 0; k < h->nr_slots; k++)
			if (h->slots[k])
				printf("  slot %u (from %llu us): %llu\n", k, k ? 1ULL << k : 0,
				       (unsigned long long)h->slots[k]);
		for (i = 0; i < sl->count; i++) {
			lo = sl->took_ns[i] < lo ? sl->took_ns[i] : lo;
			hi = sl->took_ns[i] > hi ? sl->took_ns[i] : hi;
		}
		printf("  sleeps' wall times %.3f to %.3f ms\n", lo / 1e6, hi / 1e6);
	}
	assert_true(n <= (uint64_t)sl->count);
	assert_true(n + drops >= (uint64_t)tu_sleeps_whole_under(sl, UINT64_MAX));
	assert_true(all + drops >= (uint64_t)tu_sleeps_blocked(sl));
}

/* -p keeps one process and nobody else. */
static void test_pid_filter_excludes_others(void **state)
{
	struct tu_sleeps a_work = { .count = 20, .ms = KNOWN_SLEEP_MS },
			 b_work = { .count = 20, .ms = KNOWN_SLEEP_MS };
	struct tu_child a, b;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	int pids[1];

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(tu_sleeps_measured(&a_work));
	a = tu_spawn(tu_sleeper, &a_work);
	b = tu_spawn(tu_sleeper, &b_work);
	pids[0] = a.pid;
	KAGG_OPTS(kagg_offcpu_opts, o, .key = KAGG_KEY_PID, .pids = pids, .nr_pids = 1,
		  .log = quiet_log);
	s = kagg_offcpu__open(&o);
	tu_attach_run_two(s, &a, &b);
	snap = tu_snapshot(s, 0);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	assert_int_equal(kagg_snapshot__hist(snap, 0)->key.pid, a.pid);
	/*
	 * a's sleeps as it measured them (assert_sleeps), none of b's; a sleep the kernel made
	 * offcpu miss is not lost silently: it is in the drops.
	 */
	assert_sleeps(snap, kagg_snapshot__hist(snap, 0), &a_work);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* ------------------------------------------------------------ per comm, per cgroup */

/* A child that renames itself (prctl PR_SET_NAME) to name, then sleeps count times ms. */
struct named_sleeper {
	const char *name;
	struct tu_sleeps sl;
};

static void named_sleeper(void *arg)
{
	struct named_sleeper *w = arg;

	prctl(PR_SET_NAME, w->name);
	tu_sleeper(&w->sl);
}

/*
 * Children a and b run (exit 0 each) under a session keyed by key, *sp; its snapshot,
 * every histogram of it keyed so.
 */
static struct kagg_snapshot *keyed_run_two(enum kagg_key_mode key, struct tu_child *a,
					   struct tu_child *b, struct kagg_session **sp)
{
	KAGG_OPTS(kagg_offcpu_opts, o, .key = key, .log = quiet_log);
	struct kagg_snapshot *snap;
	size_t i;

	*sp = kagg_offcpu__open(&o);
	tu_attach_run_two(*sp, a, b);
	snap = tu_snapshot(*sp, 0);
	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++)
		assert_int_equal(kagg_snapshot__hist(snap, i)->key.mode, key);
	return snap;
}

/*
 * -N (KAGG_KEY_COMM): two children renamed to known names sleep 12 and 7 times 24 ms; each
 * name has a histogram of its own (no pid), with its sleeps in it.
 */
static void test_per_comm(void **state)
{
	struct named_sleeper wa = { "kagg-comm-a", { .count = 12, .ms = KNOWN_SLEEP_MS } },
			     wb = { "kagg-comm-b", { .count = 7, .ms = KNOWN_SLEEP_MS } };
	const struct kagg_hist *ha = NULL, *hb = NULL;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child a, b;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(tu_sleeps_measured(&wa.sl));
	assert_non_null(tu_sleeps_measured(&wb.sl));
	a = tu_spawn(named_sleeper, &wa);
	b = tu_spawn(named_sleeper, &wb);
	snap = keyed_run_two(KAGG_KEY_COMM, &a, &b, &s);
	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		assert_int_equal(h->key.pid, 0);
		if (!strcmp(h->key.comm, wa.name)) {
			assert_null(ha);
			ha = h;
		} else if (!strcmp(h->key.comm, wb.name)) {
			assert_null(hb);
			hb = h;
		}
	}
	assert_sleeps(snap, ha, &wa.sl);
	assert_sleeps(snap, hb, &wb.sl);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/*
 * --per-cgroup (KAGG_KEY_CGROUP): a child in a cgroup the test made sleeps 9 times 24 ms; the
 * histogram of that cgroup has its path from the cgroup2 mount (kagg_hist.cgroup) and holds
 * them.
 */
static void test_per_cgroup(void **state)
{
	struct tu_sleeps sl = { .count = 9, .ms = KNOWN_SLEEP_MS };
	const struct kagg_hist *hc = NULL;
	const char *want;
	char cg[128];
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child c, idle;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	tu_cgroup_dir(__func__, "kagg-percg", cg, sizeof(cg));
	want = tu_cgroup_path(cg);
	assert_non_null(tu_sleeps_measured(&sl));
	c = tu_spawn(tu_sleeper, &sl);
	idle = tu_spawn(tu_sleeper, &(struct tu_sleeps){ .count = 1, .ms = 1 });
	assert_int_equal(tu_cgroup_add(cg, c.pid), 0);
	snap = keyed_run_two(KAGG_KEY_CGROUP, &c, &idle, &s);
	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		assert_null(h->key.label); /* offcpu names no id: the cgroup is apart */
		if (h->cgroup && !strcmp(h->cgroup, want))
			hc = h;
	}
	if (!hc)
		printf("  no histogram labelled %s\n", want);
	assert_sleeps(snap, hc, &sl);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	assert_int_equal(rmdir(cg), 0);
}

/* ------------------------------------------------------------ exactness */

struct pingpong {
	int rounds; /* 0: bounce until the main thread stops */
	int ab[2], ba[2];
};

static void *pong_thread(void *arg)
{
	struct pingpong *pp = arg;
	char c;
	int i;

	for (i = 0; !pp->rounds || i < pp->rounds; i++) {
		if (read(pp->ab[0], &c, 1) != 1 || write(pp->ba[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/*
 * Two threads bouncing a byte until told to stop (arg: a struct tu_shared,
 * counting rounds): many short off-CPU intervals.
 */
static void pingpong_work(void *arg)
{
	struct tu_shared *sh = arg;
	struct pingpong pp = { .rounds = 0 };
	pthread_t t;
	char c = 'x';

	if (pipe(pp.ab) || pipe(pp.ba))
		_exit(2);
	pthread_create(&t, NULL, pong_thread, &pp);
	while (!sh->stop) {
		if (write(pp.ab[1], &c, 1) != 1 || read(pp.ba[0], &c, 1) != 1)
			_exit(2);
		sh->done++;
	}
	close(pp.ab[1]); /* the pong thread reads EOF and ends */
	pthread_join(t, NULL);
}

/* Intervals counted so far by a session that is never reset. */
static uint64_t a_counted(struct kagg_session *s)
{
	struct kagg_snapshot *snap = tu_snapshot(s, 0);
	uint64_t n = kagg_snapshot__hist(snap, 0)->total;

	kagg_snapshot__free(snap);
	return n;
}

/*
 * Two sessions on the same events: A never resets, B reads and resets in a
 * tight loop while the workload runs.  The sum of B's snapshots must equal
 * A's count exactly: nothing lost or counted twice across the resets.
 * (Per slot the two may differ by a few: each program stamps its own times,
 * so an interval at a slot boundary can land on either side of it.)
 */
static void snapshots_lose_nothing(enum kagg_key_mode b_mode)
{
	struct tu_shared *sh = tu_shared_work();
	uint64_t a_total = 0, b_total = 0, resets = 0, b_seen = 0, a_seen;
	uint64_t a_drops = 0, b_drops = 0;
	struct kagg_session *sa, *sb;
	struct kagg_snapshot *snap;
	struct tu_child child;
	int pids[1];
	size_t i;

	child = tu_spawn(pingpong_work, sh);
	pids[0] = child.pid;
	KAGG_OPTS(kagg_offcpu_opts, oa, .pids = pids, .nr_pids = 1, .log = quiet_log);
	KAGG_OPTS(kagg_offcpu_opts, ob, .pids = pids, .nr_pids = 1, .key = b_mode,
		  .log = quiet_log);
	sa = kagg_offcpu__open(&oa);
	sb = kagg_offcpu__open(&ob);
	tu_attach(sa);
	tu_attach(sb);
	tu_go(&child);
	/*
	 * Read-and-reset while the threads bounce: at least 20 times, until
	 * A has counted 2000 intervals (a round is usually two, but a thread
	 * that finds its byte already there does not block, so the rounds
	 * needed vary; 100000 rounds is the give-up point); then once more
	 * after the child is gone (an exiting task can still be switched out
	 * and in after it is reaped).
	 */
	for (;;) {
		bool done = sh->stop;

		if (done) {
			assert_int_equal(tu_wait(&child), 0);
			tu_sleep_ms(200);
		}
		snap = tu_snapshot(sb, KAGG_SNAP_RESET);
		assert_true(kagg_snapshot__meta(snap)->snapshot_exact);
		b_drops += kagg_snapshot__meta(snap)->drops_total;
		for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++)
			b_total += kagg_snapshot__hist(snap, i)->total;
		b_seen += kagg_snapshot__meta(snap)->events_recorded;
		kagg_snapshot__free(snap);
		resets++;
		if (done)
			break;
		if (resets >= 20)
			tu_sleep_ms(1);
		if (resets >= 20 && (a_counted(sa) >= 2000 || sh->done >= 100000))
			sh->stop = 1;
	}
	tu_shared_free(sh);
	snap = tu_snapshot(sa, 0);
	a_total = kagg_snapshot__hist(snap, 0)->total;
	a_seen = kagg_snapshot__meta(snap)->events_recorded;
	a_drops = kagg_snapshot__meta(snap)->drops_total;
	kagg_snapshot__free(snap);
	printf("  %llu intervals, %llu read-and-resets, A %llu B %llu, drops A %llu B %llu\n",
	       (unsigned long long)a_total, (unsigned long long)resets, (unsigned long long)a_total,
	       (unsigned long long)b_total, (unsigned long long)a_drops,
	       (unsigned long long)b_drops);
	/* Sensitivity: many events crossed many resets. */
	assert_true(a_total >= 2000);
	/*
	 * Exact when nothing was dropped.  A counted drop (task storage busy,
	 * e.g. while another process frees a task's storage) loses at most one
	 * interval in that session alone.
	 */
	if (!a_drops && !b_drops)
		assert_int_equal(b_total, a_total);
	else
		assert_true((a_total > b_total ? a_total - b_total : b_total - a_total) <=
			    a_drops + b_drops);
	/* The recorded counters agree with the histograms too. */
	assert_int_equal(a_seen, a_total);
	assert_int_equal(b_seen, b_total);
	kagg_session__destroy(sa);
	kagg_session__destroy(sb);
}

/* state: the key mode (TU_TEST_ARG) */
static void test_interval_snapshots_lose_nothing(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	snapshots_lose_nothing((enum kagg_key_mode)TU_ARG(state));
}

/* ------------------------------------------------------------ stacks */

__attribute__((noinline)) void kagg_test_blocking_fn(int n)
{
	int i;

	for (i = 0; i < n; i++)
		tu_sleep_ms(KNOWN_SLEEP_MS);
	__asm__ volatile("" ::: "memory");
}

static void stack_work(void *arg)
{
	kagg_test_blocking_fn(*(int *)arg);
	tu_sleep_ms(2000); /* stay alive (not a zombie) while the test symbolizes */
}

static bool frames_have(const struct kagg_frame *const *fr, unsigned int n, const char *prefix)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strncmp(fr[i]->sym, prefix, strlen(prefix)))
			return true;
	return false;
}

#define NAP_FN "kagg_test::Sleeper::nap(unsigned int, unsigned int)"

static bool frames_equal(const struct kagg_frame *const *fr, unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(fr[i]->sym, name))
			return true;
	return false;
}

/*
 * Every kernel stack starts at the scheduler, where sched_switch fires: nothing of the
 * program or the tracepoint glue that ran it (bpf_prog_..._offcpu_tp_btf, bpf_trace_run4).
 */
static void assert_stacks_start_at_schedule(const struct kagg_snapshot *snap)
{
	size_t i;

	for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (!st->nr_kframes)
			continue;
		if (strcmp(st->kframes[0]->sym, "__schedule"))
			printf("  leaf %s of %s (%d)\n", st->kframes[0]->sym, st->comm, st->pid);
		assert_string_equal(st->kframes[0]->sym, "__schedule");
	}
}

/*
 * Helper argv (a run of tests/helpers/stack_target) naps n times in fn and exits before the
 * snapshot.  Polled, the session read its maps while it lived: its stacks name fn, demangled,
 * and start at __schedule, with nothing of the BPF machinery above it.  Not polled, its user
 * frames are unknown (no maps left at the snapshot): the same run without the mechanism.
 * A nap whose switch-in the kernel did not deliver is missing, and counted in the drops
 * (switch_in_missed), as in the other known-sleep tests.
 */
static bool short_lived_once(char *const argv[], const char *fn, uint64_t n,
			     enum kagg_attach attach, bool poll, bool last)
{
	uint64_t naps = 0, all = 0, nokstack = 0, lost = 0;
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	struct kagg_session *s;
	bool sched = true;
	size_t i;
	pid_t pid = -1;

	KAGG_OPTS(kagg_offcpu_opts, o, .stacks = true, .attach = attach, .log = quiet_log);
	s = kagg_offcpu__open(&o);
	snap = tu_snapshot_around_helper(s, argv, poll, &pid);
	assert_non_null(snap);
	m = kagg_snapshot__meta(snap);
	for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (st->pid != pid)
			continue;
		all += st->count;
		if (st->ustack_err == -EEXIST)
			lost += st->count;
		if (!frames_equal(st->uframes, st->nr_uframes, fn))
			continue;
		naps += st->count;
		if (!st->nr_kframes) {
			nokstack += st->count;
			continue;
		}
		sched &= !strcmp(st->kframes[0]->sym, "__schedule");
	}
	printf("  %s %s, %s: %llu intervals, %llu in %s, kernel leaf __schedule %d (%llu without a "
	       "kernel stack, %llu counted); frames %llu, "
	       "unknown: no maps %llu, no symbols %llu; stacks lost %llu; drops %llu\n",
	       argv[1], m->attach, poll ? "polled" : "not polled", (unsigned long long)all,
	       (unsigned long long)naps, fn, sched, (unsigned long long)nokstack,
	       (unsigned long long)tu_drop_count(snap, "kstack"), (unsigned long long)m->frames,
	       (unsigned long long)m->frames_no_maps, (unsigned long long)m->frames_no_symbols,
	       (unsigned long long)m->stacks_lost, (unsigned long long)m->drops_total);
	assert_string_equal(m->attach, attach == KAGG_ATTACH_RAW_TP ? "raw_tp" : "tp_btf");
	assert_stacks_start_at_schedule(snap);
	assert_true(m->has_frames);
	assert_true(all + m->drops_total >= n);
	/* a user stack not captured is a counted drop, never an interval silently without one */
	assert_true(lost <= tu_drop_count(snap, "ustack"));
	if (poll && naps + m->drops_total < n && lost && !last) {
		/*
		 * The naps' user stack met another in the stack map's hash bucket (-EEXIST):
		 * they have no frames.  The helper's addresses (ASLR) differ next run.
		 */
		printf("  %llu intervals without a user stack (stack map collision): again\n",
		       (unsigned long long)lost);
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
		return false;
	}
	if (poll && naps + m->drops_total < n)
		tu_print_user_stacks(snap, pid);
	if (poll) {
		/*
		 * every nap, each closed by the wakeup that followed it; its kernel stack starts
		 * at the scheduler, or was not captured (a stack map collision) and is counted
		 */
		assert_true(naps + m->drops_total >= n);
		assert_true(sched);
		assert_true(nokstack <= tu_drop_count(snap, "kstack"));
	} else {
		assert_int_equal(naps, 0);
		assert_true(m->frames_no_maps > 0);
	}
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	return true;
}

/* short_lived_once(), run again (at most 3 times) while a stack map collision hid fn. */
static void short_lived_cxx(char *const argv[], const char *fn, uint64_t n, enum kagg_attach attach,
			    bool poll)
{
	int round;

	for (round = 1; !short_lived_once(argv, fn, n, attach, poll, round == 3); round++)
		;
}

/* stack_target naps 10 x 30 ms in a method. */
static char *naps_argv[] = { "stack_target", "nap", "30", "10", NULL };

static void test_short_lived_cxx_process_tp_btf(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	short_lived_cxx(naps_argv, NAP_FN, 10, KAGG_ATTACH_TP_BTF, true);
	short_lived_cxx(naps_argv, NAP_FN, 10, KAGG_ATTACH_TP_BTF, false);
}

static void test_short_lived_cxx_process_raw_tp(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	short_lived_cxx(naps_argv, NAP_FN, 10, KAGG_ATTACH_RAW_TP, true);
}

/*
 * stack_target naps in its own code (noted there), then dlopen()s libstack_late.so and naps
 * 5 x 30 ms in it: the note for its new executable mapping has the session read its maps
 * again while it lives, so those naps are named kagg_late_nap.  Read once, at the first
 * note, the library's frames would be unknown (no maps).
 */
static void test_library_loaded_late(void **state)
{
	char lib[512];
	char *argv[] = { "stack_target", "late", lib, "50", "30", "5", NULL };

	TU_SKIP_UNLESS_ROOT();
	tu_helper("libstack_late.so", lib, sizeof(lib));
	short_lived_cxx(argv, "kagg_late_nap", 5, KAGG_ATTACH_TP_BTF, true);
	short_lived_cxx(argv, "kagg_late_nap", 5, KAGG_ATTACH_RAW_TP, true);
}

/*
 * kagg offcpu --stacks --folded: the helper's naps fold into one line per stack, by function
 * (no "+0x"), from main down to __schedule, with their time; --addrs shows the offsets.  The
 * meta goes to stderr: a nap missing from the lines is one of its counted drops.
 */
static void test_cli_folded_by_function(void **state)
{
	char *helper[] = { "stack_target", "nap", "40", "10", NULL };
	int lines = 0, rc, st;
	const struct tu_on_child on = { .fn = tu_exec_helper,
					.arg = helper,
					.attached = "offcpu_",
					.stop_sig = SIGINT,
					.child_rc = &st };
	static const char leaf[] = ";schedule;__schedule";
	char *out = NULL, *err = NULL, *line, *save = NULL, *ev;
	unsigned long long drops = 0;
	uint64_t us = 0;
	pid_t pid = -1;

	TU_SKIP_UNLESS_ROOT();
	for (int addrs = 0; addrs < 2; addrs++) {
		char *argv[] = { "offcpu", "--stacks", "--folded",
				 "-d",	   "60",       addrs ? "--addrs" : NULL,
				 NULL };

		rc = tu_run_kagg_on(argv, &on, &pid, &out, &err);
		assert_int_equal(rc, 0);
		assert_int_equal(st, 0);
		assert_non_null(strstr(err, "# kagg offcpu: sched:sched_switch"));
		ev = strstr(err, "# events: ");
		assert_non_null(ev);
		ev = strstr(ev, "; dropped ");
		assert_non_null(ev);
		drops = strtoull(ev + strlen("; dropped "), NULL, 10);
		free(err);
		err = NULL;
		assert_null(strstr(out, ";bpf_trace_run"));
		if (addrs) {
			assert_non_null(strstr(out, ";" NAP_FN "+0x"));
			free(out);
			break;
		}
		assert_null(strstr(out, "+0x"));
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *val = strrchr(line, ' ');

			assert_non_null(val);
			/* every kernel part ends (innermost) at the scheduler */
			if (strstr(line, ";--;"))
				assert_true(val - line > 11 &&
					    !strncmp(val - 11, ";__schedule", 11));
			if (strncmp(line, "stack_target;", 13) || !strstr(line, ";" NAP_FN ";"))
				continue;
			assert_non_null(strstr(line, ";main;" NAP_FN ";"));
			assert_true(val - line > (long)strlen(leaf) &&
				    !strncmp(val - strlen(leaf), leaf, strlen(leaf)));
			us += strtoull(val + 1, NULL, 10);
			lines++;
		}
		printf("  folded: %d line(s) with %s, %llu us; dropped %llu\n", lines, NAP_FN,
		       (unsigned long long)us, drops);
		assert_true(lines >= 1);
		assert_true(us + drops * 40000 >= 10 * 40000);
		free(out);
		out = NULL;
	}
}

static void test_stacks_symbolized(void **state)
{
	int n = 10, pids[1];
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child child;
	uint64_t count = 0, late = 0;
	bool ksched = false, ufn = false;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	child = tu_spawn(stack_work, &n);
	pids[0] = child.pid;
	KAGG_OPTS(kagg_offcpu_opts, o, .pids = pids, .nr_pids = 1, .states = "S", .stacks = true,
		  .log = quiet_log);
	s = kagg_offcpu__open(&o);
	tu_attach(s);
	tu_go(&child);
	/*
	 * Read while the child is alive (2 s after its sleeps) so its user
	 * stack can be symbolized: as soon as its n sleeps are in, which takes
	 * n * KNOWN_SLEEP_MS on a quiet machine and longer on a loaded one.
	 */
	tu_sleep_ms(n * KNOWN_SLEEP_MS);
	for (int tries = 0;; tries++) {
		snap = tu_snapshot(s, 0);
		count = 0;
		for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++)
			if (kagg_snapshot__stack(snap, i)->pid == child.pid)
				count += kagg_snapshot__stack(snap, i)->count;
		if (count >= (uint64_t)n || tries == 15)
			break;
		kagg_snapshot__free(snap);
		tu_sleep_ms(100);
	}
	/*
	 * A snapshot reads the histogram and the stacks one after the other,
	 * so the one that first saw n stacks may have read the histogram
	 * before the last sleep ended.  The child now sleeps its 2 s: take
	 * the snapshot checked below with every sleep in both.
	 */
	kagg_snapshot__free(snap);
	snap = kagg_session__snapshot(s, 0);
	assert_non_null(snap);
	kill(child.pid, SIGKILL);
	tu_wait(&child);
	count = 0;
	for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (st->pid != child.pid)
			continue;
		count += st->count;
		ksched |= frames_have(st->kframes, st->nr_kframes, "schedule") ||
			  frames_have(st->kframes, st->nr_kframes, "__schedule");
		/*
		 * Frame-pointer unwinding from inside libc's leaf syscall wrapper
		 * skips the direct caller; the frame above it is this test's.
		 */
		ufn |= frames_have(st->uframes, st->nr_uframes, "kagg_test_blocking_fn") ||
		       frames_have(st->uframes, st->nr_uframes, "stack_work") ||
		       frames_have(st->uframes, st->nr_uframes, "test_stacks_symbolized");
	}
	printf("  %zu stacks, %llu intervals, kernel schedule frame %d, user frame %d; drops "
	       "%llu\n",
	       kagg_snapshot__stack_cnt(snap), (unsigned long long)count, ksched, ufn,
	       (unsigned long long)kagg_snapshot__meta(snap)->drops_total);
	/* every sleep there, or counted as a drop */
	assert_true(count + kagg_snapshot__meta(snap)->drops_total >= (uint64_t)n);
	assert_true(ksched);
	assert_true(ufn);
	/* KNOWN_SLEEP_MS each: the 16 ms bucket, or a later one when woken late. */
	for (i = 0; i < SLOT_16MS; i++)
		assert_int_equal(slot_sum(snap, i, 0), 0);
	for (i = SLOT_16MS; i < 64; i++)
		late += slot_sum(snap, i, 0);
	assert_int_equal(late + kagg_snapshot__meta(snap)->drops_total, n);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* ------------------------------------------------------------ CLI */

/* The CLI on a known workload: JSON with the right bucket and count. */
static void test_cli_json_known_sleeps(void **state)
{
	/* released once the CLI is attached; SIGINT once it is done */
	struct tu_sleeps work = { .count = 50,
				  .ms = KNOWN_SLEEP_MS,
				  .took_ns = tu_sleeps_shared(50) };
	const struct tu_on_child on = {
		.fn = tu_sleeper, .arg = &work, .attached = "offcpu_", .stop_sig = SIGINT
	};
	char *out = NULL, *err = NULL;
	char *argv[] = { "offcpu",   "-p",   "PID", "-P", "--state", "S",
			 "--format", "json", "-d",  "60", NULL };
	pid_t pid;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	rc = tu_run_kagg_on(argv, &on, &pid, &out, &err);
	assert_int_equal(rc, 0);
	assert_non_null(out);
	TU_ASSERT_HAS(out, "\"histograms\": [", "\"attach\": \"tp_btf\"", "\"drops\": {");
	{
		static const char b16[] = "{\"low\":16384,\"high\":32767,\"count\":";
		static const char dropped[] = "\"dropped\": ";
		const char *b = strstr(out, b16), *d = strstr(out, dropped), *o;
		long n, n_late = 0, n_short = 0, n_drop, low;
		char key[64];

		assert_non_null(b);
		assert_non_null(d);
		n = strtol(b + strlen(b16), NULL, 10);
		/* woken late: every bucket above; cut short by a preemption: below */
		for (low = 0; low <= (1L << 30); low = low ? low * 2 : 2) {
			snprintf(key, sizeof(key), "{\"low\":%ld,\"high\":%ld,\"count\":", low,
				 low ? 2 * low - 1 : 1);
			o = low == 16384 ? NULL : strstr(out, key);
			if (o && low > 16384)
				n_late += strtol(o + strlen(key), NULL, 10);
			else if (o)
				n_short += strtol(o + strlen(key), NULL, 10);
		}
		n_drop = strtol(d + strlen(dropped), NULL, 10);
		printf("  CLI JSON bucket [16384, 32767]: %ld of 50 (%ld woken late, %ld shorter, "
		       "%ld dropped; %d sleeps preempted)\n",
		       n, n_late, n_short, n_drop, tu_sleeps_preempted(&work));
		/*
		 * 24 ms sleeps; on a slow machine some may be woken past 32.8 ms,
		 * but not one whose wall time stayed below it, and only one
		 * preempted before it blocked is shorter.  Every sleep is there or
		 * counted as a drop (meta events.dropped: on this VM a switch-in is
		 * now and then not seen, switch_in_missed).
		 */
		assert_non_null(work.took_ns);
		assert_int_equal(n + n_late + n_short + n_drop, tu_sleeps_blocked(&work));
		assert_true(n_short <= tu_sleeps_preempted(&work));
		assert_true(n_drop <= 3);
		assert_true(n + n_drop >= tu_sleeps_whole_under(&work, 32768000ULL));
	}
	free(out);
	free(err);
}

/*
 * A session detached and attached again forgets each CPU's chain of switches: the switches
 * it missed meanwhile are no kernel gap (tu_reattach_no_false_gap()).
 */
static void test_reattach_counts_no_false_gap(void **state)
{
	KAGG_OPTS(kagg_offcpu_opts, ro);
	KAGG_OPTS(kagg_offcpu_opts, ao, .mode = KAGG_MODE_BOTH);

	TU_SKIP_UNLESS_ROOT();
	tu_reattach_no_false_gap(kagg_offcpu__open(&ro), kagg_offcpu__open(&ao));
}

/* ------------------------------------------------------------ leaks */

static void test_nothing_stays_loaded_after_exit(void **state)
{
	static const struct tu_exit_case cases[] = {
		{ "duration", 0, 0, { "offcpu", "-d", "0.5" } },
		{ "mode both, SIGINT", SIGINT, 0, { "offcpu", "--mode", "both" } },
		{ "stacks", 0, 0, { "offcpu", "--stacks", "-P", "-d", "0.5" } },
		{ "SIGINT", SIGINT, 0, { "offcpu" } },
		{ "SIGTERM", SIGTERM, 0, { "offcpu" } },
		{ "unknown pid", 0, 1, { "offcpu", "-p", "2147483647", "-d", "1" } },
	};

	TU_SKIP_UNLESS_ROOT();
	/* what was collected is printed after a signal */
	tu_expect_clean_exits(cases, TU_NR(cases), "offcpu_", "offcpu_", "usecs");
}

/*
 * Standard output is a pipe whose reader has gone (`kagg offcpu | head -0`):
 * kagg ends as cat(1) does, killed by SIGPIPE (the shell's 141) with no error
 * line, nothing left loaded.  With --print the printer's failed write ends
 * the run early instead of waiting out -d.
 */
static int run_into_closed_pipe(char *const argv[], char **err, double *secs)
{
	char errp[] = "/tmp/kagg-test-epipe-XXXXXX";
	int pfd[2], efd, st;
	struct timespec a, b;
	pid_t pid;

	efd = mkstemp(errp);
	assert_true(efd >= 0);
	unlink(errp);
	assert_int_equal(pipe(pfd), 0);
	close(pfd[0]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = tu_spawn_kagg(argv, pfd[1], efd);
	close(pfd[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	lseek(efd, 0, SEEK_SET);
	*err = tu_read_all(efd);
	close(efd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_closed_pipe_one_line_nothing_left(void **state)
{
	char *agg[] = { "offcpu", "-d", "0.5", NULL };
	char *print[] = { "offcpu", "--mode", "stream", "--print", "-d", "20", NULL };
	char *const *cases[] = { agg, print };
	static struct tu_census before;
	char *err = NULL;
	double secs;
	int i, rc;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < 2; i++) {
		tu_census_take(&before, "offcpu_", "offcpu_");
		rc = run_into_closed_pipe(cases[i], &err, &secs);
		printf("  %s: exit %d after %.1f s, stderr: %s", cases[i][1], rc, secs,
		       err ? err : "");
		assert_int_equal(rc, 128 + SIGPIPE);
		/* The banner ("Tracing off-CPU time...") alone: no error line. */
		assert_true(tu_lines(err) <= 1);
		assert_null(strstr(err, "kagg offcpu: "));
		tu_assert_nothing_left(&before, "offcpu_", "offcpu_", cases[i][1]);
		if (i == 1)
			assert_true(secs < 15);
		free(err);
	}
}

/*
 * offcputime's and bcc profile's bare number is a duration: `kagg offcpu 0.3`
 * traces 0.3 s, prints one snapshot and ends by itself (not every 0.3 s until
 * Ctrl-C); `-f 1` is folded output for 1 s, not "-f with -i".
 */
static void test_positional_duration_prints_once(void **state)
{
	static const struct {
		const char *why;
		char *argv[8];
		const char *needle; /* in stdout */
	} cases[] = {
		{ "offcpu N", { "offcpu", "0.3", "--format", "ndjson", NULL }, "\"meta\"" },
		{ "profile N", { "profile", "--format", "ndjson", "0.3", NULL }, "\"meta\"" },
		{ "offcpu -f N", { "offcpu", "-f", "0.3", NULL }, "" },
		{ "N with -i",
		  { "offcpu", "-i", "0.2", "--format", "ndjson", "0.5", NULL },
		  "\"meta\"" },
	};
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < TU_NR(cases); i++) {
		struct tu_kagg k = tu_kagg_start(cases[i].argv);
		char *out = NULL, *err = NULL;
		bool ended = tu_kagg_ends_within(&k, 20000);
		int rc = tu_kagg_finish(&k, &out, &err);

		printf("  %s: %s, exit %d, %d lines\n", cases[i].why, ended ? "ended" : "ran on",
		       rc, tu_lines(out));
		assert_true(ended);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out ? out : "", cases[i].needle));
		/* ndjson: one line per snapshot, one snapshot without -i */
		if (i < 2)
			assert_int_equal(tu_lines(out), 1);
		free(out);
		free(err);
	}
}

/* Error paths give one line and the documented exit code. */
static void test_errors_one_line(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 1, "no such process: 2147483647", { "offcpu", "-p", "2147483647" } },
		{ 1, "/nonexistent/cg", { "offcpu", "--cgroup", "/nonexistent/cg", "-d", "1" } },
	};

	TU_SKIP_UNLESS_ROOT();
	tu_expect_errors(cases, TU_NR(cases));
}

/* Without privileges: one line saying what to do, exit 1, nothing loaded. */
static void test_no_privileges_one_line(void **state)
{
	char *args[] = { "offcpu", "-d", "1", NULL }, buf[512] = "";
	int st;

	TU_SKIP_UNLESS_ROOT();
	st = tu_kagg_as_nobody(__func__, args, buf, sizeof(buf));
	printf("  as nobody: exit %d: %s", WEXITSTATUS(st), buf);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_int_equal(tu_lines(buf), 1);
	assert_non_null(strstr(buf, "CAP_BPF"));
}

/* A comm as a hostile process would set it: ESC sequences, BEL, a newline, DEL. */
#define EVIL_COMM "kagg\033[2J\a\n\x7f"
#define EVIL_COMM_ESC "kagg\\033[2J\\007\\012\\177"

static void evil_sleeper(void *arg)
{
	prctl(PR_SET_NAME, EVIL_COMM);
	tu_sleeper(arg);
}

/* The command name reaches the output escaped, in histograms, stacks and --print lines. */
static void test_comm_with_control_bytes_is_escaped(void **state)
{
	/* sleeps until killed: kagg's start can outlast any fixed lead (TCG guests) */
	struct tu_sleeps work = { .count = 100000, .ms = 10 };
	char pid[16], *out = NULL, *err = NULL;
	char *hist[] = { "offcpu", "-P", "--stacks", "-p", pid, "-d", "1.2", NULL };
	char *print[] = { "offcpu", "--mode", "stream", "--print", "-p", pid, "-d", "1.2", NULL };
	char **runs[] = { hist, print };
	struct tu_child child;
	int i;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < 2; i++) {
		child = tu_spawn(evil_sleeper, &work);
		snprintf(pid, sizeof(pid), "%d", child.pid);
		tu_go(&child);
		assert_int_equal(tu_run_kagg(runs[i], &out, &err, 0, 0), 0);
		kill(child.pid, SIGKILL);
		tu_wait(&child);
		printf("  %s: %zu bytes, escaped comm %s, raw ESC/BEL %s\n", runs[i][1],
		       strlen(out), strstr(out, EVIL_COMM_ESC) ? "present" : "ABSENT",
		       strpbrk(out, "\033\a") ? "PRESENT" : "absent");
		assert_non_null(strstr(out, EVIL_COMM_ESC));
		assert_null(strstr(out, EVIL_COMM));
		assert_null(strpbrk(out, "\033\a\x7f"));
		free(out);
		free(err);
	}
}

TU_MAIN(TU_TEST_ARG(test_known_sleeps_land_in_bucket_tp_btf, test_known_sleeps_land_in_bucket,
		    KAGG_ATTACH_TP_BTF),
	TU_TEST_ARG(test_known_sleeps_land_in_bucket_raw_tp, test_known_sleeps_land_in_bucket,
		    KAGG_ATTACH_RAW_TP),
	cmocka_unit_test(test_pid_filter_excludes_others), cmocka_unit_test(test_per_comm),
	cmocka_unit_test(test_per_cgroup),
	TU_TEST_ARG(test_interval_snapshots_lose_nothing_percpu_array,
		    test_interval_snapshots_lose_nothing, KAGG_KEY_NONE),
	TU_TEST_ARG(test_interval_snapshots_lose_nothing_per_thread,
		    test_interval_snapshots_lose_nothing, KAGG_KEY_TID),
	cmocka_unit_test(test_stacks_symbolized),
	cmocka_unit_test(test_short_lived_cxx_process_tp_btf),
	cmocka_unit_test(test_short_lived_cxx_process_raw_tp),
	cmocka_unit_test(test_library_loaded_late), cmocka_unit_test(test_cli_folded_by_function),
	cmocka_unit_test(test_cli_json_known_sleeps),
	cmocka_unit_test(test_exp_buckets_median_of_known_sleeps),
	cmocka_unit_test(test_both_exact_percentiles_of_known_sleeps),
	TU_TEST_ARG(test_exp_both_known_sleeps_system_wide, test_exp_both_known_sleeps,
		    KAGG_KEY_NONE),
	TU_TEST_ARG(test_exp_both_known_sleeps_per_process, test_exp_both_known_sleeps,
		    KAGG_KEY_PID),
	cmocka_unit_test(test_nothing_stays_loaded_after_exit),
	cmocka_unit_test(test_closed_pipe_one_line_nothing_left),
	cmocka_unit_test(test_positional_duration_prints_once),
	cmocka_unit_test(test_errors_one_line), cmocka_unit_test(test_no_privileges_one_line),
	cmocka_unit_test(test_comm_with_control_bytes_is_escaped),
	cmocka_unit_test(test_reattach_counts_no_false_gap), )
