/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: find a shared library the way the dynamic loader would, without
 * running anything: glibc's /etc/ld.so.cache read in process (no
 * `ldconfig -p`, no shell, no $PATH), then fixed library directories.
 */
#ifndef KAGG_LDCACHE_H
#define KAGG_LDCACHE_H

#include <stdbool.h>
#include <stddef.h>

#define LDCACHE_PATH "/etc/ld.so.cache"

/*
 * Is base the file name of library lib?  "c" and "libc" name libc.so.6,
 * libc.so and libc-2.36.so; "libc.so.6" names itself.
 */
bool lib_name_matches(const char *base, const char *lib);

/*
 * The path of library lib in the ld.so.cache at cache_path (glibc's
 * "glibc-ld.so.cache1.1" format, alone or after the old "ld.so-1.7.0"
 * table): the first entry for this machine's ABI (x86-64 on x86_64,
 * AArch64 on aarch64), else the first entry of any ABI.  The file is read
 * with every offset and string checked against its size.  0 with the path
 * in out, -ENOENT (no entry, or its path is not absolute or does not fit
 * out), -EINVAL (not a cache this reads: magic, truncated table, byte
 * order), -EFBIG (larger than 64 MiB), -ENOMEM, or -errno of reading it.
 */
int ldcache_find(const char *cache_path, const char *lib, char *out, size_t out_sz);

/*
 * ldcache_find() on LDCACHE_PATH, then DIR/libLIB.so and DIR/libLIB.so.6 in
 * the standard library directories.  0 or -ENOENT.
 */
int ldcache_find_system(const char *lib, char *out, size_t out_sz);

#endif
