/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/prom.h - Prometheus exposition of kagg sessions: the Prometheus text
 * format 0.0.4 and OpenMetrics 1.0 text, built from the exact read-and-reset
 * interval snapshots of one or more tool instances and kept cumulative
 * across them, so that counters and histogram buckets never go backwards.
 *
 *	KAGG_OPTS(kagg_prom_opts, po, .max_keys = 50);
 *	struct kagg_prom *p = kagg_prom__new(&po);
 *	int i = kagg_prom__add_tool(p, "runqlat --cgroup /sys/fs/cgroup/db");
 *	...
 *	snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *	kagg_prom__update(p, i, snap);
 *	kagg_snapshot__free(snap);
 *	kagg_prom__write(p, f, kagg_prom__negotiate(accept_header));
 *	kagg_prom__free(p);
 *
 * Metrics (every series carries tool_id, the instance's id, and tool):
 * kagg_build_info, kagg_tool_info (event, attach type used, kernel, filters),
 * kagg_events_seen_total, kagg_events_recorded_total, kagg_events_filtered_total,
 * kagg_drops_total (one series per cause), kagg_bpf_run_seconds_total and
 * kagg_bpf_runs_total (per BPF program, when the sessions measure their
 * overhead), kagg_folded_keys_total, kagg_retired_keys_total, and one histogram family per tool:
 * kagg_<tool>_seconds for times (cumulative `le` buckets in seconds, _sum,
 * _count, _created; every bucket up to max_bucket from the first scrape on),
 * kagg_<tool>_value for kagg hist's values.  Per-key
 * histograms (per process, thread, syscall, function) carry pid, tid, comm or
 * key labels, a program's (kagg_prog__open()) agg and one label per key
 * field; an instance keeps at most max_keys of them and adds the
 * histograms of further keys to one series whose key labels read "other";
 * a keyed series idle for key_ttl is retired and its place freed.
 *
 * Thread-safety: none; serialise the calls on one kagg_prom.
 */
#ifndef KAGG_PROM_H
#define KAGG_PROM_H

#include <stdio.h>
#include <kagg/common.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_prom;

struct kagg_prom_opts {
	size_t sz;
	/* Keyed histogram series kept per instance (0: 100); the rest fold into "other". */
	size_t max_keys;
	/*
	 * The classic histograms' buckets: each series lists every bucket of its instance's
	 * layout, with its count (0 included), from the lowest up to the first whose le reaches
	 * max_bucket, in the unit of le (seconds for times, the values' unit for kagg hist);
	 * larger values count in +Inf only.  0: 60 for time histograms, every bucket for
	 * values; INFINITY: every bucket.  Negative or NaN: EINVAL.
	 */
	double max_bucket;
	/*
	 * Seconds a keyed series may count nothing, by the end times of the snapshots given
	 * (kagg_meta.end), before it is retired (appended after 0.2): it is written no more, its
	 * place is free for a new key, kagg_retired_keys_total counts it, and its key, should it
	 * count again, starts a new series from zero, which Prometheus takes for a counter
	 * reset.  0: 300 (Prometheus's lookback delta); INFINITY: never.  Negative or NaN: EINVAL.
	 */
	double key_ttl;
};
#define kagg_prom_opts__last_field key_ttl

enum kagg_prom_format {
	KAGG_PROM_TEXT = 0,	   /* text/plain; version=0.0.4 */
	KAGG_PROM_OPENMETRICS = 1, /* application/openmetrics-text; version=1.0.0 */
	/*
	 * application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;
	 * encoding=delimited: the same families, and for exp-bucketed time histograms counted
	 * in nanoseconds also a native histogram family kagg_<tool>_nanoseconds (schema: the
	 * exp scale; a bucket boundary 2^(i/2^S) ns is no boundary of that schema in seconds).
	 */
	KAGG_PROM_PROTOBUF = 2,
};

/* NULL + errno (EINVAL, ENOMEM). */
KAGG_API struct kagg_prom *kagg_prom__new(const struct kagg_prom_opts *opts);
/* NULL-safe. */
KAGG_API void kagg_prom__free(struct kagg_prom *p);

/*
 * Add a tool instance, exported with the label tool_id="id" (unique in p).
 * Its index (>= 0), or -EINVAL (empty or duplicate id), -ENOMEM.
 */
KAGG_API int kagg_prom__add_tool(struct kagg_prom *p, const char *id);

/*
 * Add an interval snapshot of instance i (read with KAGG_SNAP_RESET, so that
 * consecutive snapshots do not overlap) to its cumulative figures; the meta
 * of the latest snapshot fills kagg_tool_info.  0 or -EINVAL (also: a program's
 * aggregations whose bucket layouts differ), -ENOMEM.
 */
KAGG_API int kagg_prom__update(struct kagg_prom *p, int i, const struct kagg_snapshot *snap);

/* Write every instance's metrics in fmt (OpenMetrics ends with "# EOF").  0, -EINVAL, -EIO. */
KAGG_API int kagg_prom__write(const struct kagg_prom *p, FILE *f, enum kagg_prom_format fmt);

/* The Content-Type of fmt. */
KAGG_API const char *kagg_prom__content_type(enum kagg_prom_format fmt);

/*
 * The format an HTTP Accept header asks for: the protobuf format when it lists it (with
 * proto=io.prometheus.client.MetricFamily and encoding=delimited) with a q at least that
 * of OpenMetrics and above that of text/plain; else OpenMetrics when it lists
 * application/openmetrics-text with a q above that of text/plain (and not 0); the text
 * format otherwise (also for NULL).
 */
KAGG_API enum kagg_prom_format kagg_prom__negotiate(const char *accept);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_PROM_H */
