// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The CPUs online now, for the tools that open one perf event a CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/cpus.h"

/* Append cpu to *cpus (n used of *cap, grown on need).  0 or -ENOMEM. */
static int push(int **cpus, int *n, int *cap, int cpu)
{
	int *bigger;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		bigger = realloc(*cpus, (size_t)*cap * sizeof(**cpus));
		if (!bigger)
			return -ENOMEM;
		*cpus = bigger;
	}
	(*cpus)[(*n)++] = cpu;
	return 0;
}

int util_online_cpus(int max, int **out)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int a, b, n = 0, cap = 0, *cpus = NULL, err = 0;
	char sep;

	if (!f)
		return -errno;
	while (!err && fscanf(f, "%d", &a) == 1 && a >= 0) {
		b = a;
		sep = 0;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' &&
		    (fscanf(f, "%d", &b) != 1 || fscanf(f, "%c", &sep) != 1))
			sep = 0;
		for (; !err && a <= b && a < 65536 && n < max; a++)
			err = push(&cpus, &n, &cap, a);
		if (sep != ',')
			break;
	}
	fclose(f);
	if (!err && !n)
		err = -ENOENT;
	if (err) {
		free(cpus);
		return err;
	}
	*out = cpus;
	return n;
}
