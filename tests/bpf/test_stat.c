// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg stat against ground truth: a command's context switches
 * and page faults (a child touching exactly N fresh pages), the hardware
 * branch decided by what perf_event_open says on this machine, counting a
 * pid and a CPU for a duration, tracepoint counts, errors.
 *
 * The test binary doubles as the workload: `test_stat --touch-pages N`
 * touches N fresh anonymous pages and exits.
 */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE,
				     .config = config, .disabled = 1 };
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
	char *argv[] = { "stat", "-e", "task-clock,context-switches,cycles", "--", "sleep", "0.2",
			 NULL };
	char *out = NULL, *err = NULL;
	int rc, hw;

	TU_SKIP_UNLESS_ROOT();
	hw = probe_hw(PERF_COUNT_HW_CPU_CYCLES);
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	printf("%s  perf_event_open(cycles): %s\n", out, hw ? strerror(-hw) : "ok");
	assert_int_equal(rc, 0);
	assert_true(count_of(out, "task-clock") > 0);
	assert_true(count_of(out, "context-switches") >= 1); /* sleep blocks at least once */
	assert_non_null(strstr(out, "exit status 0"));
	if (hw == -ENOENT || hw == -EOPNOTSUPP || hw == -ENODEV) {
		assert_int_equal(count_of(out, "cycles"), -1);
		assert_non_null(strstr(out, "cycles  not supported: perf_event_open: "));
	} else {
		assert_int_equal(hw, 0);
		assert_true(count_of(out, "cycles") > 0);
	}
	free(out);
	free(err);
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
	char *argv[] = { "stat", "-e", "tracepoint:syscalls:sys_enter_getppid", "--", self_path,
			 "--getppid", "500", NULL };
	char *out = NULL, *err = NULL;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	rc = tu_run_kagg(argv, &out, &err, 0, 0);
	if (rc)
		printf("  stderr: %s\n", err);
	assert_int_equal(rc, 0);
	printf("  getppid count: %lld\n", count_of(out, "tracepoint:syscalls:sys_enter_getppid"));
	assert_true(count_of(out, "tracepoint:syscalls:sys_enter_getppid") >= 500);
	assert_true(count_of(out, "tracepoint:syscalls:sys_enter_getppid") < 600);
	free(out);
	free(err);
}

static void spin_forever(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;)
		x++;
}

/* -p PID -d SEC and --cpu N -d SEC count for the duration. */
static void test_pid_and_cpu_for_duration(void **state)
{
	char pid[16], *out = NULL, *err = NULL;
	struct tu_child c;
	long long tc;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	c = tu_spawn(spin_forever, NULL);
	tu_go(&c);
	snprintf(pid, sizeof(pid), "%d", c.pid);
	{
		char *argv[] = { "stat", "-e", "task-clock,cycles", "-p", pid, "-d", "0.3", NULL };

		rc = tu_run_kagg(argv, &out, &err, 0, 0);
	}
	kill(c.pid, SIGKILL);
	tu_wait(&c);
	assert_int_equal(rc, 0);
	tc = count_of(out, "task-clock");
	printf("  spinner task-clock over 0.3 s: %lld ns\n", tc);
	assert_true(tc > 100000000); /* a spinning task runs most of 0.3 s even on a busy host */
	free(out);
	free(err);
	{
		char *argv[] = { "stat", "-e", "cpu-clock", "--cpu", "0", "-d", "0.2", "--format",
				 "json", NULL };

		rc = tu_run_kagg(argv, &out, &err, 0, 0);
	}
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"name\": \"cpu-clock\""));
	assert_non_null(strstr(out, "\"cpu\": 0"));
	assert_non_null(strstr(out, "\"scale\": \"exact\""));
	free(out);
	free(err);
}

static void test_errors(void **state)
{
	char *badpid[] = { "stat", "-e", "task-clock", "-p", "2147483647", "-d", "0.1", NULL };
	char *notp[] = { "stat", "-e", "tracepoint:nosuch:event", "--", "true", NULL };
	char *nocmd[] = { "stat", "-e", "task-clock", "--", "/nonexistent/cmd", NULL };
	char *onlyhw[] = { "stat", "-e", "cycles", "--", "true", NULL };
	char *err = NULL;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	rc = tu_run_kagg(badpid, NULL, &err, 0, 0);
	assert_int_equal(rc, 1);
	assert_int_equal(tu_lines(err), 1);
	assert_non_null(strstr(err, "no such process"));
	free(err);
	rc = tu_run_kagg(notp, NULL, &err, 0, 0);
	assert_int_equal(rc, 1);
	assert_int_equal(tu_lines(err), 1);
	assert_non_null(strstr(err, "no tracepoint nosuch:event"));
	free(err);
	rc = tu_run_kagg(nocmd, NULL, &err, 0, 0);
	assert_int_equal(rc, 1);
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
		cmocka_unit_test(test_page_faults_at_least_n),
		cmocka_unit_test(test_tracepoint_counts_syscalls),
		cmocka_unit_test(test_pid_and_cpu_for_duration),
		cmocka_unit_test(test_errors),
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
