/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * cgroup v2 ids to paths: the id of a cgroup (bpf_get_current_cgroup_id(), a kagg_cgroup_t
 * key field) is the inode number of its directory under the cgroup2 mount, found in
 * /proc/self/mountinfo (/sys/fs/cgroup on a unified layout, /sys/fs/cgroup/unified on a
 * hybrid one).  Not thread-safe.
 */
#ifndef KAGG_UTIL_CGROUP_H
#define KAGG_UTIL_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The paths of the cgroups seen at the last scan, by id. */
struct cg_paths {
	struct {
		uint64_t id;
		char *path; /* "/", "/system.slice/foo.service" (cg2_mount()'s root first) */
	} *cg;
	size_t nr;
	bool read; /* scanned since the caller last cleared it: an unknown id is gone */
};

/*
 * The cgroup2 mount point into mnt (len bytes) and the path of the cgroup it shows into
 * root (rlen bytes): "" for the root of the hierarchy (or of this cgroup namespace), else
 * the cgroup a bind mount or a container shows ("/kubepods/pod1"), which the paths of the
 * cgroups below start with.  A mount of the whole hierarchy is preferred; mountinfo's
 * escapes (\040) are undone.  0, or -ENOENT when there is none.
 */
int cg2_mount(char *mnt, size_t len, char *root, size_t rlen);
/* The same from f, lines in /proc/PID/mountinfo's format. */
int cg2_mount_in(FILE *f, char *mnt, size_t len, char *root, size_t rlen);
/*
 * The path of cgroup id, from the mount; NULL when it is gone.  An id not seen at the
 * last scan scans the hierarchy again, once until the caller clears c->read.
 */
const char *cg_paths_find(struct cg_paths *c, uint64_t id);
void cg_paths_free(struct cg_paths *c);

#endif
