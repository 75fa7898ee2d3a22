/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/common.h - conventions shared by every libkagg header, and the enums
 * the tools' opts share (units, keys, attach types, streaming modes).
 *
 * - Functions returning int return 0 on success or a negative errno.
 * - Functions returning a pointer return NULL on failure with errno set.
 * - Every *_opts struct starts with `size_t sz` (set it with KAGG_OPTS) and is
 *   only ever appended to.  A caller built against a newer header may pass a
 *   larger struct: the library accepts it when every byte it does not know is
 *   zero, and fails with -EINVAL otherwise.
 * - Every struct crossing the API can grow (see docs/api.md, "ABI policy"):
 *   structs the caller allocates and the library fills or reads start with
 *   `size_t sz` set by the caller (the library touches only what sz covers
 *   and fails with -EINVAL when sz is smaller than the struct's first
 *   release); structs the library hands out start with `size_t sz` set by
 *   the library (read a field added later only when KAGG_HAS_FIELD() says it
 *   is there), or are opaque handles read through accessors.
 * - Every __destroy()/__free() accepts NULL.
 * - libkagg keeps no process-global state: logging goes through the callback
 *   given in each handle's opts.
 */
#ifndef KAGG_COMMON_H
#define KAGG_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KAGG_API
#define KAGG_API __attribute__((visibility("default")))
#endif

/* Declare and size an opts struct: KAGG_OPTS(kagg_offcpu_opts, o, .unit = ...); */
#define KAGG_OPTS(TYPE, NAME, ...)                                       \
	struct TYPE NAME = ({                                            \
		memset(&NAME, 0, sizeof(struct TYPE));                   \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

/*
 * True when the struct *p (whose first member is size_t sz) is large enough
 * to hold FIELD: use it before reading a field a later release appended to
 * a struct the library hands out, e.g. KAGG_HAS_FIELD(meta, kagg_meta, rb_dropped).
 */
#define KAGG_HAS_FIELD(p, TYPE, FIELD) \
	((p)->sz >= offsetof(struct TYPE, FIELD) + sizeof(((struct TYPE *)0)->FIELD))

enum kagg_log_level {
	KAGG_LOG_WARN = 0,
	KAGG_LOG_INFO = 1,
	KAGG_LOG_DEBUG = 2,
};

/*
 * Log callback: one message per call, without a trailing newline.  Called
 * from the thread that called into the library; ctx is the pointer given
 * next to the callback in the opts.
 */
typedef void (*kagg_log_fn)(void *ctx, enum kagg_log_level level, const char *msg);

/*
 * Route libbpf's messages (verifier logs, load errors) to fn, or silence
 * them with NULL.  libbpf's print hook is process-wide, so this setting is
 * too: call it once, early, from the program's main thread.
 */
KAGG_API void kagg_libbpf_set_log(kagg_log_fn fn, void *ctx);

/* Library version, "MAJOR.MINOR.PATCH". Thread-safe. */
KAGG_API const char *kagg_version(void);

/* ------------------------------------------------ vocabulary of the tools' opts */

/* Unit of the times a histogram counts. */
enum kagg_unit {
	KAGG_UNIT_USECS = 0,
	KAGG_UNIT_NSECS = 1,
	KAGG_UNIT_MSECS = 2,
};

/* Bucketing of a value histogram (appended after 0.1). */
enum kagg_buckets {
	KAGG_BUCKETS_LOG2 = 0, /* [2^k, 2^(k+1) - 1] */
	KAGG_BUCKETS_EXP = 1,  /* OpenTelemetry exponential buckets of scale exp_scale */
};

/* Unit name ("usecs"...), NULL for an unknown value. */
KAGG_API const char *kagg_unit__name(enum kagg_unit unit);
/* Parse "nsecs"/"usecs"/"msecs" (also "ns", "us", "ms"); 0 or -EINVAL. */
KAGG_API int kagg_unit__parse(const char *s, enum kagg_unit *unit);

/* What one histogram stands for. */
enum kagg_key_mode {
	KAGG_KEY_NONE = 0, /* one system-wide (or filter-wide) histogram */
	KAGG_KEY_PID = 1,  /* one per process */
	KAGG_KEY_TID = 2,  /* one per thread */
	/* appended after 0.2: offcpu, runqlat, syscount; kernel path (KAGG_MODE_AGG), log2 */
	KAGG_KEY_COMM = 3,   /* one per command name (kagg_hist_key.comm) */
	KAGG_KEY_CGROUP = 4, /* one per cgroup v2 (kagg_hist.cgroup_id, its path in cgroup) */
};

/* How tracepoint programs attach. */
enum kagg_attach {
	KAGG_ATTACH_AUTO = 0, /* tp_btf, falling back to raw_tp when it cannot load */
	KAGG_ATTACH_TP_BTF = 1,
	KAGG_ATTACH_RAW_TP = 2,
};

/* How a source is consumed. */
enum kagg_mode {
	KAGG_MODE_AGG = 0,    /* aggregate in the kernel (maps) */
	KAGG_MODE_STREAM = 1, /* stream one record per event, aggregate in userspace */
	KAGG_MODE_BOTH = 2,   /* both at once, on the same events, side by side */
};

/* Wakeup policy of streaming programs. */
enum kagg_wake {
	KAGG_WAKE_WATERMARK = 0, /* wake when wake_bytes are pending (and poll every 100 ms) */
	KAGG_WAKE_ADAPTIVE = 1,	 /* the kernel wakes the consumer whenever it has caught up */
	KAGG_WAKE_TIMER = 2,	 /* never woken: the consumer polls every poll interval */
	KAGG_WAKE_EVERY = 3,	 /* a wakeup per record */
};

/*
 * How user stacks are walked (profile, offcpu with stacks), see docs/stacks.md: by unwind
 * tables compiled from each file's .eh_frame/.debug_frame (code built without frame
 * pointers: most distribution binaries), by frame pointers, or both, frame by frame.
 */
enum kagg_unwind {
	KAGG_UNWIND_AUTO = 0,  /* a table where the frame's file has one, else frame pointer */
	KAGG_UNWIND_FP = 1,    /* frame pointers only (the kernel's walk, bpf_get_stackid) */
	KAGG_UNWIND_TABLE = 2, /* tables only: a frame without one ends the stack */
};

/* Output format of the printers. */
enum kagg_format {
	KAGG_FORMAT_TEXT = 0,
	KAGG_FORMAT_JSON = 1,
	KAGG_FORMAT_NDJSON = 2, /* JSON, one compact document on one line */
};

#ifdef __cplusplus
}
#endif
#endif /* KAGG_COMMON_H */
