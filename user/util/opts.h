/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal helpers for validating the structs that cross the API with their
 * size: *_opts structs, and the caller-allocated structs the library fills
 * or reads (see kagg/common.h and docs/api.md, "ABI policy").
 */
#ifndef KAGG_OPTS_INTERNAL_H
#define KAGG_OPTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * True when opts is NULL, or its sz is at least the size of the first field
 * and every byte past what this library knows (known_sz) is zero.
 */
static inline bool opts_valid(const void *opts, size_t known_sz)
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
static inline bool opts_copy(void *dst, size_t dst_sz, const void *opts)
{
	size_t sz;

	if (!opts || !opts_valid(opts, dst_sz))
		return false;
	sz = *(const size_t *)opts;
	memset(dst, 0, dst_sz);
	memcpy(dst, opts, sz < dst_sz ? sz : dst_sz);
	return true;
}

#ifndef offsetofend
#define offsetofend(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#endif

/*
 * A caller-allocated struct the library fills: its sz (first member) reaches
 * min_sz, the size of the struct's first release (offsetofend of its last
 * field then, which stays fixed when fields are appended).
 */
static inline bool sz_valid(const void *p, size_t min_sz)
{
	return p && *(const size_t *)p >= min_sz;
}

/*
 * A struct the library reads: sz reaches min_sz and every byte past known_sz
 * (what this library knows of it) is zero.
 */
static inline bool sz_in_valid(const void *p, size_t min_sz, size_t known_sz)
{
	return sz_valid(p, min_sz) && opts_valid(p, known_sz);
}

/*
 * Copy the library's view src of a sized struct into the caller's dst: the
 * fields after sz, as far as both sizes reach; dst->sz is left as the caller
 * set it.
 */
static inline void sz_copy(void *dst, const void *src, size_t src_sz)
{
	size_t n = *(const size_t *)dst;

	if (n > src_sz)
		n = src_sz;
	if (n > sizeof(size_t))
		memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
		       n - sizeof(size_t));
}

/*
 * What this library knows of an opts struct TYPE: up to the end of its last field
 * (TYPE__last_field, defined next to every public opts struct).  Trailing padding
 * is not known: a newer caller's field may start there.
 */
#define OPTS_END(TYPE) offsetofend(struct TYPE, TYPE##__last_field)

/* Field f of opts, or dflt when opts is NULL or too old to carry it. */
#define OPTS_GET(opts, TYPE, f, dflt) \
	((opts) && (opts)->sz >= offsetof(struct TYPE, f) + sizeof((opts)->f) ? (opts)->f : (dflt))

#endif
