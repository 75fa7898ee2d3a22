/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/tprec.h - stream the raw records of any tracepoints into the session's
 * reference ftrace ring buffer, as the kernel lays them out (kagg record -e).
 *
 *	const char *evs[] = { "signal:signal_generate", "sched:sched_process_exec" };
 *	KAGG_OPTS(kagg_tprec_opts, o, .events = evs, .nr_events = 2, .rb_consume = true);
 *	struct kagg_session *s = kagg_tprec__open(&o);
 *	kagg_session__attach(s);  ...  kagg_session__poll(s, 100);
 *	// kagg_session__ringbuf(s): the events, kagg_session__events(s): their formats
 *
 * Each event's format is read from tracefs (events/SYS/NAME/format; tracefs
 * must be mounted); one generic classic tracepoint program per event copies
 * the trace entry, its fixed part and its dynamic (__data_loc, __rel_loc)
 * data, at most 4096 bytes (a longer record is cut, counted in the meta's
 * "truncated" drop), through the BPF ring buffer; the record lands under the
 * event's id with its common fields set from the current thread (flags and
 * preempt count 0: BPF does not see them).  The snapshot has no histogram:
 * its meta counts the stream.
 */
#ifndef KAGG_TPREC_H
#define KAGG_TPREC_H

#include <kagg/common.h>
#include <kagg/session.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Events one session records at most. */
#define KAGG_TPREC_MAX_EVENTS 8

struct kagg_tprec_opts {
	size_t sz;
	const char *const *events; /* "SYS:NAME" (or "SYS/NAME"), 1 to KAGG_TPREC_MAX_EVENTS */
	size_t nr_events;
	size_t stream_bytes; /* BPF ring buffer size, power of 2 >= 4096; 0: 8 MiB */
	/* Reference ftrace ring buffer: sub-buffers per CPU (0: 128); producer/consumer mode. */
	size_t rb_subbufs;
	bool rb_consume;
	/* Directory holding SYS/NAME/format; NULL: /sys/kernel/tracing/events. */
	const char *events_dir;
	bool overhead; /* measure the program's own run time (BPF_ENABLE_STATS) */
	kagg_log_fn log;
	void *log_ctx;
};
#define kagg_tprec_opts__last_field log_ctx

/*
 * Open and load; nothing attached yet.
 * errno: EINVAL bad opts or event name, ENOENT no such tracepoint (logged,
 * naming it), EPERM/EACCES no privileges, EOPNOTSUPP kernel lacks what is needed.
 */
KAGG_API struct kagg_session *kagg_tprec__open(const struct kagg_tprec_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_TPREC_H */
