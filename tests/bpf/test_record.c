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
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <kbuffer.h>

#include <kagg/kagg.h>
#include <kagg/tracedat.h>
#include "census.h"
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
			for (void *d = kbuffer_read_event(kb, &ts); d;
			     d = kbuffer_next_event(kb, &ts))
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
 * child sleeps 30 x 10 ms, from when kagg has attached until SIGINT ends it;
 * the child's pid in *pid.  The summary's recorded count, which kbuffer must
 * read back exactly from the file.
 */
static long record_sleeper(char **argv, char *path, int *pid)
{
	struct tu_sleeps work = { .count = 30, .ms = 10 };
	const struct tu_on_child on = {
		.fn = tu_sleeper, .arg = &work, .attached = "offcpu_|runqlat_", .stop_sig = SIGINT
	};
	char *err = NULL;
	long recorded, kb;
	pid_t child;
	int fd, rc;

	fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	rc = tu_run_kagg_on(argv, &on, &child, NULL, &err);
	printf("  record: %s", err ? err : "");
	assert_int_equal(rc, 0);
	recorded = recorded_count(err);
	assert_true(recorded > 0);
	free(err);
	kb = kbuffer_count(path);
	printf("  kagg recorded %ld, kbuffer reads %ld\n", recorded, kb);
	assert_int_equal(kb, recorded);
	*pid = child;
	return recorded;
}

/* Lines of text holding both a and b (b NULL: a alone). */
static long lines_with(const char *text, const char *a, const char *b)
{
	const char *l = text, *nl;
	long n = 0;

	for (; l && *l; l = nl ? nl + 1 : NULL) {
		char *line;

		nl = strchr(l, '\n');
		line = strndup(l, nl ? (size_t)(nl - l) : strlen(l));
		n += strstr(line, a) && (!b || strstr(line, b));
		free(line);
	}
	return n;
}

/* The text of `trace-cmd report` of path; NULL when trace-cmd is not installed. */
static char *trace_cmd_text(const char *path)
{
	char cmd[512], *text;
	FILE *f;

	if (access("/usr/bin/trace-cmd", X_OK)) {
		printf("SKIP trace-cmd check: /usr/bin/trace-cmd not installed\n");
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "trace-cmd report -N -i %s 2>&1", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	text = tu_read_all(fileno(f));
	pclose(f);
	return text;
}

/* Lines of `trace-cmd report` of path holding a and b; false when trace-cmd is not installed. */
static bool trace_cmd_count(const char *path, const char *a, const char *b, long *na, long *nb)
{
	char *text = trace_cmd_text(path);

	if (!text)
		return false;
	*na = lines_with(text, a, NULL);
	*nb = lines_with(text, b, NULL);
	free(text);
	return true;
}

static void test_record_then_report_and_trace_cmd(void **state)
{
	char path[] = "/tmp/kagg-test-record-XXXXXX.dat", *out = NULL, pidtxt[32];
	char *rec[] = { "record", "-o", path, "-d", "60", NULL };
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
	char *rec[] = {
		"record", "-e", "sched:sched_wakeup", "-e", "sched:sched_switch", "-o", path, "-d",
		"60",	  NULL
	};
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

/* The report's sched_switch lines and the file's events as kbuffer counts them. */
static long report_lines(const char *path)
{
	char *rep[] = { "report", (char *)path, NULL };
	char *out = NULL, *err = NULL;
	long n = 0;
	int rc = tu_run_kagg(rep, &out, &err, 0, 0);

	for (const char *p = out; p && (p = strstr(p, ": sched_switch: ")); p++)
		n++;
	if (rc)
		printf("  kagg report %s: exit %d: %s", path, rc, err ? err : "\n");
	free(out);
	free(err);
	return rc ? -1 : n;
}

/* Pages the trace.dat at path holds now (0 when it cannot be read). */
static uint64_t pages_in(const char *path)
{
	struct kagg_tracedat *t = kagg_tracedat__open(path, NULL);
	uint64_t n = 0, size;
	int cpu;

	for (cpu = 0; t && cpu < kagg_tracedat__nr_cpus(t); cpu++)
		if (!kagg_tracedat__cpu_data(t, cpu, NULL, &size))
			n += size / kagg_tracedat__page_size(t);
	kagg_tracedat__free(t);
	return n;
}

/* Names in dir other than keep (a temporary left behind shows here). */
static int others_in(const char *dir, const char *keep)
{
	struct dirent *d;
	DIR *dh = opendir(dir);
	int n = 0;

	assert_non_null(dh);
	while ((d = readdir(dh)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") && strcmp(d->d_name, keep)) {
			printf("  left in %s: %s\n", dir, d->d_name);
			n++;
		}
	closedir(dh);
	return n;
}

/*
 * SIGKILL during a recording: the file at -o is a valid trace.dat holding
 * the pages written until then; kbuffer, kagg report and trace-cmd read the
 * same events, more than none, and no temporary is left beside it.
 */
static void test_killed_recording_keeps_what_was_recorded(void **state)
{
	char dir[] = "/tmp/kagg-test-kill-XXXXXX", path[64];
	char *rec[] = { "record", "-o", path, NULL };
	int rounds = 200000, efd, st;
	struct tu_child child;
	struct stat sb = {};
	long kb, ours, tc, none;
	pid_t pid;
	int i;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/killed.dat", dir);
	efd = open("/dev/null", O_WRONLY);
	pid = tu_spawn_kagg(rec, efd, efd);
	child = tu_spawn(tu_bounce_work, &rounds);
	tu_go(&child);
	/* wait until the file at -o holds a few pages */
	for (i = 0; i < 200 && pages_in(path) < 4; i++)
		tu_sleep_ms(50);
	tu_sleep_ms(200);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	kill(child.pid, SIGKILL);
	tu_wait(&child);
	close(efd);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(stat(path, &sb), 0);
	kb = kbuffer_count(path);
	ours = report_lines(path);
	printf("  killed after %d ms: %lld bytes, kbuffer reads %ld events, kagg report %ld\n",
	       i * 50 + 200, (long long)sb.st_size, kb, ours);
	assert_true(kb > 0);
	assert_int_equal(ours, kb);
	if (trace_cmd_count(path, "sched_switch:", "\001", &tc, &none)) {
		printf("  trace-cmd report lists %ld events\n", tc);
		assert_int_equal(tc, kb);
	}
	assert_int_equal(others_in(dir, "killed.dat"), 0);
	unlink(path);
	rmdir(dir);
}

/*
 * A recording that fails (its filesystem full) leaves an existing file as it
 * was, and nothing beside it.
 */
static void test_failed_recording_keeps_the_existing_file(void **state)
{
	char dir[] = "/tmp/kagg-test-full-XXXXXX", path[64], buf[4096];
	char *rec[] = { "record", "-o", path, "-d", "0.5", NULL };
	char *err = NULL, *before, *after;
	int fd, rc;
	ssize_t n;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(mkdtemp(dir));
	if (mount("kagg-test", dir, "tmpfs", 0, "size=64k")) {
		printf("SKIP: cannot mount a tmpfs: %s\n", strerror(errno));
		rmdir(dir);
		skip();
	}
	/* the existing file fills the filesystem */
	snprintf(path, sizeof(path), "%s/old.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	memset(buf, 'k', sizeof(buf));
	do
		n = write(fd, buf, sizeof(buf));
	while (n == (ssize_t)sizeof(buf));
	close(fd);
	fd = open(path, O_RDONLY);
	before = tu_read_all(fd);
	close(fd);
	rc = tu_run_kagg(rec, NULL, &err, 0, 0);
	printf("  on a full filesystem: exit %d: %s", rc, err ? err : "\n");
	fd = open(path, O_RDONLY);
	after = fd >= 0 ? tu_read_all(fd) : NULL;
	if (fd >= 0)
		close(fd);
	rc = rc * 1000 + others_in(dir, "old.dat");
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	assert_int_equal(rc, 1000); /* exit 1, nothing else in the directory */
	assert_non_null(strstr(err, path));
	assert_non_null(after);
	assert_string_equal(after, before);
	free(before);
	free(after);
	free(err);
}

/*
 * -o at something that is not a regular file: a character device is
 * written to and never removed, even when the recording fails; a FIFO
 * gets the whole trace.dat, which its reader can save and read.
 */
static void test_special_files_are_streamed_never_removed(void **state)
{
	char dir[] = "/tmp/kagg-test-dev-XXXXXX", dev[64], fifo[64], saved[64], cmd[256];
	char *ok[] = { "record", "-o", dev, "-d", "0.3", NULL };
	char *tofifo[] = { "record", "-o", fifo, "-d", "1", NULL };
	char *err = NULL, *tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	struct stat sb;
	long recorded, kb;
	int rc;
	FILE *reader;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(mkdtemp(dir));
	snprintf(dev, sizeof(dev), "%s/null", dir);
	assert_int_equal(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0); /* as /dev/null */
	rc = tu_run_kagg(ok, NULL, &err, 0, 0);
	printf("  -o a character device: exit %d: %s", rc, err);
	assert_int_equal(rc, 0);
	free(err);
	/* a spool that cannot be created fails the recording: the device stays */
	setenv("TMPDIR", "/nonexistent-kagg-dir", 1);
	rc = tu_run_kagg(ok, NULL, &err, 0, 0);
	if (tmpdir)
		setenv("TMPDIR", tmpdir, 1);
	else
		unsetenv("TMPDIR");
	free(tmpdir);
	printf("  -o a character device, TMPDIR unusable: exit %d: %s", rc, err);
	assert_int_equal(rc, 1);
	assert_int_equal(tu_lines(err), 1);
	assert_non_null(strstr(err, "spooling in /nonexistent-kagg-dir"));
	free(err);
	assert_int_equal(stat(dev, &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
	unlink(dev);

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(saved, sizeof(saved), "%s/saved.dat", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof(cmd), "cat %s > %s", fifo, saved);
	reader = popen(cmd, "w");
	assert_non_null(reader);
	rc = tu_run_kagg(tofifo, NULL, &err, 0, 0);
	pclose(reader);
	recorded = recorded_count(err);
	kb = kbuffer_count(saved);
	printf("  -o a FIFO: exit %d, recorded %ld, the reader's copy holds %ld\n", rc, recorded,
	       kb);
	assert_int_equal(rc, 0);
	assert_true(recorded > 0);
	assert_int_equal(kb, recorded);
	assert_int_equal(stat(fifo, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
	free(err);
	unlink(fifo);
	unlink(saved);
	rmdir(dir);
}

/* ---------------------------------------------------------- any tracepoint */

#define TP_SIGNALS 7
#define TP_EXECS 3

/* The child: TP_SIGNALS real-time signals to itself (blocked: queued), then TP_EXECS /bin/true. */
static void signal_and_exec(void *arg)
{
	uint64_t *pids = arg;
	int sig = SIGRTMIN + 3, i;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < TP_SIGNALS; i++)
		kill(getpid(), sig);
	for (i = 0; i < TP_EXECS; i++) {
		pid_t p = fork();

		if (!p) {
			execl("/bin/true", "/bin/true", (char *)NULL);
			_exit(127);
		}
		pids[i] = (uint64_t)p;
		waitpid(p, NULL, 0);
	}
}

/*
 * Any tracepoint, not only the sched ones: signal:signal_generate (fixed fields) and
 * sched:sched_process_exec (a __data_loc filename) while a child queues 7 real-time
 * signals to itself and runs /bin/true 3 times.  kbuffer reads back every recorded
 * event; kagg report and trace-cmd report print each field from the formats in the
 * file: the 7 signals with their number, the child's pid and comm, and each exec with
 * its filename and the pid that ran it.
 */
static void test_record_any_tracepoint(void **state)
{
	char path[] = "/tmp/kagg-test-record-tp-XXXXXX.dat", *out = NULL, *err = NULL, *tc;
	char *rec[] = { "record",
			"-e",
			"signal:signal_generate",
			"-e",
			"sched:sched_process_exec",
			"-o",
			path,
			"-d",
			"60",
			NULL };
	char *rep[] = { "report", path, NULL };
	uint64_t *pids = tu_shared_u64(TP_EXECS);
	const struct tu_on_child on = {
		.fn = signal_and_exec, .arg = pids, .attached = "tprec_", .stop_sig = SIGINT
	};
	char sig[32], pid[32], exec[3][96];
	long recorded, kb;
	pid_t child;
	int fd, i;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(pids);
	fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tu_run_kagg_on(rec, &on, &child, NULL, &err), 0);
	printf("  record: %s", err);
	recorded = recorded_count(err);
	kb = kbuffer_count(path);
	printf("  kagg recorded %ld, kbuffer reads %ld\n", recorded, kb);
	assert_true(recorded >= TP_SIGNALS + TP_EXECS);
	assert_int_equal(kb, recorded);
	free(err);
	snprintf(sig, sizeof(sig), "sig=%d ", SIGRTMIN + 3);
	snprintf(pid, sizeof(pid), " pid=%d ", (int)child);
	for (i = 0; i < TP_EXECS; i++)
		snprintf(exec[i], sizeof(exec[i]), "filename=/bin/true pid=%d old_pid=%d",
			 (int)pids[i], (int)pids[i]);

	assert_int_equal(tu_run_kagg(rep, &out, NULL, 0, 0), 0);
	assert_int_equal(lines_with(out, ": signal_generate: ", sig), TP_SIGNALS);
	assert_int_equal(lines_with(out, sig, pid), TP_SIGNALS);
	assert_int_equal(lines_with(out, sig, "comm=test_record "), TP_SIGNALS);
	for (i = 0; i < TP_EXECS; i++)
		assert_int_equal(lines_with(out, ": sched_process_exec: ", exec[i]), 1);
	free(out);

	tc = trace_cmd_text(path);
	if (tc) {
		long n = lines_with(tc, "signal_generate:", sig);

		printf("  trace-cmd report: %ld signal_generate with %s\n", n, sig);
		assert_int_equal(n, TP_SIGNALS);
		assert_int_equal(lines_with(tc, sig, pid), TP_SIGNALS);
		for (i = 0; i < TP_EXECS; i++)
			assert_int_equal(lines_with(tc, "sched_process_exec:", exec[i]), 1);
		free(tc);
	}
	munmap(pids, TP_EXECS * sizeof(*pids));
	unlink(path);
}

static void test_record_usage_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, NULL, { "record", "-d", "1" } },
		{ 2,
		  "no tracepoint nosuch:event",
		  { "record", "-o", "/tmp/x.dat", "-e", "nosuch:event", "-d", "1" } },
		{ 2, "invalid event", { "record", "-o", "/tmp/x.dat", "-e", "sched" } },
		{ 2,
		  "not with other tracepoints",
		  { "record", "-o", "/tmp/x.dat", "-e", "signal:signal_generate", "-p", "1" } },
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

/* Whether one of pid's open files lies in dir (a recorder's working file: named or not). */
static bool has_file_in(pid_t pid, const char *dir)
{
	char path[320], link[PATH_MAX];
	size_t n = strlen(dir);
	struct dirent *d;
	bool found = false;
	ssize_t len;
	DIR *dh;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dh = opendir(path);
	if (!dh)
		return false;
	while (!found && (d = readdir(dh))) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		found = !strncmp(link, dir, n) && link[n] == '/';
	}
	closedir(dh);
	return found;
}

/*
 * SIGKILL once the recorder holds its working file, before the first page makes it the
 * file at -o: nothing is left in the directory.  A kill that came after the first page
 * (the file at -o exists) is tried again, 20 times at most.
 */
static void test_killed_before_its_first_page_leaves_nothing(void **state)
{
	char dir[] = "/tmp/kagg-test-early-XXXXXX", path[64];
	char *rec[] = { "record", "-o", path, NULL };
	int efd, st, i, round, early = 0;
	pid_t pid;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/early.dat", dir);
	efd = open("/dev/null", O_WRONLY);
	for (round = 0; round < 20 && !early; round++) {
		pid = tu_spawn_kagg(rec, efd, efd);
		assert_true(pid > 0);
		/* 30 s at most for the working file to appear */
		for (i = 0; i < 30000 && !has_file_in(pid, dir); i++)
			usleep(1000);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(i < 30000);
		early = access(path, F_OK) != 0;
		unlink(path);
	}
	close(efd);
	printf("  killed before its first page in round %d of 20\n", round);
	assert_true(early);
	assert_int_equal(others_in(dir, "early.dat"), 0);
	rmdir(dir);
}

/*
 * A second recorder on the file a first one is recording (named another way) is refused
 * with one line; the first one's recording is whole.
 */
static void test_second_recorder_on_one_file_is_refused(void **state)
{
	char dir[] = "/tmp/kagg-test-lock-XXXXXX", path[64], other[96];
	char *rec[] = { "record", "-o", path, NULL };
	struct tu_kagg k;
	char *err = NULL;
	uint64_t pages = 0;
	long n;
	int i;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/one.dat", dir);
	snprintf(other, sizeof(other), "%s/../%s/one.dat", dir, strrchr(dir, '/') + 1);
	k = tu_kagg_start(rec);
	assert_true(k.pid > 0);
	/* 120 s at most: a starved TCG guest (two guests and other builds on two host CPUs)
	 * once took more than 30 s to start recording and fill a page */
	/*
	 * the count the wait ended on: a read of the file while the recorder updates its
	 * header may see no page (run 21, arm64 guest: the wait ended, a second read saw 0)
	 */
	for (i = 0; i < 1200 && (pages = pages_in(path)) < 1; i++)
		tu_sleep_ms(100);
	printf("  the first page after %d ms\n", i * 100);
	assert_true(pages >= 1);
	{
		const struct tu_error_case c[] = {
			{ 1,
			  "is being recorded by another kagg record",
			  { "record", "-o", other, "-d", "1" } },
		};

		tu_expect_errors(c, TU_NR(c));
	}
	kill(k.pid, SIGINT);
	assert_int_equal(tu_kagg_finish(&k, NULL, &err), 0);
	free(err);
	n = report_lines(path);
	printf("  the first recorder's file: %ld events\n", n);
	assert_true(n > 0);
	assert_int_equal(others_in(dir, "one.dat"), 0);
	unlink(path);
	rmdir(dir);
}

TU_MAIN(cmocka_unit_test(test_record_then_report_and_trace_cmd),
	cmocka_unit_test(test_record_any_tracepoint),
	cmocka_unit_test(test_record_wakeups_and_switches),
	cmocka_unit_test(test_killed_recording_keeps_what_was_recorded),
	cmocka_unit_test(test_killed_before_its_first_page_leaves_nothing),
	cmocka_unit_test(test_second_recorder_on_one_file_is_refused),
	cmocka_unit_test(test_failed_recording_keeps_the_existing_file),
	cmocka_unit_test(test_special_files_are_streamed_never_removed),
	cmocka_unit_test(test_record_usage_errors), cmocka_unit_test(test_report_bad_file), )
