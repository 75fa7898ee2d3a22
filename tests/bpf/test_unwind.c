// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * User stacks of code without frame pointers, against ground truth (root).
 *
 * tests/helpers/nofp/unwind_target{,_cxx} (-O2 -fomit-frame-pointer) run the chain
 * main -> a -> b -> c and spin or sleep in c.  The helper waits on stdin before it starts,
 * so its tables are loaded (-p at open) before it runs, and waits again when the chain
 * returned, so the snapshot holds the chain's samples only, not the exit path's:
 *   - profile: >= 99% of its samples have c, b, a, main leaf-first (after at most a few
 *     libc or vdso frames above c); with --unwind fp, none do;
 *   - offcpu --stacks: >= 99% of its off-CPU time has the chain under clock_nanosleep; with
 *     --unwind fp, none does;
 *   - Debian's own xz -3 compressing from a pipe: >= 95% of its samples reach
 *     __libc_start_main (or __libc_start_call_main, named by libc6-dbg).
 * The walk needs bpf_loop() (5.17) and bpf_task_pt_regs() (5.15): on a kernel without them
 * (5.10) those tests skip naming the helper, and test_without_walk_helpers checks what the
 * tools do there instead: --unwind table refused in one line, auto by frame pointer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <kagg/kagg.h>
#include "testutil.h"

static const char *const chain_c[] = { "unw_c", "unw_b", "unw_a", "main" };
static const char *const chain_cxx[] = { "unw::Chain::c(long)", "unw::Chain::b(long)",
					 "unw::Chain::a(long)", "main" };

struct target {
	pid_t pid;
	int in;	 /* its stdin */
	int out; /* its stdout */
};

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	if (level <= KAGG_LOG_WARN)
		fprintf(stderr, "kagg: %s\n", msg);
}

/* Read exactly the line want from fd (fails the test otherwise). */
static void expect_line(int fd, const char *want)
{
	char buf[32];
	size_t n = 0;

	while (n < strlen(want) && read(fd, buf + n, 1) == 1)
		n++;
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

/* The helper the unwind-table walk needs and this kernel lacks, or NULL (probed, as kagg does). */
static const char *walk_missing(void)
{
#if !defined(__x86_64__)
	return "unwind-table walk on this architecture (x86-64 only)";
#else
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) <= 0)
		return "bpf_loop()";
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs, NULL) <= 0)
		return "bpf_task_pt_regs()";
	return NULL;
#endif
}

static void skip_unless_walk(void)
{
	const char *miss = walk_missing();

	if (!miss)
		return;
#if !defined(__x86_64__)
	print_message("skip: no %s\n", miss);
#else
	print_message("skip: this kernel lacks %s: no unwind-table walk (bpf_loop() 5.17, "
		      "bpf_task_pt_regs() 5.15)\n",
		      miss);
#endif
	skip();
}

/* Start argv (argv[0] a path) with pipes on stdin and stdout. */
static void target_spawn(struct target *t, char *const argv[])
{
	int in[2], out[2];

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (!t->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	t->out = out[0];
}

/* Start helper MODE ARG and wait until it is loaded. */
static void target_start(struct target *t, const char *helper, const char *mode, const char *arg)
{
	char path[512];
	char *argv[] = { path, (char *)mode, (char *)arg, NULL };

	tu_helper(helper, path, sizeof(path));
	target_spawn(t, argv);
	expect_line(t->out, "ready\n");
}

/* Let it run the chain; back when the chain returned. */
static void target_run(struct target *t)
{
	assert_int_equal(write(t->in, "g", 1), 1);
	expect_line(t->out, "done\n");
}

static void target_end(struct target *t)
{
	int st;

	close(t->in);
	close(t->out);
	waitpid(t->pid, &st, 0);
}

/* Do the user frames hold chain leaf-first, c within the first 4 frames? */
static bool has_chain(const struct kagg_stack *st, const char *const *chain)
{
	unsigned int i, k;

	for (i = 0; i < st->nr_uframes && i < 4; i++) {
		if (strcmp(st->uframes[i]->sym, chain[0]))
			continue;
		for (k = 1; k < 4; k++)
			if (i + k >= st->nr_uframes || strcmp(st->uframes[i + k]->sym, chain[k]))
				return false;
		return true;
	}
	return false;
}

/* Does any user frame read name? */
static bool has_frame(const struct kagg_stack *st, const char *name)
{
	unsigned int i;

	for (i = 0; i < st->nr_uframes; i++)
		if (!strcmp(st->uframes[i]->sym, name))
			return true;
	return false;
}

/* Weights (samples, or off-CPU ns) of pid's stacks: all, and those chain/name accepts. */
static void weigh(const struct kagg_snapshot *snap, int pid, bool by_time, const char *const *chain,
		  uint64_t *all, uint64_t *ok)
{
	size_t i, n = kagg_snapshot__stack_cnt(snap);

	*all = *ok = 0;
	for (i = 0; i < n; i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);
		uint64_t w = by_time ? st->total_ns : st->count;
		bool good;

		if (st->pid != pid)
			continue;
		*all += w;
		if (chain)
			good = has_chain(st, chain);
		else
			good = has_frame(st, "__libc_start_main") ||
			       has_frame(st, "__libc_start_call_main");
		*ok += good ? w : 0;
	}
}

static struct kagg_session *open_profile(int pid, enum kagg_unwind u)
{
	int pids[1] = { pid };
	KAGG_OPTS(kagg_profile_opts, o, .freq = 499, .cpu = -1, .pids = pids, .nr_pids = 1,
		  .stacks = KAGG_PROFILE_USER, .unwind = u, .log = quiet_log);
	struct kagg_session *s = kagg_profile__open(&o);

	assert_non_null(s);
	tu_attach(s);
	return s;
}

static struct kagg_session *open_offcpu(int pid, enum kagg_unwind u)
{
	int pids[1] = { pid };
	KAGG_OPTS(kagg_offcpu_opts, o, .pids = pids, .nr_pids = 1, .stacks = true,
		  .threads = KAGG_THREADS_USER, .unwind = u, .log = quiet_log);
	struct kagg_session *s = kagg_offcpu__open(&o);

	assert_non_null(s);
	tu_attach(s);
	return s;
}

/* The share of helper's weight that has chain, walked with u. */
static double chain_share(const char *helper, bool offcpu, enum kagg_unwind u,
			  const char *const *chain)
{
	/* enough weight for a share: 100 samples, 250 naps of 2 ms */
	uint64_t all = 0, ok = 0, a, o, want = offcpu ? 250 * 2000000ULL : 100;
	struct kagg_session *s;
	struct kagg_snapshot *snap;
	struct target t;
	int round;

	/*
	 * A target's CPU time is fixed, the samples a starved guest takes of it are not (its
	 * timer fires late, once): another round, 5 at most, until there is enough weight.
	 */
	for (round = 0; round < 5 && all < want; round++) {
		target_start(&t, helper, offcpu ? "sleep" : "spin", offcpu ? "250" : "1500");
		s = offcpu ? open_offcpu(t.pid, u) : open_profile(t.pid, u);
		target_run(&t);
		snap = tu_snapshot(s, KAGG_SNAP_RESET);
		assert_non_null(snap);
		weigh(snap, t.pid, offcpu, chain, &a, &o);
		all += a;
		ok += o;
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
		target_end(&t);
	}
	print_message("%s %s --unwind %s: %.2f%% of %" PRIu64 " %s with the chain\n", helper,
		      offcpu ? "offcpu" : "profile",
		      u == KAGG_UNWIND_FP      ? "fp"
		      : u == KAGG_UNWIND_TABLE ? "table"
					       : "auto",
		      all ? 100.0 * ok / all : 0.0, all, offcpu ? "ns" : "samples");
	assert_true(all >= want);
	return all ? (double)ok / all : 0.0;
}

/*
 * The chains each target shows, sampled (profile) or off-CPU: whole in 99% of the samples
 * with each unwind mode of walks before KAGG_UNWIND_FP, in none with the frame pointers.
 */
static const struct chain_case {
	const char *target;
	bool offcpu;
	const char *const *chain;
	enum kagg_unwind walks[3];
} chain_cases[] = {
	{ "unwind_target",
	  false,
	  chain_c,
	  { KAGG_UNWIND_AUTO, KAGG_UNWIND_TABLE, KAGG_UNWIND_FP } },
	{ "unwind_target_cxx", false, chain_cxx, { KAGG_UNWIND_AUTO, KAGG_UNWIND_FP } },
	{ "unwind_target", true, chain_c, { KAGG_UNWIND_AUTO, KAGG_UNWIND_FP } },
	{ "unwind_target_cxx", true, chain_cxx, { KAGG_UNWIND_TABLE, KAGG_UNWIND_FP } },
};

/* state: the index of the case in chain_cases (TU_TEST_ARG) */
static void test_chain(void **state)
{
	const struct chain_case *c = &chain_cases[TU_ARG(state)];
	const enum kagg_unwind *u;

	TU_SKIP_UNLESS_ROOT();
	skip_unless_walk();
	for (u = c->walks; *u != KAGG_UNWIND_FP; u++)
		assert_true(chain_share(c->target, c->offcpu, *u, c->chain) >= 0.99);
	assert_true(chain_share(c->target, c->offcpu, KAGG_UNWIND_FP, c->chain) == 0.0);
}

/*
 * Where the walk's helpers are missing: --unwind table is refused in one line naming the
 * helper (exit 2, nothing printed); --unwind auto walks by frame pointer, and the header's
 * attach note says so and why.
 */
static void test_without_walk_helpers(void **state)
{
	static char *auto_argv[][8] = {
		{ "profile", "-U", "-d", "0.5", NULL },
		{ "offcpu", "--stacks", "-d", "0.5", NULL },
	};
	static const struct tu_error_case table[] = {
		{ 2, NULL, { "profile", "--unwind", "table", "-d", "0.5", NULL } },
		{ 2, NULL, { "offcpu", "--stacks", "--unwind", "table", "-d", "0.5", NULL } },
	};
	struct tu_error_case cases[TU_NR(table)];
	const char *miss;
	char note[160];
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	miss = walk_missing();
	if (!miss) {
		print_message("skip: this kernel has the unwind-table walk's helpers: nothing to "
			      "fall back from\n");
		skip();
	}
	for (i = 0; i < TU_NR(table); i++) {
		cases[i] = table[i];
		cases[i].needle = miss;
	}
	tu_expect_errors(cases, TU_NR(cases));
	snprintf(note, sizeof(note), "user stacks by frame pointer (unwind auto): no %s", miss);
	for (i = 0; i < TU_NR(auto_argv); i++) {
		char *out = NULL, *err = NULL;
		int rc = tu_run_kagg(auto_argv[i], &out, &err, 0, 0);

		print_message("kagg %s, unwind auto: exit %d\n", auto_argv[i][0], rc);
		if (rc || !out || !strstr(out, note))
			print_message("stdout: %.400s\nstderr: %s\n", out ? out : "",
				      err ? err : "");
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, note));
		free(out);
		free(err);
	}
}

/* Debian's xz (no frame pointers, stripped) compressing 16 MiB from a pipe. */
static void test_xz_reaches_main(void **state)
{
	char *argv[] = { "/usr/bin/xz", "-3", "-T1", "-c", NULL };
	static unsigned char buf[1 << 20];
	struct kagg_snapshot *snap;
	struct kagg_session *s;
	uint64_t all, ok, x = 88172645463325252ULL;
	const struct kagg_meta *m;
	struct target t;
	size_t i, k;
	pid_t drain;

	TU_SKIP_UNLESS_ROOT();
	skip_unless_walk();
	if (access(argv[0], X_OK)) {
		print_message("skip: no /usr/bin/xz (xz-utils)\n");
		skip();
	}
	target_spawn(&t, argv);
	drain = fork(); /* read and drop what xz writes */
	assert_true(drain >= 0);
	if (!drain) {
		char b[65536];

		close(t.in);
		while (read(t.out, b, sizeof(b)) > 0)
			;
		_exit(0);
	}
	s = open_profile(t.pid, KAGG_UNWIND_AUTO);
	for (k = 0; k < 16; k++) {
		/* text-like data: xorshift letters, runs, repeats */
		for (i = 0; i < sizeof(buf); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (x & 7) ? "etaoin shrdlu"[x % 13] : buf[i / 2];
		}
		assert_int_equal(write(t.in, buf, sizeof(buf)), (ssize_t)sizeof(buf));
		kagg_session__poll(s, 0); /* its maps read while it lives, for the names */
	}
	close(t.in);
	waitpid(t.pid, NULL, 0); /* exited: its tables and maps were read at open */
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	assert_non_null(snap);
	weigh(snap, t.pid, false, NULL, &all, &ok);
	m = kagg_snapshot__meta(snap);
	print_message("xz -3: %.2f%% of %" PRIu64 " samples reach __libc_start_main; frames by "
		      "table %" PRIu64 ", by fp %" PRIu64 "\n",
		      all ? 100.0 * ok / all : 0.0, all, m->frames_table, m->frames_fp);
	assert_true(all >= 100);
	assert_true(ok >= all * 95 / 100);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	close(t.out);
	waitpid(drain, NULL, 0);
}

TU_MAIN(TU_TEST_ARG(test_profile_c, test_chain, 0), TU_TEST_ARG(test_profile_cxx, test_chain, 1),
	TU_TEST_ARG(test_offcpu_c, test_chain, 2), TU_TEST_ARG(test_offcpu_cxx, test_chain, 3),
	cmocka_unit_test(test_xz_reaches_main), cmocka_unit_test(test_without_walk_helpers), )
