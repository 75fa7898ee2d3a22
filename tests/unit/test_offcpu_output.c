// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests: log2 bucketing (the very code the BPF program runs),
 * bucket bounds, BCC-style text and JSON output against literal expected
 * text, opts validation, and the CLI's option parsing (usage errors exit 2
 * with one line, before anything is loaded).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/types.h>

#include <kagg/kagg.h>
#include "snapshot/snapshot_internal.h"
#include "testutil.h"
/* The BPF programs' bucketing helpers are plain C: test the same code natively. */
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#include "shared/buckets.h"
#include "unit_util.h"

/* The division-free bucketing the BPF program uses equals log2 of the quotient. */
static void test_log2_div_equals_log2_of_quotient(void **state)
{
	static const uint64_t units[] = { 1, 1000, 1000000, 3, 7, 1024, 999999937 };
	uint64_t v, q;
	size_t u;

	for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		uint64_t unit = units[u];
		uint32_t ul = 63 - __builtin_clzll(unit);

		for (v = 0; v < 5000; v++) {
			q = v / unit;
			assert_int_equal(kagg_log2_div(v, unit, ul), kagg_log2_64(q));
		}
		for (v = 1; v < (1ULL << 62); v = v * 3 + 17) {
			/* around every power of two times the unit */
			for (int d = -2; d <= 2; d++) {
				uint64_t x = v + d;

				q = x / unit;
				assert_int_equal(kagg_log2_div(x, unit, ul), kagg_log2_64(q));
			}
		}
		for (int k = 0; k < 62 && (unit << k) >> k == unit; k++) {
			uint64_t edge = unit << k;

			assert_int_equal(kagg_log2_div(edge, unit, ul), kagg_log2_64(edge / unit));
			assert_int_equal(kagg_log2_div(edge - 1, unit, ul),
					 kagg_log2_64((edge - 1) / unit));
		}
	}
}

static void test_log2_bucketing_matches_bounds(void **state)
{
	uint64_t low, high, v;
	unsigned int k;

	assert_int_equal(kagg_log2_64(0), 0);
	assert_int_equal(kagg_log2_64(1), 0);
	assert_int_equal(kagg_log2_64(2), 1);
	assert_int_equal(kagg_log2_64(3), 1);
	assert_int_equal(kagg_log2_64(4), 2);
	assert_int_equal(kagg_log2_64(20050), 14); /* a 20 ms sleep in usecs */
	assert_int_equal(kagg_log2_64(UINT32_MAX), 31);
	assert_int_equal(kagg_log2_64(1ULL << 32), 32);
	assert_int_equal(kagg_log2_64(UINT64_MAX), 63);
	/* Every bound of every slot buckets into that slot, and one past it does not. */
	for (k = 0; k < 64; k++) {
		kagg_log2_bounds(k, &low, &high);
		assert_int_equal(kagg_log2_64(low), k);
		assert_int_equal(kagg_log2_64(high), k);
		if (k < 63)
			assert_int_equal(kagg_log2_64(high + 1), k + 1);
	}
	kagg_log2_bounds(0, &low, &high);
	assert_int_equal(low, 0);
	assert_int_equal(high, 1);
	kagg_log2_bounds(14, &low, &high);
	assert_int_equal(low, 16384);
	assert_int_equal(high, 32767);
	kagg_log2_bounds(63, &low, &high);
	assert_true(high == UINT64_MAX);
	/* Random values: low <= v <= high of its slot. */
	for (v = 7; v < (1ULL << 62); v = v * 3 + 1) {
		kagg_log2_bounds(kagg_log2_64(v), &low, &high);
		assert_true(low <= v && v <= high);
	}
}

/* A snapshot built by hand, as a session would. */
static struct kagg_snapshot *make_snap(enum kagg_key_mode mode)
{
	struct kagg_snapshot *snap = snap_new();
	struct kagg_hist *h;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, 1, 64), 0);
	h = &snap->hists[0];
	h->unit = KAGG_UNIT_USECS;
	h->key.mode = mode;
	h->key.pid = 42;
	h->key.tid = 43;
	strcpy(h->key.comm, "sleepy");
	((uint64_t *)h->slots)[1] = 5;
	((uint64_t *)h->slots)[3] = 20;
	((uint64_t *)h->slots)[4] = 10;
	h->total = 35;
	h->has_sum = true;
	h->sum = 413; /* any sum within the buckets: mean 413 / 35 = 11.8 */
	snap->meta.tool = "offcpu";
	snap->meta.event = "sched:sched_switch";
	snap->meta.attach = "tp_btf";
	snap->meta.kernel = "6.18.0-test";
	snap->meta.kernel_build = "#1 SMP";
	snap->meta.clock = "CLOCK_MONOTONIC (bpf_ktime_get_ns)";
	snap->meta.filters = "pid=42";
	snap->meta.unit = "usecs";
	snap->meta.nr_cpus = 2;
	snap->meta.cpus_observed = 2;
	snap->meta.start.tv_sec = 1796212800; /* 2026-12-02T12:00:00Z */
	snap->meta.end.tv_sec = 1796212805;
	snap->meta.end.tv_nsec = 250000000;
	snap->meta.duration_s = 5.25;
	snap->meta.events_seen = 1000;
	snap->meta.events_recorded = 35;
	snap->meta.snapshot_exact = true;
	snap_add_drop(snap, "task_storage", "x", 2, true);
	snap_add_drop(snap, "kstack", "y", 7, false);
	return snap;
}

/*
 * The records a snapshot hands out carry their size, and are reached through
 * pointers; a histogram given back to the printer is checked like an input.
 */
static void test_records_carry_their_size(void **state)
{
	struct kagg_snapshot *snap = make_snap(KAGG_KEY_PID);
	const struct kagg_meta *m = kagg_snapshot__meta(snap);
	const struct kagg_hist *h = kagg_snapshot__hist(snap, 0);
	struct {
		struct kagg_hist h;
		long extra;
	} big = { .h = *h, .extra = 1 };
	FILE *f = fopen("/dev/null", "w");

	assert_non_null(f);
	assert_int_equal(m->sz, sizeof(*m));
	assert_true(KAGG_HAS_FIELD(m, kagg_meta, stream_ns_per_event));
	assert_int_equal(h->sz, sizeof(*h));
	assert_int_equal(m->nr_drops, 2);
	assert_int_equal(m->drops[1]->sz, sizeof(struct kagg_drop));
	assert_string_equal(m->drops[1]->cause, "kstack");
	assert_int_equal(m->drops[1]->count, 7);
	assert_int_equal(kagg_hist__print_text(h, f), 0);
	big.h.sz = sizeof(big);
	assert_int_equal(kagg_hist__print_text(&big.h, f), -EINVAL);
	big.extra = 0;
	assert_int_equal(kagg_hist__print_text(&big.h, f), 0);
	big.h.sz = offsetof(struct kagg_hist, lin_step);
	assert_int_equal(kagg_hist__print_text(&big.h, f), -EINVAL);
	fclose(f);
	kagg_snapshot__free(snap);
}

static char *print_to_string(struct kagg_snapshot *snap, enum kagg_format fmt, bool no_meta)
{
	KAGG_OPTS(kagg_print_opts, po, .format = fmt, .no_meta = no_meta);
	struct uu_mem m;

	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &po), 0);
	return uu_mem_text(&m);
}

/*
 * make_snap(MODE) printed as FMT (without the meta if NO_META): the whole output is WANT,
 * or, with PREFIX, it begins with WANT.
 */
static void assert_prints(enum kagg_key_mode mode, enum kagg_format fmt, bool no_meta, bool prefix,
			  const char *want)
{
	struct kagg_snapshot *snap = make_snap(mode);
	char *out = print_to_string(snap, fmt, no_meta);

	if (prefix)
		assert_memory_equal(out, want, strlen(want));
	else
		assert_string_equal(out, want);
	free(out);
	kagg_snapshot__free(snap);
}

/* snap printed with po has each string of has and none of lacks (TU_STRS lists). */
static void assert_printed(struct kagg_snapshot *snap, const struct kagg_print_opts *po,
			   const char *const *has, const char *const *lacks)
{
	struct uu_mem m;
	char *out;

	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), po), 0);
	out = uu_mem_text(&m);
	tu_assert_has(out, has);
	tu_assert_lacks(out, lacks);
	free(out);
}

/* SNAP printed as FMT (without the meta if NO_META) has each of the strings after NO_META. */
#define ASSERT_PRINTED_HAS(snap, fmt, no_meta, ...) \
	assert_printed_has(snap, fmt, no_meta, TU_STRS(__VA_ARGS__))

static void assert_printed_has(struct kagg_snapshot *snap, enum kagg_format fmt, bool no_meta,
			       const char *const *needles)
{
	KAGG_OPTS(kagg_print_opts, po, .format = fmt, .no_meta = no_meta);

	assert_printed(snap, &po, needles, TU_STRS(NULL));
}

/* make_snap(KAGG_KEY_PID) with key.comm COMM, printed as JSON: the output has WANT. */
static void assert_json_comm(const char *comm, const char *want)
{
	struct kagg_snapshot *snap = make_snap(KAGG_KEY_PID);

	strcpy(snap->hists[0].key.comm, comm);
	ASSERT_PRINTED_HAS(snap, KAGG_FORMAT_JSON, false, want);
	kagg_snapshot__free(snap);
}

static void test_text_histogram_bcc_layout(void **state)
{
	const char *expect =
		"\n"
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 0        |                                        |\n"
		"         2 -> 3          : 5        |**********                              |\n"
		"         4 -> 7          : 0        |                                        |\n"
		"         8 -> 15         : 20       |****************************************|\n"
		"        16 -> 31         : 10       |********************                    |\n"
		"\n"
		"avg = 11.8 usecs, total: 413 usecs, count: 35\n"
		"\n"
		/* ranks 18, 32, 35, 35, 35 of 35: 8 + 7 * 13/20, 16 + 15 * 7/10, then the top */
		"p50   = 12.6 usecs [8, 15]\n"
		"p90   = 26.5 usecs [16, 31]\n"
		"p99   = 31.0 usecs [16, 31]\n"
		"p99.9 = 31.0 usecs [16, 31]\n"
		"max   = 31.0 usecs [16, 31]\n";

	assert_prints(KAGG_KEY_NONE, KAGG_FORMAT_TEXT, true, false, expect);
}

/*
 * --mode both, per process: the stream's histogram of pid 42 keeps its 35 values (5 of 3
 * usecs, 20 from 8 by 0.35, 10 from 16 by 1), pid 77's one value; each kernel percentile
 * line shows the exact value of the same key beside it, a key only the stream has its own.
 */
static struct kagg_snapshot *make_both_snap(double *vals)
{
	struct kagg_snapshot *snap = make_snap(KAGG_KEY_PID);
	struct kagg_snapshot *st = snap_new();
	static double lone[] = { 1000.25 };
	int i;

	for (i = 0; i < 35; i++)
		vals[i] = i < 5 ? 3.0 : i < 25 ? 8.0 + (i - 5) * 0.35 : 16.0 + (i - 25);
	assert_non_null(st);
	assert_int_equal(snap_alloc_hists(st, 2, 64), 0);
	for (i = 0; i < 2; i++) {
		struct kagg_hist *h = &st->hists[i];

		h->unit = KAGG_UNIT_USECS;
		h->key.mode = KAGG_KEY_PID;
		h->key.pid = i ? 77 : 42;
		h->key.tid = i ? 0 : 43; /* as make_snap() keys the kernel's */
		strcpy(h->key.comm, i ? "other" : "sleepy");
		h->exact = KAGG_EXACT_KEPT;
	}
	memcpy((uint64_t *)st->hists[0].slots, snap->hists[0].slots, 64 * sizeof(uint64_t));
	st->hists[0].total = 35;
	st->hists[0].nr_values = 35;
	st->hists[0].values = vals;
	st->hists[0].has_sum = true;
	st->hists[0].sum = 446.5; /* of vals: mean 12.757 */
	((uint64_t *)st->hists[1].slots)[9] = 1;
	st->hists[1].total = 1;
	st->hists[1].nr_values = 1;
	st->hists[1].values = lone;
	snap->stream = st;
	snap->meta.mode = "both";
	return snap;
}

static void test_both_exact_beside_kernel(void **state)
{
	double vals[35];
	struct kagg_snapshot *snap = make_both_snap(vals);
	const char *pid42 = "\n"
			    "pid = 42 sleepy\n"
			    "     usecs               : agg        stream     diff\n"
			    "         0 -> 1          : 0          0          0\n"
			    "         2 -> 3          : 5          5          0\n"
			    "         4 -> 7          : 0          0          0\n"
			    "         8 -> 15         : 20         20         0\n"
			    "        16 -> 31         : 10         10         0\n"
			    "     total               : 35         35         0\n"
			    "     avg                 : 11.8       12.8       1.0\n"
			    "\n"
			    "p50   = 12.6 usecs [8, 15]  exact 12.200\n"
			    "p90   = 26.5 usecs [16, 31]  exact 22.000\n"
			    "p99   = 31.0 usecs [16, 31]  exact 25.000\n"
			    "p99.9 = 31.0 usecs [16, 31]  exact 25.000\n"
			    "max   = 31.0 usecs [16, 31]  exact 25.000\n"
			    "\n"
			    "pid = 77 other\n";
	const char *pcts77 = "p50   = 1023.0 usecs [512, 1023]  exact 1000.250\n";

	ASSERT_PRINTED_HAS(snap, KAGG_FORMAT_TEXT, true, pid42, pcts77);
	/* the kernel's pid 42 takes the exact values of the stream's pid 42, not 77's */
	ASSERT_PRINTED_HAS(snap, KAGG_FORMAT_JSON, true,
			   "\"p50\": {\"value\":12.550,\"low\":8,\"high\":15,"
			   "\"exact\":12.200},\n",
			   "\"max\": {\"value\":1023.000,\"low\":512,\"high\":1023,"
			   "\"exact\":1000.250}\n");
	kagg_snapshot__free(snap);
}

/*
 * --mode both of a program's aggregation "lat" keyed by disk: the kernel has disk=sda (3
 * values of 4 usecs) and disk=sdb (5 of 8), the stream disk=sdb alone.  Their keys differ in
 * the label only: each pairs with its own key, sda with nothing (the stream's 0 and no exact
 * percentiles), sdb with sdb's values.
 */
static void test_both_pairs_program_keys(void **state)
{
	static double sdb_vals[] = { 8.5, 9.0, 9.5, 10.0, 14.0 };
	struct kagg_snapshot *snap = snap_new(), *st = snap_new();
	static const char *const labels[] = { "disk=sda", "disk=sdb" };
	int i;

	assert_non_null(snap);
	assert_non_null(st);
	assert_int_equal(snap_alloc_hists(snap, 2, 64), 0);
	assert_int_equal(snap_alloc_hists(st, 1, 64), 0);
	for (i = 0; i < 3; i++) {
		struct kagg_hist *h = i < 2 ? &snap->hists[i] : &st->hists[0];

		h->unit = KAGG_UNIT_USECS;
		h->agg = snap_strdup(i < 2 ? snap : st, "lat");
		h->key.label = snap_strdup(i < 2 ? snap : st, labels[i ? 1 : 0]);
		h->total = i ? 5 : 3;
		((uint64_t *)h->slots)[i ? 3 : 2] = h->total;
	}
	st->hists[0].exact = KAGG_EXACT_KEPT;
	st->hists[0].nr_values = 5;
	st->hists[0].values = sdb_vals;
	snap->stream = st;
	snap->meta.mode = "both";
	ASSERT_PRINTED_HAS(snap, KAGG_FORMAT_TEXT, true,
			   "\nlat: disk=sdb\n"
			   "     usecs               : agg        stream     diff\n"
			   "         0 -> 1          : 0          0          0\n"
			   "         2 -> 3          : 0          0          0\n"
			   "         4 -> 7          : 0          0          0\n"
			   "         8 -> 15         : 5          5          0\n"
			   "     total               : 5          5          0\n"
			   "\n"
			   "p50   = ",
			   " usecs [8, 15]  exact 9.500\n",
			   "\nlat: disk=sda\n"
			   "     usecs               : agg        stream     diff\n"
			   "         0 -> 1          : 0          0          0\n"
			   "         2 -> 3          : 0          0          0\n"
			   "         4 -> 7          : 3          0          -3\n"
			   "     total               : 3          0          -3\n"
			   "\n"
			   "p50   = ",
			   " usecs [4, 7]\n"
			   "p90   = ");
	/* in the kernel's part: sdb takes the exact values of the stream's sdb; sda has none */
	{
		KAGG_OPTS(kagg_print_opts, po, .format = KAGG_FORMAT_JSON, .no_meta = true);
		struct uu_mem m;
		char *out, *agg, *st;

		assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &po), 0);
		out = uu_mem_text(&m);
		agg = strstr(out, "\"agg\": {");
		st = agg ? strstr(agg, "\"stream\": {") : NULL;
		assert_non_null(st);
		*st = '\0';
		TU_ASSERT_HAS(agg, "\"low\":8,\"high\":15,\"exact\":9.500}",
			      "\"low\":4,\"high\":7},");
		free(out);
	}
	kagg_snapshot__free(snap);
}

static void test_text_meta_header_and_per_pid(void **state)
{
	const char *expect_head =
		"# kagg offcpu: sched:sched_switch via tp_btf, kernel 6.18.0-test, clock "
		"CLOCK_MONOTONIC (bpf_ktime_get_ns)\n"
		"# 2026-12-02T12:00:00.000Z .. 2026-12-02T12:00:05.250Z (5.250 s), CPUs observed 2 "
		"of 2, filters: pid=42\n"
		"# events: 1000 seen, 35 recorded, 0 filtered; dropped 2: task_storage=2 "
		"kstack=7\n"
		"\n"
		"pid = 42 sleepy\n"
		"     usecs               : count    distribution\n";

	assert_prints(KAGG_KEY_PID, KAGG_FORMAT_TEXT, false, true, expect_head);
}

static void test_json_document(void **state)
{
	const char *expect = "{\n"
			     "  \"meta\": {\n"
			     "    \"tool\": \"offcpu\",\n"
			     "    \"event\": \"sched:sched_switch\",\n"
			     "    \"attach\": \"tp_btf\",\n"
			     "    \"attach_note\": null,\n"
			     "    \"kernel\": {\n"
			     "      \"release\": \"6.18.0-test\",\n"
			     "      \"build\": \"#1 SMP\"\n"
			     "    },\n"
			     "    \"clock\": \"CLOCK_MONOTONIC (bpf_ktime_get_ns)\",\n"
			     "    \"unit\": \"usecs\",\n"
			     "    \"filters\": \"pid=42\",\n"
			     "    \"cpus_possible\": 2,\n"
			     "    \"cpus_observed\": 2,\n"
			     "    \"start\": \"2026-12-02T12:00:00.000Z\",\n"
			     "    \"end\": \"2026-12-02T12:00:05.250Z\",\n"
			     "    \"duration_s\": 5.250000,\n"
			     "    \"events\": {\n"
			     "      \"seen\": 1000,\n"
			     "      \"recorded\": 35,\n"
			     "      \"filtered\": 0,\n"
			     "      \"dropped\": 2\n"
			     "    },\n"
			     "    \"drops\": {\n"
			     "      \"task_storage\": 2,\n"
			     "      \"kstack\": 7\n"
			     "    },\n"
			     "    \"snapshot_exact\": true,\n"
			     "    \"mode\": \"agg\"\n"
			     "  },\n"
			     "  \"histograms\": [\n"
			     "    {\n"
			     "      \"key\": {\n"
			     "        \"pid\": 42,\n"
			     "        \"tid\": 43,\n"
			     "        \"comm\": \"sleepy\"\n"
			     "      },\n"
			     "      \"unit\": \"usecs\",\n"
			     "      \"total\": 35,\n"
			     "      \"sum\": 413.000,\n"
			     "      \"count\": 35,\n"
			     "      \"percentiles\": {\n"
			     "        \"p50\": {\"value\":12.550,\"low\":8,\"high\":15},\n"
			     "        \"p90\": {\"value\":26.500,\"low\":16,\"high\":31},\n"
			     "        \"p99\": {\"value\":31.000,\"low\":16,\"high\":31},\n"
			     "        \"p99.9\": {\"value\":31.000,\"low\":16,\"high\":31},\n"
			     "        \"max\": {\"value\":31.000,\"low\":16,\"high\":31}\n"
			     "      },\n"
			     "      \"buckets\": [\n"
			     "        {\"low\":0,\"high\":1,\"count\":0},\n"
			     "        {\"low\":2,\"high\":3,\"count\":5},\n"
			     "        {\"low\":4,\"high\":7,\"count\":0},\n"
			     "        {\"low\":8,\"high\":15,\"count\":20},\n"
			     "        {\"low\":16,\"high\":31,\"count\":10}\n"
			     "      ]\n"
			     "    }\n"
			     "  ]\n"
			     "}\n";

	assert_prints(KAGG_KEY_TID, KAGG_FORMAT_JSON, false, false, expect);
}

/*
 * Keyed histograms print heaviest first (by the sum of their values), whatever their
 * key order; --top N keeps the N heaviest and says how many were left out, in text and
 * JSON.  Pids 1, 2, 3 weigh 10, 300 and 50.
 */
static void test_keys_heaviest_first_and_top(void **state)
{
	static const double sums[] = { 10, 300, 50 };
	struct kagg_snapshot *snap = snap_new();
	char *out, *p1, *p2, *p3;
	size_t i;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, 3, 64), 0);
	snap->meta.unit = "usecs";
	for (i = 0; i < 3; i++) {
		struct kagg_hist *h = &snap->hists[i];

		h->unit = KAGG_UNIT_USECS;
		h->key.mode = KAGG_KEY_PID;
		h->key.pid = (int)i + 1;
		snprintf(h->key.comm, sizeof(h->key.comm), "task%zu", i + 1);
		((uint64_t *)h->slots)[2] = 3 - i; /* counts 3, 2, 1: not the order of the sums */
		h->total = 3 - i;
		h->has_sum = true;
		h->sum = sums[i];
	}
	out = print_to_string(snap, KAGG_FORMAT_TEXT, true);
	p1 = strstr(out, "pid = 1 task1");
	p2 = strstr(out, "pid = 2 task2");
	p3 = strstr(out, "pid = 3 task3");
	assert_true(p1 && p2 && p3);
	assert_true(p2 < p3 && p3 < p1);
	assert_null(strstr(out, "more keys"));
	free(out);
	{
		KAGG_OPTS(kagg_print_opts, po, .no_meta = true, .top = 2);

		assert_printed(snap, &po,
			       TU_STRS("pid = 2 task2", "pid = 3 task3",
				       "\n(1 more keys, lighter: --top 2 shows the heaviest)\n"),
			       TU_STRS("pid = 1 "));
	}
	{
		KAGG_OPTS(kagg_print_opts, po, .format = KAGG_FORMAT_NDJSON, .top = 1);

		assert_printed(snap, &po, TU_STRS("\"pid\":2,", "\"keys_not_shown\":2"),
			       TU_STRS("\"pid\":1,", "\"pid\":3,"));
	}
	/* Without a top, JSON keeps every key, in key order. */
	out = print_to_string(snap, KAGG_FORMAT_NDJSON, true);
	p1 = strstr(out, "\"pid\":1,");
	p2 = strstr(out, "\"pid\":2,");
	assert_true(p1 && p2 && p1 < p2);
	assert_null(strstr(out, "keys_not_shown"));
	free(out);
	kagg_snapshot__free(snap);
}

static void test_json_escapes_comm(void **state)
{
	assert_json_comm("a\"b\\c\td", "\"comm\": \"a\\\"b\\\\c\\td\"");
}

/* Command names, symbols and meta strings never reach the output raw. */
static void test_text_escapes_control_bytes(void **state)
{
	struct kagg_snapshot *snap = make_snap(KAGG_KEY_PID);
	struct kagg_frame *fr = snap_own(snap, calloc(2, sizeof(*fr)));
	struct kagg_stack *st = calloc(1, sizeof(*st));
	KAGG_OPTS(kagg_print_opts, po, .format = KAGG_FORMAT_TEXT, .folded = true);
	struct uu_mem m;
	char *out, *folded;

	assert_non_null(fr);
	assert_non_null(st);
	strcpy(snap->hists[0].key.comm, "ev\033[2Jil\n");
	snap->meta.filters = "comm=\033]0;x\007";
	const struct kagg_frame **fp = snap_own(snap, calloc(2, sizeof(*fp)));

	assert_non_null(fp);
	fr[0].sz = fr[1].sz = sizeof(*fr);
	fr[0].sym = "k\033sym";
	fr[1].sym = "u\xc2\x9bsym"; /* U+009B, CSI */
	fp[0] = &fr[0];
	fp[1] = &fr[1];
	st->sz = sizeof(*st);
	strcpy(st->comm, "ev\033il");
	st->tid = 43;
	uu_stack_frames(st, &fp[0], 1, &fp[1], 1);
	st->total_ns = 1000;
	st->count = 1;
	snap->stacks = st;
	snap->nr_stacks = 1;
	out = print_to_string(snap, KAGG_FORMAT_TEXT, false);
	printf("%s", out);
	TU_ASSERT_HAS(out, "filters: comm=\\033]0;x\\007\n", "pid = 42 ev\\033[2Jil\\012\n",
		      "\n    k\\033sym\n", "\n    u\\302\\233sym\n",
		      "    -                ev\\033il         (43)\n");
	assert_null(strpbrk(out, "\033\007\x9b"));
	free(out);
	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &po), 0);
	folded = uu_mem_text(&m);
	assert_string_equal(folded, "ev\\033il;u\\302\\233sym;--;k\\033sym 1\n");
	free(folded);
	kagg_snapshot__free(snap);
}

/* JSON: DEL and the C1 controls as \u escapes, bytes that are not UTF-8 read as Latin-1. */
static void test_json_escapes_what_is_not_utf8(void **state)
{
	assert_json_comm("a\x7f"
			 "b\xc2\x9b"
			 "c\xff"
			 "d\xc3\xa9",
			 "\"comm\": \"a\\u007fb\\u009bc\\u00ffd\xc3\xa9\"");
}

static void test_empty_histogram_says_so(void **state)
{
	struct kagg_snapshot *snap = snap_new();
	char *out;

	assert_int_equal(snap_alloc_hists(snap, 1, 64), 0);
	out = print_to_string(snap, KAGG_FORMAT_TEXT, true);
	assert_string_equal(out, "\n     usecs               : count    distribution\n"
				 "     (no events)\n");
	free(out);
	kagg_snapshot__free(snap);
}

static void test_opts_validation(void **state)
{
	struct {
		struct kagg_offcpu_opts o;
		char future[16];
	} big = {};
	struct kagg_print_opts po = { .sz = sizeof(po), .format = 7 };
	struct kagg_snapshot *snap = snap_new();

	/* Unknown trailing bytes that are not zero: refused. */
	big.o.sz = sizeof(big);
	big.future[3] = 1;
	TU_ASSERT_EINVAL(kagg_offcpu__open(&big.o));
	/* sz smaller than the size field itself. */
	big.o.sz = 4;
	TU_ASSERT_EINVAL(kagg_offcpu__open(&big.o));
	assert_null(kagg_offcpu__open(NULL));
	/* Bad values. */
	{
		KAGG_OPTS(kagg_offcpu_opts, o, .states = "Q");
		assert_null(kagg_offcpu__open(&o));
		assert_int_equal(errno, EINVAL);
	}
	{
		KAGG_OPTS(kagg_offcpu_opts, o, .min_ns = 10, .max_ns = 5);
		assert_null(kagg_offcpu__open(&o));
		assert_int_equal(errno, EINVAL);
	}
	{
		int pid = 2147483647;
		KAGG_OPTS(kagg_offcpu_opts, o, .pids = &pid, .nr_pids = 1);
		assert_null(kagg_offcpu__open(&o));
		assert_int_equal(errno, ESRCH);
	}
	assert_int_equal(kagg_snapshot__print(snap, stdout, &po), -EINVAL);
	assert_int_equal(kagg_snapshot__print(NULL, stdout, NULL), -EINVAL);
	/* NULL-safe destroy/free, NULL handles refused. */
	kagg_session__destroy(NULL);
	kagg_snapshot__free(NULL);
	assert_int_equal(kagg_session__attach(NULL), -EINVAL);
	assert_null(kagg_session__snapshot(NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(kagg_snapshot__hist(snap, 0));
	assert_null(kagg_snapshot__meta(NULL));
	kagg_snapshot__free(snap);
}

static char *print_opts_to_string(struct kagg_snapshot *snap, const struct kagg_print_opts *po,
				  int (*printer)(const struct kagg_snapshot *, FILE *,
						 const struct kagg_print_opts *))
{
	struct uu_mem m;

	assert_int_equal(printer(snap, uu_mem_open(&m), po), 0);
	return uu_mem_text(&m);
}

/*
 * libbpf-tools' -T: the local time the snapshot ends (12:00:05 UTC, 14:00:05
 * two hours east), on a line before the text, with or without the meta;
 * "timestamp" in the JSON meta, after "end"; none in folded stacks, and
 * nothing when not asked.
 */
static void test_timestamp(void **state)
{
	struct kagg_snapshot *snap = make_snap(KAGG_KEY_NONE), *counts;
	KAGG_OPTS(kagg_print_opts, po, .timestamp = true);
	char *out, *tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;

	setenv("TZ", "UTC", 1);
	tzset();
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_memory_equal(out, "12:00:05\n# kagg offcpu: ", 22);
	free(out);
	po.no_meta = true;
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_memory_equal(out, "12:00:05\n\n     usecs ", 20);
	free(out);
	/* syscount's count table (histograms without slots) prints its own header */
	counts = snap_new();
	assert_non_null(counts);
	assert_int_equal(snap_alloc_hists(counts, 1, 0), 0);
	counts->hists[0].key.label = "read";
	counts->hists[0].total = 3;
	counts->meta.end = snap->meta.end;
	out = print_opts_to_string(counts, &po, kagg_syscount__print);
	assert_memory_equal(out, "12:00:05\n\nSYSCALL ", 18);
	free(out);
	kagg_snapshot__free(counts);
	po.no_meta = false;
	po.format = KAGG_FORMAT_NDJSON;
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_non_null(
		strstr(out, "\"end\":\"2026-12-02T12:00:05.250Z\",\"timestamp\":\"12:00:05\","));
	free(out);
	setenv("TZ", "UTC-2", 1); /* POSIX TZ: two hours east of UTC */
	tzset();
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_non_null(strstr(out, "\"timestamp\":\"14:00:05\""));
	free(out);
	po.format = KAGG_FORMAT_TEXT;
	po.folded = true;
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_null(strstr(out, "14:00:05"));
	free(out);
	po.folded = false;
	po.timestamp = false;
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_null(strstr(out, "14:00:05\n"));
	free(out);
	po.format = KAGG_FORMAT_JSON;
	out = print_opts_to_string(snap, &po, kagg_snapshot__print);
	assert_null(strstr(out, "timestamp"));
	free(out);
	if (tz)
		setenv("TZ", tz, 1);
	else
		unsetenv("TZ");
	tzset();
	free(tz);
	kagg_snapshot__free(snap);
}

/* Usage errors: exit 2, one line on stderr, nothing on stdout, before any BPF work. */
static void test_cli_option_errors(void **state)
{
	static const struct tu_error_case cases[] = {
		{ 2, "invalid duration", { "offcpu", "-d", "0" } },
		{ 2, "invalid duration", { "offcpu", "-d", "abc" } },
		{ 2, "invalid interval", { "offcpu", "-i", "-1" } },
		{ 2, "at least 0.001 s", { "offcpu", "-i", "1e-300" } }, /* printed in a loop */
		{ 2, "at least 0.001 s", { "offcpu", "-i", "0.0009" } },
		{ 2, "invalid unit", { "offcpu", "--unit", "hours" } },
		{ 2, "invalid pid list", { "offcpu", "-p", "12,x" } },
		{ 2, "invalid pid list", { "offcpu", "-p", "0" } },
		{ 2, "invalid tid list", { "offcpu", "-t", "" } },
		{ 2, "invalid state", { "offcpu", "--state", "Q" } },
		{ 2, "invalid --min-us", { "offcpu", "-m", "-5" } },
		{ 2, "invalid format", { "offcpu", "--format", "xml" } },
		{ 2, "invalid attach type", { "offcpu", "--attach", "kprobe" } },
		{ 2, "invalid option", { "offcpu", "--bogus" } },
		{ 2, "unexpected argument", { "offcpu", "extra" } },
		{ 2, "exclude each other", { "offcpu", "-u", "-k" } },
	};

	tu_expect_errors(cases, TU_NR(cases));
}

static void test_cli_help_and_unknown_command(void **state)
{
	char *help[] = { "offcpu", "--help", NULL };
	char *unknown[] = { "nosuchtool", NULL };
	char *out = NULL, *err = NULL;

	assert_int_equal(tu_run_kagg(help, &out, NULL, 0, 0), 0);
	assert_non_null(strstr(out, "usage: kagg offcpu"));
	assert_non_null(strstr(out, "examples:"));
	free(out);
	assert_int_equal(tu_run_kagg(unknown, NULL, &err, 0, 0), 2);
	assert_int_equal(tu_lines(err), 1);
	free(err);
}

UU_MAIN(cmocka_unit_test(test_log2_bucketing_matches_bounds),
	cmocka_unit_test(test_log2_div_equals_log2_of_quotient),
	cmocka_unit_test(test_text_histogram_bcc_layout),
	cmocka_unit_test(test_text_meta_header_and_per_pid), cmocka_unit_test(test_json_document),
	cmocka_unit_test(test_keys_heaviest_first_and_top),
	cmocka_unit_test(test_both_exact_beside_kernel),
	cmocka_unit_test(test_both_pairs_program_keys),
	cmocka_unit_test(test_records_carry_their_size), cmocka_unit_test(test_json_escapes_comm),
	cmocka_unit_test(test_text_escapes_control_bytes),
	cmocka_unit_test(test_json_escapes_what_is_not_utf8),
	cmocka_unit_test(test_empty_histogram_says_so), cmocka_unit_test(test_opts_validation),
	cmocka_unit_test(test_timestamp), cmocka_unit_test(test_cli_option_errors),
	cmocka_unit_test(test_cli_help_and_unknown_command))
