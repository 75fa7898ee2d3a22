// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Symbol sources end to end, through `kagg profile`: JIT code named from its perf map
 * (tests/helpers/jit_target.c).  The ground truth is the helper itself: it spends its time
 * in the one function its map names.
 */
#include <signal.h>
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
static void count_leaf(const char *folded, const char *leaf, unsigned long *hit,
		       unsigned long *all)
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
		char *argv[] = { "profile", "-p", pid_s, "-U", "-F", "997", "-d", "2", "--folded",
				 "--unwind", "fp", NULL };

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

TU_MAIN(cmocka_unit_test(test_perf_map), );
