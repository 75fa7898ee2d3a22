/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/snapshot.h - what a session measured over an interval, as returned by
 * kagg_session__snapshot(): histograms (one per key), aggregated stacks, the
 * meta block (what was measured, how, and what was lost), and printers.
 *
 *	struct kagg_snapshot *snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *	for (i = 0; i < kagg_snapshot__hist_cnt(snap); i++)
 *		use(kagg_snapshot__hist(snap, i));
 *	kagg_snapshot__print(snap, stdout, NULL);
 *	kagg_snapshot__free(snap);
 *
 * Thread-safety: a snapshot is immutable once returned and may be read from
 * any thread.  Everything reachable from it is owned by it.
 *
 * Growing: the snapshot is opaque.  The records it hands out (kagg_hist,
 * kagg_stack, kagg_frame, kagg_meta, kagg_drop, kagg_prog_cost) start with
 * `size_t sz`, set by the library to the size it filled, and are only ever
 * appended to.  They are reached through pointers (an accessor, or an array
 * of pointers), never by indexing an array of structs, so a library with
 * larger records still serves callers built against smaller ones; a caller
 * reads a field added after its library's release only when
 * KAGG_HAS_FIELD(p, TYPE, field) holds.  They carry their size rather than
 * hiding behind accessors because they are plain records read field by
 * field, dozens of fields in kagg_meta's case.
 */
#ifndef KAGG_SNAPSHOT_H
#define KAGG_SNAPSHOT_H

#include <stdio.h>
#include <time.h>
#include <kagg/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_snapshot;

KAGG_API void kagg_snapshot__free(struct kagg_snapshot *snap);

/*
 * A histogram key: which process/thread the histogram is for.  It is held by
 * value inside kagg_hist (sorted, compared and copied as a value), so it is
 * frozen: it never grows, and anything new about a histogram's key is
 * appended to kagg_hist instead, where kagg_hist.sz covers it.
 */
struct kagg_hist_key {
	enum kagg_key_mode mode; /* KAGG_KEY_NONE: pid/tid/comm unused */
	int pid;		 /* KAGG_KEY_PID, KAGG_KEY_TID */
	int tid;		 /* KAGG_KEY_TID only */
	char comm[16];		 /* KAGG_KEY_CGROUP: unused (the cgroup: kagg_hist.cgroup) */
	uint64_t id;		 /* tool-defined id (syscall number, function...), 0 unused */
	const char *label;	 /* name of id ("read", "vfs_read"...), NULL when none */
};

/* Whether a histogram keeps its values (kagg_hist.exact). */
enum kagg_exact {
	KAGG_EXACT_NONE = 0,	 /* no values kept: an in-kernel histogram */
	KAGG_EXACT_KEPT = 1,	 /* values kept: exact percentiles known */
	KAGG_EXACT_OVER_CAP = 2, /* more than KAGG_EXACT_MAX_VALUES values: none kept */
};

/* The most values a histogram keeps per interval for exact percentiles: 1 Mi (8 MiB). */
#define KAGG_EXACT_MAX_VALUES (1u << 20)

/* One log2 histogram: slot k counts values in [2^k, 2^(k+1)-1] (slot 0: [0, 1]). */
struct kagg_hist {
	size_t sz;
	struct kagg_hist_key key;
	enum kagg_unit unit;
	unsigned int nr_slots;
	const uint64_t *slots;
	uint64_t total; /* sum of slots */
	/* Since 0.1: what is counted when not a time in unit (kagg hist: the field's name). */
	const char *value;
	/* lin_step > 0: linear slot k is [lin_min + k*lin_step, lin_min + (k+1)*lin_step - 1]. */
	int64_t lin_min;
	uint64_t lin_step;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): when has_sum, the sum of the values counted, in
	 * unit (kagg hist: of the field's values), so sum / total is their mean.  Kernel sums
	 * are kept modulo 2^64 of the values in ns (kagg hist: the values).
	 */
	bool has_sum;
	double sum;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): when has_exp, exponential buckets (those of
	 * OpenTelemetry exponential histograms and Prometheus native histograms, scale
	 * exp_scale, N = 2^exp_scale): slot 0 counts the values of 0, slot k >= 1 the bucket of
	 * index i = exp_base_index + k - 1, the values in (2^(i/N), 2^((i+1)/N)] of unit.
	 */
	bool has_exp;
	int exp_scale;
	int64_t exp_base_index;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): the values themselves, for exact percentiles
	 * (kagg_hist__exact_percentile()).  Only the streamed path's histograms of
	 * KAGG_MODE_BOTH (kagg_snapshot__stream()) keep them, and only up to
	 * KAGG_EXACT_MAX_VALUES values per histogram per interval: exact says which.  With
	 * KAGG_EXACT_KEPT, values[0 .. nr_values) are the values counted, in unit, sorted
	 * ascending (nr_values = total).
	 */
	enum kagg_exact exact;
	uint64_t nr_values;
	const double *values;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): a program's own aggregation (kagg_prog__open(),
	 * kagg run): agg is its name; its key's fields, flattened (nested structs joined by
	 * '_'), are the labels label_names[i] = label_values[i], i < nr_labels, resolved as
	 * docs/sdk.md says (a pid's comm, a cgroup's path, symbols, major:minor, frames), and
	 * key.label holds them as one "name=value name=value" string.  A counter (KAGG_COUNT)
	 * is a histogram with no slots (nr_slots 0): total counts, sum sums.  NULL and 0 for
	 * the built-in tools.
	 */
	const char *agg;
	size_t nr_labels;
	const char *const *label_names;
	const char *const *label_values;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): when has_minmax, the smallest and the largest
	 * value counted, in unit, exact: kept as the values are counted (in the kernel, per
	 * CPU and generation, for the built-in tools' histograms), not taken from the
	 * buckets.  A histogram that counted nothing has none, nor has a counter (a program's
	 * KAGG_COUNT), nor a histogram of a program built before the SDK kept them.
	 */
	bool has_minmax;
	double min;
	double max;
	/*
	 * Appended after 0.2 (KAGG_HAS_FIELD): a KAGG_KEY_CGROUP histogram's cgroup v2: its id
	 * and its path from the cgroup2 mount ("/system.slice/foo.service"), NULL once the
	 * cgroup is gone.  key.id and key.label stay the tool's (syscount: the syscall).  0 and
	 * NULL in the other key modes.
	 */
	uint64_t cgroup_id;
	const char *cgroup;
};

/*
 * Percentile q of h, q in (0, 100] (100: the maximum), from its values, in h's unit:
 * nearest rank, the r-th smallest value with r = ceil(q/100 * N) (at least 1), the same
 * rank kagg_hist__percentile() places in a bucket.  0, -EINVAL (bad arguments), -ENODATA
 * (h keeps no values: see kagg_hist.exact; or it is empty).  Appended after 0.1.
 */
KAGG_API int kagg_hist__exact_percentile(const struct kagg_hist *h, double q, double *value);

/*
 * Bounds of slot k of h, whatever its buckets (log2, linear, exp), in its unit: inclusive
 * integers for log2 and linear slots; for exp slots low is exclusive (the zero slot: [0, 0]).
 * Appended after 0.1.
 */
KAGG_API void kagg_hist__bounds(const struct kagg_hist *h, unsigned int k, double *low,
				double *high);

/* Bounds of log2 slot k, inclusive; k < 64. */
KAGG_API void kagg_log2_bounds(unsigned int k, uint64_t *low, uint64_t *high);

/*
 * Percentile q of h, q in (0, 100] (100: the maximum), in h's unit, and the bounds of the
 * bucket that holds it (low, high may be NULL): the error is at most that bucket's width.
 * Rule: the rank r = ceil(q/100 * N) (at least 1) of the N values counted falls in the
 * bucket [low, high] whose cumulative count first reaches r; with b values below it and c
 * in it, the value is low + (high - low) * (r - b) / c (its values taken as evenly spread,
 * the last at high), held within [min, max] when h has its exact extremes (has_minmax, so
 * that q = 100 is the maximum itself when it lies in its bucket's printed bounds) and
 * always within [low, high].  0, -EINVAL (bad arguments), -ENODATA (an empty histogram).
 */
KAGG_API int kagg_hist__percentile(const struct kagg_hist *h, double q, double *value, double *low,
				   double *high);

/*
 * In KAGG_MODE_BOTH, the streaming path's histograms (read them with the
 * same accessors); NULL otherwise.  Owned by snap.
 */
KAGG_API const struct kagg_snapshot *kagg_snapshot__stream(const struct kagg_snapshot *snap);

KAGG_API size_t kagg_snapshot__hist_cnt(const struct kagg_snapshot *snap);
/* Histogram i (sorted by key), NULL + EINVAL when out of range. Owned by snap. */
KAGG_API const struct kagg_hist *kagg_snapshot__hist(const struct kagg_snapshot *snap, size_t i);

/*
 * One frame of an aggregated stack, already symbolized.  A frame is named by its function:
 * C++ and Rust names demangled ("ns::Class::func(int)"), symbol versions left out
 * ("clock_nanosleep", not "clock_nanosleep@@GLIBC_2.17"); a frame with no symbol is "[file]"
 * (the mapped file's base name) or "[unknown]".  Stacks that then read the same are one
 * stack, their counts and times summed.  With KAGG_SNAP_ADDRS (kagg_session__snapshot) frames
 * are "func+0x1a", "/path/file+0x1a" or "[unknown] 0xADDR" and only stacks captured alike
 * are merged.  Kernel stacks start at the traced event: the BPF program and the tracing glue
 * that ran it are left out.
 */
struct kagg_frame {
	size_t sz;
	uint64_t ip;	 /* the address (of the first stack merged into this one) */
	const char *sym; /* the frame's name, as above; owned by the snapshot */
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): the file the frame is in (a user frame: the
	 * mapped file's path as /proc/PID/maps shows it; a kernel frame: "[kernel]" or the
	 * module's name), NULL when not known.  Owned by the snapshot.
	 */
	const char *module;
};

/* One aggregated stack (offcpu --stacks, profile), frames innermost first. */
struct kagg_stack {
	size_t sz;
	int pid;
	int tid;
	char comm[16];
	uint64_t total_ns;
	uint64_t count;
	int kstack_err; /* 0, -ENOENT when not captured by design, or the capture's negative errno
			 */
	int ustack_err; /* 0, -ENOENT for kernel threads, or the capture's negative errno */
	unsigned int nr_kframes;
	unsigned int nr_uframes;
	const struct kagg_frame *const *kframes; /* nr_kframes pointers */
	const struct kagg_frame *const *uframes; /* nr_uframes pointers */
};

KAGG_API size_t kagg_snapshot__stack_cnt(const struct kagg_snapshot *snap);
/* Stack i, sorted by total time (largest first). Owned by snap. */
KAGG_API const struct kagg_stack *kagg_snapshot__stack(const struct kagg_snapshot *snap, size_t i);

/* ------------------------------------------------------------ meta */

/* A drop (or a capture failure) by cause.  Zero counts are listed too. */
struct kagg_drop {
	size_t sz;
	const char *cause; /* short name, e.g. "task_storage" */
	const char *what;  /* one line: what was lost */
	uint64_t count;
};

/* BPF_ENABLE_STATS figures of one program, over the snapshot's interval. */
struct kagg_prog_cost {
	size_t sz;
	const char *prog;
	uint64_t run_cnt;
	uint64_t run_time_ns;
	double ns_per_run; /* run_time_ns / run_cnt, 0 when run_cnt is 0 */
};

/*
 * A BPF map the session's programs use (with overhead): its kernel figures
 * (bpf_map_get_info_by_fd) and the bytes of keys and values they mean, bytes =
 * max_entries * (key_size + value_size * copies), copies the possible CPUs for a
 * per-CPU map, else 1 (the kernel's own bookkeeping per entry not included; a
 * ring buffer: max_entries bytes; task storage: 0, it grows with the tasks).
 */
struct kagg_map_cost {
	size_t sz;
	const char *map;  /* the map's name, as the kernel truncates it */
	const char *type; /* "hash", "percpu_array", ... */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t copies;
	uint64_t bytes;
};

/*
 * What a snapshot measured.  Owned by the snapshot; read-only.  New fields
 * are only appended (sz says how far this library filled it).
 */
struct kagg_meta {
	size_t sz;
	const char *tool;	  /* "offcpu" */
	const char *event;	  /* "sched:sched_switch" */
	const char *attach;	  /* attach type used: "tp_btf" or "raw_tp" */
	const char *attach_note;  /* why a fallback was used, or NULL */
	const char *kernel;	  /* uname -r */
	const char *kernel_build; /* uname -v */
	const char *clock;	  /* clock of the BPF timestamps */
	const char *filters;	  /* human-readable filters, "none" when none */
	const char *unit;
	int nr_cpus;	       /* possible CPUs */
	int cpus_observed;     /* CPUs on which the program ran in this interval */
	struct timespec start; /* CLOCK_REALTIME, interval start */
	struct timespec end;   /* CLOCK_REALTIME, interval end */
	double duration_s;
	uint64_t events_seen;	  /* program runs (sched_switch events) */
	uint64_t events_recorded; /* intervals aggregated */
	/* left out by the tool's filters (offcpu -m/-M, runqlat --cpu, hist --filter): not lost */
	uint64_t events_filtered;
	size_t nr_drops;
	const struct kagg_drop *const *drops; /* nr_drops pointers */
	uint64_t drops_total; /* sum of drops that lost an interval (capture failures excluded) */
	bool snapshot_exact;  /* reset reads are exact (see kagg_session__snapshot) */
	const char *snapshot_note;
	bool has_overhead;
	size_t nr_progs;
	const struct kagg_prog_cost *const *progs; /* nr_progs pointers */
	/* Streaming (mode "stream" or "both"). */
	const char *mode; /* "agg", "stream" or "both" */
	bool has_stream;
	uint64_t stream_seen;	   /* events the streaming program ran for */
	uint64_t stream_sent;	   /* records it submitted */
	uint64_t stream_delivered; /* records consumed in userspace */
	uint64_t stream_dropped;   /* records lost: BPF ring buffer full */
	uint64_t stream_bytes;	   /* bytes moved to userspace (records + headers) */
	double consumer_cpu_s;	   /* CPU time spent consuming */
	const char *stream_format; /* where the sched_switch format came from */
	uint64_t rb_overrun;	   /* records overwritten in the reference ring buffer */
	uint64_t rb_dropped;	   /* records refused by it (producer/consumer mode) */
	/*
	 * With overhead and a stream: each path's BPF run time per event
	 * (events_seen), summed over its programs; 0 for a path not running.
	 */
	double agg_ns_per_event;
	double stream_ns_per_event;
	/*
	 * Stacks (offcpu --stacks, profile): the frames of the captured stacks (each distinct
	 * capture once, before the stacks that read the same are merged) and those left
	 * unknown, by cause.  has_frames is false for snapshots without stacks.
	 */
	bool has_frames;
	uint64_t frames;
	uint64_t frames_no_maps;    /* user address in no file mapping known for its process:
				     * it exited before its mappings could be read, or the code
				     * is anonymous memory (JIT) */
	uint64_t frames_no_symbols; /* inside a known file or the kernel, no symbol covers it */
	uint64_t stacks_lost;	    /* stacks that were to be captured and are not there */
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): process notes (a process first seen in a user
	 * stack, or with new code mapped) that found their ring buffer full.  The process's
	 * maps are then read at its next event, or at the snapshot: if it exited first, its
	 * frames count in frames_no_maps.
	 */
	uint64_t notes_lost;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD): where the names of the named frames came from
	 * (the counts sum to frames - frames_no_maps - frames_no_symbols, see docs/stacks.md):
	 * the kernel's kallsyms, a file's .symtab, its .dynsym, its MiniDebugInfo
	 * (.gnu_debugdata), a separate debug file (by build id or .gnu_debuglink), a debuginfod
	 * server, a JIT's perf map (/tmp/perf-PID.map).
	 */
	uint64_t frames_kallsyms;
	uint64_t frames_symtab;
	uint64_t frames_dynsym;
	uint64_t frames_minidebuginfo;
	uint64_t frames_debugfile;
	uint64_t frames_debuginfod;
	uint64_t frames_perfmap;
	/* Of frames_no_symbols: in files whose symbols a debuginfod server did not give. */
	uint64_t frames_debuginfod_failed;
	/* debuginfod (DEBUGINFOD_URLS set), since the session opened: files asked, and not got */
	uint64_t debuginfod_queries;
	uint64_t debuginfod_not_found;
	uint64_t debuginfod_timeouts; /* given up after the per-file timeout */
	uint64_t debuginfod_errors;   /* server unreachable, or any other error */
	uint64_t debuginfod_skipped;  /* not asked: the servers were taken for down */
	/*
	 * User stack unwinding (profile, offcpu --stacks): the method asked ("fp", "table" or
	 * "auto"; NULL without user stacks), the user frames found by frame pointer and by
	 * unwind table (the walks that stopped early are in the drops, unwind_*), and the
	 * unwind tables loaded: files, rows, bytes of BPF map memory in use.
	 */
	const char *unwind;
	uint64_t frames_fp;
	uint64_t frames_table;
	uint64_t unwind_files;
	uint64_t unwind_rows;
	uint64_t unwind_bytes;
	/*
	 * Appended after 0.1 (KAGG_HAS_FIELD), with overhead: the maps of the session's
	 * programs and the sum of their bytes.
	 */
	size_t nr_maps;
	const struct kagg_map_cost *const *maps; /* nr_maps pointers */
	uint64_t map_bytes;
	/*
	 * Appended after 0.2: with overhead and a stream, where one program does both paths
	 * (a program written with the SDK headers, in --mode both), its streaming part was
	 * timed inside it: stream_ns_per_event is that part of its run time and
	 * agg_ns_per_event the rest (the hook and the program's own work included).  False
	 * where each path is a program of its own (the built-in tools).
	 */
	bool stream_timed;
};

KAGG_API const struct kagg_meta *kagg_snapshot__meta(const struct kagg_snapshot *snap);

/* ------------------------------------------------------------ printing */

struct kagg_print_opts {
	size_t sz;
	enum kagg_format format;
	bool no_meta; /* text: leave out the "# ..." header lines */
	bool folded;  /* stacks as folded lines "comm;frame;frame count" (text only) */
	/*
	 * The percentiles printed with every histogram (kagg_hist__percentile()), each in
	 * (0, 100], 100 printed as "max"; NULL: p50, p90, p99, p99.9 and max.
	 */
	const double *percentiles;
	size_t nr_percentiles;
	/*
	 * libbpf-tools' -T: the local time the snapshot ends, as HH:MM:SS, on a line
	 * before the text (not folded) and as "timestamp" in the JSON meta.
	 */
	bool timestamp;
	/*
	 * Appended after 0.1: the text form prints the keyed histograms heaviest first (by
	 * the sum of their values when has_sum, else by count); with top > 0, text and JSON print
	 * only the top heaviest histograms (each path's, in --mode both) and top stacks, and say
	 * how many were left out.  0: all.
	 */
	size_t top;
	/*
	 * Appended after 0.1: folded lines without the ";--" between the user and the kernel
	 * frames (kagg's command line leaves it out unless --delimiter, as bcc's -d).
	 */
	bool no_delimiter;
};
#define kagg_print_opts__last_field no_delimiter

/*
 * Print a snapshot: text (BCC-style histograms, meta header, stacks) or one
 * JSON document {"meta": {...}, "histograms": [...], "stacks": [...]}.
 * 0 or -errno (EINVAL bad args, EIO write error).
 */
KAGG_API int kagg_snapshot__print(const struct kagg_snapshot *snap, FILE *f,
				  const struct kagg_print_opts *opts);

/*
 * Print a snapshot's meta as the "# ..." header lines of the text form: what was measured,
 * how, for how long, and every drop by cause.  For output whose format has no room for them
 * (folded stacks), on another stream.  0 or -errno (EINVAL, EIO).
 */
KAGG_API int kagg_meta__print(const struct kagg_meta *m, FILE *f);

/*
 * Print one histogram in BCC text form (header line, then "low -> high : count |***|").
 * 0 or -errno: EINVAL (h->sz too small, or bytes past what this library
 * knows not zero), EIO.
 */
KAGG_API int kagg_hist__print_text(const struct kagg_hist *h, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_SNAPSHOT_H */
