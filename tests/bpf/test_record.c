// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kagg record / kagg report end to end: a recording of a known workload is
 * read by libtraceevent's kbuffer, by our reader and by `trace-cmd report`,
 * and each sees exactly the number of events kagg says it recorded, with
 * the workload's pid and comm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <kbuffer.h>

#include <kagg/kagg.h>
#include <kagg/tracedat.h>
#include "testutil.h"

/* "... N recorded in ..." from kagg record's summary line. */
static long recorded_count(const char *err)
{
	const char *p = err ? strstr(err, " events seen, ") : NULL;

	return p ? strtol(p + strlen(" events seen, "), NULL, 10) : -1;
}

/* Count events in every page of every CPU block with kbuffer. */
static long kbuffer_count(const char *path)
{
	struct kagg_tracedat *t = kagg_tracedat__open(path, NULL);
	size_t page = t ? kagg_tracedat__page_size(t) : 0;
	long n = 0;
	int cpu, fd;
	struct stat sb;
	uint8_t *buf;

	if (!t)
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb)) {
		kagg_tracedat__free(t);
		return -1;
	}
	buf = malloc(sb.st_size);
	if (!buf || read(fd, buf, sb.st_size) != sb.st_size)
		n = -1;
	close(fd);
	for (cpu = 0; n >= 0 && cpu < kagg_tracedat__nr_cpus(t); cpu++) {
		uint64_t off, size, p;

		kagg_tracedat__cpu_data(t, cpu, &off, &size);
		for (p = off; p + page <= off + size; p += page) {
			struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
			unsigned long long ts;

			kbuffer_load_subbuffer(kb, buf + p);
			for (void *d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts))
				n++;
			kbuffer_free(kb);
		}
	}
	free(buf);
	kagg_tracedat__free(t);
	return n;
}

/*
 * Record (argv, writing `path`, a mkstemps template ending in ".dat") while a
 * child sleeps 30 x 10 ms; the child's pid in *pid.  The summary's recorded
 * count, which kbuffer must read back exactly from the file.
 */
static long record_sleeper(char *const argv[], char *path, int *pid)
{
	struct tu_sleeps work = { .count = 30, .ms = 10, .lead_ms = 600 };
	struct tu_child child;
	char *err = NULL;
	long recorded, kb;
	int fd, rc;

	fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	child = tu_spawn(tu_sleeper, &work);
	tu_go(&child);
	rc = tu_run_kagg(argv, NULL, &err, 0, 0);
	tu_wait(&child);
	printf("  record: %s", err ? err : "");
	assert_int_equal(rc, 0);
	recorded = recorded_count(err);
	assert_true(recorded > 0);
	free(err);
	kb = kbuffer_count(path);
	printf("  kagg recorded %ld, kbuffer reads %ld\n", recorded, kb);
	assert_int_equal(kb, recorded);
	*pid = child.pid;
	return recorded;
}

/* Lines of `trace-cmd report` of path holding a and b; false when trace-cmd is not installed. */
static bool trace_cmd_count(const char *path, const char *a, const char *b, long *na, long *nb)
{
	char cmd[512], line[1024];
	FILE *f;

	if (access("/usr/bin/trace-cmd", X_OK)) {
		printf("SKIP trace-cmd check: /usr/bin/trace-cmd not installed\n");
		return false;
	}
	snprintf(cmd, sizeof(cmd), "trace-cmd report -N -i %s 2>&1", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	*na = *nb = 0;
	while (fgets(line, sizeof(line), f)) {
		*na += strstr(line, a) != NULL;
		*nb += strstr(line, b) != NULL;
	}
	pclose(f);
	return true;
}

static void test_record_then_report_and_trace_cmd(void **state)
{
	char path[] = "/tmp/kagg-test-record-XXXXXX.dat", *out = NULL, pidtxt[32];
	char *rec[] = { "record", "-o", path, "-d", "1.5", NULL };
	char *rep[] = { "report", path, NULL };
	long recorded, ours = 0, tc, child_lines;
	int pid;

	TU_SKIP_UNLESS_ROOT();
	recorded = record_sleeper(rec, path, &pid);
	assert_int_equal(tu_run_kagg(rep, &out, NULL, 0, 0), 0);
	for (const char *p = out; (p = strstr(p, ": sched_switch: ")); p++)
		ours++;
	snprintf(pidtxt, sizeof(pidtxt), "prev_pid=%d ", pid);
	assert_int_equal(ours, recorded);
	assert_non_null(strstr(out, pidtxt));
	free(out);

	if (trace_cmd_count(path, "sched_switch:", pidtxt, &tc, &child_lines)) {
		printf("  trace-cmd report lists %ld events, %ld switch-outs of the child\n", tc,
		       child_lines);
		assert_int_equal(tc, recorded);
		assert_true(child_lines >= 30);
	}
	unlink(path);
}

/*
 * Wakeups and switches together (runqlat's streaming programs): a child that
 * sleeps 30 times is woken 30 times; every recorded event decodes in kbuffer
 * and trace-cmd, both kinds are there, the child's wakeups among them, and
 * sched_wakeup_new, not asked for, is not.
 */
static void test_record_wakeups_and_switches(void **state)
{
	char path[] = "/tmp/kagg-test-wakeup-XXXXXX.dat", *out = NULL, pidtxt[32];
	char *rec[] = { "record", "-e", "sched:sched_wakeup", "-e", "sched:sched_switch", "-o",
			path, "-d", "1.5", NULL };
	char *rep[] = { "report", path, NULL };
	long recorded, wakeups = 0, switches = 0, child_wakeups = 0, tw, ts;
	const char *p;
	int pid;

	TU_SKIP_UNLESS_ROOT();
	recorded = record_sleeper(rec, path, &pid);
	assert_int_equal(tu_run_kagg(rep, &out, NULL, 0, 0), 0);
	snprintf(pidtxt, sizeof(pidtxt), " pid=%d ", pid);
	for (p = out; (p = strstr(p, ": sched_wakeup: ")); p++) {
		const char *eol = strchr(p, '\n'), *hit = strstr(p, pidtxt);

		wakeups++;
		child_wakeups += hit && (!eol || hit < eol);
	}
	for (p = out; (p = strstr(p, ": sched_switch: ")); p++)
		switches++;
	printf("  kagg recorded %ld: %ld sched_wakeup (%ld of the child), %ld sched_switch\n",
	       recorded, wakeups, child_wakeups, switches);
	assert_int_equal(wakeups + switches, recorded);
	assert_null(strstr(out, "sched_wakeup_new:"));
	assert_true(child_wakeups >= 30);
	assert_true(switches > 0);
	free(out);

	if (trace_cmd_count(path, "sched_wakeup:", "sched_switch:", &tw, &ts)) {
		printf("  trace-cmd report lists %ld sched_wakeup, %ld sched_switch\n", tw, ts);
		assert_int_equal(tw, wakeups);
		assert_int_equal(ts, switches);
	}
	unlink(path);
}

static void test_record_usage_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, NULL, { "record", "-d", "1" } },
		{ 2, "cannot record 'block:block_rq_issue'",
		  { "record", "-o", "/tmp/x.dat", "-e", "block:block_rq_issue" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

static void test_report_bad_file(void **state)
{
	char path[] = "/tmp/kagg-test-notdat-XXXXXX";
	char *bad[] = { "report", path, NULL };
	char *err = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello, not a trace\n", 19), 19);
	close(fd);
	assert_int_equal(tu_run_kagg(bad, NULL, &err, 0, 0), 1);
	unlink(path);
	assert_int_equal(tu_lines(err), 1);
	assert_non_null(strstr(err, "not a valid trace.dat"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_then_report_and_trace_cmd),
		cmocka_unit_test(test_record_wakeups_and_switches),
		cmocka_unit_test(test_record_usage_errors),
		cmocka_unit_test(test_report_bad_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
