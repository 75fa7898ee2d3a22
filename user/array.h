/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: room for one more element at the end of a growing array, the
 * library's and the kagg binary's one way to do it.  Header-only (static
 * inline), so it is never a symbol of libkagg.
 */
#ifndef KAGG_GROW_H
#define KAGG_GROW_H

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
#define GROW_ARRAY(arr, cap, nr, first)							\
	({										\
		void *__ga_p = (arr);							\
		int __ga_err = grow_array(&__ga_p, &(cap), (nr), sizeof(*(arr)), (first)); \
											\
		(arr) = __ga_p;								\
		__ga_err;								\
	})

#endif /* KAGG_GROW_H */
