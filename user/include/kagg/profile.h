/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/profile.h - CPU sampling with stacks aggregated in the kernel.
 *
 *	KAGG_OPTS(kagg_profile_opts, o, .freq = 99);
 *	struct kagg_session *s = kagg_profile__open(&o);
 *	kagg_session__attach(s);           // one perf event per CPU, program on each
 *	...
 *	snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *	kagg_profile__print_folded(snap, stdout);
 *
 * Each stack of the snapshot (kagg_snapshot__stack) has count = samples and
 * total_ns = samples * (1e9 / freq) ns, the CPU time the samples stand for.
 * pid = tid = the process (samples are aggregated per process).  The meta
 * says which perf event sampled (event "cycles" or "cpu-clock") and, in
 * attach_note, why cpu-clock was used when it was.
 */
#ifndef KAGG_PROFILE_H
#define KAGG_PROFILE_H

#include <stdio.h>
#include <kagg/common.h>
#include <kagg/session.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which perf event drives the sampling. */
enum kagg_profile_event {
	KAGG_PROFILE_EV_AUTO = 0,      /* hardware cycles if the PMU has them, else cpu-clock */
	KAGG_PROFILE_EV_CYCLES = 1,    /* hardware cycles only (EOPNOTSUPP without a PMU) */
	KAGG_PROFILE_EV_CPU_CLOCK = 2, /* the cpu-clock software event */
};

/* Which stacks each sample captures. */
enum kagg_profile_stacks {
	KAGG_PROFILE_BOTH = 0,
	KAGG_PROFILE_USER = 1,	 /* user stacks only (-U) */
	KAGG_PROFILE_KERNEL = 2, /* kernel stacks only (-K) */
};

struct kagg_profile_opts {
	size_t sz;
	unsigned int freq; /* samples per second per CPU; 0: 49 */
	int cpu;	   /* sample only this CPU; -1 (or any negative): all online */
	const int *pids;   /* only these processes (each must exist at open) */
	size_t nr_pids;
	enum kagg_profile_stacks stacks;
	enum kagg_profile_event event;
	bool overhead; /* measure the program's run time (BPF_ENABLE_STATS) */
	kagg_log_fn log;
	void *log_ctx;
	/* Appended after 0.2: how user stacks are walked, and the unwind tables' cap in rows
	 * (8 bytes each, all files together; 0: 1572864, 12 MiB). */
	enum kagg_unwind unwind;
	size_t unwind_rows;
};
#define kagg_profile_opts__last_field unwind_rows

/*
 * Open and load the profile program and choose the perf event; the events
 * are opened (one per CPU) by kagg_session__attach().
 * errno: EINVAL bad opts (freq 0 after defaults or above the kernel's
 * perf_event_max_sample_rate, cpu not online), ESRCH a pid does not exist,
 * EOPNOTSUPP cycles requested without a PMU or kernel feature missing,
 * EPERM/EACCES no privileges (root, or CAP_BPF + CAP_PERFMON).
 */
KAGG_API struct kagg_session *kagg_profile__open(const struct kagg_profile_opts *opts);

/*
 * Print the snapshot's stacks folded, one line each, for flame graphs:
 * "comm;user frames outermost first;--;kernel frames outermost first COUNT"
 * with COUNT the number of samples.  0 or -errno (EINVAL, EIO).
 */
KAGG_API int kagg_profile__print_folded(const struct kagg_snapshot *snap, FILE *f);
/* The same, with opts (NULL: as above): no_delimiter leaves the ";--" out. */
KAGG_API int kagg_profile__print_folded_opts(const struct kagg_snapshot *snap, FILE *f,
					     const struct kagg_print_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_PROFILE_H */
