/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: arrays that grow by one element at a time, and checked access
 * to an element, the library's and the kagg binary's one way to do each.
 * Header-only (static inline, macros), so never a symbol of libkagg.
 */
#ifndef KAGG_ARRAY_H
#define KAGG_ARRAY_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/*
 * Make room for element nr of *arr, an array of *cap elements of size bytes:
 * when it is full, double it (to first elements when it is empty).  0, or
 * -ENOMEM with *arr and *cap unchanged.
 */
static inline int grow_array(void **arr, size_t *cap, size_t nr, size_t size, size_t first)
{
	size_t c;
	void *p;

	if (nr < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* grow_array() for a typed pointer arr with its size_t cap: 0 or -ENOMEM. */
#define GROW_ARRAY(arr, cap, nr, first)                                                    \
	({                                                                                 \
		void *__ga_p = (arr);                                                      \
		int __ga_err = grow_array(&__ga_p, &(cap), (nr), sizeof(*(arr)), (first)); \
                                                                                           \
		(arr) = __ga_p;                                                            \
		__ga_err;                                                                  \
	})

/*
 * &o->arr[i] when o is not NULL and i < o->nr, else NULL with errno EINVAL: the body of
 * an accessor such as kagg_snapshot__hist().
 */
#define ARRAY_AT(o, nr, arr, i) ((o) && (i) < (o)->nr ? &(o)->arr[i] : (errno = EINVAL, NULL))

/* Free the n strings of v (any may be NULL), then v. */
static inline void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Free member field (a malloc'd pointer) of each of the nr elements of arr, then arr: empty. */
#define FREE_ARRAY_OF(arr, nr, field)                     \
	do {                                              \
		size_t __fa_i;                            \
                                                          \
		for (__fa_i = 0; __fa_i < (nr); __fa_i++) \
			free((arr)[__fa_i].field);        \
		free(arr);                                \
		(arr) = NULL;                             \
		(nr) = 0;                                 \
	} while (0)

/*
 * In arr[0 .. n), sorted ascending by member field, how many elements have field <= key:
 * the index just past the last of them (binary search).
 */
#define ARRAY_UPPER(arr, n, field, key)                               \
	({                                                            \
		size_t __au_lo = 0, __au_hi = (n), __au_mid;          \
                                                                      \
		while (__au_lo < __au_hi) {                           \
			__au_mid = __au_lo + (__au_hi - __au_lo) / 2; \
			if ((arr)[__au_mid].field <= (key))           \
				__au_lo = __au_mid + 1;               \
			else                                          \
				__au_hi = __au_mid;                   \
		}                                                     \
		__au_lo;                                              \
	})

#endif /* KAGG_ARRAY_H */
