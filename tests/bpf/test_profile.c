// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg profile against ground truth: a child spinning in a
 * known function on a known CPU owns most of that CPU's samples, with the
 * function in its user stack; -p excludes others; -U/-K capture one side
 * only; the meta names the sampling event actually used; detach stops the
 * sampling; no BPF object outlives the tool.
 */
#include <linux/perf_event.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include <kagg/kagg.h>
#include <kagg/profile.h>
#include "snapshot/snapshot_internal.h"
#include "testutil.h"
#include "census.h"

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == KAGG_LOG_WARN)
		printf("  kagg: %s\n", msg);
}

static volatile uint64_t spin_sink;

/*
 * The function the samples must find.  noinline: it has its own frame and symbol.
 * Spins for ms of its own CPU time, so a loaded host delays it but does not
 * shrink the number of samples it earns.
 */
__attribute__((noinline)) void kagg_test_spin(unsigned int ms)
{
	struct timespec t0, now;
	uint64_t x = 1;
	int i;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		spin_sink = x;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Last online CPU (the child is pinned there). */
static int test_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (int)n - 1 : 0;
}

struct spinner {
	int cpu;
	unsigned int ms;
	int done_fd; /* written once the spin is over; the child then waits to be killed */
	/*
	 * SCHED_FIFO: the CPU is the spinner's whatever else the machine runs
	 * (but the 5% RT throttling leaves), so a count of samples over wall
	 * time does not depend on how the scheduler shares the CPU.
	 */
	bool rt;
	/*
	 * Shared with the parent (tu_shared_u64): when set, spin until *stop is non-zero instead
	 * of for ms, so the spin covers a whole kagg run however late kagg starts sampling.
	 */
	volatile uint64_t *stop;
};

/* Spin, tell the parent, stay alive (symbolization reads /proc/PID/maps). */
static void spinner_work(void *arg)
{
	struct spinner *sp = arg;
	cpu_set_t set;
	char b = 'd';

	/* Never outlive the test (a failed assertion skips stop_child). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	CPU_ZERO(&set);
	CPU_SET(sp->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(2);
	if (sp->rt) {
		struct sched_param prio = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_FIFO, &prio))
			_exit(2);
	}
	if (sp->stop)
		while (!*sp->stop)
			kagg_test_spin(10);
	else
		kagg_test_spin(sp->ms);
	if (write(sp->done_fd, &b, 1) != 1)
		_exit(2);
	pause();
}

static struct tu_child start_spinner(struct spinner *sp, int *done_rd)
{
	int p[2];
	struct tu_child c;

	assert_int_equal(pipe(p), 0);
	sp->done_fd = p[1];
	c = tu_spawn(spinner_work, sp);
	close(p[1]);
	*done_rd = p[0];
	assert_true(c.pid > 0);
	return c;
}

static void wait_done(int fd)
{
	char b;

	assert_int_equal(read(fd, &b, 1), 1);
	close(fd);
}

static void stop_child(struct tu_child *c)
{
	kill(c->pid, SIGKILL);
	tu_wait(c);
}

static bool frames_have(const struct kagg_frame *const *fr, unsigned int n, const char *name)
{
	size_t len = strlen(name);
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strncmp(fr[i]->sym, name, len) && (fr[i]->sym[len] == '+' || !fr[i]->sym[len]))
			return true;
	return false;
}

/* Samples of pid in snap, and how many have func in their user stack. */
static void count_samples(struct kagg_snapshot *snap, int pid, const char *func, uint64_t *all,
			  uint64_t *hit, uint64_t *others)
{
	size_t i;

	*all = *hit = *others = 0;
	for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (st->pid != pid) {
			*others += st->count;
			continue;
		}
		*all += st->count;
		if (frames_have(st->uframes, st->nr_uframes, func))
			*hit += st->count;
	}
}

/* What perf_event_open says about hardware cycles on this machine: 0 or -errno. */
static int probe_cycles(void)
{
	struct perf_event_attr a = { .size = sizeof(a),
				     .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_CPU_CYCLES,
				     .freq = 1,
				     .sample_freq = 99 };
	int fd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* A session sampling process pid at 99 Hz on cpu only, attached. */
static struct kagg_session *open_on(int pid, int cpu)
{
	int pids[1] = { pid };
	KAGG_OPTS(kagg_profile_opts, o, .freq = 99, .cpu = cpu, .pids = pids, .nr_pids = 1,
		  .log = quiet_log);
	struct kagg_session *s = kagg_profile__open(&o);

	tu_attach(s);
	return s;
}

/* Ground truth: a child spinning ~1 s in kagg_test_spin on one CPU, -F 99 --cpu -p. */
static void test_spin_function_owns_samples(void **state)
{
	struct spinner sp = { .cpu = test_cpu(), .ms = 1000, .rt = true };
	uint64_t all, hit, others;
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	struct kagg_session *s;
	struct tu_child c;
	int done;

	TU_SKIP_UNLESS_ROOT();
	c = start_spinner(&sp, &done);
	s = open_on(c.pid, sp.cpu);
	tu_go(&c);
	wait_done(done);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	m = kagg_snapshot__meta(snap);
	count_samples(snap, c.pid, "kagg_test_spin", &all, &hit, &others);
	printf("  cpu %d: %llu samples seen, %llu recorded; child %llu, in kagg_test_spin %llu, "
	       "others %llu\n",
	       sp.cpu, (unsigned long long)m->events_seen, (unsigned long long)m->events_recorded,
	       (unsigned long long)all, (unsigned long long)hit, (unsigned long long)others);
	/*
	 * a second of its CPU time: at 99 Hz ~99 samples, at least a fifth of them as in the
	 * file's other counts (a virtual CPU stalled by its host is charged CPU time its timer
	 * interrupts never saw: 46 in the arm64 guest with both host CPUs busy); at least half
	 * of them in the function
	 */
	assert_true((double)all * 5 >= sp.ms / 1e3 * 99);
	assert_true(hit * 2 >= all);
	assert_int_equal(others, 0); /* -p: nobody else */
	assert_int_equal(m->drops_total, 0);
	assert_string_equal(m->attach, "perf_event");
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	stop_child(&c);
}

#define SPIN_FN "kagg_test::Spinner::spin(unsigned int)"

/*
 * Helper argv (a run of tests/helpers/stack_target) spins in fn, called by main, and exits
 * before the snapshot.  Polled, the session read its maps while it ran: at least one sample
 * in share names fn, demangled, right under main.  Not polled, the same run leaves its frames
 * unknown: no maps are left at the snapshot.  False (unless last) when the polled share was
 * missed only because some of the helper's stacks were lost to a stack map collision.
 */
static bool short_lived_once(char *const argv[], const char *fn, unsigned int share, bool poll,
			     bool last)
{
	uint64_t all = 0, hit = 0, unknown = 0, lost = 0;
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	struct kagg_session *s;
	unsigned int k;
	size_t i;
	pid_t pid = -1;

	/*
	 * cpu-clock: a sample every period of CPU time, so shares of samples are shares of
	 * CPU time; cycles (an emulated PMU in the arm64 guest) in frequency mode adapts its
	 * period as the run goes and weighs its start more
	 */
	KAGG_OPTS(kagg_profile_opts, o, .freq = 199, .cpu = -1, .stacks = KAGG_PROFILE_USER,
		  .event = KAGG_PROFILE_EV_CPU_CLOCK, .log = quiet_log);
	s = kagg_profile__open(&o);
	snap = tu_snapshot_around_helper(s, argv, poll, &pid);
	assert_non_null(snap);
	m = kagg_snapshot__meta(snap);
	for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (st->pid != pid)
			continue;
		all += st->count;
		for (k = 0; k + 1 < st->nr_uframes; k++)
			if (!strcmp(st->uframes[k]->sym, fn) &&
			    !strcmp(st->uframes[k + 1]->sym, "main"))
				hit += st->count;
		if (st->nr_uframes && !strcmp(st->uframes[0]->sym, "[unknown]"))
			unknown += st->count;
		if (st->ustack_err == -EEXIST)
			lost += st->count;
	}
	printf("  %s %s: %llu samples, %llu in %s under main, %llu with an unknown leaf; frames "
	       "%llu, unknown: no maps %llu, no symbols %llu\n",
	       argv[1], poll ? "polled" : "not polled", (unsigned long long)all,
	       (unsigned long long)hit, fn, (unsigned long long)unknown,
	       (unsigned long long)m->frames, (unsigned long long)m->frames_no_maps,
	       (unsigned long long)m->frames_no_symbols);
	/*
	 * 199 Hz for 0.7 s of a CPU: ~140 samples, fewer when the CPUs are shared: at least a
	 * fifth of what the CPU time the helper had (tu_helper_cpu_ns) allows at 199 Hz.
	 */
	printf("  helper CPU time %.3f s: at most ~%.0f samples\n", tu_helper_cpu_ns / 1e9,
	       tu_helper_cpu_ns / 1e9 * 199);
	assert_true(tu_helper_cpu_ns > 0);
	assert_true((double)all * 5 >= tu_helper_cpu_ns / 1e9 * 199);
	assert_true(m->has_frames);
	/* a stack not captured is a counted drop, never a sample silently without one */
	assert_true(lost <= tu_drop_count(snap, "ustack_eexist"));
	if (poll && hit * share < all && lost && !last) {
		/*
		 * The helper's stack met another in the stack map's hash bucket (-EEXIST): its
		 * samples have no frames.  The helper's addresses (ASLR) differ next run.
		 */
		printf("  %llu samples without a stack (stack map collision): again\n",
		       (unsigned long long)lost);
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
		return false;
	}
	if (poll) {
		if (hit * share < all)
			tu_print_user_stacks(snap, pid);
		assert_true(hit * share >= all);
	} else {
		assert_int_equal(hit, 0);
		assert_true(unknown * 2 >= all);
		assert_true(m->frames_no_maps > 0);
	}
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	return true;
}

/* short_lived_once(), run again (at most 3 times) while a stack map collision hid fn. */
static void short_lived_cxx(char *const argv[], const char *fn, unsigned int share, bool poll)
{
	int round;

	for (round = 1; !short_lived_once(argv, fn, share, poll, round == 3); round++)
		;
}

/* stack_target spins 700 ms in a method. */
static void test_short_lived_cxx_process(void **state)
{
	char *argv[] = { "stack_target", "spin", "700", NULL };

	TU_SKIP_UNLESS_ROOT();
	short_lived_cxx(argv, SPIN_FN, 2, true);
	short_lived_cxx(argv, SPIN_FN, 2, false);
}

/*
 * stack_target spins 400 ms of its CPU time in its own code (noted there), then dlopen()s
 * libstack_late.so and spins 400 ms of CPU in it: the note for its new executable mapping has
 * the session read its maps again while it lives, so a quarter of the samples or more (half
 * of its CPU time, whatever the machine's load) name the library's function.
 * Read once, at the first note, its frames would be unknown (no maps).
 */
static void test_library_loaded_late(void **state)
{
	char lib[512];
	char *argv[] = { "stack_target", "late", lib, "400", "10", "1", NULL };

	TU_SKIP_UNLESS_ROOT();
	tu_helper("libstack_late.so", lib, sizeof(lib));
	short_lived_cxx(argv, "kagg_late_spin", 4, true);
}

/* -p excludes a second spinner on the same CPU; its samples are counted as filtered. */
static void test_pid_filter_excludes_others(void **state)
{
	struct spinner sa = { .cpu = test_cpu(), .ms = 600 }, sb = sa;
	uint64_t all, hit, others, b_all, b_hit;
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child a, b;
	int da, db;

	TU_SKIP_UNLESS_ROOT();
	a = start_spinner(&sa, &da);
	b = start_spinner(&sb, &db);
	s = open_on(a.pid, sa.cpu);
	tu_go(&a);
	tu_go(&b);
	wait_done(da);
	wait_done(db);
	snap = tu_snapshot(s, 0);
	count_samples(snap, a.pid, "kagg_test_spin", &all, &hit, &others);
	count_samples(snap, b.pid, "kagg_test_spin", &b_all, &b_hit, &others);
	printf("  a: %llu samples (%llu in the function), b: %llu, filtered %llu\n",
	       (unsigned long long)all, (unsigned long long)hit, (unsigned long long)b_all,
	       (unsigned long long)kagg_snapshot__meta(snap)->events_filtered);
	/*
	 * a spun 600 ms of its CPU time: at 99 Hz ~59 samples, at least a fifth of them as in
	 * the other sample counts here (a virtual CPU stalled by its host is charged CPU time
	 * its timer interrupts never saw: 15 in the arm64 guest under a loaded host)
	 */
	assert_true((double)all * 5 >= sa.ms / 1e3 * 99);
	assert_int_equal(b_all, 0);
	assert_int_equal(others, all); /* every stack is a's */
	/* Both spun on the same CPU for 600 ms: b's share was seen and filtered out. */
	assert_true(kagg_snapshot__meta(snap)->events_filtered >= 10);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	stop_child(&a);
	stop_child(&b);
}

/* -U: no kernel stack captured; -K: no user stack captured. */
static void one_side(enum kagg_profile_stacks side)
{
	struct spinner sp = { .cpu = test_cpu(), .ms = 400 };
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child c;
	uint64_t n = 0;
	int done;
	size_t i;

	c = start_spinner(&sp, &done);
	KAGG_OPTS(kagg_profile_opts, o, .freq = 199, .cpu = -1, .stacks = side, .log = quiet_log);
	s = kagg_profile__open(&o);
	tu_attach(s);
	tu_go(&c);
	wait_done(done);
	snap = tu_snapshot(s, 0);
	for (i = 0; i < kagg_snapshot__stack_cnt(snap); i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		n += st->count;
		if (side == KAGG_PROFILE_USER) {
			assert_int_equal(st->kstack_err, -ENOENT);
			assert_int_equal(st->nr_kframes, 0);
		} else {
			assert_int_equal(st->ustack_err, -ENOENT);
			assert_int_equal(st->nr_uframes, 0);
		}
	}
	printf("  %s only: %zu stacks, %llu samples\n",
	       side == KAGG_PROFILE_USER ? "user" : "kernel", kagg_snapshot__stack_cnt(snap),
	       (unsigned long long)n);
	assert_true(n > 0);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	stop_child(&c);
}

static void test_user_only_and_kernel_only(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	one_side(KAGG_PROFILE_USER);
	one_side(KAGG_PROFILE_KERNEL);
}

/* The meta says which event sampled, and why: what perf_event_open says decides. */
static void test_meta_names_event(void **state)
{
	struct kagg_snapshot *snap;
	const struct kagg_meta *m;
	struct kagg_session *s;
	int hw;

	TU_SKIP_UNLESS_ROOT();
	hw = probe_cycles();
	KAGG_OPTS(kagg_profile_opts, o, .cpu = -1, .log = quiet_log);
	s = kagg_profile__open(&o);
	tu_attach(s);
	tu_sleep_ms(100);
	snap = tu_snapshot(s, 0);
	m = kagg_snapshot__meta(snap);
	printf("  perf_event_open(cycles): %s; meta event %s, note: %s\n",
	       hw ? strerror(-hw) : "ok", m->event, m->attach_note ? m->attach_note : "(none)");
	if (hw == -ENOENT || hw == -EOPNOTSUPP || hw == -ENODEV) {
		assert_string_equal(m->event, "cpu-clock");
		assert_non_null(m->attach_note);
		assert_non_null(strstr(m->attach_note, "no hardware PMU"));
		assert_non_null(strstr(m->attach_note, "cpu-clock"));
	} else {
		assert_int_equal(hw, 0);
		assert_string_equal(m->event, "cycles");
		/* nothing about the event; a note may say how user stacks are walked
		 * (arm64, or a kernel without the table walk's helpers) */
		assert_true(!m->attach_note ||
			    !strncmp(m->attach_note, "user stacks by frame pointer", 28));
	}
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);

	/* Asking for cycles explicitly: works with a PMU, EOPNOTSUPP without. */
	KAGG_OPTS(kagg_profile_opts, oc, .cpu = -1, .event = KAGG_PROFILE_EV_CYCLES,
		  .log = quiet_log);
	s = kagg_profile__open(&oc);
	if (hw) {
		assert_null(s);
		assert_int_equal(errno, EOPNOTSUPP);
	} else {
		assert_non_null(s);
	}
	kagg_session__destroy(s);
}

/* After detach no sample is counted, although the other CPUs' events stay open. */
static void test_detach_stops_sampling(void **state)
{
	struct spinner sp = { .cpu = test_cpu(), .ms = 300 };
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	struct tu_child c;
	int done;

	TU_SKIP_UNLESS_ROOT();
	KAGG_OPTS(kagg_profile_opts, o, .freq = 499, .cpu = -1, .log = quiet_log);
	s = kagg_profile__open(&o);
	tu_attach(s);
	tu_sleep_ms(100);
	assert_int_equal(kagg_session__detach(s), 0);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	kagg_snapshot__free(snap);
	c = start_spinner(&sp, &done);
	tu_go(&c);
	wait_done(done);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	printf("  after detach: %llu samples seen, %zu stacks\n",
	       (unsigned long long)kagg_snapshot__meta(snap)->events_seen,
	       kagg_snapshot__stack_cnt(snap));
	assert_int_equal(kagg_snapshot__meta(snap)->events_seen, 0);
	assert_int_equal(kagg_snapshot__stack_cnt(snap), 0);
	kagg_snapshot__free(snap);
	/* Re-attach replaces the perf events and samples again. */
	assert_int_equal(kagg_session__attach(s), 0);
	tu_sleep_ms(200);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	assert_true(kagg_snapshot__meta(snap)->events_seen > 0);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	stop_child(&c);
}

/* ------------------------------------------------------------ CLI */

/* kagg profile --folded: "comm;frames COUNT" lines; the spinner's function is there. */
static void test_cli_folded_and_json(void **state)
{
	struct spinner sp = { .cpu = test_cpu(), .rt = true, .stop = tu_shared_u64(1) };
	char pid[16], cpu[16], *out = NULL, *err = NULL, *line;
	struct tu_child c;
	uint64_t hit = 0, total = 0;
	int done, rc;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(sp.stop);
	c = start_spinner(&sp, &done);
	snprintf(pid, sizeof(pid), "%d", c.pid);
	snprintf(cpu, sizeof(cpu), "%d", sp.cpu);
	{
		char *argv[] = { "profile", "-F", "99",	      "-p", pid, "--cpu",
				 cpu,	    "-U", "--folded", "-d", "1", NULL };

		tu_go(&c);
		rc = tu_run_kagg(argv, &out, &err, 0, 0);
		*sp.stop = 1;
	}
	assert_int_equal(rc, 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp_ = strrchr(line, ' ');
		unsigned long long n;

		assert_non_null(sp_);
		n = strtoull(sp_ + 1, NULL, 10);
		assert_true(n > 0);
		assert_null(strstr(line, ";--")); /* -U: no kernel part */
		total += n;
		if (strstr(line, ";kagg_test_spin"))
			hit += n;
	}
	printf("  folded: %llu samples, %llu in kagg_test_spin\n", (unsigned long long)total,
	       (unsigned long long)hit);
	assert_true(total >= 40);
	assert_true(hit * 2 >= total);
	free(out);
	free(err);
	out = err = NULL;
	{
		char *argv[] = { "profile", "-d", "0.3", "--format", "json", "--overhead", NULL };

		rc = tu_run_kagg(argv, &out, &err, 0, 0);
	}
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"tool\": \"profile\""));
	assert_non_null(strstr(out, "\"attach\": \"perf_event\""));
	assert_non_null(
		strstr(out, probe_cycles() ? "\"event\": \"cpu-clock\"" : "\"event\": \"cycles\""));
	assert_non_null(strstr(out, "profile_sample"));
	wait_done(done);
	stop_child(&c);
	free(out);
	free(err);
}

static void test_nothing_stays_loaded_after_exit(void **state)
{
	static const struct tu_exit_case cases[] = {
		{ "duration", 0, 0, { "profile", "-d", "0.5" } },
		{ "SIGINT", SIGINT, 0, { "profile", "-F", "199" } },
		{ "SIGTERM", SIGTERM, 0, { "profile", "-F", "199" } },
		{ "unknown pid", 0, 1, { "profile", "-p", "2147483647", "-d", "1" } },
	};

	TU_SKIP_UNLESS_ROOT();
	tu_expect_clean_exits(cases, TU_NR(cases), "profile_", "profile_", "# kagg profile");
}

static void test_errors_one_line(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 1, "no such process: 2147483647", { "profile", "-p", "2147483647" } },
		{ 2, "cpu 4000 is not online", { "profile", "--cpu", "4000", "-d", "1" } },
		{ 2, NULL, { "profile", "-U", "-K" } },
	};

	TU_SKIP_UNLESS_ROOT();
	tu_expect_errors(cases, TU_NR(cases));
}

/*
 * A stack of process pid's main thread, named comm, seen count times: nk kernel frames
 * at k, nu user frames at u, innermost first.
 */
static struct kagg_stack main_thread_stack(int pid, const char *comm, uint64_t count,
					   const struct kagg_frame *const *k, unsigned int nk,
					   const struct kagg_frame *const *u, unsigned int nu)
{
	struct kagg_stack st = { .sz = sizeof(st), .pid = pid, .tid = pid, .count = count };

	snprintf(st.comm, sizeof(st.comm), "%s", comm);
	st.kframes = k;
	st.nr_kframes = nk;
	st.uframes = u;
	st.nr_uframes = nu;
	return st;
}

/* Folded lines from a hand-built snapshot: order, separators, lost stacks, counts. */
static void test_folded_printer(void **state)
{
	static const struct kagg_frame kf[] = { { sizeof(kf[0]), 1, "do_syscall_64+0x5" },
						{ sizeof(kf[0]), 2, "entry+0x1" } };
	static const struct kagg_frame uf[] = { { sizeof(uf[0]), 3, "spin+0x10" },
						{ sizeof(uf[0]), 4, "main+0x20" } };
	static const struct kagg_frame *const k[] = { &kf[0], &kf[1] };
	static const struct kagg_frame *const u[] = { &uf[0], &uf[1] };
	struct kagg_snapshot *snap = snap_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_stacks(snap, 3), 0);
	snap->nr_stacks = 3;
	snap->stacks[0] = main_thread_stack(7, "app", 42, k, 2, u, 2);
	snap->stacks[0].total_ns = 42 * 10101010ULL;
	/* -U: kernel side not captured by design. */
	snap->stacks[1] = main_thread_stack(7, "app", 5, NULL, 0, u, 2);
	snap->stacks[1].kstack_err = -ENOENT;
	/* Kernel thread, user side not captured; a failed kernel capture is shown. */
	snap->stacks[2] = main_thread_stack(9, "kworker/0:1", 1, NULL, 0, NULL, 0);
	snap->stacks[2].kstack_err = -EEXIST;
	snap->stacks[2].ustack_err = -ENOENT;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(kagg_profile__print_folded(snap, f), 0);
	fclose(f);
	assert_string_equal(buf, "app;main+0x20;spin+0x10;--;entry+0x1;do_syscall_64+0x5 42\n"
				 "app;main+0x20;spin+0x10 5\n"
				 "kworker/0:1;--;[kernel stack lost] 1\n");
	free(buf);
	assert_int_equal(kagg_profile__print_folded(NULL, stdout), -EINVAL);
	kagg_snapshot__free(snap);
}

TU_MAIN(cmocka_unit_test(test_folded_printer), cmocka_unit_test(test_spin_function_owns_samples),
	cmocka_unit_test(test_pid_filter_excludes_others),
	cmocka_unit_test(test_short_lived_cxx_process), cmocka_unit_test(test_library_loaded_late),
	cmocka_unit_test(test_user_only_and_kernel_only), cmocka_unit_test(test_meta_names_event),
	cmocka_unit_test(test_detach_stops_sampling), cmocka_unit_test(test_cli_folded_and_json),
	cmocka_unit_test(test_nothing_stays_loaded_after_exit),
	cmocka_unit_test(test_errors_one_line), )
