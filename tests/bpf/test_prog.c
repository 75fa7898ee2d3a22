// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_prog: programs written with <kagg/bpf/kagg.bpf.h> run by the generic
 * loader (kagg_prog__open(), kagg run).
 *
 * - examples/bpf/offcpu.bpf.o beside kagg_offcpu__open() on the same
 *   sched_switch events of one process: the same histogram, bucket for bucket,
 *   in one exact interval;
 * - a key with an enum, a string, a pid, a cgroup id, a kernel stack and a
 *   nested struct (tests/progs/sdk_keys.bpf.c, loaded from its bytes) printed
 *   by name in text and JSON;
 * - examples/bpf/ulat.bpf.o on funclat_target's 20 ms and 5 ms sleeps: each
 *   call counted, none below its sleep's bucket;
 * - examples/bpf/offcpu.bpf.o with --mode both: the stream's histogram is the
 *   kernel's, bucket for bucket, in one exact interval, no record lost; with
 *   --overhead each path's cost, the two summing to the program's run time;
 * - sdk_keys with --mode stream: the 7 getppid() aggregated from the records
 *   under the same labels;
 * - kagg record --prog sdk_keys.bpf.o: trace-cmd report and kagg report print
 *   the 7 calls, each field by name with its known value;
 * - sdk_exp with --buckets exp:3 --mode both: known values, each counted in the
 *   exp bucket that holds it, on both paths, unkeyed and keyed; with exp and
 *   log2 buckets, every histogram's exact min and max (a linear one's signed);
 * - sdk_keys on a process that exits before the snapshot: its pid_comm is the
 *   command it had when a poll saw its key (kernel path) or its record came
 *   (stream path);
 * - bad objects and options: one line, exit 2, nothing left loaded.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <inttypes.h>
#include <math.h>
#include <sys/syscall.h>
#include <linux/types.h>
#include <libgen.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/prctl.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include "testutil.h"
#include "census.h"
#include "shared/kagg_sdk.h"	      /* the types of the skeleton's rodata */
#include "session/session_internal.h" /* session_no_task_storage */
#include "sdk_keys.skel.h"
#include "sdk_exp.skel.h"
#include "sdk_shared.skel.h"
#include "sdk_bounds.skel.h"
#include "sdk_anytp.skel.h"

/* build/<dir>/<name>, build taken from $KAGG (build/bin/kagg). */
static const char *built(const char *rel, char *buf, size_t len)
{
	char k[512];

	snprintf(k, sizeof(k), "%s", tu_kagg());
	snprintf(buf, len, "%s/%s", dirname(dirname(k)), rel);
	return buf;
}

/*
 * offcpu.bpf.o beside the built-in offcpu on one process's 40 sleeps: the same histogram,
 * bucket for bucket.  as_510: the example loaded with BPF task storage and atomics taken as
 * missing, as on 5.10: its pair keeps its starts by thread id, and says so.
 */
static void offcpu_same(bool as_510)
{
	struct tu_sleeps sl = { .count = 40, .ms = 3, .took_ns = tu_sleeps_shared(40) };
	struct tu_child c = tu_spawn(tu_sleeper, &sl);
	char path[600], set[64];
	const char *sets[] = { set };
	int pids[] = { c.pid };
	KAGG_OPTS(kagg_offcpu_opts, oo, .pids = pids, .nr_pids = 1);
	KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = 1);
	struct kagg_session *a, *b;
	struct kagg_snapshot *sa, *sb;
	const struct kagg_hist *ha, *hb;
	int64_t net, crossed;
	const char *note;
	unsigned int k;
	uint64_t lost;
	int whole;

	assert_non_null(sl.took_ns);
	snprintf(set, sizeof(set), "tgid=%d", c.pid);
	a = kagg_offcpu__open(&oo);
	session_no_task_storage = session_no_bpf_atomics = as_510;
	b = kagg_prog__open(built("examples/bpf/offcpu.bpf.o", path, sizeof(path)), &po);
	session_no_task_storage = session_no_bpf_atomics = false;
	assert_non_null(a);
	assert_non_null(b);
	tu_attach(a);
	tu_attach(b);
	tu_go(&c);
	assert_int_equal(tu_wait(&c), 0);
	/* the process is gone: no event of it can fall between the two flips */
	sa = tu_snapshot(a, KAGG_SNAP_RESET);
	sb = tu_snapshot(b, KAGG_SNAP_RESET);
	assert_int_equal(kagg_snapshot__hist_cnt(sa), 1);
	assert_int_equal(kagg_snapshot__hist_cnt(sb), 1);
	ha = kagg_snapshot__hist(sa, 0);
	hb = kagg_snapshot__hist(sb, 0);
	printf("  offcpu %" PRIu64 " intervals, the SDK's %" PRIu64 "; %d sleeps blocked; kernel "
	       "gaps %" PRIu64 ", drops %" PRIu64 "\n",
	       ha->total, hb->total, tu_sleeps_blocked(&sl), tu_drop_count(sa, "kernel_gaps"),
	       kagg_snapshot__meta(sa)->drops_total);
	/*
	 * one interval at least per sleep that blocked (a 3 ms timer can fire first), but for
	 * the switches the kernel did not deliver to either program (kernel_gaps)
	 */
	assert_true(ha->total + tu_drop_count(sa, "kernel_gaps") >=
		    (uint64_t)tu_sleeps_blocked(&sl));
	assert_int_equal(ha->total, hb->total);
	assert_int_equal(ha->nr_slots, hb->nr_slots);
	/*
	 * Bucket for bucket, but each program reads the clock itself, one after the other at
	 * each switch (microseconds apart in a TCG guest): an interval within that of a bucket
	 * bound may land on either side.  A whole sleep under 4 ms (3 ms at least, its own
	 * wall time under 4 ms) is 96 us from any bound: only the other intervals may move,
	 * each to the next bucket.
	 */
	for (k = 0, net = 0, crossed = 0; k < ha->nr_slots; k++) {
		net += (int64_t)ha->slots[k] - (int64_t)hb->slots[k];
		crossed += net < 0 ? -net : net;
	}
	/*
	 * A switch the kernel did not deliver (kernel_gaps) loses its interval to both
	 * programs (counted as a drop where the task passed the filter): a whole sleep lost
	 * that way is not in total either.
	 */
	lost = tu_drop_count(sa, "kernel_gaps") + kagg_snapshot__meta(sa)->drops_total;
	whole = tu_sleeps_whole_under(&sl, 4000000);
	whole = (uint64_t)whole > lost ? whole - (int)lost : 0;
	printf("  intervals across a bucket bound between the two: %lld (of %lld not whole sleeps "
	       "under 4 ms)\n",
	       (long long)crossed, (long long)ha->total - whole);
	assert_true(crossed <= (int64_t)ha->total - whole);
	assert_string_equal(kagg_snapshot__meta(sb)->attach, "tp_btf");
	note = kagg_snapshot__meta(sb)->attach_note ?: "";
	printf("  SDK attach note: %s\n", note);
	/* by thread id where the kernel has no task storage, or where it is taken as missing */
	assert_int_equal(strstr(note, "no BPF task storage") != NULL,
			 as_510 || strstr(kagg_snapshot__meta(sa)->attach_note ?: "",
					  "no BPF task storage"));
	kagg_snapshot__free(sa);
	kagg_snapshot__free(sb);
	kagg_session__destroy(a);
	kagg_session__destroy(b);
}

static void test_offcpu_same(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	offcpu_same(false);
}

static void test_offcpu_same_without_task_storage(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	offcpu_same(true);
}

/*
 * offcpu.bpf.o --mode both on 40 sleeps of one process: an interval at least per sleep that
 * blocked, and the stream agrees with the kernel.
 * With overhead, the one program's run time is split between the paths: the stream's part
 * (timed inside it) is more than 0, and the two parts sum to its run time per event.
 */
static void test_offcpu_both(void **state)
{
	struct tu_sleeps sl = { .count = 40, .ms = 3 };
	struct tu_child c;
	char path[600], set[64];
	const char *sets[] = { set };
	KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = 1, .mode = KAGG_MODE_BOTH,
		  .overhead = true);
	const struct kagg_hist *h, *sh;
	const struct kagg_meta *m;
	struct kagg_snapshot *snap, *gsnap;
	struct kagg_session *s, *g;
	uint64_t run_ns = 0, gaps;
	unsigned int k;
	double total;
	int pids[1];

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(tu_sleeps_measured(&sl));
	c = tu_spawn(tu_sleeper, &sl);
	snprintf(set, sizeof(set), "tgid=%d", c.pid);
	s = kagg_prog__open(built("examples/bpf/offcpu.bpf.o", path, sizeof(path)), &po);
	assert_non_null(s);
	/* the built-in offcpu beside it counts the switches the kernel did not deliver */
	pids[0] = c.pid;
	KAGG_OPTS(kagg_offcpu_opts, oo, .pids = pids, .nr_pids = 1);
	g = kagg_offcpu__open(&oo);
	tu_attach(g);
	/* the process is gone before the snapshot: every interval is in this one */
	snap = tu_snap_after_child(s, &c, KAGG_SNAP_RESET);
	gsnap = tu_snapshot(g, KAGG_SNAP_RESET);
	gaps = tu_drop_count(gsnap, "kernel_gaps");
	kagg_snapshot__free(gsnap);
	kagg_session__destroy(g);
	tu_both_single(snap, &h, &sh);
	printf("  kernel %" PRIu64 " intervals, stream %" PRIu64 " (%" PRIu64
	       " records sent, %" PRIu64 " dropped)\n",
	       h->total, sh->total, kagg_snapshot__meta(snap)->stream_sent,
	       kagg_snapshot__meta(snap)->stream_dropped);
	assert_int_equal(kagg_snapshot__meta(snap)->stream_dropped, 0);
	/* one interval at least per sleep that blocked (a 3 ms timer can fire first), gaps aside */
	assert_true(h->total + gaps >= (uint64_t)tu_sleeps_blocked(&sl));
	assert_int_equal(h->total, sh->total);
	assert_int_equal(kagg_snapshot__meta(snap)->stream_sent, h->total);
	assert_true(h->sum == sh->sum);
	assert_int_equal(h->nr_slots, sh->nr_slots);
	for (k = 0; k < h->nr_slots; k++)
		assert_int_equal(h->slots[k], sh->slots[k]);

	m = kagg_snapshot__meta(snap);
	assert_true(m->has_overhead && m->events_seen > 0);
	for (k = 0; k < m->nr_progs; k++)
		run_ns += m->progs[k]->run_time_ns;
	total = (double)run_ns / m->events_seen;
	printf("  cost per event: %.1f ns in all, agg %.1f, stream %.1f (timed: %d)\n", total,
	       m->agg_ns_per_event, m->stream_ns_per_event, m->stream_timed);
	assert_true(m->stream_timed);
	assert_true(m->stream_ns_per_event > 0 && m->agg_ns_per_event > 0);
	assert_true(fabs(m->agg_ns_per_event + m->stream_ns_per_event - total) < 1e-6 * total);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* getppid() n times, then a snapshot of s (attached). */
static struct kagg_snapshot *after_getppid(struct kagg_session *s, int n)
{
	int i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return tu_snapshot(s, KAGG_SNAP_RESET);
}

/*
 * sdk_keys (the built-in copy) on process tgid (--set target_tgid=TGID, then extra unless
 * NULL) in mode, opened and attached.  The sets are read at open only.
 */
static struct kagg_session *open_sdk_keys(int tgid, const char *extra, enum kagg_mode mode)
{
	char set[64];
	const char *sets[] = { set, extra };
	size_t sz;
	const void *bytes = sdk_keys_bpf__elf_bytes(&sz);
	KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = extra ? 2 : 1, .obj_buf = bytes,
		  .obj_size = sz, .mode = mode);
	struct kagg_session *s;

	snprintf(set, sizeof(set), "target_tgid=%d", tgid);
	s = kagg_prog__open("sdk_keys", &po);
	tu_attach(s);
	return s;
}

static void test_key_names(void **state)
{
	char comm[32] = "", cgline[512] = "", cg[520], want[600];
	size_t i, len;
	struct kagg_session *s;
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	KAGG_OPTS(kagg_print_opts, json, .format = KAGG_FORMAT_JSON);
	char *text = NULL, *leaf;
	FILE *f;

	TU_SKIP_UNLESS_ROOT();
	f = fopen("/proc/self/comm", "r");
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	f = fopen("/proc/self/cgroup", "r");
	while (fgets(cgline, sizeof(cgline), f) && strncmp(cgline, "0::", 3))
		;
	fclose(f);
	cgline[strcspn(cgline, "\n")] = '\0';
	snprintf(cg, sizeof(cg), "%s", strstr(cgline, "::") ? strstr(cgline, "::") + 2 : "?");
	s = open_sdk_keys(getpid(), "label=hi", KAGG_MODE_AGG);
	snap = after_getppid(s, 7);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	h = kagg_snapshot__hist(snap, 0);
	assert_string_equal(h->agg, "sdk_calls");
	assert_int_equal(h->nr_slots, 0);
	assert_int_equal(h->total, 7);
	for (i = 0; i < h->nr_labels; i++)
		printf("  %s = %s\n", h->label_names[i], h->label_values[i]);
	f = open_memstream(&text, &len);
	assert_int_equal(kagg_snapshot__print(snap, f, NULL), 0);
	assert_int_equal(kagg_snapshot__print(snap, f, &json), 0);
	fclose(f);
	TU_ASSERT_HAS(text, "color=SDK_GREEN", "name=hi ", "\"color\": \"SDK_GREEN\"",
		      "\"name\": \"hi\"", "\"in_port\": \"80\"", "in_port=80",
		      "count = 7, sum = 7 sdk_calls", "\"agg\": \"sdk_calls\"");
	/*
	 * the stack, outermost first, ends (innermost) where the system call entered the
	 * tracepoint (syscall_trace_enter, or a .constprop copy of it): no BPF machinery
	 */
	for (i = 0; i < h->nr_labels && strcmp(h->label_names[i], "stack"); i++)
		;
	assert_true(i < h->nr_labels);
	leaf = strrchr(h->label_values[i], ';');
	assert_non_null(leaf);
	assert_int_equal(strncmp(leaf + 1, "syscall_trace_enter", 19), 0);
	tu_assert_lacks(text, TU_STRS("bpf_trace_run", "__bpf_trace_", "bpf_prog_"));
	snprintf(want, sizeof(want), "pid=%d pid_comm=%s ", getpid(), comm);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\"pid_comm\": \"%s\"", comm);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "cg=%s ", cg);
	assert_non_null(strstr(text, want));
	free(text);
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* sdk_keys --mode stream: the records aggregated here, under the kernel path's labels. */
static void test_stream_keys(void **state)
{
	char want[128];
	struct kagg_session *s;
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;

	TU_SKIP_UNLESS_ROOT();
	s = open_sdk_keys(getpid(), NULL, KAGG_MODE_STREAM);
	snap = after_getppid(s, 7);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	h = kagg_snapshot__hist(snap, 0);
	assert_string_equal(h->agg, "sdk_calls");
	assert_int_equal(h->total, 7);
	assert_true(h->sum == 7);
	assert_int_equal(kagg_snapshot__meta(snap)->stream_sent, 7);
	assert_int_equal(kagg_snapshot__meta(snap)->events_recorded, 7);
	assert_non_null(h->key.label);
	snprintf(want, sizeof(want), "color=SDK_GREEN name=hello pid=%d ", getpid());
	printf("  %s\n", h->key.label);
	assert_non_null(strstr(h->key.label, want));
	assert_non_null(strstr(h->key.label, "in_port=80"));
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* A process's 7 getppid() calls. */
static void getppid_7(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 7; i++)
		syscall(SYS_getppid);
}

/* A .bss map of an SDK object named sdk_* loaded since before by owner, kagg_armed set. */
static bool sdk_armed(const struct tu_census *before, pid_t owner)
{
	return tu_new_var_set(before, "sdk_", "kagg_armed", owner);
}

/* Lines of the command cmd's output holding every string of want (NULL-ended). */
static long lines_with(const char *cmd, const char *const *want)
{
	char line[2048];
	long n = 0;
	FILE *f = popen(cmd, "r");
	int i;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; want[i] && strstr(line, want[i]); i++)
			;
		n += !want[i];
	}
	pclose(f);
	return n;
}

/*
 * kagg record --prog sdk_keys.bpf.o on a process's 7 getppid() calls, released once the
 * program is attached and armed: trace-cmd report and kagg report print 7 sdk_calls events,
 * each with every field by name and its known value.
 */
static void test_record_prog(void **state)
{
	char keys[600], path[] = "/tmp/kagg-test-prog-XXXXXX.dat", set[64], pidf[32], cmd[800];
	char *argv[] = { "record", "--prog", keys, "--set", set, "-o", path, "-d", "60", NULL };
	const char *want[] = { "sdk_calls:",  "color=SDK_GREEN ", "name=hello ", pidf,
			       "in_port=80 ", "value=1",	  NULL };
	static struct tu_census before;
	struct tu_child c;
	struct tu_kagg k;
	char *err = NULL;
	long tc, kr;
	int fd, i;

	TU_SKIP_UNLESS_ROOT();
	built("bpf/sdk_keys.bpf.o", keys, sizeof(keys));
	fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	close(fd);
	tu_census_take(&before, "sdk_", "sdk_");
	c = tu_spawn(getppid_7, NULL);
	snprintf(set, sizeof(set), "target_tgid=%d", c.pid);
	snprintf(pidf, sizeof(pidf), " pid=%d ", c.pid);
	k = tu_kagg_start(argv);
	for (i = 0; i < 1200 && !tu_kagg_exited(&k) && !sdk_armed(&before, k.pid); i++)
		tu_sleep_ms(50);
	tu_go(&c);
	assert_int_equal(tu_wait(&c), 0);
	if (!tu_kagg_exited(&k))
		kill(k.pid, SIGINT);
	assert_int_equal(tu_kagg_finish(&k, NULL, &err), 0);
	printf("  record: %s", err ? err : "");
	assert_non_null(strstr(err, "7 recorded"));
	free(err);
	snprintf(cmd, sizeof(cmd), "%s report %s 2>&1", tu_kagg(), path);
	kr = lines_with(cmd, want);
	printf("  kagg report: %ld sdk_calls events with every field\n", kr);
	assert_int_equal(kr, 7);
	if (access("/usr/bin/trace-cmd", X_OK)) {
		printf("SKIP trace-cmd check: /usr/bin/trace-cmd not installed\n");
	} else {
		snprintf(cmd, sizeof(cmd), "trace-cmd report -N -i %s 2>&1", path);
		tc = lines_with(cmd, want);
		printf("  trace-cmd report: %ld sdk_calls events with every field\n", tc);
		assert_int_equal(tc, 7);
	}
	unlink(path);
}

/* The slot of h holding v (exp: (low, high], the zero slot [0, 0]), or -1. */
static int exp_slot_of(const struct kagg_hist *h, double v)
{
	double low, high;
	unsigned int k;

	for (k = 0; k < h->nr_slots; k++) {
		kagg_hist__bounds(h, k, &low, &high);
		if ((k == 0 && v == 0 && high == 0) || (v > low && v <= high))
			return (int)k;
	}
	return -1;
}

/* h counts n_of[i] times vals[i] (nv values), each in its bucket, and nothing else. */
static void assert_exp_counts(const struct kagg_hist *h, const uint64_t *vals, const uint64_t *n_of,
			      int nv)
{
	uint64_t want[4096] = {}, total = 0, sum = 0;
	int i, k;

	assert_true(h->has_exp);
	assert_int_equal(h->exp_scale, 3);
	assert_true(h->nr_slots <= 4096);
	for (i = 0; i < nv; i++) {
		k = exp_slot_of(h, (double)vals[i]);
		assert_true(k >= 0);
		want[k] += n_of[i];
		total += n_of[i];
		sum += n_of[i] * vals[i];
	}
	for (k = 0; k < (int)h->nr_slots; k++)
		assert_int_equal(h->slots[k], want[k]);
	assert_int_equal(h->total, total);
	assert_true(h->sum == (double)sum);
}

/*
 * The text of snap (--mode both: side by side) names its percentiles in the value of the
 * histogram they are of, never in a unit of time the values are not.
 */
static void assert_pcts_named(const struct kagg_snapshot *snap)
{
	char *text = NULL, *line, *save = NULL, want[64];
	size_t len = 0, i;
	int pcts = 0, named;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(kagg_snapshot__print(snap, f, NULL), 0);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "p50", 3) && strncmp(line, "p99", 3))
			continue;
		for (i = 0, named = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
			snprintf(want, sizeof(want), " %s [", kagg_snapshot__hist(snap, i)->value);
			named |= strstr(line, want) != NULL;
		}
		if (!named)
			printf("  not in a histogram's value: %s\n", line);
		assert_true(named);
		assert_null(strstr(line, "secs ["));
		pcts++;
	}
	printf("  %d percentile lines, each in its histogram's value\n", pcts);
	assert_true(pcts >= 2);
	free(text);
}

/*
 * The extremes of sdk_exp's histograms after 10 getppid(): 0 and 1e6 in sizes and in each
 * parity's (each holds every value), -2000 and 998000 in the linear shifted; exact,
 * printed as min and max.
 */
static void assert_known_extremes(const struct kagg_snapshot *snap)
{
	const struct kagg_hist *h;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++) {
		h = kagg_snapshot__hist(snap, i);
		assert_true(h->has_minmax);
		if (!strcmp(h->agg, "shifted")) {
			assert_true(h->min == -2000 && h->max == 998000);
			/* signed values, a signed sum: 2 x (-2000 - 1999 - 1000 - 500 + 998000) */
			assert_true(h->has_sum && h->sum == 1985002);
		} else {
			assert_true(h->min == 0 && h->max == 1000000);
		}
	}
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(kagg_snapshot__print(snap, f, NULL), 0);
	fclose(f);
	TU_ASSERT_HAS(text, "min   = -2000 shifted", "max   = 998000 shifted",
		      "max   = 1000000 sizes");
	free(text);
}

/* sdk_exp on this process's getppid() calls, --mode both, in buckets b (exp: scale 3), attached. */
static struct kagg_session *sdk_exp_session(enum kagg_buckets b)
{
	char set[64];
	const char *sets[] = { set };
	size_t sz;
	const void *bytes = sdk_exp_bpf__elf_bytes(&sz);
	KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = 1, .obj_buf = bytes, .obj_size = sz,
		  .mode = KAGG_MODE_BOTH, .buckets = b, .exp_scale = 3);
	struct kagg_session *s;

	snprintf(set, sizeof(set), "target_tgid=%d", getpid());
	s = kagg_prog__open("sdk_exp", &po);
	assert_non_null(s);
	tu_attach(s);
	return s;
}

/*
 * sdk_exp with log2 buckets, --mode both, and a single log2 histogram's slot: the exact
 * extremes on both paths, where the buckets alone would say [0, 1] and [524288, 1048575].
 */
static void test_log2_extremes(void **state)
{
	struct kagg_snapshot *snap;
	struct kagg_session *s;

	TU_SKIP_UNLESS_ROOT();
	s = sdk_exp_session(KAGG_BUCKETS_LOG2);
	snap = after_getppid(s, 10);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 4);
	assert_non_null(kagg_snapshot__stream(snap));
	assert_known_extremes(snap);
	assert_known_extremes(kagg_snapshot__stream(snap));
	printf("  log2 and linear, kernel and stream: min/max 0/1000000, shifted -2000/998000\n");
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/*
 * sdk_exp --buckets exp:3 --mode both: 10 getppid() record 0, 1, 1000, 1500, 1e6 twice
 * each, and by parity once each: every value in the bucket that holds it (1000 and 1500
 * more than 2^(1/8) apart: two buckets), on both paths.
 */
static void test_exp_known_values(void **state)
{
	static const uint64_t vals[5] = { 0, 1, 1000, 1500, 1000000 };
	static const uint64_t twice[5] = { 2, 2, 2, 2, 2 }, once[5] = { 1, 1, 1, 1, 1 };
	const struct kagg_snapshot *st;
	struct kagg_snapshot *snap;
	const struct kagg_snapshot *both[2];
	struct kagg_session *s;
	int i, j;

	TU_SKIP_UNLESS_ROOT();
	s = sdk_exp_session(KAGG_BUCKETS_EXP);
	snap = after_getppid(s, 10);
	st = kagg_snapshot__stream(snap);
	assert_non_null(st);
	both[0] = snap;
	both[1] = st;
	for (j = 0; j < 2; j++) {
		/* sorted by aggregation (declaration order), then label */
		assert_int_equal(kagg_snapshot__hist_cnt(both[j]), 4);
		assert_string_equal(kagg_snapshot__hist(both[j], 0)->agg, "sizes");
		assert_exp_counts(kagg_snapshot__hist(both[j], 0), vals, twice, 5);
		for (i = 1; i < 3; i++) {
			assert_string_equal(kagg_snapshot__hist(both[j], i)->agg, "by_parity");
			assert_exp_counts(kagg_snapshot__hist(both[j], i), vals, once, 5);
		}
		assert_known_extremes(both[j]);
	}
	assert_true(exp_slot_of(kagg_snapshot__hist(snap, 0), 1000) !=
		    exp_slot_of(kagg_snapshot__hist(snap, 0), 1500));
	assert_pcts_named(snap);
	printf("  10 values in exp:3 buckets, kernel and stream: 0 -> slot %d, 1 -> %d, 1000 -> "
	       "%d, "
	       "1500 -> %d, 1e6 -> %d\n",
	       exp_slot_of(kagg_snapshot__hist(snap, 0), 0),
	       exp_slot_of(kagg_snapshot__hist(snap, 0), 1),
	       exp_slot_of(kagg_snapshot__hist(snap, 0), 1000),
	       exp_slot_of(kagg_snapshot__hist(snap, 0), 1500),
	       exp_slot_of(kagg_snapshot__hist(snap, 0), 1e6));
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

/* One of the threads of test_shared_key_exact: on its CPU, at the barrier, n getppid(). */
struct shared_caller {
	pthread_barrier_t *go;
	int cpu, n;
	pid_t tid;
};

static void *shared_call(void *arg)
{
	struct shared_caller *c = arg;
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	c->tid = (pid_t)syscall(SYS_gettid);
	/* not pinned (a CPU not allowed here): the threads still run at once where they can */
	sched_setaffinity(0, sizeof(set), &set);
	pthread_barrier_wait(c->go);
	for (i = 0; i < c->n; i++)
		syscall(SYS_getppid);
	return NULL;
}

/*
 * The type of the newest map named name that this process holds open (-1: none); *max its
 * entries.  The newest: a test that failed before left its sessions (and a tool's filter
 * map "tids") open.
 */
static int held_map(const char *name, __u32 *max)
{
	__u32 held[TU_CENSUS_MAX], newest = 0;
	int n = tu_pid_held(getpid(), "map_id:", held, TU_CENSUS_MAX), i, type = -1;

	for (i = 0; i < n; i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(held[i]);

		if (fd < 0)
			continue;
		if (!bpf_map_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name) &&
		    held[i] > newest) {
			newest = held[i];
			type = (int)info.type;
			*max = info.max_entries;
		}
		close(fd);
	}
	if (type >= 0)
		printf("  map %s: id %u, type %d, %u entries\n", name, newest, type, *max);
	return type;
}

static int held_map_type(const char *name)
{
	__u32 max;

	return held_map(name, &max);
}

/*
 * sdk_shared: two threads of this process, one per CPU, call getppid() at the same time,
 * each recording its thread id under the one key of the process, in log2 and in exp:3
 * buckets.  A keyed aggregation is one hash every CPU adds to (its memory by keys, not
 * CPUs): the counts, sums and extremes are exact all the same, no update lost to the other
 * CPU.
 */
static void test_shared_key_exact(void **state)
{
	enum kagg_buckets b[2] = { KAGG_BUCKETS_LOG2, KAGG_BUCKETS_EXP };
	const int n = 100000;
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN), j, i;

	TU_SKIP_UNLESS_ROOT();
	for (j = 0; j < 2; j++) {
		struct shared_caller c[2];
		pthread_barrier_t go;
		pthread_t th[2];
		char set[64];
		const char *sets[] = { set, "tids.max=3" };
		size_t sz;
		const void *bytes = sdk_shared_bpf__elf_bytes(&sz);
		__u32 max = 0;
		KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = 2, .obj_buf = bytes,
			  .obj_size = sz, .buckets = b[j], .exp_scale = 3);
		const struct kagg_hist *h, *cnt;
		struct kagg_snapshot *snap;
		struct kagg_session *s;
		double sum;

		snprintf(set, sizeof(set), "target_tgid=%d", getpid());
		s = kagg_prog__open("sdk_shared", &po);
		assert_non_null(s);
		tu_attach(s);
		/* its key limit set at load: 3 keys, 6 entries for the two generations */
		assert_int_equal(held_map("tids", &max), BPF_MAP_TYPE_HASH);
		assert_int_equal(max, 6);
		assert_int_equal(held_map_type("tid_sum"), BPF_MAP_TYPE_HASH);
		if (j)
			assert_int_equal(held_map_type("tids__x"), BPF_MAP_TYPE_HASH);
		assert_int_equal(pthread_barrier_init(&go, NULL, 2), 0);
		for (i = 0; i < 2; i++) {
			c[i] = (struct shared_caller){ .go = &go,
						       .cpu = i % (cpus > 0 ? cpus : 1),
						       .n = n };
			assert_int_equal(pthread_create(&th[i], NULL, shared_call, &c[i]), 0);
		}
		for (i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&go);
		snap = tu_snapshot(s, KAGG_SNAP_RESET);
		assert_int_equal(kagg_snapshot__hist_cnt(snap), 2);
		h = kagg_snapshot__hist(snap, 0);
		cnt = kagg_snapshot__hist(snap, 1);
		assert_string_equal(h->agg, "tids");
		assert_string_equal(cnt->agg, "tid_sum");
		sum = (double)n * c[0].tid + (double)n * c[1].tid;
		printf("  %s: threads %d and %d on CPUs %d and %d, %d calls each: histogram "
		       "%" PRIu64 " values, sum %.0f, min %.0f, max %.0f; counter %" PRIu64
		       ", sum %.0f; expected %d, sum %.0f\n",
		       j ? "exp:3" : "log2", (int)c[0].tid, (int)c[1].tid, c[0].cpu, c[1].cpu, n,
		       h->total, h->sum, h->min, h->max, cnt->total, cnt->sum, 2 * n, sum);
		assert_int_equal(h->has_exp, j == 1);
		assert_int_equal(h->total, 2 * n);
		assert_int_equal(cnt->total, 2 * n);
		assert_true(h->has_sum && h->sum == sum);
		assert_true(cnt->sum == sum);
		assert_true(h->has_minmax);
		assert_true(h->min == (c[0].tid < c[1].tid ? c[0].tid : c[1].tid));
		assert_true(h->max == (c[0].tid < c[1].tid ? c[1].tid : c[0].tid));
		assert_int_equal(kagg_snapshot__meta(snap)->drops_total, 0);
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
	}
}

static void print_warnings(void *ctx, enum kagg_log_level level, const char *msg)
{
	if (level == KAGG_LOG_WARN)
		printf("  %s\n", msg);
}

/* sdk_bounds on this process, --mode both, with extra sets (n of them); NULL when refused. */
static struct kagg_session *sdk_bounds_session(const char *const *extra, size_t n)
{
	char set[64];
	const char *sets[4] = { set };
	size_t sz, i;
	const void *bytes = sdk_bounds_bpf__elf_bytes(&sz);
	KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = 1 + n, .obj_buf = bytes,
		  .obj_size = sz, .mode = KAGG_MODE_BOTH, .log = print_warnings);

	assert_true(n < 4);
	for (i = 0; i < n; i++)
		sets[1 + i] = extra[i];
	snprintf(set, sizeof(set), "target_tgid=%d", getpid());
	return kagg_prog__open("sdk_bounds", &po);
}

/*
 * sdk_bounds, 8 getppid(): -100, -90, -60 and -50 recorded in the linear histogram, 2
 * counted "negative" (left out by design: no loss) and 2 "unreadable" (lost); with the
 * default bounds (-100, step 10) and with --set lin.min=-200 --set lin.step=50, on both
 * paths; bounds that cannot be are refused.
 */
static void test_linear_bounds_and_drops(void **state)
{
	static const char *const moved[] = { "lin.min=-200", "lin.step=50" };
	static const char *const bad[][1] = {
		{ "lin.step=0" },  { "lin.step=-5" },	 { "lin.max=3" },   { "nope.min=1" },
		{ "lin.min=abc" }, { "negative.min=0" }, { "lin.bound=1" }, { "negative.max=0" },
	};
	static const char *const off[] = { "lin.max=0" };
	/* the slots of -100, -90, -60, -50: default bounds, then moved */
	static const uint64_t want[2][6] = { { 1, 1, 0, 0, 1, 1 }, { 0, 0, 3, 1, 0, 0 } };
	size_t i, k;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < 2; i++) {
		struct kagg_session *s = sdk_bounds_session(moved, i ? 2 : 0);
		const struct kagg_snapshot *both[2];
		struct kagg_snapshot *snap;
		const struct kagg_meta *m;

		assert_non_null(s);
		tu_attach(s);
		snap = after_getppid(s, 8);
		both[0] = snap;
		both[1] = kagg_snapshot__stream(snap);
		assert_non_null(both[1]);
		for (k = 0; k < 2; k++) {
			const struct kagg_hist *h;

			assert_int_equal(kagg_snapshot__hist_cnt(both[k]), 1);
			h = kagg_snapshot__hist(both[k], 0);
			printf("  %s, %s: lin_min %lld, lin_step %llu, slots %llu %llu %llu %llu "
			       "%llu %llu\n",
			       i ? "moved" : "default", k ? "stream" : "kernel",
			       (long long)h->lin_min, (unsigned long long)h->lin_step,
			       (unsigned long long)h->slots[0], (unsigned long long)h->slots[1],
			       (unsigned long long)h->slots[2], (unsigned long long)h->slots[3],
			       (unsigned long long)h->slots[4], (unsigned long long)h->slots[5]);
			assert_int_equal(h->lin_min, i ? -200 : -100);
			/* signed values, a signed sum */
			assert_true(h->has_sum && h->sum == -300);
			assert_int_equal(h->lin_step, i ? 50 : 10);
			assert_int_equal(h->total, 4);
			assert_memory_equal(h->slots, want[i], sizeof(want[i]));
		}
		m = kagg_snapshot__meta(snap);
		assert_int_equal(tu_drop_count(snap, "negative"), 2);
		assert_int_equal(tu_drop_count(snap, "unreadable"), 2);
		assert_int_equal(m->drops_total, 2);
		/* every call seen: recorded, or counted as one of the program's drops */
		assert_int_equal(m->events_seen, 8);
		assert_int_equal(m->events_recorded, 4);
		for (k = 0; k < m->nr_drops; k++)
			if (!strcmp(m->drops[k]->cause, "unreadable"))
				assert_string_equal(m->drops[k]->what,
						    "a value that could not be read");
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(sdk_bounds_session(bad[i], 1));
		assert_int_equal(errno, EINVAL);
	}
	/* lin.max=0: the histogram is off (not shown); the program's drops still count */
	{
		struct kagg_session *s = sdk_bounds_session(off, 1);
		struct kagg_snapshot *snap;

		assert_non_null(s);
		tu_attach(s);
		snap = after_getppid(s, 8);
		assert_int_equal(kagg_snapshot__hist_cnt(snap), 0);
		assert_int_equal(tu_drop_count(snap, "unreadable"), 2);
		assert_int_equal(tu_drop_count(snap, "lin_keys_full"), ~0ULL);
		kagg_snapshot__free(snap);
		kagg_session__destroy(s);
	}
}

/* sdk_anytp on this process's events of tracepoint tp (NULL: none given); NULL when refused. */
static struct kagg_session *sdk_anytp_session(const char *tp)
{
	char set[64];
	const char *sets[] = { set };
	size_t sz;
	const void *bytes = sdk_anytp_bpf__elf_bytes(&sz);
	KAGG_OPTS(kagg_prog_opts, po, .sets = sets, .nr_sets = 1, .obj_buf = bytes, .obj_size = sz,
		  .tracepoint = tp, .log = print_warnings);

	snprintf(set, sizeof(set), "target_tgid=%d", getpid());
	return kagg_prog__open("sdk_anytp", &po);
}

/*
 * sdk_anytp, SEC("tracepoint") naming no event, on the tracepoint the loader is given:
 * 5 getppid() and 3 getpgid() counted on each's enter event, each session only its own;
 * no tracepoint, a malformed one and one the kernel lacks are refused.
 */
static void test_tracepoint_given_at_load(void **state)
{
	static const char *const bad[] = { NULL, "sys_enter_getppid", "syscalls:", ":x",
					   "nosuch:event" };
	struct kagg_session *s[2];
	struct kagg_snapshot *snap;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	s[0] = sdk_anytp_session("syscalls:sys_enter_getppid");
	s[1] = sdk_anytp_session("syscalls/sys_enter_getpgid");
	for (i = 0; i < 2; i++) {
		assert_non_null(s[i]);
		tu_attach(s[i]);
	}
	for (i = 0; i < 5; i++)
		syscall(SYS_getppid);
	for (i = 0; i < 3; i++)
		syscall(SYS_getpgid, 0);
	for (i = 0; i < 2; i++) {
		const struct kagg_meta *m;

		snap = tu_snapshot(s[i], KAGG_SNAP_RESET);
		m = kagg_snapshot__meta(snap);
		printf("  %s: %" PRIu64 " counted\n", m->event,
		       kagg_snapshot__hist(snap, 0)->total);
		assert_string_equal(m->event, i ? "syscalls:sys_enter_getpgid"
						: "syscalls:sys_enter_getppid");
		assert_int_equal(kagg_snapshot__hist(snap, 0)->total, i ? 3 : 5);
		kagg_snapshot__free(snap);
		kagg_session__destroy(s[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(sdk_anytp_session(bad[i]));
		assert_int_equal(errno, EINVAL);
	}
}

/*
 * A child named comm: once a byte comes on start[0], calls getppid() 7 times, says so on
 * done[1], and exits when go[1] is closed.
 */
static pid_t named_caller(const char *comm, int start[2], int done[2], int go[2])
{
	pid_t pid;
	char b;
	int i;

	assert_int_equal(pipe(start), 0);
	assert_int_equal(pipe(done), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid) {
		close(start[0]);
		close(done[1]);
		close(go[0]);
		return pid;
	}
	close(start[1]);
	close(done[0]);
	close(go[1]);
	prctl(PR_SET_NAME, comm);
	if (read(start[0], &b, 1) != 1)
		_exit(1);
	for (i = 0; i < 7; i++)
		syscall(SYS_getppid);
	if (write(done[1], "x", 1) != 1)
		_exit(1);
	while (read(go[0], &b, 1) > 0)
		;
	_exit(0);
}

/*
 * sdk_keys on a child that exits before the snapshot: its key's pid_comm is the command
 * it had when the session was polled (kernel path) or its record came (stream path).
 */
static void comm_after_exit_case(enum kagg_mode mode)
{
	char want[96], b;
	struct kagg_session *s;
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	int start[2], done[2], go[2], st;
	pid_t pid;

	pid = named_caller("sdk_gone_kid", start, done, go);
	s = open_sdk_keys(pid, NULL, mode);
	assert_int_equal(write(start[1], "x", 1), 1);
	assert_int_equal(read(done[0], &b, 1), 1);
	/* the calls are made, the child lives: one poll sees its key (or its records) */
	assert_true(kagg_session__poll(s, 0) >= 0);
	close(go[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snap = tu_snapshot(s, KAGG_SNAP_RESET);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	h = kagg_snapshot__hist(snap, 0);
	assert_int_equal(h->total, 7);
	printf("  %s: %s\n", mode == KAGG_MODE_STREAM ? "stream" : "agg", h->key.label);
	snprintf(want, sizeof(want), "pid=%d pid_comm=sdk_gone_kid ", pid);
	assert_non_null(strstr(h->key.label, want));
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
	close(start[1]);
	close(done[0]);
}

static void test_comm_after_exit(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	comm_after_exit_case(KAGG_MODE_AGG);
	comm_after_exit_case(KAGG_MODE_STREAM);
}

/* ulat on funclat_target's function fn, called by its command cmd n times: all in the slot of ms.
 */
static void ulat_case(const char *fn, const char *cmd, int n, double ms)
{
	char path[600], helper[512], count[16];
	char *argv[] = { "funclat_target", (char *)cmd, count, NULL };
	KAGG_OPTS(kagg_prog_opts, po, .func = fn);
	struct kagg_session *s;
	struct kagg_snapshot *snap;
	const struct kagg_hist *h;
	uint64_t below = 0;
	pid_t pid;
	int slot, k;

	snprintf(count, sizeof(count), "%d", n);
	po.binary = tu_helper("funclat_target", helper, sizeof(helper));
	s = kagg_prog__open(built("examples/bpf/ulat.bpf.o", path, sizeof(path)), &po);
	assert_non_null(s);
	snap = tu_snapshot_around_helper(s, argv, true, &pid);
	assert_non_null(snap);
	assert_int_equal(kagg_snapshot__hist_cnt(snap), 1);
	h = kagg_snapshot__hist(snap, 0);
	slot = tu_slot_of(h, ms * 1000);
	for (k = 0; k < (int)h->nr_slots; k++)
		below += k < slot ? h->slots[k] : 0;
	printf("  %s: %" PRIu64 " calls, %" PRIu64 " in the slot of %g ms, %" PRIu64 " below, "
	       "avg %.0f us\n",
	       fn, h->total, slot >= 0 ? h->slots[slot] : 0, ms, below, h->sum / (double)h->total);
	/* a call lasts its sleep or longer (never less): nothing below its slot */
	assert_int_equal(h->total, n);
	assert_true(slot >= 0);
	assert_int_equal(below, 0);
	assert_true(h->sum >= n * ms * 1000);
	assert_true(h->slots[slot] > 0);
	assert_string_equal(kagg_snapshot__meta(snap)->attach, "uprobe+uretprobe");
	kagg_snapshot__free(snap);
	kagg_session__destroy(s);
}

static void test_uprobe_sleeps(void **state)
{
	TU_SKIP_UNLESS_ROOT();
	ulat_case("target_sleep_20ms", "sleep20", 4, 20);
	ulat_case("target_sleep_5ms", "sleep5", 6, 5);
}

static void test_bad_objects(void **state)
{
	char keys[600], noagg[600], shape[600], verif[600], noatt[600];
	char text[] = "/tmp/kagg-test-notelf-XXXXXX";
	struct tu_error_case c[] = {
		{ 2, "is not an ELF file", { "run", text, NULL } },
		{ 2, "cannot read", { "run", "/nonexistent.bpf.o", NULL } },
		{ 2, "declares no aggregation", { "run", noagg, NULL } },
		{ 2, "wrong shape", { "run", shape, NULL } },
		{ 2, "R0 invalid mem access", { "run", verif, NULL } },
		{ 2, "names no attachable point", { "run", noatt, NULL } },
		{ 2, "unknown tunable 'nosuch'", { "run", "--set", "nosuch=1", keys, NULL } },
		{ 2, "'ro_limit' is not a tunable", { "run", "--set", "ro_limit=1", keys, NULL } },
		{ 2,
		  "invalid value '-1' for target_tgid",
		  { "run", "--set", "target_tgid=-1", keys, NULL } },
		{ 2,
		  "invalid value '4294967296'",
		  { "run", "--set", "target_tgid=4294967296", keys, NULL } },
		{ 2, "too long", { "run", "--set", "label=waytoolong", keys, NULL } },
		{ 2, "which program", { "run", NULL } },
	};
	struct tu_exit_case ex[] = {
		{ "verifier refusal", 0, 2, { "run", verif, NULL } },
		{ "no attach point", 0, 2, { "run", noatt, NULL } },
		{ "bad tunable", 0, 2, { "run", "--set", "label=waytoolong", keys, NULL } },
	};

	int fd;

	TU_SKIP_UNLESS_ROOT();
	fd = mkstemp(text);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an object\n", 14), 14);
	close(fd);
	built("bpf/sdk_keys.bpf.o", keys, sizeof(keys));
	built("bpf/sdk_noagg.bpf.o", noagg, sizeof(noagg));
	built("bpf/sdk_badshape.bpf.o", shape, sizeof(shape));
	built("bpf/sdk_verifier.bpf.o", verif, sizeof(verif));
	built("bpf/sdk_noattach.bpf.o", noatt, sizeof(noatt));
	tu_expect_errors(c, sizeof(c) / sizeof(c[0]));
	tu_expect_clean_exits(ex, sizeof(ex) / sizeof(ex[0]), "sdk_", "sdk_|kagg_", "");
	unlink(text);
}

TU_MAIN(cmocka_unit_test(test_offcpu_same), cmocka_unit_test(test_offcpu_same_without_task_storage),
	cmocka_unit_test(test_key_names), cmocka_unit_test(test_offcpu_both),
	cmocka_unit_test(test_stream_keys), cmocka_unit_test(test_record_prog),
	cmocka_unit_test(test_exp_known_values), cmocka_unit_test(test_log2_extremes),
	cmocka_unit_test(test_shared_key_exact), cmocka_unit_test(test_linear_bounds_and_drops),
	cmocka_unit_test(test_tracepoint_given_at_load), cmocka_unit_test(test_comm_after_exit),
	cmocka_unit_test(test_uprobe_sleeps), cmocka_unit_test(test_bad_objects));
