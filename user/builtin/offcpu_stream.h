/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the userspace half of offcpu's streaming path.  Consumes the
 * sched_switch records of the BPF ring buffer, computes the same off-CPU
 * histograms as the kernel path (same timestamps, filters, min/max, unit,
 * keys and generations), lands each record in the reference ftrace ring
 * buffer as a sched/sched_switch event on the CPU it happened on, and hands
 * it to the user's callback.
 */
#ifndef KAGG_OFFCPU_STREAM_H
#define KAGG_OFFCPU_STREAM_H

#include <kagg/offcpu.h>
#include <kagg/session.h>
#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>
#include "shared/common.h"
#include "stream/stream.h"
#include "util/u64map.h"

struct ostream_cfg {
	struct scons_cfg core; /* batch_bytes: the watermark, drain without waiting from it */
	enum kagg_key_mode key;
	uint64_t min_ns, max_ns, unit_ns;
	enum kagg_unit unit;
	const volatile struct kagg_exp_params *exp; /* exp buckets (the program's), NULL: log2 */
	kagg_switch_fn cb;
	void *cb_ctx;
};

struct ostream {
	struct scons core;
	struct scons_switch sw; /* sched_switch as the format in use lays it out */

	uint64_t min_ns, max_ns, unit_ns;
	struct u64map starts; /* tid -> switch-out ts of selected tasks */
	struct schain chain;  /* its breaks: OFFCPU_CNT_KERNEL_GAPS, from the stream */
	uint64_t kernel_gaps0;
	struct sagg agg;
	kagg_switch_fn cb;
	void *cb_ctx;
};

int ostream_init(struct ostream *st, const struct ostream_cfg *cfg, char *err, size_t err_len);
/* The record handler, for session_stream_started(). */
void ostream_on_record(void *ctx, const void *data, uint32_t len);
void ostream_fini(struct ostream *st);
/* Copy generation g's histograms into snap (clearing them when reset). */
int ostream_read(struct ostream *st, __u32 g, bool reset, struct kagg_snapshot *snap);

#endif
