/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers shared by kagg's cmocka tests: controlled workloads (children that
 * block a known number of times for a known duration, started on a signal),
 * running the kagg binary, and BPF object census for leak checks.
 */
#ifndef KAGG_TESTUTIL_H
#define KAGG_TESTUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kagg/ringbuf.h>
#include <kagg/session.h>
#include <kagg/snapshot.h>

#include "test_main.h"

/* Path of the kagg binary under test ($KAGG, else build/bin/kagg). */
static inline const char *tu_kagg(void)
{
	const char *p = getenv("KAGG");

	return p && *p ? p : "build/bin/kagg";
}

/*
 * One test body tried in several configurations: cmocka test NAME runs FN
 * with *state = ARG (an integer, read back with TU_ARG(state)).
 */
#define TU_TEST_ARG(NAME, FN, ARG) { #NAME, FN, NULL, NULL, (void *)(uintptr_t)(ARG) }
#define TU_ARG(state) ((uintptr_t)*(state))

/*
 * The main() of a test program: run its tests (cmocka_unit_test(), TU_TEST_ARG() entries,
 * a trailing comma allowed) as one group, without setup or teardown.
 */
#define TU_MAIN(...) KT_MAIN_GROUP(NULL, NULL, __VA_ARGS__)

/* Skip reason printed, so a skipped root test says why. */
#define TU_SKIP_UNLESS_ROOT()                                                              \
	do {                                                                               \
		if (geteuid() != 0) {                                                      \
			printf("SKIP %s: needs root (CAP_BPF + CAP_PERFMON)\n", __func__); \
			skip();                                                            \
		}                                                                          \
	} while (0)

static inline void tu_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* CLOCK_MONOTONIC in ns: wall time around a workload bounds the time it can have measured. */
static inline uint64_t tu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A child started blocked on a pipe; tu_go() releases it. */
struct tu_child {
	pid_t pid;
	int go_fd;
};

typedef void (*tu_work_fn)(void *arg);

/* /proc/pid/file's first len - 1 bytes into buf, NUL-terminated; their count or -1. */
static inline ssize_t tu_proc_read(pid_t pid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/*
 * Is pid asleep in its pipe read: state S, and off its CPU in a system call?  Reading
 * /proc/pid/syscall waits until the task is off its CPU (wait_task_inactive) and says
 * "running" if it is not in one; a task that set state S but has not switched out yet is
 * not asleep for a tracer, whose sched_switch it has still to pass.  Where that file
 * cannot be read, the wchan (anon_pipe_read, pipe_read) tells.
 */
static inline bool tu_in_pipe_read(pid_t pid)
{
	char buf[512], *p;

	tu_proc_read(pid, "stat", buf, sizeof(buf));
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'S')
		return false;
	if (tu_proc_read(pid, "syscall", buf, sizeof(buf)) > 0)
		return buf[0] >= '0' && buf[0] <= '9';
	return tu_proc_read(pid, "wchan", buf, sizeof(buf)) > 0 && strstr(buf, "pipe");
}

/*
 * fork() a child that runs fn(arg) once tu_go() is called.  Returns once the child waits
 * in its read of the pipe (10 s at most), so that nothing it does before fn (the rest of
 * fork, closing the pipe's end, entering that read) falls in a session opened after.
 */
static inline struct tu_child tu_spawn(tu_work_fn fn, void *arg)
{
	struct tu_child c = { -1, -1 };
	int p[2], i;
	char b;

	if (pipe(p))
		return c;
	c.pid = fork();
	if (c.pid == 0) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(3);
		fn(arg);
		_exit(0);
	}
	close(p[0]);
	c.go_fd = p[1];
	for (i = 0; c.pid > 0 && i < 10000 && !tu_in_pipe_read(c.pid); i++)
		usleep(1000);
	return c;
}

static inline void tu_go(struct tu_child *c)
{
	char b = 'g';

	if (write(c->go_fd, &b, 1) != 1)
		perror("tu_go");
	close(c->go_fd);
	c->go_fd = -1;
}

/* Wait for the child; its exit status (or -1). */
static inline int tu_wait(struct tu_child *c)
{
	int st;

	if (c->go_fd >= 0)
		close(c->go_fd);
	if (waitpid(c->pid, &st, 0) != c->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Work paced by the test rather than by the clock: a child counts its
 * rounds in `done` until the parent sets `stop`, so "enough work happened
 * while the parent did its part" holds on any machine, however loaded.
 * Shared across fork (tu_shared_work()); tu_shared_free() when done.
 */
struct tu_shared {
	volatile int stop;
	volatile long done;
};

static inline struct tu_shared *tu_shared_work(void)
{
	void *p = mmap(NULL, sizeof(struct tu_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void tu_shared_free(struct tu_shared *sh)
{
	munmap(sh, sizeof(*sh));
}

/* Workload: one sleep of lead_ms (if set), then `count` sleeps of `ms` milliseconds. */
/*
 * A child sleeping count times ms.  With took_ns (tu_sleeps_measured()), it
 * also writes each sleep's wall time into memory the parent shares: the
 * ground truth of a bucket assertion.  Whatever the kernel measured of one
 * sleep (its off-CPU interval, its syscall, its function) lies within that
 * wall time, so a sleep whose wall time stayed below a bucket's upper bound
 * must be counted at or below that bucket, however late the scheduler woke
 * the others.  took_ns[count + i] is how many times sleep i switched out
 * voluntarily (getrusage's ru_nvcsw): a sleep whose timer expired while the
 * task was still waiting for a CPU never blocks, and so is no off-CPU
 * interval in state S.  took_ns[2 * count + i] is how many times it was
 * preempted (ru_nivcsw): a sleep preempted after its timer was armed and
 * before it blocked spends part of its time runnable, so its interval in
 * state S can be shorter than the sleep asked for.  took_ns[3 * count + i] is
 * the CPU time the thread was charged during sleep i: a virtual CPU stalled by
 * its host between the timer being set and the switch-out is charged to the
 * task (the guest's clock ran on), and that sleep's interval in S is shorter
 * by as much, with no preemption to show for it.
 */
struct tu_sleeps {
	int count;
	unsigned int ms;
	unsigned int lead_ms;
	uint64_t *took_ns; /* 4 * count: wall times, voluntary switches, preemptions, CPU */
};

static inline uint64_t tu_nvcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (uint64_t)ru.ru_nvcsw;
}

static inline uint64_t tu_nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (uint64_t)ru.ru_nivcsw;
}

/* CLOCK_THREAD_CPUTIME_ID in ns: the CPU time this thread was charged. */
static inline uint64_t tu_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void tu_sleeper(void *arg)
{
	const struct tu_sleeps *s = arg;
	uint64_t t0, v0, iv0, c0;
	int i;

	if (s->lead_ms)
		tu_sleep_ms(s->lead_ms);
	for (i = 0; i < s->count; i++) {
		iv0 = s->took_ns ? tu_nivcsw() : 0;
		v0 = s->took_ns ? tu_nvcsw() : 0;
		c0 = s->took_ns ? tu_thread_cpu_ns() : 0;
		t0 = s->took_ns ? tu_now_ns() : 0;
		tu_sleep_ms(s->ms);
		if (s->took_ns) {
			s->took_ns[i] = tu_now_ns() - t0;
			s->took_ns[3 * s->count + i] = tu_thread_cpu_ns() - c0;
			s->took_ns[s->count + i] = tu_nvcsw() - v0;
			s->took_ns[2 * s->count + i] = tu_nivcsw() - iv0;
		}
	}
}

/* n zeroed u64 a forked child shares with its parent; NULL on failure. */
static inline uint64_t *tu_shared_u64(int n)
{
	void *p = mmap(NULL, (size_t)n * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A took_ns array for count sleeps (struct tu_sleeps), shared with a child; NULL on failure. */
static inline uint64_t *tu_sleeps_shared(int count)
{
	return tu_shared_u64(4 * count);
}

/* Give s a shared took_ns array (the child fills it); NULL on failure. */
static inline uint64_t *tu_sleeps_measured(struct tu_sleeps *s)
{
	s->took_ns = tu_sleeps_shared(s->count);
	return s->took_ns;
}

/* How many of s's measured sleeps blocked (switched out voluntarily). */
static inline int tu_sleeps_blocked(const struct tu_sleeps *s)
{
	int i, n = 0;

	for (i = 0; i < s->count; i++)
		n += s->took_ns[s->count + i] > 0;
	return n;
}

/* How many of s's measured sleeps took less than ns of wall time. */
static inline int tu_sleeps_under(const struct tu_sleeps *s, uint64_t ns)
{
	int i, n = 0;

	for (i = 0; i < s->count; i++)
		n += s->took_ns[i] && s->took_ns[i] < ns;
	return n;
}

/*
 * A sleep on a CPU for a millisecond or more of its call (the call itself takes
 * microseconds): its virtual CPU stalled before it blocked, or it was kept busy.
 */
#define TU_SLEEP_STALL_NS 1000000ULL

/*
 * How many of s's measured sleeps were preempted, or charged TU_SLEEP_STALL_NS of CPU or
 * more (an interval in S can be shorter).
 */
static inline int tu_sleeps_preempted(const struct tu_sleeps *s)
{
	int i, n = 0;

	for (i = 0; i < s->count; i++)
		n += s->took_ns[2 * s->count + i] > 0 ||
		     s->took_ns[3 * s->count + i] >= TU_SLEEP_STALL_NS;
	return n;
}

/*
 * How many blocked exactly once and were never preempted nor stalled, and took less than ns
 * of wall time: each is one interval in S of at least the sleep asked for, below ns.  A
 * sleep that blocked twice was woken before its timer (the kernel allows spurious wakeups;
 * nanosleep then sleeps again for the rest): two shorter intervals.
 */
static inline int tu_sleeps_whole_under(const struct tu_sleeps *s, uint64_t ns)
{
	int i, n = 0;

	for (i = 0; i < s->count; i++)
		n += s->took_ns[i] && s->took_ns[i] < ns && s->took_ns[s->count + i] == 1 &&
		     !s->took_ns[2 * s->count + i] &&
		     s->took_ns[3 * s->count + i] < TU_SLEEP_STALL_NS;
	return n;
}

/* Two threads of one process bouncing a byte *(int *)arg times: two switches per round. */
struct tu_bounce {
	int rounds;
	int ab[2], ba[2];
	pid_t back_tid; /* the second thread's */
};

static inline void *tu_bounce_back(void *arg)
{
	struct tu_bounce *b = arg;
	char c;
	int i;

	b->back_tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < b->rounds; i++)
		if (read(b->ab[0], &c, 1) != 1 || write(b->ba[1], &c, 1) != 1)
			break;
	return NULL;
}

/* The bounce of b->rounds; b->back_tid once it returns. */
static inline void tu_bounce_run(struct tu_bounce *b)
{
	pthread_t t;
	char c = 'x';
	int i;

	if (pipe(b->ab) || pipe(b->ba))
		_exit(2);
	pthread_create(&t, NULL, tu_bounce_back, b);
	for (i = 0; i < b->rounds; i++)
		if (write(b->ab[1], &c, 1) != 1 || read(b->ba[0], &c, 1) != 1)
			_exit(2);
	pthread_join(t, NULL);
}

static inline void tu_bounce_work(void *arg)
{
	struct tu_bounce b = { .rounds = *(int *)arg };

	tu_bounce_run(&b);
}

/*
 * tu_bounce_work's rounds and, as the kernel counted them (getrusage of the process around
 * the bounce, its second thread's once joined), the switches its threads made meanwhile:
 * the ground truth of the tests on them.  How many rounds wait at all is the scheduler's
 * choice (a thread whose byte is there before it sleeps reads on without a switch): each
 * block needs a wakeup, each switch-out a switch-in before the process ends.
 */
struct tu_bounce_count {
	int rounds;
	/* tu_shared_u64(3): [0] blocks (ru_nvcsw), [1] preemptions (ru_nivcsw), [2] the second
	 * thread's id (the first's is the process's) */
	uint64_t *ru;
};

static inline void tu_bounce_counted(void *arg)
{
	struct tu_bounce_count *b = arg;
	struct tu_bounce bb = { .rounds = b->rounds };
	struct rusage r0, r1;

	if (getrusage(RUSAGE_SELF, &r0))
		_exit(2);
	tu_bounce_run(&bb);
	if (getrusage(RUSAGE_SELF, &r1))
		_exit(2);
	b->ru[0] = (uint64_t)(r1.ru_nvcsw - r0.ru_nvcsw);
	b->ru[1] = (uint64_t)(r1.ru_nivcsw - r0.ru_nivcsw);
	b->ru[2] = (uint64_t)bb.back_tid;
}

/* A bounce of rounds whose switches a child counts for its parent (asserted mapped). */
static inline struct tu_bounce_count tu_bounce_count(int rounds)
{
	struct tu_bounce_count b = { rounds, tu_shared_u64(3) };

	assert_non_null(b.ru);
	return b;
}

/* The switch-outs of b's threads (blocks and preemptions): each ends in a switch-in. */
static inline uint64_t tu_bounce_switched(const struct tu_bounce_count *b)
{
	return b->ru[0] + b->ru[1];
}

static inline void tu_bounce_free(struct tu_bounce_count *b)
{
	munmap(b->ru, 3 * sizeof(uint64_t));
	b->ru = NULL;
}

/*
 * All of fd from its offset, NUL-terminated, malloc'd (NULL when out of
 * memory); its length (without the NUL, 0 on failure) in *len unless len is NULL.
 */
static inline char *tu_read_all_len(int fd, size_t *len_out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *tmp = realloc(buf, cap * 2);

			if (!tmp) {
				free(buf);
				return NULL;
			}
			buf = tmp;
			cap *= 2;
		}
	}
	if (buf)
		buf[len] = '\0';
	if (len_out)
		*len_out = buf ? len : 0;
	return buf;
}

/* All of fd from its offset, NUL-terminated, malloc'd (NULL when out of memory). */
static inline char *tu_read_all(int fd)
{
	return tu_read_all_len(fd, NULL);
}

/* The file at path as tu_read_all_len() reads it; NULL when it cannot be opened. */
static inline char *tu_slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;

	if (len)
		*len = 0;
	if (fd < 0)
		return NULL;
	buf = tu_read_all_len(fd, len);
	close(fd);
	return buf;
}

/*
 * The shell command made of fmt, run: its exit status, -1 when it could not run, 128 when a
 * signal ended it.  With must, a status other than 0 fails the test, naming the command.
 */
static inline int tu_vsh(bool must, const char *fmt, va_list ap)
{
	char cmd[4096];
	int rc;

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	rc = system(cmd);
	rc = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
	if (must && rc)
		fail_msg("command failed (%d): %s", rc, cmd);
	return rc;
}

/* The exit status of the shell command made of fmt (as tu_vsh() gives it). */
static inline __attribute__((format(printf, 1, 2))) int tu_sh(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tu_vsh(false, fmt, ap);
	va_end(ap);
	return rc;
}

/* Run the shell command made of fmt; fail the test when it fails. */
static inline __attribute__((format(printf, 1, 2))) void tu_sh_ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tu_vsh(true, fmt, ap);
	va_end(ap);
}

/* Path of test helper name: $KAGG_HELPERS/name, else build/tests/helpers/name. */
static inline const char *tu_helper(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("KAGG_HELPERS");

	snprintf(buf, len, "%s/%s", dir && *dir ? dir : "build/tests/helpers", name);
	return buf;
}

/* Work that is a helper program: exec helper argv[0] (arg: its NULL-terminated argv). */
static inline void tu_exec_helper(void *arg)
{
	char *const *argv = arg;
	char path[512];

	execv(tu_helper(argv[0], path, sizeof(path)), argv);
	_exit(127);
}

/*
 * CPU time (user + system, ns) of the last helper tu_run_helper() reaped: what a sampling
 * profiler could sample of it, however the scheduler shared the CPUs.
 */
static uint64_t tu_helper_cpu_ns;

/*
 * Run helper argv[0] (NULL-terminated argv) to its end while the session runs, calling
 * kagg_session__poll() every 50 ms (poll false: sleeping instead, as a program that never
 * polls would); reaped, so nothing of it is left in /proc.  Its pid, or -1 (not started,
 * failed, or still running after 60 s: killed).  Its CPU time: tu_helper_cpu_ns.
 */
static inline pid_t tu_run_helper(struct kagg_session *s, char *const argv[], bool poll)
{
	struct rusage ru;
	char path[512];
	uint64_t deadline;
	pid_t pid;
	int st;

	tu_helper(argv[0], path, sizeof(path));
	pid = fork();
	if (pid == 0) {
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	/*
	 * At most 60 s of wall time: a poll returns at once while notes keep coming (a system
	 * starting processes all the time), so a count of polls is no bound on time.
	 */
	deadline = tu_now_ns() + 60000000000ULL;
	while (tu_now_ns() < deadline) {
		if (wait4(pid, &st, WNOHANG, &ru) == pid) {
			tu_helper_cpu_ns =
				(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
					1000000000ULL +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
			return WIFEXITED(st) && !WEXITSTATUS(st) ? pid : -1;
		}
		if (poll)
			kagg_session__poll(s, 50);
		else
			tu_sleep_ms(50);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/*
 * Attach s, run helper argv to its end (tu_run_helper), then take a KAGG_SNAP_RESET snapshot.
 * NULL when any step failed; *pid: the helper's pid.
 */
static inline struct kagg_snapshot *
tu_snapshot_around_helper(struct kagg_session *s, char *const argv[], bool poll, pid_t *pid)
{
	if (!s || kagg_session__attach(s))
		return NULL;
	*pid = tu_run_helper(s, argv, poll);
	if (*pid <= 0)
		return NULL;
	return kagg_session__snapshot(s, KAGG_SNAP_RESET);
}

/*
 * What a failed stack assertion needs to be understood: pid's stacks in snap (user frames,
 * innermost first, with their addresses and files), how they were walked and the walks'
 * drops.
 */
static inline void tu_print_user_stacks(const struct kagg_snapshot *snap, pid_t pid)
{
	const struct kagg_meta *m = kagg_snapshot__meta(snap);
	size_t i, shown = 0;

	printf("  unwind %s: frames by fp %llu, by table %llu; tables %llu files %llu rows\n",
	       m->unwind ? m->unwind : "-", (unsigned long long)m->frames_fp,
	       (unsigned long long)m->frames_table, (unsigned long long)m->unwind_files,
	       (unsigned long long)m->unwind_rows);
	for (i = 0; i < m->nr_drops; i++)
		if (m->drops[i]->count)
			printf("  drop %s: %llu\n", m->drops[i]->cause,
			       (unsigned long long)m->drops[i]->count);
	for (i = 0; i < kagg_snapshot__stack_cnt(snap) && shown < 8; i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (st->pid != pid)
			continue;
		shown++;
		printf("  stack x%llu, ustack_err %d:\n", (unsigned long long)st->count,
		       st->ustack_err);
		for (unsigned int f = 0; f < st->nr_uframes; f++)
			printf("    %#llx %s (%s)\n", (unsigned long long)st->uframes[f]->ip,
			       st->uframes[f]->sym,
			       st->uframes[f]->module ? st->uframes[f]->module : "?");
	}
}

/* Start kagg with argv (NULL-terminated, without the binary), stdout on ofd, stderr on efd. */
static inline pid_t tu_spawn_kagg(char *const argv[], int ofd, int efd)
{
	char *args[64];
	pid_t pid;
	int i;

	args[0] = (char *)tu_kagg();
	for (i = 0; argv[i] && i < 62; i++)
		args[i + 1] = argv[i];
	args[i + 1] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(args[0], args);
		_exit(127);
	}
	return pid;
}

/* A kagg started by tu_kagg_start(): its pid and where its output goes. */
struct tu_kagg {
	pid_t pid;
	int ofd, efd;
	int status; /* once reaped (tu_kagg_exited) */
	bool reaped;
};

/* Start kagg with argv (NULL-terminated, without the binary), output into temporary files. */
static inline struct tu_kagg tu_kagg_start(char *const argv[])
{
	char outp[] = "/tmp/kagg-test-out-XXXXXX", errp[] = "/tmp/kagg-test-err-XXXXXX";
	struct tu_kagg k = { .pid = -1 };

	k.ofd = mkstemp(outp);
	k.efd = mkstemp(errp);
	if (k.ofd < 0 || k.efd < 0)
		return k;
	unlink(outp);
	unlink(errp);
	k.pid = tu_spawn_kagg(argv, k.ofd, k.efd);
	return k;
}

/* Whether kagg has exited (reaping it). */
static inline bool tu_kagg_exited(struct tu_kagg *k)
{
	if (!k->reaped && waitpid(k->pid, &k->status, WNOHANG) == k->pid)
		k->reaped = true;
	return k->reaped;
}

/*
 * Whether kagg ended by itself within ms milliseconds (a bound far above what
 * the run takes, so it only tells "ends" from "runs until Ctrl-C"); if not,
 * it is sent SIGINT and reaped by tu_kagg_finish().
 */
static inline bool tu_kagg_ends_within(struct tu_kagg *k, unsigned int ms)
{
	unsigned int t;

	for (t = 0; t < ms; t += 20) {
		if (tu_kagg_exited(k))
			return true;
		tu_sleep_ms(20);
	}
	if (tu_kagg_exited(k))
		return true;
	kill(k->pid, SIGINT);
	return false;
}

/*
 * Wait for kagg, capture stdout and stderr into malloc'd strings (may be
 * NULL).  Returns the exit status, 128+signal if killed, -1.
 */
static inline int tu_kagg_finish(struct tu_kagg *k, char **out, char **err)
{
	int st = k->status;

	if (k->pid < 0)
		return -1;
	if (!k->reaped && waitpid(k->pid, &st, 0) != k->pid)
		return -1;
	lseek(k->ofd, 0, SEEK_SET);
	lseek(k->efd, 0, SEEK_SET);
	if (out)
		*out = tu_read_all(k->ofd);
	if (err)
		*err = tu_read_all(k->efd);
	close(k->ofd);
	close(k->efd);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/*
 * Wait until kagg catches sig (its handler installed: SigCgt in /proc/PID/status) or has
 * exited, 60 s at most.  Its exec, dynamic linking and option parsing take well under
 * 100 ms on a quiet machine and over a second in a guest emulated on a loaded one: a
 * signal timed from the fork can land before the handler and kill it.
 */
static inline void tu_kagg_wait_catching(struct tu_kagg *k, int sig)
{
	char path[64], line[256];
	unsigned int t;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)k->pid);
	for (t = 0; t < 60000 && !tu_kagg_exited(k); t += 10) {
		FILE *f = fopen(path, "re");
		bool caught = false;

		if (!f)
			return;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "SigCgt:", 7))
				caught = (strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1;
		fclose(f);
		if (caught)
			return;
		tu_sleep_ms(10);
	}
}

/*
 * Run kagg with argv (NULL-terminated, without the binary), capture stdout
 * and stderr into malloc'd strings (may be NULL), optionally send `sig`
 * `sig_after_ms` after kagg installed its handler for it.  Returns the exit
 * status, 128+signal if killed, -1.
 */
static inline int tu_run_kagg(char *const argv[], char **out, char **err, int sig,
			      unsigned int sig_after_ms)
{
	struct tu_kagg k = tu_kagg_start(argv);

	if (k.pid > 0 && sig) {
		tu_kagg_wait_catching(&k, sig);
		tu_sleep_ms(sig_after_ms);
		if (!k.reaped)
			kill(k.pid, sig);
	}
	return tu_kagg_finish(&k, out, err);
}

/* Find the cgroup v2 mount (unified or hybrid layout); false when there is none. */
static inline bool tu_cgroup2_root(char *buf, size_t len)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	char p[128];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/cgroup.procs", roots[i]);
		if (!access(p, F_OK) &&
		    (i == 0 || !access("/sys/fs/cgroup/cgroup.controllers", F_OK))) {
			snprintf(buf, len, "%s", roots[i]);
			return true;
		}
	}
	return false;
}

/*
 * A cgroup v2 directory NAME-PID under the root into dir, created (the caller removes it);
 * the test named test is skipped when there is no cgroup v2 mount.
 */
static inline void tu_cgroup_dir(const char *test, const char *name, char *dir, size_t len)
{
	char root[64];

	if (!tu_cgroup2_root(root, sizeof(root))) {
		printf("SKIP %s: no cgroup v2 mount\n", test);
		skip();
	}
	snprintf(dir, len, "%s/%s-%d", root, name, getpid());
	assert_int_equal(mkdir(dir, 0755) == 0 || errno == EEXIST, 1);
}

/* The path of dir, a cgroup v2 directory, from the mount ("/NAME-PID"): a part of dir. */
static inline const char *tu_cgroup_path(const char *dir)
{
	char root[64];

	assert_true(tu_cgroup2_root(root, sizeof(root)));
	return dir + strlen(root);
}

/* Move process pid into the cgroup directory dir: 0 or -1. */
static inline int tu_cgroup_add(const char *dir, int pid)
{
	char p[256];
	FILE *f;
	int ok;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	f = fopen(p, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", pid) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* A free TCP port on 127.0.0.1: bound, then closed (the kernel does not reuse it at once). */
static inline int tu_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/*
 * kagg with args (NULL-ended, from the subcommand on) run as nobody (uid and gid 65534, no
 * supplementary groups), its stderr into buf (NUL-ended); returns the wait status.  The
 * test named test is skipped when the child cannot become nobody (exit 126) or exec kagg (125).
 */
static inline int tu_kagg_as_nobody(const char *test, char *const args[], char *buf, size_t len)
{
	char errp[] = "/tmp/kagg-test-nobody-XXXXXX", *argv[32] = { (char *)tu_kagg() };
	int efd = mkstemp(errp), st, i;
	ssize_t n;
	pid_t pid;

	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	assert_true(efd >= 0);
	unlink(errp);
	pid = fork();
	if (pid == 0) {
		dup2(efd, 2);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(126);
		execv(argv[0], argv);
		_exit(125);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	lseek(efd, 0, SEEK_SET);
	n = read(efd, buf, len - 1);
	close(efd);
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 125 || WEXITSTATUS(st) == 126)) {
		printf("SKIP %s: cannot run %s as nobody (exit %d)\n", test, tu_kagg(),
		       WEXITSTATUS(st));
		skip();
	}
	buf[n > 0 ? n : 0] = '\0';
	return st;
}

/* Number of lines in s (a final line without '\n' counts). */
static inline int tu_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		if (*s == '\n' || !s[1])
			n++;
	return n;
}

#define TU_NR(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The value of attribute attr (as "width") of the XML/SVG element that starts at p: the
 * text after its ` attr="`; NULL when that element has no such attribute.
 */
static inline const char *tu_elem_attr(const char *p, const char *attr)
{
	const char *end = strchr(p, '>'), *a;
	char key[64];

	snprintf(key, sizeof(key), " %s=\"", attr);
	a = strstr(p, key);
	return a && end && a < end ? a + strlen(key) : NULL;
}

/*
 * A sized struct as a caller built against a newer header passes it: struct TYPE in .o,
 * then 8 bytes this library does not know, .newer = NEWER; .o.sz covers both.
 */
#define TU_NEWER(TYPE, NAME, NEWER) \
	struct {                    \
		struct TYPE o;      \
		uint64_t newer;     \
	} NAME = { .o.sz = sizeof(NAME), .newer = (NEWER) }

/* The strings given as a NULL-terminated list; TU_STRS(NULL) is an empty one. */
#define TU_STRS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Each of the strings after s is in s; else the test fails naming the first one missing. */
#define TU_ASSERT_HAS(s, ...) tu_assert_has(s, TU_STRS(__VA_ARGS__))

static inline void tu_assert_has(const char *s, const char *const *needles)
{
	for (; *needles; needles++)
		if (!s || !strstr(s, *needles))
			fail_msg("'%s' not in:\n%s", *needles, s ? s : "(null)");
}

/* None of needles (a NULL-terminated list) is in s. */
static inline void tu_assert_lacks(const char *s, const char *const *needles)
{
	for (; *needles; needles++)
		assert_null(strstr(s, *needles));
}

/* kagg with argv exits 0 and its stdout has each of the strings after argv. */
#define TU_KAGG_PRINTS(argv, ...) tu_kagg_prints(argv, TU_STRS(__VA_ARGS__))

static inline void tu_kagg_prints(char *const argv[], const char *const *needles)
{
	char *out = NULL, *err = NULL;

	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 0);
	tu_assert_has(out, needles);
	free(out);
	free(err);
}

/* kagg with argv fails and says why: one case of tu_expect_errors(). */
struct tu_error_case {
	int rc;		    /* the exit code expected */
	const char *needle; /* in the one line on stderr; NULL: any text */
	char *argv[12];	    /* without the binary, NULL-terminated */
};

/* Each case's run exits with its code, one line on stderr holding its needle, nothing on stdout. */
static inline void tu_expect_errors(const struct tu_error_case *c, size_t n)
{
	char *out, *err;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		out = err = NULL;
		rc = tu_run_kagg(c[i].argv, &out, &err, 0, 0);
		if (rc != c[i].rc || tu_lines(err) != 1 ||
		    (c[i].needle && !strstr(err ? err : "", c[i].needle)))
			printf("  kagg %s %s: exit %d, stderr '%s'\n", c[i].argv[0],
			       c[i].argv[1] ? c[i].argv[1] : "", rc, err ? err : "");
		assert_int_equal(rc, c[i].rc);
		assert_int_equal(tu_lines(err), 1);
		if (c[i].needle)
			assert_non_null(strstr(err, c[i].needle));
		assert_string_equal(out ? out : "", "");
		free(out);
		free(err);
	}
}

/*
 * fn run with each events directory a stream's records are landed with: the system's
 * (NULL: tracefs) and one that does not exist (the formats built into libkagg).
 */
static inline void tu_each_events_dir(void (*fn)(const char *events_dir))
{
	fn(NULL);
	fn("/nonexistent/kagg-events");
}

/* call refuses: returns NULL with errno EINVAL (errno cleared before the call). */
#define TU_ASSERT_EINVAL(call)                   \
	do {                                     \
		errno = 0;                       \
		assert_null(call);               \
		assert_int_equal(errno, EINVAL); \
	} while (0)

/* s, as a tool's __open() returned it, asserted non-NULL and attached. */
static inline void tu_attach(struct kagg_session *s)
{
	assert_non_null(s);
	assert_int_equal(kagg_session__attach(s), 0);
}

/* s (asserted non-NULL) attached, then children a and b released and waited for (exit 0). */
static inline void tu_attach_run_two(struct kagg_session *s, struct tu_child *a, struct tu_child *b)
{
	tu_attach(s);
	tu_go(a);
	tu_go(b);
	assert_int_equal(tu_wait(a), 0);
	assert_int_equal(tu_wait(b), 0);
}

/* A snapshot of s taken with flags, asserted non-NULL. */
static inline struct kagg_snapshot *tu_snapshot(struct kagg_session *s, unsigned int flags)
{
	struct kagg_snapshot *snap = kagg_session__snapshot(s, flags);

	assert_non_null(snap);
	return snap;
}

/*
 * The run most tests make: s (asserted non-NULL) attached, child c released
 * and waited for (exit 0), then snap = a snapshot taken with flags.
 */
static inline struct kagg_snapshot *tu_snap_after_child(struct kagg_session *s, struct tu_child *c,
							unsigned int flags)
{
	tu_attach(s);
	tu_go(c);
	assert_int_equal(tu_wait(c), 0);
	return tu_snapshot(s, flags);
}

/* The histogram of snap labelled label, or NULL. */
/*
 * The one histogram of snap, a KAGG_MODE_BOTH snapshot, into *h and that of its streamed
 * twin into *sh: asserts the twin is there and each holds exactly one.
 */
static inline void tu_both_single(const struct kagg_snapshot *snap, const struct kagg_hist **h,
				  const struct kagg_hist **sh)
{
	const struct kagg_snapshot *st = kagg_snapshot__stream(snap);

	assert_non_null(st);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	assert_int_equal(kagg_snapshot__hist_cnt(st), 1);
	*h = kagg_snapshot__hist(snap, 0);
	*sh = kagg_snapshot__hist(st, 0);
}

static inline const struct kagg_hist *tu_find_label(const struct kagg_snapshot *snap,
						    const char *label)
{
	size_t i;

	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		if (h->key.label && !strcmp(h->key.label, label))
			return h;
	}
	return NULL;
}

/* The meta's count of drop cause, or ~0 when the meta has no such cause. */
static inline uint64_t tu_drop_count(const struct kagg_snapshot *snap, const char *cause)
{
	const struct kagg_meta *m = kagg_snapshot__meta(snap);
	size_t i;

	for (i = 0; i < m->nr_drops; i++)
		if (!strcmp(m->drops[i]->cause, cause))
			return m->drops[i]->count;
	return ~0ULL;
}

/*
 * Attaching again after a detach counts no kernel gap that was not one.  ref (attached
 * throughout) and again (a scheduler tool's session with --mode both) see the same
 * switches once again is attached, so again counts at most the gaps ref counts over its
 * window (both reset while again is detached, again read before ref), in the kernel and in
 * its stream.  A chain kept from before the detach breaks at once: this thread runs on
 * CPU 0 when again detaches (the last switch there went to it), then moves to CPU 1 while
 * detached, and CPU 0's next switch starts from another task.  Both sessions (asserted
 * opened) are destroyed; skipped, saying why, without two usable CPUs.
 */
static inline void tu_reattach_no_false_gap(struct kagg_session *ref, struct kagg_session *again)
{
	unsigned long long gref, gagain, gstream;
	struct kagg_snapshot *sr, *sa;
	cpu_set_t old, one;
	int i, cpu, err = 0;

	if (!ref || !again || sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    sched_getaffinity(0, sizeof(old), &old) || !CPU_ISSET(0, &old) || !CPU_ISSET(1, &old)) {
		kagg_session__destroy(again);
		kagg_session__destroy(ref);
		assert_true(ref && again);
		printf("  skipped: CPUs 0 and 1 are not both usable here\n");
		skip();
	}
	tu_attach(ref);
	tu_attach(again);
	/* CPU 0, then CPU 1 while again is detached, then CPU 0 again; asserted once unpinned */
	for (cpu = 0; cpu < 3 && !err; cpu++) {
		CPU_ZERO(&one);
		CPU_SET(cpu & 1, &one);
		err = sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
		for (i = 0; i < 20 && !err; i++)
			tu_sleep_ms(1);
		if (!err && cpu == 0) {
			err = kagg_session__detach(again);
		} else if (!err && cpu == 1) {
			kagg_snapshot__free(tu_snapshot(again, KAGG_SNAP_RESET));
			kagg_snapshot__free(tu_snapshot(ref, KAGG_SNAP_RESET));
			err = kagg_session__attach(again);
		}
	}
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
	assert_int_equal(err, 0);
	kagg_session__poll(again, 0);
	sa = tu_snapshot(again, 0);
	sr = tu_snapshot(ref, 0);
	gref = tu_drop_count(sr, "kernel_gaps");
	kagg_snapshot__free(sr);
	kagg_session__destroy(ref);
	gagain = tu_drop_count(sa, "kernel_gaps");
	gstream = tu_drop_count(sa, "stream_kernel_gaps");
	kagg_snapshot__free(sa);
	kagg_session__destroy(again);
	printf("  kernel gaps: %llu attached throughout, %llu attached again (%llu in its "
	       "stream)\n",
	       gref, gagain, gstream);
	assert_true(gref != ~0ULL && gagain != ~0ULL && gstream != ~0ULL);
	assert_true(gagain <= gref);
	assert_true(gstream <= gref);
}

/*
 * What one path of snap counted as lost or unseen: every drop cause of the kernel path
 * (stream false) or of the stream (its causes named stream_*), kernel gaps included (a
 * switch the kernel did not deliver can hide an event without a drop).
 */
static inline uint64_t tu_path_losses(const struct kagg_snapshot *snap, bool stream)
{
	const struct kagg_meta *m = kagg_snapshot__meta(snap);
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < m->nr_drops; i++)
		if (!strncmp(m->drops[i]->cause, "stream_", 7) == stream)
			n += m->drops[i]->count;
	return n;
}

/* The slot of h whose bounds (kagg_hist__bounds: (low, high] for exp) hold v; -1: none. */
static inline int tu_slot_of(const struct kagg_hist *h, double v)
{
	double low, high;
	unsigned int k;

	for (k = 0; k < h->nr_slots; k++) {
		kagg_hist__bounds(h, k, &low, &high);
		if (h->has_exp ? (k ? low < v && v <= high : v == 0) : low <= v && v <= high)
			return (int)k;
	}
	return -1;
}

/*
 * The kernel's exact sum of h's values lies between the sums of its buckets' low and
 * high bounds, count for count: each value is in its bucket (relative slack for the
 * rounding of sums of doubles).
 */
static inline bool tu_sum_within_buckets(const struct kagg_hist *h)
{
	double low, high, lo = 0, hi = 0;
	unsigned int k;

	for (k = 0; k < h->nr_slots; k++) {
		kagg_hist__bounds(h, k, &low, &high);
		lo += low * (double)h->slots[k];
		hi += high * (double)h->slots[k];
	}
	return h->has_sum && h->sum >= lo * (1 - 1e-9) && h->sum <= hi * (1 + 1e-9);
}

/*
 * Two snapshots hold the same histograms, key for key and bucket for bucket
 * (the --mode both checks: the kernel path against the stream).  When b's
 * keep their values, each exact percentile lies in a's bucket for the same
 * point (whole-unit buckets: [low, high] holds the values in [low, high + 1)).
 */
static inline void tu_assert_hists_equal(const struct kagg_snapshot *a,
					 const struct kagg_snapshot *b)
{
	static const double qs[] = { 50, 90, 99, 99.9, 100 };
	double v, low, high, ex;
	size_t i, q;
	int k;

	assert_int_equal(kagg_snapshot__hist_cnt(a), kagg_snapshot__hist_cnt(b));
	for (i = 0; i < kagg_snapshot__hist_cnt(a); i++) {
		const struct kagg_hist *x = kagg_snapshot__hist(a, i),
				       *y = kagg_snapshot__hist(b, i);

		assert_int_equal(x->key.pid, y->key.pid);
		assert_int_equal(x->key.tid, y->key.tid);
		assert_int_equal(x->key.id, y->key.id);
		assert_int_equal(!x->key.label, !y->key.label);
		if (x->key.label)
			assert_string_equal(x->key.label, y->key.label);
		assert_int_equal(x->total, y->total);
		assert_int_equal(x->nr_slots, y->nr_slots);
		for (k = 0; k < (int)x->nr_slots; k++)
			assert_int_equal(x->slots[k], y->slots[k]);
		if (y->exact != KAGG_EXACT_KEPT || !y->total)
			continue;
		assert_true(y->nr_values == y->total);
		for (q = 0; q < sizeof(qs) / sizeof(qs[0]); q++) {
			assert_int_equal(kagg_hist__percentile(x, qs[q], &v, &low, &high), 0);
			assert_int_equal(kagg_hist__exact_percentile(y, qs[q], &ex), 0);
			if (!(ex >= low && ex < high + 1))
				fail_msg("p%g: exact %.3f outside [%g, %g]", qs[q], ex, low, high);
		}
	}
}

/*
 * h, an exp histogram of the kernel, and sh, the streamed one of the same values: the same
 * buckets and counts, the values kept, and each exact percentile (p50 .. max) in the bucket
 * (low, high] h gives for it.  The p50's bucket into low50, high50; its exact value returned.
 */
static inline double tu_assert_exact_in_exp_buckets(const struct kagg_hist *h,
						    const struct kagg_hist *sh, double *low50,
						    double *high50)
{
	static const double qs[] = { 50, 90, 99, 99.9, 100 };
	double v, low, high, x, x50 = 0;
	size_t q;
	unsigned int k;

	assert_true(h->has_exp && sh->has_exp);
	assert_int_equal(h->exp_scale, sh->exp_scale);
	assert_true(h->exp_base_index == sh->exp_base_index);
	assert_int_equal(h->nr_slots, sh->nr_slots);
	assert_true(h->total == sh->total);
	for (k = 0; k < h->nr_slots; k++)
		assert_true(h->slots[k] == sh->slots[k]);
	assert_int_equal(sh->exact, KAGG_EXACT_KEPT);
	for (q = 0; q < sizeof(qs) / sizeof(qs[0]); q++) {
		assert_int_equal(kagg_hist__percentile(h, qs[q], &v, &low, &high), 0);
		assert_int_equal(kagg_hist__exact_percentile(sh, qs[q], &x), 0);
		printf("  p%g: kernel %.1f (%.1f, %.1f], exact %.3f\n", qs[q], v, low, high, x);
		assert_true(x > low * (1 - 1e-12) && x <= high * (1 + 1e-12));
		if (qs[q] == 50) {
			*low50 = low;
			*high50 = high;
			x50 = x;
		}
	}
	return x50;
}

/* ------------------------------------------------------------------ crafted files */

#define TU_PAGE 4096 /* the sub-buffer and trace.dat page size of the crafted files */

/* The "format:" line and the common fields of a format file, as the kernel writes them. */
#define TU_FORMAT_COMMON                                                               \
	"format:\n"                                                                    \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* Header word of a ring buffer record: type_len (0..31) and time delta. */
#define TU_RB_HDR(type, delta) ((uint32_t)(type) | (uint32_t)(delta) << 5)

/* A TU_PAGE-byte sub-buffer image: time stamp ts, data = words (n of them), commit = n * 4. */
static inline uint8_t *tu_page_of(uint64_t ts, const uint32_t *words, size_t n)
{
	uint8_t *p = calloc(1, TU_PAGE);
	uint64_t commit = n * 4;

	assert_non_null(p);
	memcpy(p, &ts, 8);
	memcpy(p + 8, &commit, 8);
	memcpy(p + KAGG_RB_PAGE_HDR, words, n * 4);
	return p;
}

/* A new empty file under /tmp: its path, to free. */
static inline char *tu_tmp_path(void)
{
	char *p = strdup("/tmp/kagg-test-XXXXXX");
	int fd = mkstemp(p);

	assert_true(fd >= 0);
	close(fd);
	return p;
}

/* Append v as `bytes` little-endian bytes. */
static inline void tu_put(FILE *f, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		fputc((int)(v >> (8 * i)) & 0xff, f);
}

/* A trace.dat's first 30 bytes: magic, v6, little-endian, 8-byte longs, page size, header_page */
static inline void tu_tracedat_magic(FILE *f)
{
	fwrite("\x17\x08\x44tracing6", 1, 11, f);
	fputc(0, f);
	tu_put(f, 0, 1);
	tu_put(f, 8, 1);
	tu_put(f, TU_PAGE, 4);
	fwrite("header_page", 1, 12, f);
}

/*
 * A trace.dat header up to and including the flyrecord tag, with `formats`
 * in one system and `cmdlines` as saved_cmdlines.  f is left at the CPU table.
 */
static inline void tu_tracedat_header(FILE *f, char *const *formats, size_t nfmt,
				      const char *cmdlines, uint32_t nr_cpus)
{
	size_t i;

	tu_tracedat_magic(f);
	tu_put(f, 0, 8);
	fwrite("header_event", 1, 13, f);
	tu_put(f, 0, 8);
	tu_put(f, 0, 4); /* ftrace formats */
	tu_put(f, nfmt ? 1 : 0, 4);
	if (nfmt) {
		fwrite("sys", 1, 4, f);
		tu_put(f, nfmt, 4);
		for (i = 0; i < nfmt; i++) {
			tu_put(f, strlen(formats[i]), 8);
			fputs(formats[i], f);
		}
	}
	tu_put(f, 0, 4); /* kallsyms */
	tu_put(f, 0, 4); /* printk */
	tu_put(f, strlen(cmdlines), 8);
	fputs(cmdlines, f);
	tu_put(f, nr_cpus, 4);
	fwrite("flyrecord", 1, 10, f);
}

/*
 * After tu_tracedat_header(): the CPU table for n CPUs of sizes[i] bytes
 * each, laid out one after the other from the next page boundary, then zeros
 * up to it.  Returns the file offset of CPU 0's data.
 */
static inline uint64_t tu_tracedat_cpus(FILE *f, const uint64_t *sizes, int n)
{
	uint64_t data = ((uint64_t)ftell(f) + 16 * n + TU_PAGE - 1) / TU_PAGE * TU_PAGE, off = data;
	int i;

	for (i = 0; i < n; i++) {
		tu_put(f, off, 8);
		tu_put(f, sizes[i], 8);
		off += sizes[i];
	}
	while (ftell(f) < (long)data)
		fputc(0, f);
	return data;
}

/* A TU_PAGE-byte page with `words` as data, at the current position of f. */
static inline void tu_put_page(FILE *f, uint64_t ts, const uint32_t *words, size_t n)
{
	uint8_t *p = tu_page_of(ts, words, n);

	fwrite(p, 1, TU_PAGE, f);
	free(p);
}

#endif
