/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the userspace half of syscount's streaming path.  Consumes the
 * raw_syscalls sys_enter/sys_exit records of the BPF ring buffer, counts,
 * classifies or times the calls as the kernel path does (same timestamps,
 * filter decisions, keys and generations), and lands each record in the
 * reference ftrace ring buffer as the kernel's own event.  user/builtin/syscount.c
 * turns the entries into the same snapshot shapes as the kernel path's.
 */
#ifndef KAGG_SYSCOUNT_STREAM_H
#define KAGG_SYSCOUNT_STREAM_H

#include "stream/stream.h"

struct scstream_cfg {
	struct scons_cfg core;
	int mode; /* enum sc_mode */
	enum kagg_key_mode key;
	uint64_t unit_ns;
	const volatile struct kagg_exp_params
		*exp; /* latency: exp buckets (the program's), NULL: log2 */
};

/* One aggregate: a syscall (errors mode: and errno) for one key. */
struct scs_entry {
	uint32_t tgid, pid;
	uint64_t aux; /* nr, or SC_AUX(nr, errno) */
	char comm[16];
	uint64_t count;
	uint64_t slots[KAGG_SLOTS]; /* latency mode */
	uint64_t *xslots;	    /* latency mode, exp buckets (sexp): instead of slots */
	uint64_t sum;		    /* latency mode: of the latencies, ns */
	__u64 nmin, max;	    /* latency mode: their extremes, as kagg_ext_put() keeps them */
	struct svals vals;	    /* latency mode: the latencies, for exact percentiles */
};

struct scs_gen {
	struct u64map index; /* packed (key id, nr, errno) -> e[] index */
	struct scs_entry *e;
	size_t n, cap;
	uint64_t kept; /* latencies kept by its entries' vals */
};

struct scstream {
	struct scons core;
	const struct kagg_rb_format *enter_fmt, *exit_fmt;
	size_t enter_payload, exit_payload;
	int off_enter_id, off_args, off_exit_id, off_ret;

	int mode;
	enum kagg_key_mode key;
	uint64_t unit_ns;
	struct sexp exp;		  /* latency mode: exp buckets, or log2 */
	struct u64map start_ts, start_nr; /* latency: tid -> entry time, number */
	struct scs_gen gen[2];
	uint64_t recorded; /* calls aggregated (cumulative) */
	int oom;
};

int scstream_init(struct scstream *st, const struct scstream_cfg *cfg, char *err, size_t err_len);
/* The record handler, for session_stream_started(). */
void scstream_on_record(void *ctx, const void *data, uint32_t len);
void scstream_fini(struct scstream *st);
/*
 * Generation g's entries (n of them), valid until the next drain; -ENOMEM if any was lost.
 * The caller may sort their vals (svals_read()).
 */
int scstream_entries(struct scstream *st, uint32_t g, struct scs_entry **e, size_t *n);
void scstream_reset(struct scstream *st, uint32_t g);

#endif
