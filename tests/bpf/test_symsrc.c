// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Symbol sources end to end, through `kagg profile`: JIT code named from its perf map
 * (tests/helpers/jit_target.c); a stripped unwind_target named through a real debuginfod
 * on 127.0.0.1, then with the server down.  The ground truth is the helpers themselves:
 * jit_target spends its time in the one function its map names, unwind_target in
 * main -> unw_a -> unw_b -> unw_c.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testutil.h"

/* The samples of folded lines whose innermost user frame is leaf, and of all lines. */
static void count_leaf(const char *folded, const char *leaf, unsigned long *hit, unsigned long *all)
{
	const char *l = folded, *e, *sp;
	size_t n = strlen(leaf);

	*hit = *all = 0;
	for (; *l; l = *e ? e + 1 : e) {
		unsigned long v;

		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l);
		sp = e;
		while (sp > l && sp[-1] != ' ')
			sp--;
		if (sp == l)
			continue;
		v = strtoul(sp, NULL, 10);
		*all += v;
		if ((size_t)(sp - 1 - l) >= n + 1 && !strncmp(sp - 1 - n, leaf, n) &&
		    sp[-2 - (long)n] == ';')
			*hit += v;
	}
}

/* A JIT's code, anonymous memory, named from /tmp/perf-PID.map. */
static void test_perf_map(void **state)
{
	char helper[512], pid_s[16], *out = NULL, *err = NULL;
	unsigned long hit, all;
	pid_t pid;
	int st;

	TU_SKIP_UNLESS_ROOT();
	tu_helper("jit_target", helper, sizeof(helper));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl(helper, "jit_target", "4", (char *)NULL);
		_exit(127);
	}
	tu_sleep_ms(300);
	if (waitpid(pid, &st, WNOHANG) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("SKIP %s: the JIT helper is x86-64 only\n", __func__);
		skip();
	}
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	{
		char *argv[] = { "profile", "-p", pid_s,      "-U",	  "-F", "997",
				 "-d",	    "2",  "--folded", "--unwind", "fp", NULL };

		assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	count_leaf(out, "jit_spin", &hit, &all);
	printf("# jit_target: %lu of %lu samples in jit_spin (perf map)\n", hit, all);
	printf("%s", err);
	assert_true(all > 0);
	/* the helper spins in jit_spin but for its clock reads between calls */
	assert_true(hit * 10 >= all * 9);
	assert_non_null(strstr(err, "perf map "));
	free(out);
	free(err);
}

/* kagg profile --folded of a fresh `unwind_target spin` at path: its stdout and stderr. */
static void profile_target(const char *path, char **out, char **err)
{
	char pid_s[16];
	int st, in[2];
	pid_t pid;

	assert_int_equal(pipe(in), 0);
	fflush(stdout); /* the child's freopen() would write what is buffered again */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* it starts on a byte on stdin, says "ready" and "done" on stdout */
		dup2(in[0], 0);
		close(in[1]);
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(path, "unwind_target", "spin", "3000", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	assert_int_equal(write(in[1], "g", 1), 1);
	tu_sleep_ms(200);
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	{
		char *argv[] = { "profile", "-p", pid_s,      "-U",	  "-F",	   "997",
				 "-d",	    "2",  "--folded", "--unwind", "table", NULL };

		assert_int_equal(tu_run_kagg(argv, out, err, 0, 0), 0);
	}
	close(in[1]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* The meta's "# debuginfod:" counts: asked, not found, timeout, error, skipped, unknown. */
static void dbg_counts(const char *err, unsigned long c[6])
{
	const char *p = strstr(err, "# debuginfod: ");

	assert_non_null(p);
	assert_int_equal(sscanf(p,
				"# debuginfod: %lu files asked, not got: not found %lu, "
				"timeout %lu, error %lu, not asked (down) %lu; frames left "
				"unknown %lu",
				&c[0], &c[1], &c[2], &c[3], &c[4], &c[5]),
			 6);
}

static pid_t srv = -1; /* the debuginfod server, killed by teardown if a check failed */

static int srv_teardown(void **state)
{
	if (srv > 0) {
		kill(srv, SIGTERM);
		waitpid(srv, NULL, 0);
		srv = -1;
	}
	return 0;
}

/*
 * A stripped executable whose debug file only a debuginfod server has: named completely;
 * with the server gone, the run ends in its time and the frames are counted unknown.
 */
static void test_debuginfod(void **state)
{
	char dir[] = "/tmp/kagg-symsrc-XXXXXX", helper[512], path[600], url[64];
	char *out = NULL, *err = NULL, *id;
	unsigned long hit, all, c[6];
	int port = tu_free_port(), i;
	uint64_t t0;

	TU_SKIP_UNLESS_ROOT();
	if (system("command -v debuginfod >/dev/null && command -v curl >/dev/null")) {
		printf("SKIP %s: debuginfod or curl not installed\n", __func__);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	tu_helper("unwind_target", helper, sizeof(helper));
	snprintf(path, sizeof(path), "%s/unwind_target", dir);
	tu_sh_ok("mkdir -p %s/srv %s/cache && objcopy --only-keep-debug %s %s/srv/ut.debug && "
		 "strip --strip-all -o %s %s && readelf -n %s | awk '/Build ID/ {print $3}' > "
		 "%s/id",
		 dir, dir, helper, dir, path, helper, path, dir);
	snprintf(url, sizeof(url), "%s/id", dir);
	id = tu_slurp(url, NULL);
	assert_non_null(id);
	id[strcspn(id, "\n")] = 0;
	assert_true(strlen(id) >= 16);
	fflush(stdout);
	srv = fork();
	assert_true(srv >= 0);
	if (!srv) {
		char p[16], db[640], lg[640];

		snprintf(p, sizeof(p), "%d", port);
		snprintf(db, sizeof(db), "%s/db.sqlite", dir);
		snprintf(lg, sizeof(lg), "%s/debuginfod.log", dir);
		if (!freopen(lg, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		snprintf(lg, sizeof(lg), "%s/srv", dir);
		execlp("debuginfod", "debuginfod", "-p", p, "-d", db, "-F", "-t", "1", lg,
		       (char *)NULL);
		_exit(127);
	}
	/* ready when it serves the file: it scans the directory once started */
	for (i = 0; i < 600; i++) {
		if (!tu_sh("curl -sf -o /dev/null http://127.0.0.1:%d/buildid/%s/debuginfo", port,
			   id))
			break;
		tu_sleep_ms(100);
	}
	assert_true(i < 600);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	snprintf(helper, sizeof(helper), "%s/cache", dir);
	setenv("DEBUGINFOD_CACHE_PATH", helper, 1);
	setenv("KAGG_DEBUGINFOD_TIMEOUT", "2", 1);

	profile_target(path, &out, &err);
	count_leaf(out, "main;unw_a;unw_b;unw_c", &hit, &all);
	printf("# stripped unwind_target, debuginfod up: %lu of %lu samples "
	       "main;unw_a;unw_b;unw_c\n%s",
	       hit, all, err);
	assert_true(all > 0);
	assert_true(hit * 100 >= all * 99);
	/* the helper's file got; others (the loader, ...) may be "not found" there */
	dbg_counts(err, c);
	assert_true(c[0] >= 1 && c[1] < c[0]);
	assert_int_equal(c[2] + c[3] + c[4], 0);
	assert_int_equal(c[5], 0);
	free(out);
	free(err);

	/* the server gone, the cache emptied: the run ends in its time, frames counted */
	srv_teardown(NULL);
	tu_sh_ok("rm -rf %s/cache && mkdir %s/cache", dir, dir);
	t0 = tu_now_ns();
	profile_target(path, &out, &err);
	printf("# debuginfod down: kagg profile -d 2 took %.2f s (timeout 2 s)\n%s",
	       (tu_now_ns() - t0) / 1e9, err);
	assert_true(tu_now_ns() - t0 < (2 + 2 + 3) * 1000000000ULL);
	/* each file asked failed by cause (refused: error, or not asked once taken for down) */
	dbg_counts(err, c);
	assert_true(c[3] >= 1);
	assert_int_equal(c[1] + c[2] + c[3] + c[4], c[0]);
	assert_true(c[5] > 0);
	free(out);
	free(err);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	unsetenv("KAGG_DEBUGINFOD_TIMEOUT");
	tu_sh("rm -rf %s", dir);
	free(id);
}

TU_MAIN(cmocka_unit_test(test_perf_map),
	cmocka_unit_test_teardown(test_debuginfod, srv_teardown), );
