/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A small open-addressing hash map from u64 keys to u64 values, for the
 * streaming consumer's hot path (thread id -> switch-out time, key -> index).
 * Linear probing, backward-shift deletion (no tombstones), grows at 50% load.
 * The key UINT64_MAX is reserved.  Not thread-safe.
 */
#ifndef KAGG_U64MAP_H
#define KAGG_U64MAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define U64MAP_EMPTY UINT64_MAX

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap; /* power of two */
	size_t len;
};

static inline size_t u64map_hash(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & mask;
}

static inline int u64map_init(struct u64map *m, size_t cap)
{
	size_t c = 16;

	while (c < cap)
		c <<= 1;
	m->keys = malloc(c * sizeof(uint64_t));
	m->vals = malloc(c * sizeof(uint64_t));
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		return -ENOMEM;
	}
	memset(m->keys, 0xff, c * sizeof(uint64_t));
	m->cap = c;
	m->len = 0;
	return 0;
}

static inline void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static inline void u64map_clear(struct u64map *m)
{
	memset(m->keys, 0xff, m->cap * sizeof(uint64_t));
	m->len = 0;
}

/* Pointer to the value of k, or NULL. */
static inline uint64_t *u64map_get(const struct u64map *m, uint64_t k)
{
	size_t mask = m->cap - 1, i = u64map_hash(k, mask);

	for (;; i = (i + 1) & mask) {
		if (m->keys[i] == k)
			return &m->vals[i];
		if (m->keys[i] == U64MAP_EMPTY)
			return NULL;
	}
}

static inline int u64map_grow(struct u64map *m);

/* Set k to v (insert or replace).  0 or -ENOMEM. */
static inline int u64map_put(struct u64map *m, uint64_t k, uint64_t v)
{
	size_t mask, i;

	if ((m->len + 1) * 2 > m->cap && u64map_grow(m))
		return -ENOMEM;
	mask = m->cap - 1;
	for (i = u64map_hash(k, mask);; i = (i + 1) & mask) {
		if (m->keys[i] == k) {
			m->vals[i] = v;
			return 0;
		}
		if (m->keys[i] == U64MAP_EMPTY) {
			m->keys[i] = k;
			m->vals[i] = v;
			m->len++;
			return 0;
		}
	}
}

static inline int u64map_grow(struct u64map *m)
{
	struct u64map n;
	size_t i;

	if (u64map_init(&n, m->cap * 2))
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->keys[i] != U64MAP_EMPTY)
			u64map_put(&n, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = n;
	return 0;
}

/* Remove k; true when it was there (its value in *v when non-NULL). */
static inline bool u64map_del(struct u64map *m, uint64_t k, uint64_t *v)
{
	size_t mask = m->cap - 1, i = u64map_hash(k, mask), j, h;

	for (;; i = (i + 1) & mask) {
		if (m->keys[i] == U64MAP_EMPTY)
			return false;
		if (m->keys[i] == k)
			break;
	}
	if (v)
		*v = m->vals[i];
	/* Backward shift: move later entries of the run into the hole. */
	for (j = (i + 1) & mask; m->keys[j] != U64MAP_EMPTY; j = (j + 1) & mask) {
		h = u64map_hash(m->keys[j], mask);
		/* Entry j may move to i when i lies cyclically in [h, j). */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = U64MAP_EMPTY;
	m->len--;
	return true;
}

/*
 * An array of elem_size-byte elements indexed by m (key -> position): the
 * element of k, or a new zeroed one appended (*arr grows by doubling, *n
 * counts, *cap is its room; *created tells which).  NULL when out of memory.
 */
static inline void *u64map_elem(struct u64map *m, uint64_t k, void **arr, size_t *n, size_t *cap,
				size_t elem_size, bool *created)
{
	uint64_t *idx = u64map_get(m, k);
	char *e;

	*created = false;
	if (idx)
		return (char *)*arr + *idx * elem_size;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;

		e = realloc(*arr, c * elem_size);
		if (!e)
			return NULL;
		*arr = e;
		*cap = c;
	}
	if (u64map_put(m, k, *n))
		return NULL;
	e = (char *)*arr + (*n)++ * elem_size;
	memset(e, 0, elem_size);
	*created = true;
	return e;
}

#endif
