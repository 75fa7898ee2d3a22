/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/prog.h - sessions of your own BPF programs: an object written with
 * the BPF-side headers (<kagg/bpf/kagg.bpf.h>, docs/sdk.md) opened as an
 * ordinary kagg_session, its aggregations found in its BTF.
 *
 *	KAGG_OPTS(kagg_prog_opts, o, .unit = KAGG_UNIT_USECS);
 *	struct kagg_session *s = kagg_prog__open("biolat.bpf.o", &o);
 *	kagg_session__attach(s);
 *	...
 *	snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *
 * Every program of the object is attached by its section name (tracepoint/,
 * raw_tp/, tp_btf/, kprobe/, fentry/, uprobe/, uretprobe/, perf_event...).
 * A KAGG_TP or KAGG_FUNC program comes in two flavours: the loader loads
 * the BTF one (tp_btf, fentry) and falls back to the other (raw_tp, kprobe)
 * when it cannot load; the meta's attach and attach_note say which and why.
 */
#ifndef KAGG_PROG_H
#define KAGG_PROG_H

#include <kagg/common.h>
#include <kagg/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_prog_opts {
	size_t sz;
	kagg_log_fn log;
	void *log_ctx;
	bool overhead;		 /* measure the programs' run time (meta) */
	enum kagg_unit unit;	 /* of the time histograms (KAGG_HIST_TIME...) */
	enum kagg_attach attach; /* flavours: auto (BTF one, else the other), tp_btf, raw_tp */
	/*
	 * Tunables, "NAME=VALUE" each: the object's `const volatile` globals, checked
	 * against their BTF type (integers, bool, enums by name or value, char arrays).
	 */
	const char *const *sets;
	size_t nr_sets;
	/* The object in memory (then the path only names it), else NULL: read from path. */
	const void *obj_buf;
	size_t obj_size;
	/*
	 * The binary of the uprobes whose section names none (SEC("uprobe/:FUNC")), and the
	 * function of those whose section names neither (SEC("uprobe"), SEC("uretprobe")).
	 */
	const char *binary;
	const char *func;
	/* Uprobes in this process only (0: every process running the binary). */
	int pid;
	/*
	 * Where histogram and counter observations go: aggregated in the kernel (agg),
	 * streamed as one record each and aggregated here (stream), or both side by side
	 * (the snapshot's stream).  Streamed records land in the session's reference ring
	 * buffer (kagg_session__ringbuf()) as events SYSTEM:AGG, SYSTEM the object's name,
	 * whose fields are the key's and `value`.  Stack aggregations stay in the kernel.
	 */
	enum kagg_mode mode;
	size_t stream_bytes; /* BPF ring buffer size, power of 2 >= 4096; 0: 8 MiB */
	size_t rb_subbufs;   /* reference buffer sub-buffers per CPU (0: 128) */
	bool rb_consume;     /* producer/consumer mode (newest refused) instead of overwrite */
	/*
	 * KAGG_BUCKETS_EXP: the log2 histograms (KAGG_HIST_LOG2, KAGG_HIST_TIME) in
	 * exponential buckets of scale exp_scale 0..5 instead (kagg_hist.has_exp), on both
	 * paths; each keeps at most 16 x its MAX buckets with a count per interval.
	 */
	enum kagg_buckets buckets;
	int exp_scale;
	/*
	 * Appended after 0.2: the tracepoint, "SYSTEM:EVENT", of the classic tracepoint programs
	 * whose section names none (SEC("tracepoint")): one program for any event, as kagg hist's.
	 */
	const char *tracepoint;
};
#define kagg_prog_opts__last_field tracepoint

/*
 * Open, check and load the object at path (or opts->obj_buf): its programs, its
 * aggregations (the maps with a kagg_sdk_desc), its tunables set.  Not attached.
 * NULL + errno: EINVAL for a bad object or option (not ELF, no BTF, no aggregation,
 * a map of the wrong shape, the verifier's refusal, a section naming no attachable
 * point, a bad tunable: logged as one line), EPERM, ENOMEM, ENOENT...
 */
KAGG_API struct kagg_session *kagg_prog__open(const char *path, const struct kagg_prog_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_PROG_H */
