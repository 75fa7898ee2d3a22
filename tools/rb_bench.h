/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * rb_bench.h - `kagg rb bench`, measuring the reference ring buffer through its
 * public API (kagg/ringbuf.h), as any writer and reader would:
 * N writer threads reserve and commit fixed-size events on the buffer of the
 * CPU they run on while one reader thread drains whole sub-buffers, then the
 * per-CPU counters are read back.
 *
 *	KAGG_OPTS(rbb_opts, o, .writers = 2, .seconds = 1);
 *	struct rbb_result r = { .sz = sizeof(r) };
 *
 *	if (!rbb__run(&o, &r))
 *		rbb__print(&r, stdout, KAGG_FORMAT_TEXT);
 *	rbb_result__release(&r);
 *
 * Counters: every event a writer committed is read, overwritten (overrun)
 * or still in the buffer (entries); written = read + overrun + dropped +
 * entries, where dropped are the events a consume-mode buffer refused.
 * Once the reader has drained everything, read + overrun + entries equals
 * the writers' own count of commits (`committed`).
 */
#ifndef KAGG_TOOLS_RB_BENCH_H
#define KAGG_TOOLS_RB_BENCH_H

#include <signal.h>
#include <stdio.h>
#include <kagg/common.h>
#include <kagg/ringbuf.h>
#include <kagg/session.h>

struct rbb_opts {
	size_t sz;
	unsigned int writers; /* writer threads, 1..1024; 0: 1 */
	size_t payload;	      /* bytes per event, 8..max payload (4072); 0: 64 */
	size_t nr_subbufs;    /* sub-buffers per CPU, >= 2; 0: 64 */
	enum kagg_rb_mode mode;
	double seconds; /* how long the writers run; 0: 1 */
	/*
	 * The run ends early once *stop is non-zero (say, set by a SIGINT
	 * handler); it is looked at every 100 ms.  NULL: run the whole time.
	 */
	const volatile sig_atomic_t *stop;
	/*
	 * Leave the pages there, as a decoder wants them: cpuN.raw (each CPU's
	 * sub-buffers in trace_pipe_raw layout), header_page, header_event,
	 * kagg/bench/format and saved_cmdlines (the writer threads' names).
	 * The directories are created when missing.  NULL: pages are dropped.
	 */
	const char *raw_dir;
	kagg_log_fn log; /* why a run failed, one line at KAGG_LOG_WARN */
	void *log_ctx;
	/*
	 * Events attempted per wall-clock second per writer: a writer ahead of
	 * it sleeps after each batch of 256.  0: as fast as they can.
	 */
	double rate;
};

/* One CPU buffer's counters (see rbb_result__cpu). */
struct rbb_cpu {
	size_t sz;		 /* set by the caller: sizeof(struct rbb_cpu) */
	uint64_t written;	 /* read + overrun + dropped + entries */
	uint64_t read;		 /* events consumed by the reader */
	uint64_t overrun;	 /* events lost to overwrite */
	uint64_t dropped;	 /* consume mode: events refused because the buffer was full */
	uint64_t entries;	 /* events left unread */
	uint64_t commit_overrun; /* events refused: a writer wrapped into uncommitted data */
	double ns_per_event;	 /* writers' time on this CPU per reserve+commit attempt */
	const char *write_path;	 /* "rseq", "locked" (x86), "locked-casp" or "locked-llsc"
				  * (arm64): kagg_rb__write_path */
};

/*
 * What a run measured.  The caller allocates it and sets sz; the library
 * fills what fits in sz and keeps the per-CPU rows until
 * rbb_result__release().
 */
struct rbb_result {
	size_t sz;  /* set by the caller: sizeof(struct rbb_result) */
	void *priv; /* the per-CPU rows; private */
	/* the run, defaults applied */
	unsigned int writers;
	size_t payload;
	enum kagg_rb_mode mode;
	double seconds; /* as asked (an early stop does not change it) */
	int nr_cpus;	/* CPU buffers (at most 1024) */
	/* sums over the CPUs */
	uint64_t written;
	uint64_t read;
	uint64_t overrun;
	uint64_t dropped;
	uint64_t entries;
	uint64_t commit_overrun;
	double ns_per_event; /* per reserve+commit attempt, over every writer thread */
	uint64_t committed;  /* commits the writer threads counted */
	double rate;	     /* as asked, per writer (0: unpaced) */
};

/*
 * Run the benchmark.  res must be zeroed or released before.  0 with res
 * filled; -EINVAL bad opts or res (nothing to release); -ENOMEM; -errno when
 * the ring buffer or the bench event cannot be set up; -errno (-EIO for a
 * short write) when the raw_dir files cannot be created or written.  On
 * failure the log says why and res holds nothing to release.
 */
int rbb__run(const struct rbb_opts *opts, struct rbb_result *res);

/* Counters of CPU buffer cpu (0..nr_cpus-1) into *row (row->sz set).  0 or -EINVAL. */
int rbb_result__cpu(const struct rbb_result *res, int cpu, struct rbb_cpu *row);

/*
 * Print a result: text (a table, a row per CPU and the total, then a note
 * on the columns) or one JSON line
 *	{"writers": N, "payload": N, "mode": "overwrite"|"consume", "seconds": S,
 *	 "cpus": [{"cpu": N, "written": N, "read": N, "overrun": N, "dropped": N,
 *		   "ns_per_event": X, "write_path": "rseq"|"locked"|"locked-casp"|"locked-llsc"},
 *...], "total": {"written": N, "read": N, "overrun": N, "dropped": N, "commit_overrun": N,
 *"ns_per_event": X}} 0 or -EINVAL, -EIO (the stream's error flag is set).
 */
int rbb__print(const struct rbb_result *res, FILE *f, enum kagg_format fmt);

/* Free the per-CPU rows and zero res (but sz).  NULL-safe. */
void rbb_result__release(struct rbb_result *res);

#endif /* KAGG_TOOLS_RB_BENCH_H */
