/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * perfmap.h - internal: the symbols a JIT writes for its code in /tmp/perf-PID.map, one line
 * per function: "START SIZE name" (hex START and SIZE), as perf reads them.
 *
 * The file is only read when it is a regular file (not a link) owned by root or by the
 * process's owner: anyone can write /tmp, and names from it end up in the output.
 */
#ifndef KAGG_SYMS_PERFMAP_H
#define KAGG_SYMS_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct pmap_sym {
	uint64_t start;
	uint64_t end;
	const char *name; /* in pmap.strs */
};

struct pmap {
	struct pmap_sym *syms; /* sorted by start, overlaps resolved to the later line */
	size_t cnt;
	char *strs;
	long long size; /* of the file when read: re-read when it grew */
};

/*
 * Read the perf map of pid from dir ("/tmp" normally) into *m (replacing what it held).
 * 0, -ENOENT (none), -EPERM (not a regular file, or owned by someone else), -ENOMEM, -errno.
 * uid: the owner the file may have besides root.
 */
int pmap_load(struct pmap *m, const char *dir, int pid, unsigned int uid);
/* The symbol covering addr, or NULL. */
const struct pmap_sym *pmap_find(const struct pmap *m, uint64_t addr);
void pmap_free(struct pmap *m);

#endif
