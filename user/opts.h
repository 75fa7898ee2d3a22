/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Internal helpers for validating *_opts structs (see kagg/common.h). */
#ifndef KAGG_OPTS_INTERNAL_H
#define KAGG_OPTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * True when opts is NULL, or its sz is at least the size of the first field
 * and every byte past what this library knows (known_sz) is zero.
 */
static inline bool kagg_opts_valid(const void *opts, size_t known_sz)
{
	const unsigned char *p = opts;
	size_t sz, i;

	if (!opts)
		return true;
	sz = *(const size_t *)opts;
	if (sz < sizeof(size_t))
		return false;
	for (i = known_sz; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Validate opts (NULL is refused here) and copy what this library knows of
 * it into dst (dst_sz bytes; a shorter, older struct leaves the rest zero).
 * false when opts is NULL or not valid.
 */
static inline bool kagg_opts_copy(void *dst, size_t dst_sz, const void *opts)
{
	size_t sz;

	if (!opts || !kagg_opts_valid(opts, dst_sz))
		return false;
	sz = *(const size_t *)opts;
	memset(dst, 0, dst_sz);
	memcpy(dst, opts, sz < dst_sz ? sz : dst_sz);
	return true;
}

/* Field f of opts, or dflt when opts is NULL or too old to carry it. */
#define KAGG_OPT(opts, TYPE, f, dflt)                                          \
	((opts) && (opts)->sz >= offsetof(struct TYPE, f) + sizeof((opts)->f) \
		 ? (opts)->f                                                   \
		 : (dflt))

#endif
