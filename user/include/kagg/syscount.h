/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/syscount.h - system call sessions: calls per syscall (optionally
 * per process), failures per (syscall, errno), or latency histograms per
 * syscall, aggregated in the kernel from raw_syscalls:sys_enter/sys_exit.
 *
 * Snapshot shape: one kagg_hist per key.  key.id is the syscall number
 * (errors mode: number | errno << 32) and key.label its name ("openat";
 * errors mode "openat:ENOENT"); numbers the name table lacks are labelled
 * "syscall_<nr>".  Count and errors modes carry no buckets (nr_slots 0):
 * the count is hist->total.  Latency mode carries log2 buckets.  Keyed by
 * command name (KAGG_KEY_COMM) or cgroup (KAGG_KEY_CGROUP: hist->cgroup_id
 * and hist->cgroup), key.id and key.label stay the syscall's.
 */
#ifndef KAGG_SYSCOUNT_H
#define KAGG_SYSCOUNT_H

#include <stdio.h>
#include <kagg/common.h>
#include <kagg/session.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kagg_syscount_mode {
	KAGG_SYSCOUNT_COUNT = 0,   /* calls per syscall */
	KAGG_SYSCOUNT_ERRORS = 1,  /* failed calls per syscall and errno */
	KAGG_SYSCOUNT_LATENCY = 2, /* latency histogram per syscall */
};

struct kagg_syscount_opts {
	size_t sz;
	enum kagg_unit unit;
	/* per syscall, or per process / thread / command / cgroup and syscall; KAGG_KEY_COMM
	 * and KAGG_KEY_CGROUP: stream_mode KAGG_MODE_AGG, log2 buckets */
	enum kagg_key_mode key;
	enum kagg_syscount_mode mode;
	/* Only these processes (NULL or 0 entries: all).  Each must exist at open. */
	const int *pids;
	size_t nr_pids;
	enum kagg_attach attach;
	bool overhead;
	kagg_log_fn log;
	void *log_ctx;
	/*
	 * Syscall name table: a <asm/unistd_64.h>-style header ("#define __NR_read 0")
	 * used in place of the built-in names; NULL: the built-in names, overridden by
	 * the installed UAPI header when there is one (see docs/syscount.md).
	 */
	const char *names_file;
	/*
	 * --- streaming (appended in 0.1) ---
	 * KAGG_MODE_STREAM: one record per sys_enter (count, latency) and
	 * sys_exit (errors, latency) through a BPF ring buffer; the same
	 * aggregates are computed in userspace and the records land in the
	 * session's reference ftrace buffer as raw_syscalls events.
	 * KAGG_MODE_BOTH: both paths on the same events (kagg_snapshot__stream()).
	 */
	enum kagg_mode stream_mode;
	size_t stream_bytes; /* BPF ring buffer size, power of 2 >= 4096; 0: 8 MiB */
	/* Directory holding raw_syscalls/<event>/format; NULL: /sys/kernel/tracing/events,
	 * falling back to a built-in copy of the kernel's layouts. */
	const char *events_dir;
	/*
	 * Appended after 0.1: latency mode, KAGG_BUCKETS_EXP buckets exponentially, scale
	 * exp_scale 0..5, per syscall (KAGG_KEY_NONE; on both paths) in a sparse map of at
	 * most exp_cells (syscall, bucket) cells (0: 16384); a latency whose cell cannot be
	 * made is dropped, counted as "exp_cells".  With exp_cells 0, the first frequent
	 * syscalls also get a dense array each, as many as fit in 256 KiB per CPU.
	 */
	enum kagg_buckets buckets;
	int exp_scale;
	unsigned int exp_cells;
};
#define kagg_syscount_opts__last_field exp_cells

/*
 * Open and load the syscount programs; nothing is attached yet.
 * errno: EINVAL bad opts, ESRCH a pid does not exist, ENOENT (or the open
 * error) names_file unreadable or without names, EPERM/EACCES no privileges,
 * EOPNOTSUPP kernel lacks what is needed (the log says what).  A missing
 * default name table is not an error: numbers are then labelled
 * "syscall_<nr>" and a warning is logged.
 */
KAGG_API struct kagg_session *kagg_syscount__open(const struct kagg_syscount_opts *opts);

/* Name of syscall nr in the session's table, or NULL. */
KAGG_API const char *kagg_syscount__name(struct kagg_session *s, unsigned int nr);

/*
 * Print a syscount snapshot: count and errors modes as a table sorted by
 * count ("SYSCALL COUNT", after PID/TID and COMM columns per process or
 * thread, COMM per command, CGROUP (its path) per cgroup; with
 * KAGG_MODE_BOTH the streamed count and the difference too), after the
 * usual meta header; latency mode and JSON as kagg_snapshot__print().
 * 0 or -errno.
 */
KAGG_API int kagg_syscount__print(const struct kagg_snapshot *snap, FILE *f,
				  const struct kagg_print_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_SYSCOUNT_H */
