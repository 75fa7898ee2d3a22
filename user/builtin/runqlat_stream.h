/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the userspace half of runqlat's streaming path.  Consumes the
 * sched_wakeup, sched_wakeup_new and sched_switch records of the BPF ring
 * buffer, computes the same run-queue latency histograms as the kernel path
 * (same timestamps, filter decisions, --cpu, unit, keys and generations),
 * and lands each record in the reference ftrace ring buffer as the kernel's
 * own event on the CPU it happened on.
 */
#ifndef KAGG_RUNQLAT_STREAM_H
#define KAGG_RUNQLAT_STREAM_H

#include "stream/stream.h"

struct rqstream_cfg {
	struct scons_cfg core;
	enum kagg_key_mode key;
	enum kagg_unit unit;
	uint64_t unit_ns;
	const volatile struct kagg_exp_params *exp; /* exp buckets (the program's), NULL: log2 */
	int target_cpu;				    /* --cpu, or -1 */
	unsigned int land; /* 1 << RUNQLAT_REC_*: records to land (0: all) */
};

/* Where sched_wakeup(_new)'s fields are in the format in use. */
struct rq_wakeup_fmt {
	const struct kagg_rb_format *fmt;
	size_t payload;
	int off_comm, off_pid, off_prio, off_target_cpu;
};

struct rqstream {
	struct scons core;
	struct rq_wakeup_fmt wakeup, wakeup_new;
	struct scons_switch sw; /* sched_switch as the format in use lays it out */

	uint64_t unit_ns;
	int target_cpu;
	unsigned int land;    /* 1 << RUNQLAT_REC_* bits */
	struct u64map starts; /* tid -> enqueue ts of selected tasks */
	struct sagg agg;
	uint64_t recorded;	   /* latencies counted (cumulative) */
	uint64_t filtered_cpu;	   /* latencies ended on another CPU than --cpu (cumulative) */
	struct schain chain;	   /* its breaks: RUNQLAT_CNT_KERNEL_GAPS, from the stream */
	uint64_t switch_in_missed; /* RUNQLAT_CNT_DROP_SWITCH_IN, from the stream */
};

int rqstream_init(struct rqstream *st, const struct rqstream_cfg *cfg, char *err, size_t err_len);
/* The record handler, for session_stream_started(). */
void rqstream_on_record(void *ctx, const void *data, uint32_t len);
void rqstream_fini(struct rqstream *st);
int rqstream_read(struct rqstream *st, uint32_t g, bool reset, struct kagg_snapshot *snap);

#endif
