/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/funclat.h - function latency: time from entry to return of kernel
 * functions (fentry/fexit, else kprobe/kretprobe) or user functions
 * (uprobe/uretprobe), one log2 histogram per function, aggregated in the
 * kernel.  Nested and recursive calls are timed level by level.
 *
 *	KAGG_OPTS(kagg_funclat_opts, o, .pattern = "c:malloc");
 *	struct kagg_session *s = kagg_funclat__open(&o);
 *	kagg_session__attach(s);  ...  kagg_session__snapshot(s, KAGG_SNAP_RESET);
 *
 * Histograms: one per matched function, key.id = its index (0..n-1, in name
 * order), key.label = its name.
 */
#ifndef KAGG_FUNCLAT_H
#define KAGG_FUNCLAT_H

#include <kagg/common.h>
#include <kagg/session.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kagg_funclat_attach {
	KAGG_FUNCLAT_AUTO =
		0, /* kernel: fentry (one function) or kprobe.multi (glob), else kprobes */
	KAGG_FUNCLAT_FENTRY = 1, /* kernel, one function only */
	KAGG_FUNCLAT_KPROBE = 2, /* kernel: one kprobe + kretprobe per function */
	KAGG_FUNCLAT_KPROBE_MULTI = 3,
	KAGG_FUNCLAT_UPROBE = 4, /* user: one uprobe + uretprobe per function */
	KAGG_FUNCLAT_UPROBE_MULTI = 5,
};

struct kagg_funclat_opts {
	size_t sz;
	/*
	 * What to trace: "FUNC" (kernel function), "LIB:FUNC" (a library:
	 * "c" is libc, resolved through the process's maps with pid, else
	 * /etc/ld.so.cache and the standard library directories) or
	 * "PATH:FUNC" (an ELF file, or a program name found in $PATH's
	 * absolute directories).  FUNC may be a glob
	 * (fnmatch: * ? [...]) matching many functions.
	 */
	const char *pattern;
	/* Only this process (0: all); for user functions the probes are attached to it alone. */
	int pid;
	enum kagg_unit unit;
	enum kagg_funclat_attach attach;
	/* Refuse patterns matching more functions than this (0: 1024, the most). */
	unsigned int max_funcs;
	bool overhead;
	kagg_log_fn log;
	void *log_ctx;
	/*
	 * Appended after 0.1: KAGG_BUCKETS_EXP buckets the latencies exponentially, scale
	 * exp_scale 0..5: with exp_cells 0, a dense array per function while they take at
	 * most 256 KiB per CPU, else a sparse map of at most exp_cells (function, bucket)
	 * cells (0: 16384; then the first frequent functions also get a dense array each, as
	 * many as fit in 256 KiB per CPU); a latency whose cell cannot be made is dropped,
	 * counted as "exp_cells".
	 */
	enum kagg_buckets buckets;
	int exp_scale;
	unsigned int exp_cells;
	/*
	 * Appended after 0.1: only calls made by tasks in this cgroup v2 directory or below
	 * it (NULL: any), as libbpf-tools' funclatency -c.  errno ENOENT/ENOTDIR when it is
	 * not one.
	 */
	const char *cgroup;
	/*
	 * Appended after 0.2: the log2 histograms of the functions are per CPU (no shared
	 * atomics) while their two generations' copies, on every possible CPU, take at
	 * most this many bytes (0: 4 MiB: 1956 functions on 2 CPUs, 15 on 256), else one
	 * copy per function that the CPUs share (atomic adds): memory that grows with the
	 * functions, not with functions times CPUs.
	 */
	size_t percpu_max_bytes;
};
#define kagg_funclat_opts__last_field percpu_max_bytes

/*
 * Resolve the pattern, load the programs and pick the attach path (probing
 * it by attaching once); nothing is attached on return.
 * errno: EINVAL bad opts or pattern, ENOENT no such function / library /
 * file, E2BIG pattern matches more than max_funcs, ESRCH pid does not exist,
 * EPERM/EACCES no privileges, EOPNOTSUPP the kernel cannot trace the
 * function (the log callback says which paths failed and why).
 */
KAGG_API struct kagg_session *kagg_funclat__open(const struct kagg_funclat_opts *opts);

/*
 * What pattern (as kagg_funclat_opts.pattern: FUNC, LIB:FUNC or PATH:FUNC, each FUNC a
 * glob) names, found as kagg_funclat__open() finds it but nothing loaded: cb(ctx, name)
 * for each function, in name order, a kernel function by its name (from tracefs'
 * available_filter_functions, else /proc/kallsyms), a user one as "PATH:FUNC" (from the
 * ELF symbol tables; pid > 0: LIB also through that process's maps).  A cb that returns
 * non-zero stops the walk.  log: the reasons of a failure (NULL: none).  Returns the number
 * of functions given to cb, or -errno: ENOENT nothing matches or no such library or
 * program (logged), EINVAL a bad pattern or not an ELF file.
 */
KAGG_API int kagg_funclat__list(const char *pattern, int pid,
				int (*cb)(void *ctx, const char *name), void *ctx, kagg_log_fn log,
				void *log_ctx);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_FUNCLAT_H */
