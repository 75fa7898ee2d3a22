/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Internal helpers for validating *_opts structs (see kagg/common.h). */
#ifndef KAGG_OPTS_INTERNAL_H
#define KAGG_OPTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

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

/* Field f of opts, or dflt when opts is NULL or too old to carry it. */
#define KAGG_OPT(opts, TYPE, f, dflt)                                          \
	((opts) && (opts)->sz >= offsetof(struct TYPE, f) + sizeof((opts)->f) \
		 ? (opts)->f                                                   \
		 : (dflt))

#endif
