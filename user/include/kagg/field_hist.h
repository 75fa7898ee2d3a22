/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/field_hist.h - a log2 histogram of any tracepoint's numeric field,
 * aggregated in the kernel.  The field's offset, size and signedness come
 * from the event's tracefs format file at run time (tracefs is mounted on
 * /sys/kernel/tracing when it is not), and one generic BPF program reads it.
 *
 *	KAGG_OPTS(kagg_field_hist_opts, o, .event = "block:block_rq_issue", .field = "bytes");
 *	struct kagg_session *s = kagg_field_hist__open(&o);
 *	kagg_session__attach(s);  ...  snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *	kagg_snapshot__print(snap, stdout, NULL);
 *
 * Histograms count raw field values (not times): each kagg_hist's value
 * (and meta->unit) is the field's name; kagg_snapshot__print() prints them.  With key_field, one
 *histogram per key value: key.id = the value (a hash for char-array keys), key.label = the value in
 *decimal, or the string for char-array keys (e.g. comm fields).
 */
#ifndef KAGG_FIELD_HIST_H
#define KAGG_FIELD_HIST_H

#include <kagg/common.h>
#include <kagg/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_field_hist_opts {
	size_t sz;
	const char *event;     /* "SYSTEM:NAME" (or "SYSTEM/NAME") */
	const char *field;     /* numeric field of the event (1, 2, 4 or 8 bytes) */
	const char *key_field; /* optional: numeric field or char array to key by */
	/* optional: "FIELD OP VALUE", OP one of == != < <= > >=, VALUE a number (0x.. ok) */
	const char *filter;
	bool overhead;
	kagg_log_fn log;
	void *log_ctx;
	/*
	 * lin_step > 0: linear buckets [lin_min + k*lin_step, ...), 64 of them,
	 * instead of log2; values outside are counted in the meta (below_range,
	 * above_range), not in the histogram.  Signed comparisons for signed fields.
	 */
	int64_t lin_min;
	uint64_t lin_step;
	/*
	 * Appended after 0.1: KAGG_BUCKETS_EXP buckets the values exponentially, scale
	 * exp_scale 0..5 (not with lin_step); negative values are counted apart.  With a
	 * numeric key_field, sparse: one histogram per key value, 163840 (key, bucket) cells
	 * in all (a value whose cell cannot be made: "keys_full").  No string keys.
	 */
	enum kagg_buckets buckets;
	int exp_scale;
};
#define kagg_field_hist_opts__last_field exp_scale

/*
 * Open and load; nothing attached yet.
 * errno: EINVAL bad opts or filter syntax, ENOENT no such event or field
 * (the log callback lists what exists), EPERM/EACCES no privileges or
 * tracefs cannot be mounted, EOPNOTSUPP kernel lacks what is needed.
 */
KAGG_API struct kagg_session *kagg_field_hist__open(const struct kagg_field_hist_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_FIELD_HIST_H */
