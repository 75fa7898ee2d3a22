/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the CPUs online now, from /sys/devices/system/cpu/online.
 */
#ifndef KAGG_UTIL_CPUS_H
#define KAGG_UTIL_CPUS_H

/*
 * The online CPUs ("0-3,6"), in the file's order, at most max of them, into a
 * malloc'd *out the caller frees: their count, or -errno (-ENOENT for none).
 */
int util_online_cpus(int max, int **out);

#endif /* KAGG_UTIL_CPUS_H */
