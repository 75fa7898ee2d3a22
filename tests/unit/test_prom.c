// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The Prometheus and OpenMetrics writers (kagg/prom.h) on crafted snapshots:
 * the exact text for a known snapshot, sums across interval snapshots,
 * OpenMetrics' # EOF and _created, label escaping, folding of keys past
 * max_keys into "other", Accept negotiation, the protobuf format read back
 * (classic buckets, and native buckets from exp ones), and `promtool check
 * metrics` on the output when promtool is installed.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include "snapshot/snapshot_internal.h"
#include "prometheus_metrics.pb-c.h"
#include "unit_util.h"

/* runqlat-like: one histogram in ns (slot 3: 2 values, slot 5: 1; sum 60 ns), drops, cost. */
static struct kagg_snapshot *make_runqlat(void)
{
	struct kagg_snapshot *snap = snap_new();
	struct kagg_prog_cost *pc;
	struct kagg_hist *h;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, 1, 64), 0);
	h = &snap->hists[0];
	h->unit = KAGG_UNIT_NSECS;
	((uint64_t *)h->slots)[3] = 2;
	((uint64_t *)h->slots)[5] = 1;
	h->total = 3;
	h->has_sum = true;
	h->sum = 60;
	uu_meta(&snap->meta, "runqlat", "sched:sched_wakeup", "tp_btf", "6.1.0-test", "none");
	snap->meta.start.tv_sec = 1700000000;
	snap->meta.start.tv_nsec = 500000000;
	snap->meta.events_seen = 10;
	snap->meta.events_recorded = 3;
	snap_add_drop(snap, "task_storage", "no task storage", 1, true);
	snap->meta.has_overhead = true;
	pc = snap_add_prog(snap);
	pc->prog = "handle_switch";
	pc->run_cnt = 10;
	pc->run_time_ns = 2500;
	return snap;
}

/* p's output in fmt, malloc'd. */
static char *render(const struct kagg_prom *p, enum kagg_prom_format fmt)
{
	struct uu_mem m;

	assert_int_equal(kagg_prom__write(p, uu_mem_open(&m), fmt), 0);
	return uu_mem_text(&m);
}

/* What a kagg_prom made with o serving snap as tool id writes in fmt, malloc'd; snap is freed. */
static char *render_opts(const struct kagg_prom_opts *o, struct kagg_snapshot *snap, const char *id,
			 enum kagg_prom_format fmt)
{
	struct kagg_prom *p = kagg_prom__new(o);
	char *got;

	assert_non_null(p);
	assert_int_equal(kagg_prom__add_tool(p, id), 0);
	assert_int_equal(kagg_prom__update(p, 0, snap), 0);
	got = render(p, fmt);
	kagg_prom__free(p);
	kagg_snapshot__free(snap);
	return got;
}

/* What a default kagg_prom serving snap as tool id writes in fmt, malloc'd; snap is freed. */
static char *render_once(struct kagg_snapshot *snap, const char *id, enum kagg_prom_format fmt)
{
	return render_opts(NULL, snap, id, fmt);
}

#define L(id) "{tool_id=\"" id "\",tool=\"runqlat\""
/* The count of tool line "rq"'s series of process PID (named pPID by make_keyed()), in text. */
#define RQ_PID_COUNT(text, PID) \
	value_of(text,          \
		 "kagg_runqlat_seconds_count" L("rq") ",pid=\"" #PID "\",comm=\"p" #PID "\"} ")

/* clang-format off */
static const char
	expect_text
		[] = "# HELP kagg_build_info The kagg library serving these metrics.\n"
		     "# TYPE kagg_build_info gauge\n"
		     "kagg_build_info{version=\"%s\"} 1\n"
		     "# HELP kagg_tool_info A tool instance: its event, the attach type used, the "
		     "kernel, its filters.\n"
		     "# TYPE kagg_tool_info gauge\n"
		     "kagg_tool_info" L(
			     "rq") ",event=\"sched:sched_wakeup\",attach=\"tp_btf\",kernel=\"6.1.0-"
				   "test\",filters=\"none\"} 1\n"
				   "# HELP kagg_events_seen_total Events the BPF programs ran "
				   "for.\n"
				   "# TYPE kagg_events_seen_total counter\n"
				   "kagg_events_seen_total" L("rq") "} 20\n"
								    "# HELP "
								    "kagg_events_recorded_total "
								    "Events aggregated into the "
								    "histograms.\n"
								    "# TYPE "
								    "kagg_events_recorded_total "
								    "counter\n"
								    "kagg_events_recorded_total" L("rq") "} 6\n"
													 "# HELP kagg_events_filtered_total Events left out by the tool's filters (not lost).\n"
													 "# TYPE kagg_events_filtered_total counter\n"
													 "kagg_events_filtered_total" L("rq") "} 0\n"
																	      "# HELP kagg_drops_total Events or captures lost, by cause.\n"
																	      "# TYPE kagg_drops_total counter\n"
																	      "kagg_drops_total" L(
																		      "rq") ",cause=\"task_storage\"} 2\n"
																			    "# HELP kagg_bpf_run_seconds_total Time the tool's BPF programs ran (BPF_ENABLE_STATS).\n"
																			    "# TYPE kagg_bpf_run_seconds_total counter\n"
																			    "kagg_bpf_run_seconds_total" L("rq") ",prog=\"handle_switch\"} 5e-06\n"
																								 "# HELP kagg_bpf_runs_total Runs of the tool's BPF programs (BPF_ENABLE_STATS).\n"
																								 "# TYPE kagg_bpf_runs_total counter\n"
																								 "kagg_bpf_runs_total" L("rq") ",prog=\"handle_switch\"} 20\n"
																											       "# HELP kagg_folded_keys_total Keyed histograms added to the series of key other, one per key and interval.\n"
																											       "# TYPE kagg_folded_keys_total counter\n"
																											       "kagg_folded_keys_total" L(
																												       "rq") "} 0\n"
																											       "# HELP kagg_retired_keys_total Keyed series retired after counting nothing for the key TTL.\n"
																											       "# TYPE kagg_retired_keys_total counter\n"
																											       "kagg_retired_keys_total" L(
																												       "rq") "} 0\n"
																													     "# HELP kagg_runqlat_seconds What the tool measured, in seconds (cumulative buckets).\n"
																													     "# TYPE kagg_runqlat_seconds histogram\n"
																													     "kagg_runqlat_seconds_bucket" L("rq") ",le=\"1e-09\"} 0\n"
																																		   "kagg_runqlat_seconds_bucket" L(
																																			   "rq") ",le=\"3e-09\"} 0\n"
																																				 "kagg_runqlat_seconds_bucket" L("rq") ",le=\"7e-09\"} 0\n"
																																								       "kagg_runqlat_seconds_bucket" L(
																																									       "rq") ",le=\"1.5e-08\"} 4\n"
																																										     "kagg_runqlat_seconds_bucket" L(
																																											     "rq") ",le=\"3.1e-08\"} 4\n"
																																												   "kagg_runqlat_seconds_bucket" L("rq") ",le=\"6.3e-08\"} 6\n"
																																																	 "kagg_runqlat_seconds_bucket" L(
																																																		 "rq") ",le=\"1.27e-07\"} 6\n"
																																																		       "kagg_runqlat_seconds_bucket" L(
																																																			       "rq") ",le=\"2.55e-07\"} 6\n"
																																																				     "kagg_runqlat_seconds_bucket" L(
																																																					     "rq") ",le=\"5.11e-07\"} 6\n"
																																																						   "kagg_runqlat_seconds_bucket" L("rq") ",le=\"1.023e-06\"} 6\n"
																																																											 "kagg_runqlat_seconds_bucket" L("rq") ",le=\"2.047e-06\"} 6\n"
																																																															       "kagg_runqlat_seconds_bucket" L("rq") ",le=\"4.095e-06\"} 6\n"
																																																																				     "kagg_runqlat_seconds_bucket" L("rq") ",le=\"8.191e-06\"} 6\n"
																																																																									   "kagg_runqlat_seconds_bucket" L(
																																																																										   "rq") ",le=\"1.6383e-05\"} 6\n"
																																																																											 "kagg_runqlat_seconds_bucket" L(
																																																																												 "rq") ",le=\"3.2767e-05\"} 6\n"
																																																																												       "kagg_runqlat_seconds_bucket" L(
																																																																													       "rq") ",le=\"6.5535e-05\"} 6\n"
																																																																														     "kagg_runqlat_seconds_bucket" L(
																																																																															     "rq") ",le=\"0.000131071\"} 6\n"
																																																																																   "kagg_runqlat_seconds_bucket" L(
																																																																																	   "rq") ",le=\"0.000262143\"} 6\n"
																																																																																		 "kagg_runqlat_seconds_bucket" L("rq") ",le=\"0.000524287\"} 6\n"
																																																																																						       "kagg_runqlat_seconds_bucket" L(
																																																																																							       "rq") ",le=\"0.001048575\"} 6\n"
																																																																																								     "kagg_runqlat_seconds_bucket" L(
																																																																																									     "rq") ",le=\"0.002097151\"} 6\n"
																																																																																										   "kagg_runqlat_seconds_bucket" L(
																																																																																											   "rq") ",le=\"0.004194303\"} 6\n"
																																																																																												 "kagg_runqlat_seconds_bucket" L("rq") ",le=\"0.008388607\"} 6\n"
																																																																																																       "kagg_runqlat_seconds_bucket" L(
																																																																																																	       "rq") ",le=\"0.016777215\"} 6\n"
																																																																																																		     "kagg_runqlat_seconds_bucket" L(
																																																																																																			     "rq") ",le=\"0.033554431\"} 6\n"
																																																																																																				   "kagg_runqlat_seconds_bucket" L(
																																																																																																					   "rq") ",le=\"0.067108863\"} 6\n"
																																																																																																						 "kagg_runqlat_seconds_bucket" L(
																																																																																																							 "rq") ",le=\"0.134217727\"} 6\n"
																																																																																																							       "kagg_runqlat_seconds_bucket" L(
																																																																																																								       "rq") ",le=\"0.268435455\"} 6\n"
																																																																																																									     "kagg_runqlat_seconds_bucket" L(
																																																																																																										     "rq") ",le=\"0.536870911\"} 6\n"
																																																																																																											   "kagg_runqlat_seconds_bucket" L(
																																																																																																												   "rq") ",le=\"1.073741823\"} 6\n"
																																																																																																													 "kagg_runqlat_seconds_bucket" L("rq") ",le=\"2.147483647\"} 6\n"
																																																																																																																	       "kagg_runqlat_seconds_bucket" L("rq") ",le=\"4.294967295\"} 6\n"
																																																																																																																						     "kagg_runqlat_seconds_bucket" L(
																																																																																																																							     "rq") ",le=\"8.589934591\"} 6\n"
																																																																																																																								   "kagg_runqlat_seconds_bucket" L(
																																																																																																																									   "rq") ",le=\"17.179869183\"} 6\n"
																																																																																																																										 "kagg_runqlat_seconds_bucket" L("rq") ",le=\"34.359738367\"} 6\n"
																																																																																																																														       "kagg_runqlat_seconds_bucket" L(
																																																																																																																															       "rq") ",le=\"68.719476735\"} 6\n"
																																																																																																																																     "kagg_runqlat_seconds_bucket" L(
																																																																																																																																	     "rq") ",le=\"+Inf\"} 6\n"
																																																																																																																																		   "kagg_runqlat_seconds_count" L("rq") "} 6\n"
																																																																																																																																							"kagg_runqlat_seconds_sum" L("rq") "} 1.2e-07\n"
																																																																																																																																											   "# HELP kagg_runqlat_seconds_created When the series of kagg_runqlat_seconds started counting (Unix time).\n"
																																																																																																																																											   "# TYPE kagg_runqlat_seconds_created gauge\n"
																																																																																																																																											   "kagg_runqlat_seconds_created" L("rq") "} 1700000000.5\n";
/* clang-format on */

/* Two intervals of the same snapshot: every figure doubled, exactly. */
static void test_text_exact(void **state)
{
	struct kagg_snapshot *snap = make_runqlat();
	struct kagg_prom *p = kagg_prom__new(NULL);
	char want[8192], *got;
	int i;

	assert_non_null(p);
	i = kagg_prom__add_tool(p, "rq");
	assert_int_equal(i, 0);
	assert_int_equal(kagg_prom__add_tool(p, "rq"), -EINVAL);
	assert_int_equal(kagg_prom__update(p, i, snap), 0);
	assert_int_equal(kagg_prom__update(p, i, snap), 0);
	snprintf(want, sizeof(want), expect_text, kagg_version());
	got = render(p, KAGG_PROM_TEXT);
	if (getenv("PROM_DUMP"))
		fputs(got, stderr);
	assert_string_equal(got, want);
	free(got);
	kagg_prom__free(p);
	kagg_snapshot__free(snap);
}

static void test_openmetrics(void **state)
{
	char *got = render_once(make_runqlat(), "rq", KAGG_PROM_OPENMETRICS);
	size_t n = strlen(got);

	assert_true(n > 6 && !strcmp(got + n - 6, "# EOF\n"));
	assert_non_null(strstr(got, "# TYPE kagg_build info\nkagg_build_info{version="));
	assert_non_null(strstr(got, "# TYPE kagg_events_seen counter\n"
				    "kagg_events_seen_total" L("rq") "} 10\n"));
	assert_non_null(strstr(got, "# TYPE kagg_runqlat_seconds histogram\n"
				    "# UNIT kagg_runqlat_seconds seconds\n"));
	assert_non_null(
		strstr(got, "kagg_runqlat_seconds_sum" L("rq") "} 6e-08\n"
							       "kagg_runqlat_seconds_created" L(
								       "rq") "} 1700000000.5\n"));
	/* No gauge of its own for _created in OpenMetrics. */
	assert_null(strstr(got, "TYPE kagg_runqlat_seconds_created"));
	free(got);
}

static void test_escaping(void **state)
{
	struct kagg_snapshot *snap = make_runqlat();
	char *got;

	snap->meta.filters = "cgroup \"db\\1\"\nx";
	got = render_once(snap, "a\"b\\c\nd", KAGG_PROM_TEXT);
	assert_non_null(strstr(got, "{tool_id=\"a\\\"b\\\\c\\nd\",tool=\"runqlat\""));
	assert_non_null(strstr(got, "filters=\"cgroup \\\"db\\\\1\\\"\\nx\"} 1\n"));
	free(got);
}

/* Per-process histograms of the given pids and totals (all in slot 0). */
static struct kagg_snapshot *make_keyed(const int *pids, const uint64_t *totals, size_t n)
{
	struct kagg_snapshot *snap = make_runqlat();
	size_t i;

	free(snap->hists);
	free(snap->slots);
	assert_int_equal(snap_alloc_hists(snap, n, 64), 0);
	for (i = 0; i < n; i++) {
		struct kagg_hist *h = &snap->hists[i];

		h->unit = KAGG_UNIT_NSECS;
		h->key.mode = KAGG_KEY_PID;
		h->key.pid = pids[i];
		snprintf(h->key.comm, sizeof(h->key.comm), "p%d", pids[i]);
		((uint64_t *)h->slots)[0] = totals[i];
		h->total = totals[i];
	}
	return snap;
}

static uint64_t value_of(const char *text, const char *series)
{
	const char *s = strstr(text, series);

	if (!s)
		fail_msg("no %s in:\n%s", series, text);
	return strtoull(s + strlen(series), NULL, 10);
}

static void test_folding(void **state)
{
	static const int pids1[] = { 11, 12, 13, 14 }, pids2[] = { 13, 15 };
	static const uint64_t t1[] = { 5, 1, 7, 3 }, t2[] = { 2, 100 };
	KAGG_OPTS(kagg_prom_opts, o, .max_keys = 2);
	struct kagg_prom *p = kagg_prom__new(&o);
	struct kagg_snapshot *s1 = make_keyed(pids1, t1, 4), *s2 = make_keyed(pids2, t2, 2);
	char *got;

	assert_int_equal(kagg_prom__add_tool(p, "rq"), 0);
	assert_int_equal(kagg_prom__update(p, 0, s1), 0);
	got = render(p, KAGG_PROM_TEXT);
	/* The two largest keep their series; 12 and 14 are folded. */
	assert_int_equal(RQ_PID_COUNT(got, 13), 7);
	assert_int_equal(RQ_PID_COUNT(got, 11), 5);
	assert_null(strstr(got, "pid=\"12\""));
	assert_null(strstr(got, "pid=\"14\""));
	assert_int_equal(value_of(got, "kagg_runqlat_seconds_count" L("rq") ",key=\"other\"} "), 4);
	assert_int_equal(value_of(got, "kagg_folded_keys_total" L("rq") "} "), 2);
	free(got);
	/* Places taken stay taken: a new key goes to other, however large. */
	assert_int_equal(kagg_prom__update(p, 0, s2), 0);
	got = render(p, KAGG_PROM_TEXT);
	assert_int_equal(RQ_PID_COUNT(got, 13), 9);
	assert_int_equal(value_of(got, "kagg_runqlat_seconds_count" L("rq") ",key=\"other\"} "),
			 104);
	assert_int_equal(value_of(got, "kagg_folded_keys_total" L("rq") "} "), 3);
	assert_null(strstr(got, "pid=\"15\""));
	free(got);
	kagg_prom__free(p);
	kagg_snapshot__free(s1);
	kagg_snapshot__free(s2);
}

/*
 * Keys that print alike: per command, comms "\xff" and "\xfe" both print as U+FFFD: one
 * series, counting both; per cgroup, two cgroups at one path (made again: another id) are
 * two series, told apart by cgroup_id, as two processes are by pid.
 */
static void test_keys_printed_alike(void **state)
{
	static const int pids[] = { 1, 2 };
	static const uint64_t t[] = { 3, 4 };
	struct kagg_snapshot *comm = make_keyed(pids, t, 2), *cg = make_keyed(pids, t, 2);
	KAGG_OPTS(kagg_prom_opts, o, .max_keys = 10);
	struct kagg_prom *p = kagg_prom__new(&o);
	char *got;
	size_t i;

	for (i = 0; i < 2; i++) {
		comm->hists[i].key.mode = KAGG_KEY_COMM;
		comm->hists[i].key.pid = 0;
		snprintf(comm->hists[i].key.comm, sizeof(comm->hists[i].key.comm), "%c",
			 i ? '\xfe' : '\xff');
		cg->hists[i].key.mode = KAGG_KEY_CGROUP;
		cg->hists[i].key.pid = 0;
		cg->hists[i].cgroup = "/system.slice/db.service";
		cg->hists[i].cgroup_id = 100 + i;
	}
	assert_int_equal(kagg_prom__add_tool(p, "n"), 0);
	assert_int_equal(kagg_prom__add_tool(p, "c"), 1);
	assert_int_equal(kagg_prom__update(p, 0, comm), 0);
	assert_int_equal(kagg_prom__update(p, 1, cg), 0);
	got = render(p, KAGG_PROM_TEXT);
	assert_int_equal(
		value_of(got, "kagg_runqlat_seconds_count" L("n") ",comm=\"\xef\xbf\xbd\"} "), 7);
	assert_int_equal(value_of(got, "kagg_runqlat_seconds_count" L(
					       "c") ",cgroup=\"/system.slice/"
						    "db.service\",cgroup_id=\"100\"} "),
			 3);
	assert_int_equal(value_of(got, "kagg_runqlat_seconds_count" L(
					       "c") ",cgroup=\"/system.slice/"
						    "db.service\",cgroup_id=\"101\"} "),
			 4);
	free(got);
	kagg_prom__free(p);
	kagg_snapshot__free(comm);
	kagg_snapshot__free(cg);
}

/*
 * make_keyed() whose interval lasted dur seconds (the monotonic time the key TTL counts)
 * and ended at end, its wall clock's start the second before (seconds of the epoch).
 */
static struct kagg_snapshot *keyed_at(const int *pids, const uint64_t *totals, size_t n, double dur,
				      long end)
{
	struct kagg_snapshot *snap = make_keyed(pids, totals, n);

	snap->meta.duration_s = dur;
	snap->meta.start.tv_sec = end - 1;
	snap->meta.start.tv_nsec = 0;
	snap->meta.end.tv_sec = end;
	return snap;
}

/*
 * Key TTL 10 s, 2 places: a key that counts nothing for more than 10 s of the intervals'
 * durations is retired at the next update, its place taken by a new key instead of
 * "other"; one that counts again within the TTL keeps its series; a retired key that comes
 * back starts from zero, its _created the start of the interval it came back in.  The wall
 * clock set back or stepped ahead retires nothing.
 */
static void test_key_ttl(void **state)
{
	static const int a[] = { 11, 12 }, b[] = { 12 }, c[] = { 13 }, d[] = { 11 };
	static const uint64_t t2[] = { 5, 1 }, t1[] = { 2 };
	KAGG_OPTS(kagg_prom_opts, o, .max_keys = 2, .key_ttl = 10);
	struct kagg_prom *p = kagg_prom__new(&o);
	struct kagg_snapshot *snaps[] = {
		keyed_at(a, t2, 2, 1, 1000), keyed_at(b, t1, 1, 8, 1008),
		keyed_at(c, t1, 1, 3, 1011), keyed_at(d, t1, 1, 19, 1030),
		keyed_at(b, t1, 1, 1, 1019), keyed_at(d, t1, 1, 1, 1000000),
	};
	char *got;
	size_t i;

	assert_int_equal(kagg_prom__add_tool(p, "rq"), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(kagg_prom__update(p, 0, snaps[i]), 0);
	/* 11 idle for 11 s: retired, its place 13's; 12 counted 3 s ago: kept */
	got = render(p, KAGG_PROM_TEXT);
	assert_null(strstr(got, "pid=\"11\""));
	assert_null(strstr(got, "key=\"other\""));
	assert_int_equal(RQ_PID_COUNT(got, 12), 3);
	assert_int_equal(RQ_PID_COUNT(got, 13), 2);
	assert_int_equal(value_of(got, "kagg_retired_keys_total" L("rq") "} "), 1);
	free(got);
	/* At 1030 12 and 13 are idle for 22 and 19 s: 11 comes back from zero, alone */
	assert_int_equal(kagg_prom__update(p, 0, snaps[3]), 0);
	got = render(p, KAGG_PROM_TEXT);
	assert_int_equal(RQ_PID_COUNT(got, 11), 2);
	assert_null(strstr(got, "pid=\"12\""));
	assert_null(strstr(got, "pid=\"13\""));
	assert_int_equal(value_of(got, "kagg_retired_keys_total" L("rq") "} "), 3);
	free(got);
	got = render(p, KAGG_PROM_OPENMETRICS);
	assert_int_equal(
		value_of(got, "kagg_runqlat_seconds_created" L("rq") ",pid=\"11\",comm=\"p11\"} "),
		1029);
	free(got);
	/* A clock set back retires nothing */
	assert_int_equal(kagg_prom__update(p, 0, snaps[4]), 0);
	got = render(p, KAGG_PROM_TEXT);
	assert_non_null(strstr(got, "pid=\"11\""));
	assert_int_equal(value_of(got, "kagg_retired_keys_total" L("rq") "} "), 3);
	free(got);
	/* nor one stepped ahead by 11 days: 12, idle for 1 s of intervals, stays */
	assert_int_equal(kagg_prom__update(p, 0, snaps[5]), 0);
	got = render(p, KAGG_PROM_TEXT);
	assert_int_equal(RQ_PID_COUNT(got, 11), 4);
	assert_int_equal(RQ_PID_COUNT(got, 12), 2);
	assert_int_equal(value_of(got, "kagg_retired_keys_total" L("rq") "} "), 3);
	free(got);
	kagg_prom__free(p);
	for (i = 0; i < sizeof(snaps) / sizeof(snaps[0]); i++)
		kagg_snapshot__free(snaps[i]);
	/* a TTL below 0 or NaN is refused */
	o.key_ttl = -1;
	assert_null(kagg_prom__new(&o));
	o.key_ttl = NAN;
	assert_null(kagg_prom__new(&o));
}

static void test_negotiate(void **state)
{
	assert_int_equal(kagg_prom__negotiate(NULL), KAGG_PROM_TEXT);
	assert_int_equal(kagg_prom__negotiate("text/plain"), KAGG_PROM_TEXT);
	assert_int_equal(kagg_prom__negotiate("*/*"), KAGG_PROM_TEXT);
	/* What Prometheus 2.x sends. */
	assert_int_equal(kagg_prom__negotiate("application/openmetrics-text;version=1.0.0,"
					      "application/openmetrics-text;version=0.0.1;q=0.75,"
					      "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 KAGG_PROM_OPENMETRICS);
	assert_int_equal(
		kagg_prom__negotiate("text/plain;q=0.9, application/openmetrics-text; q=0.5"),
		KAGG_PROM_TEXT);
	assert_int_equal(kagg_prom__negotiate("application/openmetrics-text;q=0"), KAGG_PROM_TEXT);
	/* What Prometheus sends with native histograms enabled. */
	assert_int_equal(
		kagg_prom__negotiate("application/vnd.google.protobuf;"
				     "proto=io.prometheus.client.MetricFamily;"
				     "encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,"
				     "*/*;q=0.2"),
		KAGG_PROM_PROTOBUF);
	/* Another message, or not delimited: not ours. */
	assert_int_equal(kagg_prom__negotiate("application/vnd.google.protobuf;proto=x.Y;"
					      "encoding=delimited,text/plain;q=0.5"),
			 KAGG_PROM_TEXT);
	assert_int_equal(
		kagg_prom__negotiate("application/vnd.google.protobuf;"
				     "proto=io.prometheus.client.MetricFamily;encoding=text"),
		KAGG_PROM_TEXT);
}

/* The delimited families of buf, by name (NULL when absent); frees nothing. */
static Io__Prometheus__Client__MetricFamily *pb_family(const uint8_t *buf, size_t len,
						       const char *name)
{
	size_t off = 0;

	while (off < len) {
		Io__Prometheus__Client__MetricFamily *f;
		uint64_t n = uu_varint(buf, &off);

		assert_true(off + n <= len);
		f = io__prometheus__client__metric_family__unpack(NULL, n, buf + off);
		assert_non_null(f);
		off += n;
		if (!strcmp(f->name, name))
			return f;
		io__prometheus__client__metric_family__free_unpacked(f, NULL);
	}
	return NULL;
}

static void test_protobuf(void **state)
{
	struct kagg_snapshot *snap = make_runqlat();
	struct kagg_prom *p = kagg_prom__new(NULL);
	Io__Prometheus__Client__MetricFamily *f;
	Io__Prometheus__Client__Histogram *h;
	struct kagg_hist *eh;
	char *buf = NULL;
	size_t len = 0;
	FILE *mf;

	/* exp:3 from index 100: slot 0 (zero) 1, slot 2 (index 101) 3, slot 4 (index 103) 5. */
	free(snap->hists);
	free(snap->slots);
	assert_int_equal(snap_alloc_hists(snap, 1, 8), 0);
	eh = &snap->hists[0];
	eh->unit = KAGG_UNIT_NSECS;
	eh->has_exp = true;
	eh->exp_scale = 3;
	eh->exp_base_index = 100;
	((uint64_t *)eh->slots)[0] = 1;
	((uint64_t *)eh->slots)[2] = 3;
	((uint64_t *)eh->slots)[4] = 5;
	eh->total = 9;
	eh->has_sum = true;
	eh->sum = 90000;
	assert_int_equal(kagg_prom__add_tool(p, "rq"), 0);
	assert_int_equal(kagg_prom__update(p, 0, snap), 0);
	mf = open_memstream(&buf, &len);
	assert_int_equal(kagg_prom__write(p, mf, KAGG_PROM_PROTOBUF), 0);
	fclose(mf);

	f = pb_family((uint8_t *)buf, len, "kagg_events_seen_total");
	assert_non_null(f);
	assert_int_equal(f->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
	assert_int_equal(f->n_metric, 1);
	assert_int_equal(f->metric[0]->n_label, 2);
	assert_string_equal(f->metric[0]->label[0]->name, "tool_id");
	assert_string_equal(f->metric[0]->label[0]->value, "rq");
	assert_true(f->metric[0]->counter->value == 10);
	io__prometheus__client__metric_family__free_unpacked(f, NULL);

	/*
	 * Classic: cumulative counts of every slot (all 8 are below 60 s), the empty ones
	 * included, +Inf left implicit.
	 */
	f = pb_family((uint8_t *)buf, len, "kagg_runqlat_seconds");
	assert_non_null(f);
	assert_int_equal(f->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	h = f->metric[0]->histogram;
	assert_int_equal(h->sample_count, 9);
	assert_true(h->sample_sum == 90000 / 1e9);
	assert_int_equal(h->n_bucket, 8);
	assert_int_equal(h->bucket[0]->cumulative_count, 1);
	assert_int_equal(h->bucket[1]->cumulative_count, 1);
	assert_int_equal(h->bucket[2]->cumulative_count, 4);
	assert_int_equal(h->bucket[3]->cumulative_count, 4);
	assert_int_equal(h->bucket[4]->cumulative_count, 9);
	assert_int_equal(h->bucket[7]->cumulative_count, 9);
	assert_true(h->bucket[0]->upper_bound == 0);
	/* exp:3 bucket index 106, the last slot: (2^(106/8), 2^(107/8)] ns */
	assert_true(fabs(h->bucket[7]->upper_bound - pow(2, 107 / 8.0) / 1e9) < 1e-18);
	assert_false(h->has_schema);
	io__prometheus__client__metric_family__free_unpacked(f, NULL);

	/* Native: kagg index i is native index i + 1; counts as deltas. */
	f = pb_family((uint8_t *)buf, len, "kagg_runqlat_nanoseconds");
	assert_non_null(f);
	h = f->metric[0]->histogram;
	assert_int_equal(h->schema, 3);
	assert_true(h->zero_threshold == 0);
	assert_int_equal(h->zero_count, 1);
	assert_int_equal(h->sample_count, 9);
	assert_true(h->sample_sum == 90000);
	assert_int_equal(h->n_positive_span, 1);
	assert_int_equal(h->positive_span[0]->offset, 102);
	assert_int_equal(h->positive_span[0]->length, 3);
	assert_int_equal(h->n_positive_delta, 3);
	assert_int_equal(h->positive_delta[0], 3);
	assert_int_equal(h->positive_delta[1], -3);
	assert_int_equal(h->positive_delta[2], 5);
	assert_int_equal(h->n_bucket, 0);
	io__prometheus__client__metric_family__free_unpacked(f, NULL);
	/* Not in the text formats. */
	free(buf);
	buf = render(p, KAGG_PROM_TEXT);
	assert_null(strstr(buf, "nanoseconds"));
	free(buf);
	kagg_prom__free(p);
	kagg_snapshot__free(snap);
}

/* The le labels of name's bucket series in text, one string "le1,le2,...". */
static void le_list(const char *text, const char *name, char *out, size_t len)
{
	const char *p = text;
	size_t n = 0;

	out[0] = 0;
	while ((p = strstr(p, name))) {
		const char *le = strstr(p, "le=\""), *end;

		p += strlen(name);
		if (!le || strchr(p, '\n') < le)
			continue;
		le += 4;
		end = strchr(le, '"');
		n += snprintf(out + n, len - n, "%s%.*s", n ? "," : "", (int)(end - le), le);
		assert_true(n < len);
	}
}

/* The number of bucket series of name in text. */
static int nr_buckets(const char *text, const char *name)
{
	const char *p = text;
	int n = 0;

	while ((p = strstr(p, name))) {
		p += strlen(name);
		n++;
	}
	return n;
}

/* The cumulative count of runqlat's bucket le in text. */
static uint64_t bucket(const char *text, const char *le)
{
	char series[128];

	snprintf(series, sizeof(series), "kagg_runqlat_seconds_bucket" L("rq") ",le=\"%s\"} ", le);
	return value_of(text, series);
}

/*
 * Classic buckets exist from the first scrape: an empty first interval lists every bucket up to
 * the cap (60 s by default: log2 slot 35, le 68.7 s), 0 each; a later interval counting in a
 * new slot and above the cap changes no le series, only counts, and what is above the cap is in
 * +Inf alone.
 */
static void test_buckets_from_first_scrape(void **state)
{
	struct kagg_snapshot *s0 = make_runqlat(), *s1 = make_runqlat();
	struct kagg_prom *p = kagg_prom__new(NULL);
	static char first[8192], later[8192];
	const char *b = "kagg_runqlat_seconds_bucket" L("rq");
	char *got;

	memset((uint64_t *)s0->hists[0].slots, 0, 64 * sizeof(uint64_t));
	s0->hists[0].total = 0;
	s0->hists[0].sum = 0;
	((uint64_t *)s1->hists[0].slots)[25] = 4; /* 33.5 to 67.1 ms */
	((uint64_t *)s1->hists[0].slots)[40] = 1; /* 18 minutes: above the cap */
	s1->hists[0].total += 5;
	assert_int_equal(kagg_prom__add_tool(p, "rq"), 0);
	assert_int_equal(kagg_prom__update(p, 0, s0), 0);
	got = render(p, KAGG_PROM_TEXT);
	le_list(got, b, first, sizeof(first));
	assert_int_equal(nr_buckets(got, b), 37);
	assert_int_equal(bucket(got, "1e-09"), 0);
	assert_int_equal(bucket(got, "68.719476735"), 0);
	assert_int_equal(bucket(got, "+Inf"), 0);
	free(got);
	assert_int_equal(kagg_prom__update(p, 0, s1), 0);
	got = render(p, KAGG_PROM_TEXT);
	le_list(got, b, later, sizeof(later));
	assert_string_equal(later, first);
	assert_int_equal(bucket(got, "0.033554431"), 3);
	assert_int_equal(bucket(got, "0.067108863"), 7);
	assert_int_equal(bucket(got, "68.719476735"), 7);
	assert_int_equal(bucket(got, "+Inf"), 8);
	assert_int_equal(value_of(got, "kagg_runqlat_seconds_count" L("rq") "} "), 8);
	free(got);
	/* The same in OpenMetrics. */
	got = render(p, KAGG_PROM_OPENMETRICS);
	le_list(got, b, later, sizeof(later));
	assert_string_equal(later, first);
	free(got);
	kagg_prom__free(p);
	kagg_snapshot__free(s0);
	kagg_snapshot__free(s1);
}

/* max_bucket: another cap, no cap, the default for values, and what is refused. */
static void test_max_bucket(void **state)
{
	KAGG_OPTS(kagg_prom_opts, ms, .max_bucket = 0.001);
	KAGG_OPTS(kagg_prom_opts, all, .max_bucket = INFINITY);
	KAGG_OPTS(kagg_prom_opts, neg, .max_bucket = -1);
	KAGG_OPTS(kagg_prom_opts, nan, .max_bucket = NAN);
	const char *b = "kagg_runqlat_seconds_bucket" L("rq");
	struct kagg_snapshot *snap;
	char *got;

	/* 1 ms: up to log2 slot 19, le 1.048575 ms; slots 3 and 5 below it, nothing above. */
	got = render_opts(&ms, make_runqlat(), "rq", KAGG_PROM_TEXT);
	assert_int_equal(nr_buckets(got, b), 21);
	assert_int_equal(bucket(got, "0.001048575"), 3);
	assert_null(strstr(got, "le=\"0.002097151\""));
	free(got);
	got = render_opts(&all, make_runqlat(), "rq", KAGG_PROM_TEXT);
	assert_int_equal(nr_buckets(got, b), 65);
	free(got);
	/* kagg hist's values: every bucket by default. */
	snap = make_runqlat();
	snap->hists[0].value = "prio";
	snap->meta.tool = "hist";
	got = render_once(snap, "h", KAGG_PROM_TEXT);
	assert_int_equal(nr_buckets(got, "kagg_hist_value_bucket{"), 65);
	free(got);
	errno = 0;
	assert_null(kagg_prom__new(&neg));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(kagg_prom__new(&nan));
	assert_int_equal(errno, EINVAL);
}

/* The text output passes promtool's own parser and linter. */
static void test_promtool(void **state)
{
	struct kagg_snapshot *snap = make_runqlat();
	static const int pids[] = { 1, 2, 3 };
	static const uint64_t t[] = { 1, 2, 3 };
	struct kagg_snapshot *keyed = make_keyed(pids, t, 3);
	KAGG_OPTS(kagg_prom_opts, o, .max_keys = 1);
	struct kagg_prom *p = kagg_prom__new(&o);
	char path[] = "/tmp/kagg-prom-XXXXXX", cmd[256], *got;
	int fd, rc;

	if (access("/usr/bin/promtool", X_OK)) {
		kagg_prom__free(p);
		kagg_snapshot__free(snap);
		kagg_snapshot__free(keyed);
		skip();
	}
	assert_int_equal(kagg_prom__add_tool(p, "rq"), 0);
	assert_int_equal(kagg_prom__add_tool(p, "rq2"), 1);
	assert_int_equal(kagg_prom__update(p, 0, snap), 0);
	assert_int_equal(kagg_prom__update(p, 1, keyed), 0);
	got = render(p, KAGG_PROM_TEXT);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, got, strlen(got)), (ssize_t)strlen(got));
	close(fd);
	snprintf(cmd, sizeof(cmd), "/usr/bin/promtool check metrics < %s", path);
	rc = system(cmd);
	unlink(path);
	if (rc)
		fail_msg("promtool check metrics failed on:\n%s", got);
	free(got);
	kagg_prom__free(p);
	kagg_snapshot__free(snap);
	kagg_snapshot__free(keyed);
}

UU_MAIN(cmocka_unit_test(test_text_exact), cmocka_unit_test(test_openmetrics),
	cmocka_unit_test(test_escaping), cmocka_unit_test(test_folding),
	cmocka_unit_test(test_key_ttl), cmocka_unit_test(test_keys_printed_alike),
	cmocka_unit_test(test_negotiate), cmocka_unit_test(test_protobuf),
	cmocka_unit_test(test_buckets_from_first_scrape), cmocka_unit_test(test_max_bucket),
	cmocka_unit_test(test_promtool))
