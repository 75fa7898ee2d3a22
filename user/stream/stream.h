/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: what every streaming consumer shares.  Its users: the streaming
 * tools' halves in user/builtin/ (offcpu_stream.c, runqlat_stream.c,
 * syscount_stream.c, through their headers), user/session/session.c (which
 * polls, drains and reads the meta of the consumer a tool hands it with
 * session_stream_started()) and tests/unit/test_percentile.c (sagg,
 * scons_slot).  It maps the BPF ring
 * buffer, drains it timing its own CPU, tracks the records' per-CPU sequence
 * numbers, owns the reference ftrace ring buffer the records land in (clocked
 * by the records' own timestamps) with its event registry and the kernel's
 * formats, and fills the stream part of a snapshot's meta.  The tool's half
 * decodes its record, aggregates it and lands it.
 */
#ifndef KAGG_STREAM_H
#define KAGG_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>
#include <kagg/snapshot.h>
#include "stream/bpfrb.h"
#include "shared/common.h"
#include "shared/exp_table.h"
#include "util/u64map.h"

/* The BPF ring buffer's size when the caller leaves it 0: 8 MiB. */
#define STREAM_DEFAULT_BYTES (8u << 20)

struct scons_cfg {
	int map_fd;
	int cnt_fd; /* stream.bpf.h's stream_cnt: the records' counters by generation */
	size_t map_bytes;
	int nr_cpus;
	size_t rb_subbufs;	/* reference buffer sub-buffers per CPU (0: 128) */
	bool rb_consume;	/* producer/consumer mode instead of overwrite */
	const char *events_dir; /* the formats' directory; NULL: tracefs events */
	/* scons_poll drains at once from this many pending bytes, else waits for
	 * the producer's wakeup or the timeout first (0: map_bytes / 4) */
	size_t batch_bytes;
};

struct scons {
	struct bpfrb *brb;
	struct kagg_rb *rb;
	struct kagg_rb_events *evs;
	int cnt_fd;
	const char *events_dir;
	uint64_t cur_ts;    /* clock of the reference ring buffer: the record's ts */
	uint64_t *last_seq; /* per CPU: last record number seen */
	int nr_cpus;
	size_t batch_bytes;
	char format_src[640]; /* where the formats came from */

	uint64_t delivered;	   /* records consumed (cumulative) */
	uint64_t delivered_gen[2]; /* records noted by scons_seq, by generation */
	uint64_t bytes;		   /* bytes moved (cumulative) */
	uint64_t seq_gaps;	   /* records missing from the per-CPU sequences */
	uint64_t cpu_ns;	   /* consumer CPU time (cumulative) */
	uint64_t rb_errors;	   /* reserve failures in the reference buffer */
	/* the same at the start of the current snapshot interval */
	uint64_t delivered0[2], bytes0, cpu_ns0, rb_overrun0, rb_dropped0;
};

/* 0, or -errno with a one-line reason in err. */
int scons_init(struct scons *c, const struct scons_cfg *cfg, char *err, size_t err_len);
void scons_fini(struct scons *c);

/* Consume everything committed now through fn.  Records consumed. */
long scons_drain(struct scons *c, bpfrb_fn fn, void *ctx);
/*
 * Drain, after waiting up to timeout_ms for the producer's wakeup unless a
 * batch is already pending.  Waiting for batches, not draining whatever is
 * there, is what keeps a consumer whose own activity is traced (syscalls,
 * switches) from feeding itself.  Records consumed or -errno.
 */
int scons_poll(struct scons *c, bpfrb_fn fn, void *ctx, int timeout_ms);

/* cpu folded into [0, nr_cpus): a record's CPU is one of them but for a bad record. */
static inline uint32_t scons_cpu(const struct scons *c, uint32_t cpu)
{
	return __builtin_expect(cpu < (uint32_t)c->nr_cpus, 1) ? cpu : cpu % (uint32_t)c->nr_cpus;
}

/*
 * Note a record by its head (struct kagg_rec_hdr): its number on its CPU
 * (counting gaps) and its generation (counting it delivered there); returns
 * its cpu folded into [0, nr_cpus).
 */
uint32_t scons_seq(struct scons *c, const struct kagg_rec_hdr *h);

/* scons_seq(), and in *lost whether records of that CPU went missing before this one. */
static inline uint32_t scons_seq_lost(struct scons *c, const struct kagg_rec_hdr *h, bool *lost)
{
	uint64_t gaps = c->seq_gaps;
	uint32_t cpu = scons_seq(c, h);

	*lost = c->seq_gaps != gaps;
	return cpu;
}

/*
 * The kernel's chain of switches, checked from the switch records as kagg_chain_break()
 * checks it in BPF: each switch on a CPU starts from the task the previous one went to.
 * last[cpu]: next_pid + 1 of that CPU's last switch record (0: unknown, as after a record
 * of ours was lost, or at the start).
 */
struct schain {
	uint64_t *last;
	int nr_cpus;
	uint64_t breaks; /* switches the kernel did not deliver (cumulative) */
};

/* 0 or -ENOMEM. */
int schain_init(struct schain *ch, int nr_cpus);
void schain_fini(struct schain *ch);
/* Every CPU's chain unknown (after switches missed while detached). */
void schain_forget(struct schain *ch);
/*
 * The switch prev_pid -> next_pid recorded on cpu (folded, scons_seq), lost telling
 * whether records of ours went missing before it: true at a break (counted).
 */
bool schain_break(struct schain *ch, uint32_t cpu, bool lost, int32_t prev_pid, int32_t next_pid);

/*
 * Define NAME, the BPF ring callback (bpfrb_fn) of a tool whose records REC_T
 * need no more than this: a short record is ignored; a record is noted
 * (scons_seq), then passed to the file's static account(st, r) and land(st, r).
 * ST_T is the tool's stream state, with its struct scons as `core`.
 */
#define SCONS_DEFINE_ON_RECORD(NAME, ST_T, REC_T)                     \
	void NAME(void *ctx, const void *data, uint32_t len)          \
	{                                                             \
		const REC_T *r = data;                                \
		ST_T *st = ctx;                                       \
                                                                      \
		if (len < sizeof(*r))                                 \
			return;                                       \
		scons_seq(&st->core, (const struct kagg_rec_hdr *)r); \
		account(st, r);                                       \
		land(st, r);                                          \
	}

/*
 * SYS/NAME's format: the kernel's (events_dir or tracefs), else the built-in
 * copy builtin(evs) defines (kagg_rb_events__define_sched, ...).  *payload
 * is the record size it describes.  0, or -errno with the reason in err.
 */
int scons_format(struct scons *c, const char *sys, const char *name,
		 int (*builtin)(struct kagg_rb_events *evs), const struct kagg_rb_format **fmt,
		 size_t *payload, char *err, size_t err_len);
/* Offset (and size, when non-NULL) of a field of fmt; -ENOENT with the reason in err. */
int scons_field(const struct kagg_rb_format *fmt, const char *name, int *off, int *size, char *err,
		size_t err_len);

/*
 * Reserve a `payload`-byte record of fmt at time ts on cpu's reference
 * buffer, zeroed, with the common fields set; NULL (counted) when refused.
 * Finish with kagg_rb__commit(rsv).
 */
uint8_t *scons_begin(struct scons *c, uint32_t cpu, uint64_t ts, const struct kagg_rb_format *fmt,
		     size_t payload, uint8_t flags, int pid, struct kagg_rb_rsv *rsv);

/*
 * sched/sched_switch as the format in use lays it out (the kernel's, or the
 * built-in copy): both sched_switch consumers (offcpu, runqlat) land their
 * records as this event.
 */
struct scons_switch {
	const struct kagg_rb_format *fmt;
	size_t payload;
	int off_prev_comm, off_prev_pid, off_prev_prio, off_prev_state, size_prev_state;
	int off_next_comm, off_next_pid, off_next_prio;
};

/* One sched_switch event's fields, as the kernel reports them (comms: 16 bytes). */
struct scons_switch_ev {
	const char *prev_comm;
	int32_t prev_pid, prev_prio;
	int64_t prev_state;
	const char *next_comm;
	int32_t next_pid, next_prio;
};

/* sched_switch's format and its seven fields into sw; 0, or -errno with the reason in err. */
int scons_switch_format(struct scons *c, struct scons_switch *sw, char *err, size_t err_len);
/*
 * Land ev at ts on cpu's reference buffer with common_pid pid (interrupts
 * off, as the scheduler runs it); counted in rb_errors when refused.
 */
void scons_land_switch(struct scons *c, const struct scons_switch *sw, uint32_t cpu, uint64_t ts,
		       int pid, const struct scons_switch_ev *ev);

/* The log2 slot of an interval of ns nanoseconds in units of unit_ns, as the BPF side buckets it.
 */
uint32_t scons_slot(uint64_t ns, uint64_t unit_ns);

/*
 * Exponential buckets (--buckets exp:S) for the streamed histograms, the BPF
 * side's own: its exp_params (the program's rodata) and kagg_exp_slot(), so
 * both paths put every value in the same bucket.  A histogram's counts are
 * nr_slots words (slot 0 the zero bucket, slot k >= 1 kagg_exp_slot() k - 1),
 * allocated at its first value.
 */
struct sexp {
	struct kagg_exp_params p;
	unsigned int nr_slots; /* 0: log2 buckets */
};

/* Exp buckets with p's table and scale, or log2 ones (nr_slots 0) when p is NULL. */
void sexp_init(struct sexp *x, const volatile struct kagg_exp_params *p);
/* Count ns in *slots (allocated on first use); -ENOMEM when it cannot be. */
int sexp_add(const struct sexp *x, uint64_t **slots, uint64_t ns);
/* slots (NULL: none counted) into h, allocated with x->nr_slots slots: counts, total, scale. */
void sexp_hist(const struct sexp *x, const uint64_t *slots, struct kagg_hist *h);

/*
 * The stream part of snap's meta for the interval whose events have
 * generation g, and its drop; on reset, g is retired: its counters are
 * cleared for its next use, and new baselines taken.
 */
void scons_meta(struct scons *c, struct kagg_snapshot *snap, __u32 g, bool reset);

/*
 * The values of one streamed histogram over an interval, kept for its exact
 * percentiles (kagg_hist.values): at most KAGG_EXACT_MAX_VALUES of them, and at
 * most SVALS_GEN_MAX for all the histograms of a generation together (per-key
 * histograms: 32 MiB however many keys).  Past either, or when memory runs
 * out, the histogram is over: it keeps none for the rest of the interval.
 */
#define SVALS_GEN_MAX (4u << 20)

struct svals {
	uint64_t *v; /* ns */
	uint32_t n, cap;
	bool over;
};

/* Keep ns in s; *gen_kept counts the values the generation keeps. */
void svals_add(struct svals *s, uint64_t ns, uint64_t *gen_kept);
/* Forget s's values and give its memory back (the interval is over). */
void svals_clear(struct svals *s);
/* The same, and free the histogram's exp bucket slots *xslots (sexp_add's). */
void svals_clear_xslots(struct svals *s, uint64_t **xslots);
/*
 * Hand s's values to h (which counts them, h->total set): sorted, in unit_ns
 * units, owned by snap; h->exact says whether they are there.  0 or -ENOMEM.
 */
int svals_read(struct svals *s, struct kagg_snapshot *snap, struct kagg_hist *h, uint64_t unit_ns);

/*
 * The streamed path's histograms, as the BPF side keeps its own: per
 * generation, one histogram or one per key (process or thread).
 */
struct sagg_key {
	uint32_t tgid;
	uint32_t pid;
	char comm[16];
	uint64_t slots[KAGG_SLOTS];
	uint64_t sum;	 /* of the values, ns */
	__u64 nmin, max; /* their extremes, ns, as kagg_ext_put() keeps them */
	struct svals vals;
	uint64_t *xslots; /* exp buckets (sexp): instead of slots */
};

struct sagg_gen {
	uint64_t slots[KAGG_SLOTS]; /* KAGG_KEY_NONE */
	uint64_t sum;		    /* KAGG_KEY_NONE: of the values, ns */
	__u64 nmin, max;	    /* KAGG_KEY_NONE: their extremes, as sagg_key's */
	struct svals vals;	    /* KAGG_KEY_NONE */
	uint64_t *xslots;	    /* KAGG_KEY_NONE, exp buckets (sexp): instead of slots */
	uint64_t kept;		    /* values kept by all its histograms */
	struct u64map index;	    /* (tgid << 32 | pid) -> keys[] index */
	struct sagg_key *keys;
	size_t nr_keys, cap_keys;
};

struct sagg {
	enum kagg_key_mode key;
	enum kagg_unit unit;
	struct sagg_gen gen[2];
	struct sexp exp; /* exp buckets (sexp_init() after sagg_init()), or log2 */
	int oom;	 /* -ENOMEM seen while aggregating */
};

int sagg_init(struct sagg *a, enum kagg_key_mode key, enum kagg_unit unit);
void sagg_fini(struct sagg *a);
/* Count one value of ns nanoseconds, in log2 slot `slot` (or its exp bucket), in generation g for
 * (tgid, pid, comm). */
void sagg_add(struct sagg *a, uint32_t g, uint32_t slot, uint64_t ns, uint32_t tgid, uint32_t pid,
	      const char *comm);
/* Copy generation g's histograms into snap (clearing them when reset). */
int sagg_read(struct sagg *a, uint32_t g, bool reset, struct kagg_snapshot *snap);

#endif
