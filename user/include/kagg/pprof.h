/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/pprof.h - a snapshot's stacks as a pprof profile (gzip-compressed profile.proto), the
 * format of go tool pprof, Parca, Pyroscope and other continuous profilers.
 *
 *	struct kagg_pprof_opts o = { .sz = sizeof(o), .off_cpu = true };
 *	kagg_pprof__write(snap, f, &o);
 *
 * Samples: one per stack, leaf first (the kernel frames, then the user frames, then the
 * process name as the root frame).  Values: profile's "samples/count" and
 * "cpu/nanoseconds"; off-CPU time as "offcpu/nanoseconds".  One function per frame name,
 * one location per function, one mapping per file (the kernel as "[kernel.kallsyms]"),
 * with the file's GNU build-id where it has one.  Frames are already symbolized.
 */
#ifndef KAGG_PPROF_H
#define KAGG_PPROF_H

#include <stdbool.h>
#include <stdio.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_pprof_opts {
	size_t sz;
	bool off_cpu; /* stacks' times are off-CPU time: "offcpu/nanoseconds" */
};
#define kagg_pprof_opts__last_field off_cpu

/* 0 or -errno: EINVAL (bad arguments), ENOMEM, EIO (writing f or compressing). */
KAGG_API int kagg_pprof__write(const struct kagg_snapshot *snap, FILE *f,
			       const struct kagg_pprof_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_PPROF_H */
