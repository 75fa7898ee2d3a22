/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/html.h - a run's report as one self-contained HTML file: the full meta, each
 * histogram as a bar chart (inline SVG) with its percentile table, and the stacks as an
 * interactive flame graph (kagg/flame.h) when the snapshot has them.
 *
 *	struct kagg_html_opts o = { .sz = sizeof(o), .cold = true };
 *	kagg_html__write(snap, f, &o);
 */
#ifndef KAGG_HTML_H
#define KAGG_HTML_H

#include <stdbool.h>
#include <stdio.h>
#include <kagg/common.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_html_opts {
	size_t sz;
	bool by_count;		   /* stacks valued by samples (profile), not time */
	bool cold;		   /* stacks are off-CPU time: cold palette */
	enum kagg_unit unit;	   /* times of the stacks */
	const double *percentiles; /* NULL: p50, p90, p99, p99.9, max */
	size_t nr_percentiles;
};
#define kagg_html_opts__last_field nr_percentiles

/* 0 or -errno: EINVAL (bad arguments), ENOMEM, EIO. */
KAGG_API int kagg_html__write(const struct kagg_snapshot *snap, FILE *f,
			      const struct kagg_html_opts *opts);

/*
 * Write s (any bytes: a process or function name) as text of an HTML or XML
 * document, with the escaping the reports use: markup characters as entities,
 * what XML 1.0 does not allow replaced.  0, -EINVAL (NULL argument), -EIO (the
 * stream's error flag is set).
 */
KAGG_API int kagg_html__puts(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_HTML_H */
