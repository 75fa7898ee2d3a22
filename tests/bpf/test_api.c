// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The public API under misuse and side by side with itself:
 *  - every function given NULL handles returns an error (or does nothing,
 *    for the documented NULL-safe destroys), never crashes: each call runs
 *    in a forked child so one crash names the function instead of ending
 *    the test binary;
 *  - opts with a wrong sz (too small; larger with a non-zero tail) -> EINVAL,
 *    larger with a zero tail accepted;
 *  - snapshot before attach -> NULL/ENOTCONN, attach twice -> -EALREADY,
 *    destroy through NULL twice;
 *  - two sessions in one process with different pid filters see exactly
 *    what two separate `kagg offcpu -p` processes see on the same workload;
 *  - no writable process-global data in the library but the documented
 *    libbpf print hook.
 * The unprivileged checks run anywhere; the rest skip without root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>
#include <kagg/runqlat.h>
#include <kagg/funclat.h>
#include <kagg/profile.h>
#include <kagg/stat.h>
#include "testutil.h"

static void quiet_log(void *ctx, enum kagg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == KAGG_LOG_WARN)
		printf("  kagg: %s\n", msg);
}

/* ------------------------------------------------------------ NULL handles */

/* Each returns true when the call kept its contract (ran in a child). */
#define NULL_CASE(name) { #name, name##_case }
#define DEF_CASE(name, expr)          \
	static bool name##_case(void) \
	{                             \
		errno = 0;            \
		return (expr);        \
	}

DEF_CASE(open_null, !kagg_offcpu__open(NULL) && errno == EINVAL)
DEF_CASE(attach_null, kagg_session__attach(NULL) == -EINVAL)
DEF_CASE(detach_null, kagg_session__detach(NULL) < 0)
DEF_CASE(poll_null, kagg_session__poll(NULL, 0) < 0)
DEF_CASE(ringbuf_null, !kagg_session__ringbuf(NULL))
DEF_CASE(events_null, !kagg_session__events(NULL))
DEF_CASE(destroy_null, (kagg_session__destroy(NULL), true))
DEF_CASE(snapshot_null, !kagg_session__snapshot(NULL, 0) && errno == EINVAL)
DEF_CASE(snapshot_reset_null, !kagg_session__snapshot(NULL, KAGG_SNAP_RESET) && errno == EINVAL)
DEF_CASE(snapshot_free_null, (kagg_snapshot__free(NULL), true))
DEF_CASE(stream_null, !kagg_snapshot__stream(NULL))
DEF_CASE(hist_cnt_null, kagg_snapshot__hist_cnt(NULL) == 0)
DEF_CASE(hist_null, !kagg_snapshot__hist(NULL, 0))
DEF_CASE(stack_cnt_null, kagg_snapshot__stack_cnt(NULL) == 0)
DEF_CASE(stack_null, !kagg_snapshot__stack(NULL, 0))
DEF_CASE(meta_null, !kagg_snapshot__meta(NULL))
DEF_CASE(print_null, kagg_snapshot__print(NULL, stdout, NULL) == -EINVAL)
DEF_CASE(hist_print_null, kagg_hist__print_text(NULL, stdout) < 0)
DEF_CASE(unit_name_bad, !kagg_unit__name((enum kagg_unit)1234))
DEF_CASE(unit_parse_null, kagg_unit__parse(NULL, NULL) == -EINVAL)
DEF_CASE(rb_free_null, (kagg_rb__free(NULL), true))
DEF_CASE(rb_stats_null, kagg_rb__stats(NULL, 0, NULL) < 0)
DEF_CASE(rb_consume_null, kagg_rb__consume(NULL, 0, NULL) < 0)
DEF_CASE(rb_write_null, kagg_rb__write(NULL, 0, "x", 1) < 0)
DEF_CASE(rb_read_page_null, kagg_rb__read_page(NULL, 0, NULL, 0) < 0)
DEF_CASE(rb_iter_new_null, !kagg_rb_iter__new(NULL, 0))
DEF_CASE(rb_iter_free_null, (kagg_rb_iter__free(NULL), true))
DEF_CASE(rb_page_iter_null, kagg_rb_page_iter__init(NULL, NULL, 4096) < 0)
DEF_CASE(rb_events_free_null, (kagg_rb_events__free(NULL), true))
DEF_CASE(rb_events_find_null, !kagg_rb_events__find(NULL, 1))
DEF_CASE(rb_events_count_null, kagg_rb_events__count(NULL) == 0)
DEF_CASE(rb_events_parse_null, kagg_rb_events__parse(NULL, "x", "", 0, NULL) < 0)
DEF_CASE(rb_format_field_null, !kagg_rb_format__field(NULL, "pid"))
DEF_CASE(rb_format_field_at_null, !kagg_rb_format__field_at(NULL, 0) && errno == EINVAL)
DEF_CASE(rb_format_getters_null,
	 kagg_rb_format__nr_fields(NULL) == 0 && kagg_rb_format__nr_common(NULL) == 0 &&
		 kagg_rb_format__id(NULL) == -EINVAL && !kagg_rb_format__system(NULL) &&
		 !kagg_rb_format__name(NULL) && !kagg_rb_format__print_fmt(NULL))
DEF_CASE(rb_stats_print_null, kagg_rb_stats__fprint(NULL, stdout) == -EINVAL)

struct null_case {
	const char *name;
	bool (*fn)(void);
};

/* The session API (session.h, common.h). */
static const struct null_case session_null_cases[] = {
	NULL_CASE(open_null),	       NULL_CASE(attach_null),	   NULL_CASE(detach_null),
	NULL_CASE(poll_null),	       NULL_CASE(ringbuf_null),	   NULL_CASE(events_null),
	NULL_CASE(destroy_null),       NULL_CASE(snapshot_null),   NULL_CASE(snapshot_reset_null),
	NULL_CASE(snapshot_free_null), NULL_CASE(stream_null),	   NULL_CASE(hist_cnt_null),
	NULL_CASE(hist_null),	       NULL_CASE(stack_cnt_null),  NULL_CASE(stack_null),
	NULL_CASE(meta_null),	       NULL_CASE(print_null),	   NULL_CASE(hist_print_null),
	NULL_CASE(unit_name_bad),      NULL_CASE(unit_parse_null),
};

/* The reference ring buffer and event formats (ringbuf.h, rb_format.h). */
static const struct null_case rb_null_cases[] = {
	NULL_CASE(rb_free_null),	   NULL_CASE(rb_stats_null),
	NULL_CASE(rb_consume_null),	   NULL_CASE(rb_write_null),
	NULL_CASE(rb_read_page_null),	   NULL_CASE(rb_iter_new_null),
	NULL_CASE(rb_iter_free_null),	   NULL_CASE(rb_page_iter_null),
	NULL_CASE(rb_events_free_null),	   NULL_CASE(rb_events_find_null),
	NULL_CASE(rb_events_count_null),   NULL_CASE(rb_events_parse_null),
	NULL_CASE(rb_format_field_null),   NULL_CASE(rb_format_field_at_null),
	NULL_CASE(rb_format_getters_null), NULL_CASE(rb_stats_print_null),
};

static size_t run_null_cases(const struct null_case *null_cases, size_t n)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
			int devnull = open("/dev/null", O_WRONLY);
			size_t j;

			/* cmocka catches these to report a test; here they must kill the child. */
			for (j = 0; j < sizeof(sigs) / sizeof(sigs[0]); j++)
				signal(sigs[j], SIG_DFL);
			dup2(devnull, 1); /* printers may write a line about the error */
			_exit(null_cases[i].fn() ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFSIGNALED(st)) {
			printf("  %s: crashed (signal %d)\n", null_cases[i].name, WTERMSIG(st));
			bad++;
		} else if (WEXITSTATUS(st)) {
			printf("  %s: no error returned\n", null_cases[i].name);
			bad++;
		}
	}
	printf("  %zu NULL-handle calls, %zu broke their contract\n", i, bad);
	return bad;
}

static void test_null_handles_session_api(void **state)
{
	assert_int_equal(run_null_cases(session_null_cases,
					sizeof(session_null_cases) / sizeof(session_null_cases[0])),
			 0);
}

static void test_null_handles_rb_api(void **state)
{
	assert_int_equal(
		run_null_cases(rb_null_cases, sizeof(rb_null_cases) / sizeof(rb_null_cases[0])), 0);
}

/* ------------------------------------------------------------ opts sz */

/* An opts struct followed by room for "fields from a newer header". */
struct big_offcpu_opts {
	struct kagg_offcpu_opts o;
	uint64_t newer[2];
};

static void test_opts_sz_checked(void **state)
{
	struct big_offcpu_opts big;
	struct kagg_snapshot *snap;
	struct kagg_session *s;

	/* Too small to hold even sz: refused before anything is loaded. */
	memset(&big, 0, sizeof(big));
	big.o.sz = 4;
	TU_ASSERT_EINVAL(kagg_offcpu__open(&big.o));
	big.o.sz = 0;
	TU_ASSERT_EINVAL(kagg_offcpu__open(&big.o));

	/* Larger than this library knows, with a non-zero unknown tail. */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.newer[1] = 1;
	TU_ASSERT_EINVAL(kagg_offcpu__open(&big.o));

	/* Other opts structs follow the same rule. */
	{
		TU_NEWER(kagg_rb_opts, rb, 7);
		TU_NEWER(kagg_rb_events_opts, ev, 7);

		TU_ASSERT_EINVAL(kagg_rb__new(&rb.o));
		TU_ASSERT_EINVAL(kagg_rb_events__new(&ev.o));
		rb.newer = 0;
		rb.o.nr_cpus = 1;
		rb.o.nr_subbufs = 2;
		{
			struct kagg_rb *r = kagg_rb__new(&rb.o);

			assert_non_null(r); /* zero tail: accepted */
			kagg_rb__free(r);
		}
	}

	TU_SKIP_UNLESS_ROOT();
	/* A larger struct with a zero tail is a caller built against a newer header: fine. */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.log = quiet_log;
	s = kagg_offcpu__open(&big.o);
	assert_non_null(s);
	/* An older caller: only sz, every option at its default. */
	{
		struct kagg_offcpu_opts old = { .sz = sizeof(size_t) };
		struct kagg_session *s2 = kagg_offcpu__open(&old);

		assert_non_null(s2);
		kagg_session__destroy(s2);
	}
	assert_int_equal(kagg_session__attach(s), 0);
	snap = tu_snapshot(s, 0);
	{
		TU_NEWER(kagg_print_opts, po, 1);
		FILE *f = fopen("/dev/null", "w");

		assert_int_equal(kagg_snapshot__print(snap, f, &po.o), -EINVAL);
		po.o.sz = 2;
		po.newer = 0;
		assert_int_equal(kagg_snapshot__print(snap, f, &po.o), -EINVAL);
		po.o.sz = sizeof(po);
		assert_int_equal(kagg_snapshot__print(snap, f, &po.o), 0);
		/* Out-of-range accessors. */
		TU_ASSERT_EINVAL(kagg_snapshot__hist(snap, kagg_snapshot__hist_cnt(snap)));
		assert_null(kagg_snapshot__stack(snap, 0)); /* no --stacks */
		fclose(f);
	}
	/* Unknown snapshot flags are refused, not ignored. */
	TU_ASSERT_EINVAL(kagg_session__snapshot(s, 0x80));
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/*
 * Every tool's opener follows the same sz rule.  Run in a child each, so a
 * crash names the opener; a wrong sz must fail with EINVAL before anything
 * is loaded.  NULL opts must not crash (EINVAL or the defaults).
 */
#define OPENER_CASE(TYPE, OPEN, FREE)                    \
	static int OPEN##_sz_case(void)                  \
	{                                                \
		struct {                                 \
			struct TYPE o;                   \
			uint64_t newer[2];               \
		} b;                                     \
		void *h;                                 \
                                                         \
		memset(&b, 0, sizeof(b));                \
		b.o.sz = sizeof(b);                      \
		b.newer[1] = 1;                          \
		errno = 0;                               \
		if ((h = OPEN(&b.o)) || errno != EINVAL) \
			return 1;                        \
		memset(&b, 0, sizeof(b));                \
		b.o.sz = 4;                              \
		errno = 0;                               \
		if ((h = OPEN(&b.o)) || errno != EINVAL) \
			return 2;                        \
		h = OPEN(NULL);                          \
		FREE(h);                                 \
		return 0;                                \
	}

OPENER_CASE(kagg_offcpu_opts, kagg_offcpu__open, kagg_session__destroy)
OPENER_CASE(kagg_runqlat_opts, kagg_runqlat__open, kagg_session__destroy)
OPENER_CASE(kagg_funclat_opts, kagg_funclat__open, kagg_session__destroy)
OPENER_CASE(kagg_profile_opts, kagg_profile__open, kagg_session__destroy)
OPENER_CASE(kagg_stat_opts, kagg_stat__open, kagg_stat__destroy)

static void test_tool_openers_check_sz(void **state)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{ "kagg_offcpu__open", kagg_offcpu__open_sz_case },
		{ "kagg_runqlat__open", kagg_runqlat__open_sz_case },
		{ "kagg_funclat__open", kagg_funclat__open_sz_case },
		{ "kagg_profile__open", kagg_profile__open_sz_case },
		{ "kagg_stat__open", kagg_stat__open_sz_case },
	};
	static const char *const what[] = { "ok", "accepted a non-zero unknown tail",
					    "accepted sz < sizeof(size_t)" };
	size_t i, bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			signal(SIGSEGV, SIG_DFL);
			signal(SIGBUS, SIG_DFL);
			signal(SIGABRT, SIG_DFL);
			_exit(cases[i].fn());
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFSIGNALED(st))
			printf("  %s: crashed (signal %d)\n", cases[i].name, WTERMSIG(st));
		else if (WEXITSTATUS(st))
			printf("  %s: %s\n", cases[i].name,
			       WEXITSTATUS(st) < 3 ? what[WEXITSTATUS(st)] : "?");
		else
			printf("  %s: wrong sz -> EINVAL, NULL opts safe\n", cases[i].name);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------ lifecycle */

static void test_lifecycle_misuse(void **state)
{
	struct kagg_session *s;
	struct kagg_snapshot *snap;

	TU_SKIP_UNLESS_ROOT();
	KAGG_OPTS(kagg_offcpu_opts, o, .log = quiet_log);
	s = kagg_offcpu__open(&o);
	assert_non_null(s);

	/* Reading before attach: nothing was ever measured. */
	errno = 0;
	assert_null(kagg_session__snapshot(s, 0));
	assert_int_equal(errno, ENOTCONN);
	errno = 0;
	assert_null(kagg_session__snapshot(s, KAGG_SNAP_RESET));
	assert_int_equal(errno, ENOTCONN);
	/* Detach before attach: harmless. */
	kagg_session__detach(s);

	assert_int_equal(kagg_session__attach(s), 0);
	assert_int_equal(kagg_session__attach(s), -EALREADY);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	kagg_snapshot__free(snap);

	/* Detached: data stays readable; attaching again works once. */
	assert_int_equal(kagg_session__detach(s), 0);
	snap = tu_snapshot(s, 0);
	kagg_snapshot__free(snap);
	assert_int_equal(kagg_session__attach(s), 0);
	assert_int_equal(kagg_session__attach(s), -EALREADY);

	/* Double destroy through the NULL-safe destroy. */
	kagg_session__destroy(s);
	s = NULL;
	kagg_session__destroy(s);
	kagg_snapshot__free(NULL);
}

/* ------------------------------------------------------------ two sessions */

#define NR_SLOTS 64

struct cli_run {
	pid_t pid;
	char *out;
	int rc;
};

static void *cli_thread(void *arg)
{
	struct cli_run *r = arg;
	char pid[16];
	char *argv[] = { "offcpu",   "-P",   "-p", pid, "--state", "S",
			 "--format", "json", "-d", "3", NULL };

	snprintf(pid, sizeof(pid), "%d", r->pid);
	r->rc = tu_run_kagg(argv, &r->out, NULL, 0, 0);
	return NULL;
}

/* Slot counts of the JSON histogram of `pid` (one histogram per process). */
static int parse_cli_slots(const char *out, int pid, uint64_t *slots)
{
	char key[48];
	const char *p, *end;

	memset(slots, 0, NR_SLOTS * sizeof(*slots));
	snprintf(key, sizeof(key), "\"pid\": %d", pid);
	p = out ? strstr(out, key) : NULL;
	if (!p)
		return -1;
	end = strstr(p, "]"); /* end of this histogram's bucket list */
	while ((p = strstr(p, "{\"low\":")) && (!end || p < end)) {
		unsigned long long low, high, cnt;
		unsigned int k = 0;

		if (sscanf(p, "{\"low\":%llu,\"high\":%llu,\"count\":%llu", &low, &high, &cnt) != 3)
			return -1;
		while (k < NR_SLOTS - 1 && (1ULL << (k + 1)) <= low)
			k++;
		slots[k] = cnt;
		p++;
	}
	return 0;
}

static void session_slots(struct kagg_snapshot *snap, int pid, uint64_t *slots)
{
	size_t i;

	memset(slots, 0, NR_SLOTS * sizeof(*slots));
	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);
		unsigned int k;

		if (h->key.pid != pid)
			continue;
		for (k = 0; k < h->nr_slots && k < NR_SLOTS; k++)
			slots[k] += h->slots[k];
	}
}

static uint64_t slots_from(const uint64_t *slots, int k)
{
	uint64_t n = 0;

	for (; k < NR_SLOTS; k++)
		n += slots[k];
	return n;
}

/*
 * Child A sleeps 30 x 24 ms (slot 14, [16384, 32767] us), child B 20 x 6 ms
 * (slot 12, [4096, 8191] us): each near the middle of its bucket, as a stall
 * of a virtual CPU before a sleep blocks shortens its interval (test_offcpu.c,
 * KNOWN_SLEEP_MS).  Two sessions in this process, one filtered
 * on each child, and two `kagg offcpu -p` processes, one on each, watch the
 * same run.  Each session must equal its CLI twin slot for slot, and hold
 * the known count in the known slot and nothing of the other child's.
 */
static void test_two_sessions_equal_two_processes(void **state)
{
	struct tu_sleeps wa = { .count = 30, .ms = 24 }, wb = { .count = 20, .ms = 6 };
	uint64_t sa_slots[NR_SLOTS], sb_slots[NR_SLOTS], ca_slots[NR_SLOTS], cb_slots[NR_SLOTS];
	struct cli_run ra = { 0 }, rb = { 0 };
	struct kagg_snapshot *snap_a, *snap_b;
	struct kagg_session *sa, *sb;
	struct tu_child a, b;
	uint64_t drops_a, drops_b;
	pthread_t ta, tb;
	int pa[1], pb[1], k;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(tu_sleeps_measured(&wa));
	assert_non_null(tu_sleeps_measured(&wb));
	a = tu_spawn(tu_sleeper, &wa);
	b = tu_spawn(tu_sleeper, &wb);
	assert_true(a.pid > 0 && b.pid > 0);
	pa[0] = ra.pid = a.pid;
	pb[0] = rb.pid = b.pid;

	/* The two separate processes first: they need time to load and attach. */
	pthread_create(&ta, NULL, cli_thread, &ra);
	pthread_create(&tb, NULL, cli_thread, &rb);

	KAGG_OPTS(kagg_offcpu_opts, oa, .key = KAGG_KEY_PID, .pids = pa, .nr_pids = 1,
		  .states = "S", .log = quiet_log);
	KAGG_OPTS(kagg_offcpu_opts, ob, .key = KAGG_KEY_PID, .pids = pb, .nr_pids = 1,
		  .states = "S", .log = quiet_log);
	sa = kagg_offcpu__open(&oa);
	sb = kagg_offcpu__open(&ob);
	tu_attach(sa);
	tu_attach(sb);
	tu_sleep_ms(1200); /* the CLIs attach well within this */

	tu_go(&a);
	tu_go(&b);
	assert_int_equal(tu_wait(&a), 0);
	assert_int_equal(tu_wait(&b), 0);
	snap_a = kagg_session__snapshot(sa, KAGG_SNAP_RESET);
	snap_b = kagg_session__snapshot(sb, KAGG_SNAP_RESET);
	assert_non_null(snap_a);
	assert_non_null(snap_b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(ra.rc, 0);
	assert_int_equal(rb.rc, 0);

	session_slots(snap_a, a.pid, sa_slots);
	session_slots(snap_b, b.pid, sb_slots);
	assert_int_equal(parse_cli_slots(ra.out, a.pid, ca_slots), 0);
	assert_int_equal(parse_cli_slots(rb.out, b.pid, cb_slots), 0);
	printf("  A: session slot14 %llu, cli slot14 %llu; B: session slot12 %llu, cli slot12 "
	       "%llu\n",
	       (unsigned long long)sa_slots[14], (unsigned long long)ca_slots[14],
	       (unsigned long long)sb_slots[12], (unsigned long long)cb_slots[12]);

	/* Each session only saw its own child. */
	assert_int_equal(kagg_snapshot__hist_cnt(snap_a), 1);
	assert_int_equal(kagg_snapshot__hist_cnt(snap_b), 1);
	/*
	 * Known counts in the known buckets: every sleep at or above its
	 * bucket (a loaded host can push one higher), below it only sleeps
	 * preempted before they blocked (as many as the child counted at most),
	 * and in it every sleep never preempted whose wall time, as the child
	 * measured it, stayed below the bucket's end (the off-CPU interval lies
	 * within it), unless dropped; every sleep either there or counted as a drop
	 * (on this VM a switch-in is now and then not seen: switch_in_missed,
	 * in the session and its CLI twin alike).
	 */
	drops_a = kagg_snapshot__meta(snap_a)->drops_total;
	drops_b = kagg_snapshot__meta(snap_b)->drops_total;
	if (drops_a || drops_b)
		printf("  drops: A %llu, B %llu\n", (unsigned long long)drops_a,
		       (unsigned long long)drops_b);
	assert_true(slots_from(sa_slots, 0) - slots_from(sa_slots, 14) <=
		    (uint64_t)tu_sleeps_preempted(&wa));
	assert_int_equal(slots_from(sa_slots, 0) + drops_a, tu_sleeps_blocked(&wa));
	assert_true(drops_a <= 3);
	assert_true(sa_slots[14] + drops_a >= (uint64_t)tu_sleeps_whole_under(&wa, 32768000ULL));
	assert_true(slots_from(sb_slots, 0) - slots_from(sb_slots, 12) <=
		    (uint64_t)tu_sleeps_preempted(&wb));
	assert_int_equal(slots_from(sb_slots, 0) + drops_b, tu_sleeps_blocked(&wb));
	assert_true(drops_b <= 3);
	assert_true(sb_slots[12] + drops_b >= (uint64_t)tu_sleeps_whole_under(&wb, 8192000ULL));
	/* Same as the separate processes, slot for slot. */
	for (k = 0; k < NR_SLOTS; k++) {
		if (sa_slots[k] != ca_slots[k] || sb_slots[k] != cb_slots[k])
			printf("  slot %d: A %llu vs cli %llu, B %llu vs cli %llu\n", k,
			       (unsigned long long)sa_slots[k], (unsigned long long)ca_slots[k],
			       (unsigned long long)sb_slots[k], (unsigned long long)cb_slots[k]);
		assert_int_equal(sa_slots[k], ca_slots[k]);
		assert_int_equal(sb_slots[k], cb_slots[k]);
	}
	kagg_snapshot__free(snap_a);
	kagg_snapshot__free(snap_b);
	kagg_session__destroy(sa);
	kagg_session__destroy(sb);
	free(ra.out);
	free(rb.out);
}

/* ------------------------------------------------------------ global state */

/*
 * Writable data with static storage in the library's objects: everything in
 * .data/.bss (local or global), thread-local data listed apart.  Read-only
 * tables (.rodata, .data.rel.ro) are not state.
 */
static const char *const allowed_global[] = {
	"libbpf_fn", "libbpf_ctx", /* log.c: kagg_libbpf_set_log(), documented in common.h */
};
static const char *const allowed_tls[] = {
	"rb_depth", /* ringbuf.c: open reservations of the calling thread (max_nest, ringbuf.h) */
};

static bool listed(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static void test_no_global_state(void **state)
{
	const char *obj = getenv("KAGG_OBJDIR") ? getenv("KAGG_OBJDIR") : "build/obj/user";
	char cmd[512], line[512];
	int bad = 0, seen = 0;
	FILE *p;

	if (access(obj, R_OK)) {
		printf("SKIP: no library objects at %s (set KAGG_OBJDIR)\n", obj);
		skip();
	}
	/* objdump -t: "ADDR FLAGS SECTION SIZE NAME" for data objects (flag O). */
	snprintf(cmd, sizeof(cmd),
		 "objdump -t %s/*/*.o | awk 'NF >= 5 && $(NF-2) ~ /^\\.(data|bss|tdata|tbss)/ && "
		 "$(NF-2) !~ /rel\\.ro/ && $NF !~ /^\\./ {print $(NF-2), $NF}' | sort -u",
		 obj);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char sec[64], name[256];
		bool tls;

		if (sscanf(line, "%63s %255s", sec, name) != 2)
			continue;
		seen++;
		tls = !strncmp(sec, ".tbss", 5) || !strncmp(sec, ".tdata", 6);
		if (tls ? listed(name, allowed_tls, sizeof(allowed_tls) / sizeof(*allowed_tls))
			: listed(name, allowed_global,
				 sizeof(allowed_global) / sizeof(*allowed_global))) {
			printf("  %-6s %-12s documented\n", tls ? "tls" : "global", name);
			continue;
		}
		printf("  %-6s %-12s (%s) NOT documented: process-global state\n",
		       tls ? "tls" : "global", name, sec);
		bad++;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(seen > 0); /* the documented hook itself must be found */

	/* The shared library exports no data at all, only functions. */
	p = popen("nm -D --defined-only build/lib/libkagg.so | awk '$2 ~ /^[BDGSbdgsVv]$/'", "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		printf("  exported data: %s", line);
		bad++;
	}
	pclose(p);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_handles_session_api),
		cmocka_unit_test(test_null_handles_rb_api),
		cmocka_unit_test(test_opts_sz_checked),
		cmocka_unit_test(test_tool_openers_check_sz),
		cmocka_unit_test(test_lifecycle_misuse),
		cmocka_unit_test(test_two_sessions_equal_two_processes),
		cmocka_unit_test(test_no_global_state),
	};

	return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
