/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/session.h - a measurement session: one tool's BPF programs opened,
 * loaded, attached, read as exact snapshots, and torn down.  A tool's opener
 * (kagg_offcpu__open() in kagg/offcpu.h, kagg_runqlat__open()...) returns
 * the session; snapshots are read with kagg/snapshot.h.
 *
 *	KAGG_OPTS(kagg_offcpu_opts, o, .unit = KAGG_UNIT_USECS);
 *	struct kagg_session *s = kagg_offcpu__open(&o);     // loads, does not attach
 *	kagg_session__attach(s);
 *	...
 *	struct kagg_snapshot *snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *	kagg_snapshot__print(snap, stdout, NULL);
 *	kagg_snapshot__free(snap);
 *	kagg_session__destroy(s);                             // detaches, unloads everything
 *
 * Thread-safety: a session is not thread-safe; use one thread per session or
 * serialise calls.  Different sessions are independent and may be used from
 * different threads at once.  A snapshot is immutable once returned and may
 * be read from any thread.
 */
#ifndef KAGG_SESSION_H
#define KAGG_SESSION_H

#include <kagg/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handles: a session, its reference ring buffer and event formats, a snapshot. */
struct kagg_session;
struct kagg_rb;
struct kagg_rb_events;
struct kagg_snapshot;

/* Attach the loaded programs.  0 or -errno; -EALREADY when attached. */
KAGG_API int kagg_session__attach(struct kagg_session *s);

/*
 * Consume streamed records (calling the tool's callback, feeding the
 * userspace histograms and the reference ring buffer), waiting up to
 * timeout_ms for some to arrive.  Returns the number consumed or -errno
 * (-EINTR on a signal).  For sessions that do not stream it just waits.
 * Call it often enough that the BPF ring buffer does not fill up (losses are
 * counted).  Sessions with user stacks (offcpu --stacks, profile) also read
 * here the mappings of each process as it first shows up in a stack, so that
 * it is symbolized even if it exits before the snapshot: call it while they
 * run (every 100 ms or so) rather than sleeping.
 */
KAGG_API int kagg_session__poll(struct kagg_session *s, int timeout_ms);

/* The reference ftrace ring buffer streamed records land in (NULL when not streaming). */
KAGG_API struct kagg_rb *kagg_session__ringbuf(struct kagg_session *s);
/* The event formats of the records in that buffer (sched/sched_switch...). */
KAGG_API const struct kagg_rb_events *kagg_session__events(struct kagg_session *s);

/*
 * Detach (programs and maps stay loaded, data is kept).  0 or -errno.
 * kagg_session__attach() resumes it: an interval that was open at the detach (a task
 * switched out, a call entered) is closed by its next event seen, and may take in events
 * missed while detached; a new session starts clean.
 */
KAGG_API int kagg_session__detach(struct kagg_session *s);

/* Detach, unload and free everything.  NULL-safe. */
KAGG_API void kagg_session__destroy(struct kagg_session *s);

#define KAGG_SNAP_RESET (1u << 0) /* start a new interval: the next snapshot counts from here */
#define KAGG_SNAP_ADDRS (1u << 1) /* stack frames by address ("f+0x1a"), see kagg_frame */

/*
 * Read what was aggregated since attach (or since the last KAGG_SNAP_RESET),
 * as a snapshot (kagg/snapshot.h; free it with kagg_snapshot__free()).
 * With KAGG_SNAP_RESET the read is exact: every event lands in exactly one
 * snapshot (see meta->snapshot_exact).  Without it, later snapshots keep
 * accumulating.  KAGG_SNAP_ADDRS: stack frames by address (see kagg_frame
 * in kagg/snapshot.h).
 * NULL + errno: EINVAL (NULL session, unknown flag), ENOTCONN (never attached),
 * ENOMEM, or a map read error.
 */
KAGG_API struct kagg_snapshot *kagg_session__snapshot(struct kagg_session *s, unsigned int flags);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_SESSION_H */
