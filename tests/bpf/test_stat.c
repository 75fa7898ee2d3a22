// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg stat against ground truth: a command's context switches
 * and page faults (a child touching exactly N fresh pages), the hardware
 * branch decided by what perf_event_open says on this machine, counting a
 * pid and a CPU for a duration, tracepoint counts, errors.
 *
 * The test binary doubles as the workload: `test_stat --touch-pages N`
 * touches N fresh anonymous pages and exits; --getppid N calls getppid N times;
 * --spin-ms MS spins that long on the CPU.
 */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include <kagg/stat.h>
#include "testutil.h"

#define N_PAGES 2000

static char self_path[4096];

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == KAGG_LOG_WARN)
		printf("  kagg: %s\n", msg);
}

/* What perf_event_open says about a counting hardware event: 0 or -errno. */
static int probe_hw(uint64_t config)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_HARDWARE, .config = config, .disabled = 1
	};
	int fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The value of "NAME  COUNT" in kagg stat's text output, or -1 when not counted. */
static long long count_of(const char *out, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "%s  ", name);
	for (p = strstr(out, key); p && p != out && p[-1] != ' ' && p[-1] != '\n';
	     p = strstr(p + 1, key))
		;
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	return strtoll(p, NULL, 10);
}

/* kagg stat -e task-clock,context-switches,cycles -- sleep 0.2 */
static void test_sleep_switches_and_cycles(void **state)
{
	char *argv[] = { "stat", "-e", "task-clock,context-switches,cycles", "--", "sleep",
			 "0.2",	 NULL };
	char *out = NULL, *err = NULL;
	int rc, hw;

	TU_SKIP_UNLESS_ROOT();
	hw = probe_hw(PERF_COUNT_HW_CPU_CYCLES);
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	printf("%s  perf_event_open(cycles): %s\n", err, hw ? strerror(-hw) : "ok");
	assert_int_equal(rc, 0);
	assert_string_equal(out, ""); /* the report is on stderr */
	assert_true(count_of(err, "task-clock") > 0);
	assert_true(count_of(err, "context-switches") >= 1); /* sleep blocks at least once */
	assert_non_null(strstr(err, "exit status 0"));
	if (hw == -ENOENT || hw == -EOPNOTSUPP || hw == -ENODEV) {
		assert_int_equal(count_of(err, "cycles"), -1);
		assert_non_null(strstr(err, "cycles  not supported: perf_event_open: "));
	} else {
		assert_int_equal(hw, 0);
		assert_true(count_of(err, "cycles") > 0);
	}
	free(out);
	free(err);
}

/*
 * Without -e: perf stat's default set, each line either counted or "not
 * supported" as perf_event_open says on this machine; the command's stdout
 * is its own (the report is on stderr) and kagg exits with its status.
 */
static void test_default_events_and_exit_status(void **state)
{
	static const char *const sw[] = { "task-clock", "context-switches", "cpu-migrations",
					  "page-faults" };
	static const struct {
		const char *name;
		uint64_t config;
	} hw[] = {
		{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
		{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
	};
	char *argv[] = { "stat", "--", "sh", "-c", "echo out-of-the-command; exit 7", NULL };
	char *out = NULL, *err = NULL, key[64];
	size_t i;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	printf("%s", err);
	assert_int_equal(rc, 7);
	assert_string_equal(out, "out-of-the-command\n");
	assert_non_null(strstr(err, "exit status 7"));
	for (i = 0; i < TU_NR(sw); i++)
		assert_true(count_of(err, sw[i]) >= 0);
	assert_true(count_of(err, "task-clock") > 0);
	assert_true(count_of(err, "page-faults") > 0); /* sh maps and touches pages */
	for (i = 0; i < TU_NR(hw); i++) {
		int e = probe_hw(hw[i].config);

		snprintf(key, sizeof(key), "%s  not supported: ", hw[i].name);
		if (e == -ENOENT || e == -EOPNOTSUPP || e == -ENODEV)
			assert_non_null(strstr(err, key));
		else
			assert_true(count_of(err, hw[i].name) >= 0);
	}
	free(out);
	free(err);
}

/* false exits 1, true 0, a command killed by SIGKILL 137, as a shell says. */
static void test_exit_status_is_the_commands(void **state)
{
	static const struct {
		int rc;
		char *argv[8];
	} cases[] = {
		{ 1, { "stat", "-e", "task-clock", "--", "false" } },
		{ 0, { "stat", "-e", "task-clock", "--", "true" } },
		{ 137, { "stat", "-e", "task-clock", "--", "sh", "-c", "kill -9 $$" } },
	};
	char *out, *err, want[32];
	size_t i;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < TU_NR(cases); i++) {
		rc = tu_run_kagg(cases[i].argv, &out, &err, 0, 0);
		printf("  %s: exit %d\n", cases[i].argv[4], rc);
		assert_int_equal(rc, cases[i].rc);
		assert_string_equal(out, "");
		snprintf(want, sizeof(want), "exit status %d", cases[i].rc);
		assert_non_null(strstr(err, want));
		free(out);
		free(err);
	}
}

/* -o FILE: the report in FILE, nothing of kagg's on stdout or stderr. */
static void test_output_file(void **state)
{
	char path[] = "/tmp/kagg-test-stat-o-XXXXXX", *out, *err, *rep;
	char *argv[] = { "stat", "-e", "task-clock", "--format", "json",
			 "-o",	 path, "--",	     "true",	 NULL };
	int fd = mkstemp(path), rc;

	TU_SKIP_UNLESS_ROOT();
	assert_true(fd >= 0);
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	rep = tu_read_all(fd);
	unlink(path);
	close(fd);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	TU_ASSERT_HAS(rep, "\"name\": \"task-clock\"", "\"exit_status\": 0");
	free(out);
	free(err);
	free(rep);
}

/* A child touching exactly N fresh pages: page-faults >= N, minor-faults >= N. */
static void test_page_faults_at_least_n(void **state)
{
	char n[16];
	char *cmd[] = { self_path, "--touch-pages", n, NULL };
	const char *evs[] = { "page-faults", "minor-faults", "major-faults", "instructions" };
	const struct kagg_stat_report *rep;
	struct kagg_stat *st;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	snprintf(n, sizeof(n), "%d", N_PAGES);
	KAGG_OPTS(kagg_stat_opts, o, .events = evs, .nr_events = 4, .argv = cmd, .cpu = -1,
		  .log = quiet_log);
	st = kagg_stat__open(&o);
	assert_non_null(st);
	assert_int_equal(kagg_stat__start(st), 0);
	assert_int_equal(kagg_stat__wait(st), 0);
	assert_int_equal(kagg_stat__stop(st), 0);
	rep = kagg_stat__report(st);
	assert_true(rep->has_exit);
	assert_int_equal(rep->exit_status, 0);
	for (i = 0; i < rep->nr_results; i++)
		printf("  %s: supported %d count %llu enabled %llu running %llu\n",
		       rep->results[i]->name, rep->results[i]->supported,
		       (unsigned long long)rep->results[i]->count,
		       (unsigned long long)rep->results[i]->enabled_ns,
		       (unsigned long long)rep->results[i]->running_ns);
	assert_true(rep->results[0]->supported);
	assert_true(rep->results[0]->count >= N_PAGES);
	assert_true(rep->results[1]->count >= N_PAGES);
	assert_true(rep->results[0]->enabled_ns > 0);
	assert_int_equal(rep->results[0]->scale, KAGG_STAT_EXACT); /* software: never multiplexed */
	assert_int_equal(rep->results[0]->estimate, rep->results[0]->count);
	assert_int_equal(rep->results[3]->supported, probe_hw(PERF_COUNT_HW_INSTRUCTIONS) == 0);
	assert_int_equal(kagg_stat__counted(st), rep->results[3]->supported ? 4 : 3);
	kagg_stat__destroy(st);
}

/* A tracepoint counted by id: N openat calls of our own exec'd child. */
static void test_tracepoint_counts_syscalls(void **state)
{
	char *argv[] = { "stat", "-e",	    "tracepoint:syscalls:sys_enter_getppid",
			 "--",	 self_path, "--getppid",
			 "500",	 NULL };
	char *out = NULL, *err = NULL;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	assert_int_equal(rc, 0);
	printf("  getppid count: %lld\n", count_of(err, "tracepoint:syscalls:sys_enter_getppid"));
	assert_true(count_of(err, "tracepoint:syscalls:sys_enter_getppid") >= 500);
	assert_true(count_of(err, "tracepoint:syscalls:sys_enter_getppid") < 600);
	free(out);
	free(err);
	/* perf's spelling, SYS:NAME, is the same tracepoint */
	argv[2] = "syscalls:sys_enter_getppid";
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	assert_int_equal(rc, 0);
	assert_true(count_of(err, "tracepoint:syscalls:sys_enter_getppid") >= 500);
	assert_true(count_of(err, "tracepoint:syscalls:sys_enter_getppid") < 600);
	free(out);
	free(err);
}

/*
 * perf's derived metrics under the table: CPUs utilized for task-clock (a share of the
 * CPUs there are), a rate for the other events, insn per cycle only when cycles and
 * instructions both counted; and -x SEP's seven fields per event, the count exact.
 */
static void test_derived_metrics_and_separator(void **state)
{
	char *text[] = { "stat",
			 "-e",
			 "task-clock,tracepoint:syscalls:sys_enter_getppid,cycles,"
			 "instructions",
			 "--",
			 self_path,
			 "--getppid",
			 "500",
			 NULL };
	char *csv[] = { "stat",
			"-x",
			";",
			"-e",
			"tracepoint:syscalls:sys_enter_getppid,cycles",
			"--",
			self_path,
			"--getppid",
			"500",
			NULL };
	char *out = NULL, *err = NULL, *line, *f[8], *save;
	double util;
	int n;

	TU_SKIP_UNLESS_ROOT();
	assert_int_equal(tu_run_kagg(text, &out, &err, 0, 0), 0);
	line = strstr(err, "\n#           task-clock ");
	assert_non_null(line);
	util = strtod(line + 23, NULL);
	printf("  task-clock: %.3f CPUs utilized\n", util);
	assert_non_null(strstr(line, " CPUs utilized\n"));
	assert_true(util >= 0 && util <= sysconf(_SC_NPROCESSORS_CONF));
	assert_non_null(strstr(err, "# tracepoint:syscalls:sys_enter_getppid "));
	assert_non_null(strstr(strstr(err, "# tracepoint:syscalls:sys_enter_getppid "), "/sec\n"));
	/* no PMU (cycles not counted): no IPC; with one, the line is there */
	assert_int_equal(!!strstr(err, " insn per cycle\n"),
			 count_of(err, "cycles") >= 0 && count_of(err, "instructions") > 0 &&
				 count_of(err, "cycles") > 0);
	free(out);
	free(err);
	assert_int_equal(tu_run_kagg(csv, &out, &err, 0, 0), 0);
	printf("  -x ';': %s", err);
	line = strtok_r(err, "\n", &save);
	assert_non_null(line);
	for (n = 0, f[0] = line; n < 7 && f[n]; n++) {
		char *p = strchr(f[n], ';');

		if (n < 6)
			assert_non_null(p);
		if (p)
			*p = '\0';
		f[n + 1] = p ? p + 1 : NULL;
	}
	assert_true(atoll(f[0]) >= 500 && atoll(f[0]) < 600);
	assert_string_equal(f[2], "tracepoint:syscalls:sys_enter_getppid");
	assert_string_equal(f[6], "/sec");
	line = strtok_r(NULL, "\n", &save);
	assert_non_null(line);
	assert_non_null(strstr(line, ";cycles;"));
	assert_null(strtok_r(NULL, "\n", &save));
	free(out);
	free(err);
}

/*
 * An unprivileged user, as perf stat counts for one: where perf_event_paranoid is 2 (the
 * kernel's default), a command's user space alone ("task-clock:u"); at 1 or below, all of
 * it; above 2 nothing (skipped).
 */
static void test_unprivileged_counts_user_space(void **state)
{
	char *args[] = { "stat", "-e", "task-clock,page-faults", "--", "/bin/true", NULL };
	char buf[4096] = "", name[32];
	int st, paranoid = 99;
	FILE *f;

	TU_SKIP_UNLESS_ROOT();
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 99;
		fclose(f);
	}
	if (paranoid > 2) {
		printf("SKIP %s: perf_event_paranoid %d lets no user count\n", __func__, paranoid);
		skip();
	}
	st = tu_kagg_as_nobody(__func__, args, buf, sizeof(buf));
	printf("  as nobody, perf_event_paranoid %d: exit %d:\n%s", paranoid, WEXITSTATUS(st), buf);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	snprintf(name, sizeof(name), "task-clock%s", paranoid == 2 ? ":u" : "");
	assert_true(count_of(buf, name) > 0);
	snprintf(name, sizeof(name), "page-faults%s", paranoid == 2 ? ":u" : "");
	assert_true(count_of(buf, name) > 0);
}

static void spin_forever(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;)
		x++;
}

/* PID's time on a CPU so far, ns (the first field of /proc/PID/schedstat), or -1. */
static long long run_ns(pid_t pid)
{
	char path[64];
	long long ns = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

/* -p PID -d SEC and --cpu N -d SEC count for the duration. */
static void test_pid_and_cpu_for_duration(void **state)
{
	char pid[16], *out = NULL, *err = NULL;
	struct tu_child c;
	long long tc, before, after;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	c = tu_spawn(spin_forever, NULL);
	tu_go(&c);
	snprintf(pid, sizeof(pid), "%d", c.pid);
	before = run_ns(c.pid);
	{
		char *argv[] = { "stat", "-e", "task-clock,cycles", "-p", pid, "-d", "0.3", NULL };

		rc = tu_run_kagg(argv, &out, &err, 0, 0);
	}
	after = run_ns(c.pid);
	kill(c.pid, SIGKILL);
	tu_wait(&c);
	assert_int_equal(rc, 0);
	tc = count_of(err, "task-clock");
	printf("  spinner task-clock over 0.3 s: %lld ns, its run time around the count %lld ns\n",
	       tc, after - before);
	/*
	 * The spinner's own run time (schedstat) around the whole run bounds what
	 * a count of that task alone can be; how much CPU a loaded host gave it
	 * is not the test's business.  schedstat of a running task is brought up
	 * to date at ticks and switches only, so `after` may lag by a tick.
	 */
	assert_true(before >= 0 && after > before);
	assert_true(tc > 0);
	assert_true(tc <= after - before + 20000000);
	free(out);
	free(err);
	{
		char *argv[] = { "stat", "-e",	"cpu-clock", "--cpu", "0",
				 "-d",	 "0.2", "--format",  "json",  NULL };

		rc = tu_run_kagg(argv, &out, &err, 0, 0);
	}
	assert_int_equal(rc, 0);
	TU_ASSERT_HAS(err, "\"name\": \"cpu-clock\"", "\"cpu\": 0", "\"scale\": \"exact\"");
	free(out);
	free(err);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * SIGTERM or SIGINT sent to kagg stat -- sleep 30 reaches the command:
 * kagg ends at once (not after 30 s), reports what was counted with the
 * command's status (killed by the signal), and dies of the same signal.
 */
static void test_signal_reaches_the_command(void **state)
{
	int sig = TU_ARG(state);
	char *argv[] = { "stat", "-e", "task-clock,context-switches", "--", "sleep", "30", NULL };
	char *out = NULL, *err = NULL, want[32];
	double t0 = now_s(), took;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	rc = tu_run_kagg(argv, &out, &err, sig, 300);
	took = now_s() - t0;
	printf("  %s after 0.3 s: exit %d in %.2f s\n%s", strsignal(sig), rc, took, err);
	assert_true(took < 10);
	assert_int_equal(rc, 128 + sig);
	assert_true(count_of(err, "task-clock") > 0);
	assert_true(count_of(err, "context-switches") >= 1);
	snprintf(want, sizeof(want), "exit status %d", 128 + sig);
	assert_non_null(strstr(err, want));
	free(out);
	free(err);
}

/*
 * A command that ignores SIGTERM keeps kagg waiting after the first one;
 * the second kills the command (SIGKILL) and kagg reports and ends.
 */
static void test_second_signal_kills_the_command(void **state)
{
	char *argv[] = { "stat",
			 "-e",
			 "task-clock",
			 "--",
			 "sh",
			 "-c",
			 "trap '' TERM; echo trapped; exec sleep 30",
			 NULL };
	char outp[] = "/tmp/kagg-test-stat-XXXXXX", cmdp[] = "/tmp/kagg-test-stat-XXXXXX", *out;
	double t0 = now_s(), t1;
	int ofd = mkstemp(outp), cfd = mkstemp(cmdp), st, i;
	pid_t pid;

	TU_SKIP_UNLESS_ROOT();
	assert_true(ofd >= 0 && cfd >= 0);
	unlink(outp);
	unlink(cmdp);
	pid = tu_spawn_kagg(argv, cfd, ofd); /* the report is on stderr */
	/* the first SIGTERM once the command said it ignores it (not on a clock) */
	for (i = 0; i < 1000 && lseek(cfd, 0, SEEK_END) == 0; i++)
		tu_sleep_ms(10);
	kill(pid, SIGTERM);
	tu_sleep_ms(500);
	assert_int_equal(waitpid(pid, &st, WNOHANG), 0); /* still waiting for the command */
	t1 = now_s();
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	printf("  first SIGTERM ignored by the command; the second ended kagg in %.2f s\n",
	       now_s() - t1);
	assert_true(now_s() - t0 < 20);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	lseek(ofd, 0, SEEK_SET);
	out = tu_read_all(ofd);
	printf("%s", out);
	assert_true(count_of(out, "task-clock") > 0);
	assert_non_null(strstr(out, "exit status 137"));
	free(out);
	lseek(cfd, 0, SEEK_SET);
	out = tu_read_all(cfd);
	assert_string_equal(out, "trapped\n"); /* the command's stdout, kagg's report apart */
	free(out);
	close(ofd);
	close(cfd);
}

/* The command gets the signal dispositions kagg was given (kagg ignores SIGPIPE itself). */
static void test_command_keeps_signal_dispositions(void **state)
{
	char *argv[] = { "stat", "-e",	     "task-clock",	  "--",
			 "grep", "^SigIgn:", "/proc/self/status", NULL };
	char *out = NULL, *err = NULL, line[256] = "";
	unsigned long long mine = 0, cmd = 0;
	const char *p;
	FILE *f = fopen("/proc/self/status", "r");

	TU_SKIP_UNLESS_ROOT();
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigIgn: %llx", &mine) == 1)
			break;
	if (f)
		fclose(f);
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 0);
	p = strstr(out, "SigIgn:");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "SigIgn: %llx", &cmd), 1);
	printf("  SigIgn: this test %llx, the command %llx\n", mine, cmd);
	assert_int_equal(cmd, mine);
	free(out);
	free(err);
}

/*
 * -a: cpu-clock of every online CPU, all tasks, summed.  Each CPU's counter is enabled
 * for the whole count (-d 0.5, or while the command runs), so the sum is at least
 * online CPUs x that time, and at most online CPUs x the wall time this test measured.
 */
static void test_all_cpus(void **state)
{
	char *dur[] = { "stat", "-a", "-e", "cpu-clock", "-d", "0.5", NULL };
	char *cmd[] = { "stat", "-a", "-e", "cpu-clock", "--", "sleep", "0.3", NULL };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *out = NULL, *err = NULL;
	long long n;
	double t0, wall;

	TU_SKIP_UNLESS_ROOT();
	t0 = now_s();
	assert_int_equal(tu_run_kagg(dur, &out, &err, 0, 0), 0);
	wall = now_s() - t0;
	n = count_of(err, "cpu-clock");
	printf("%s  %ld CPUs online, wall %.3f s: cpu-clock %.3f s\n", err, ncpu, wall, n / 1e9);
	assert_non_null(strstr(err, "# kagg stat: all CPUs ("));
	assert_true(n >= (long long)(ncpu * 0.5e9 * 0.99));
	assert_true(n <= (long long)(ncpu * wall * 1e9 * 1.01));
	free(out);
	free(err);
	t0 = now_s();
	assert_int_equal(tu_run_kagg(cmd, &out, &err, 0, 0), 0);
	wall = now_s() - t0;
	n = count_of(err, "cpu-clock");
	printf("%s  wall %.3f s: cpu-clock %.3f s\n", err, wall, n / 1e9);
	TU_ASSERT_HAS(err, "command 'sleep 0.3' (pid ", "all CPUs (", "exit status 0");
	assert_true(n >= (long long)(ncpu * 0.3e9 * 0.99));
	assert_true(n <= (long long)(ncpu * wall * 1e9 * 1.01));
	free(out);
	free(err);
}

/*
 * -I 100: each interval's line starts with its end in seconds since the start, the ends
 * increase, none past the wall time measured here, and at most one per 100 ms of it;
 * the summary follows.  ndjson: one line per interval, then the summary's.
 */
static void test_interval_print(void **state)
{
	char *text[] = { "stat", "-a", "-e", "cpu-clock", "-I", "100", "-d", "0.6", NULL };
	char *nd[] = { "stat",	 "-I", "50",	  "-e",	       "task-clock", "--format",
		       "ndjson", "--", self_path, "--spin-ms", "300",	     NULL };
	char *out = NULL, *err = NULL, *line, *save = NULL, *end;
	double t0, wall, t, last = 0;
	int lines = 0, summary = 0;

	TU_SKIP_UNLESS_ROOT();
	t0 = now_s();
	assert_int_equal(tu_run_kagg(text, &out, &err, 0, 0), 0);
	wall = now_s() - t0;
	printf("%s  wall %.3f s\n", err, wall);
	for (line = strtok_r(err, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "# kagg stat: all CPUs"))
			summary++;
		t = strtod(line, &end);
		if (end == line || !strstr(end, " cpu-clock "))
			continue;
		assert_true(t > last && t <= wall);
		assert_non_null(strstr(end, "CPUs utilized"));
		last = t;
		lines++;
	}
	assert_int_equal(summary, 1);
	assert_true(lines >= 1 && lines <= (int)(wall / 0.1) + 1);
	free(out);
	free(err);

	t0 = now_s();
	assert_int_equal(tu_run_kagg(nd, &out, &err, 0, 0), 0);
	wall = now_s() - t0;
	printf("%s  wall %.3f s\n", err, wall);
	lines = 0;
	last = 0;
	save = NULL;
	for (line = strtok_r(err, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *iv = strstr(line, "\"interval_s\":");

		assert_non_null(strstr(line, "{\"meta\":{\"tool\":\"stat\""));
		if (!iv) {
			assert_null(strtok_r(NULL, "\n", &save)); /* the summary comes last */
			assert_non_null(strstr(line, "\"exit_status\":0"));
			break;
		}
		t = strtod(iv + 13, NULL);
		assert_true(t > last && t <= wall);
		last = t;
		lines++;
	}
	assert_true(lines >= 1 && lines <= (int)(wall / 0.05) + 1);
	free(out);
	free(err);
}

/*
 * -r 3 -- true: the mean of 3 runs, task-clock's spread "( +- X% )" (0 to 100 for positive
 * values), its mean above 0 and under the wall time of one run on every CPU; -r 2 -- false
 * exits 1; JSON says runs and the spread.
 */
static void test_repeat(void **state)
{
	char *text[] = { "stat", "-r", "3", "-e", "task-clock", "--", "true", NULL };
	char *json[] = { "stat",     "-r",   "2",  "-e",    "task-clock",
			 "--format", "json", "--", "false", NULL };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *out = NULL, *err = NULL, *pm;
	double t0, wall, pct;
	long long n;

	TU_SKIP_UNLESS_ROOT();
	t0 = now_s();
	assert_int_equal(tu_run_kagg(text, &out, &err, 0, 0), 0);
	wall = now_s() - t0;
	printf("%s  wall %.3f s\n", err, wall);
	assert_non_null(strstr(err, "# kagg stat: command 'true' (pid "));
	assert_non_null(strstr(err, ", mean of 3 runs, exit status 0, "));
	n = count_of(err, "task-clock");
	assert_true(n > 0 && n <= (long long)(ncpu * wall * 1e9));
	pm = strstr(err, "( +- ");
	assert_non_null(pm);
	assert_true(pm < strstr(err, "\n#   ")); /* on the table's line, not the metrics */
	pct = strtod(pm + 5, NULL);
	assert_true(pct >= 0 && pct <= 100);
	assert_non_null(strstr(pm, "% )\n"));
	free(out);
	free(err);
	assert_int_equal(tu_run_kagg(json, &out, &err, 0, 0), 1);
	TU_ASSERT_HAS(err, "\"runs\": 2", "\"exit_status\": 1", "\"rel_stddev_pct\": ");
	free(out);
	free(err);
}

static void test_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 1,
		  "no such process",
		  { "stat", "-e", "task-clock", "-p", "2147483647", "-d", "0.1" } },
		{ 1,
		  "no tracepoint nosuch:event",
		  { "stat", "-e", "tracepoint:nosuch:event", "--", "true" } },
	};
	char *nocmd[] = { "stat", "-e", "task-clock", "--", "/nonexistent/cmd", NULL };
	char *onlyhw[] = { "stat", "-e", "cycles", "--", "true", NULL };
	char *err = NULL;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	tu_expect_errors(cases, TU_NR(cases));
	rc = tu_run_kagg(nocmd, NULL, &err, 0, 0);
	assert_int_equal(rc, 127); /* as a shell says a command was not found */
	assert_non_null(strstr(err, "cannot run the command"));
	free(err);
	if (probe_hw(PERF_COUNT_HW_CPU_CYCLES)) {
		rc = tu_run_kagg(onlyhw, NULL, &err, 0, 0);
		assert_int_equal(rc, 1); /* nothing counted */
		assert_int_equal(tu_lines(err), 1);
		assert_non_null(strstr(err, "none of the events is supported"));
		free(err);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sleep_switches_and_cycles),
		cmocka_unit_test(test_default_events_and_exit_status),
		cmocka_unit_test(test_exit_status_is_the_commands),
		cmocka_unit_test(test_output_file),
		cmocka_unit_test(test_page_faults_at_least_n),
		cmocka_unit_test(test_tracepoint_counts_syscalls),
		cmocka_unit_test(test_derived_metrics_and_separator),
		cmocka_unit_test(test_unprivileged_counts_user_space),
		cmocka_unit_test(test_pid_and_cpu_for_duration),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_all_cpus),
		cmocka_unit_test(test_interval_print),
		cmocka_unit_test(test_repeat),
		TU_TEST_ARG(test_sigterm_reaches_the_command, test_signal_reaches_the_command,
			    SIGTERM),
		TU_TEST_ARG(test_sigint_reaches_the_command, test_signal_reaches_the_command,
			    SIGINT),
		cmocka_unit_test(test_second_signal_kills_the_command),
		cmocka_unit_test(test_command_keeps_signal_dispositions),
	};
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--touch-pages")) {
		long pages = atol(argv[2]), psz = sysconf(_SC_PAGESIZE), i;
		char *p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 3;
		for (i = 0; i < pages; i++)
			p[i * psz] = 1; /* one fault per fresh page */
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--spin-ms")) {
		double end = now_s() + atol(argv[2]) / 1e3;

		while (now_s() < end)
			;
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--getppid")) {
		long k = atol(argv[2]);

		while (k--)
			syscall(__NR_getppid);
		return 0;
	}
	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0)
		return 1;
	self_path[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
