/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/heatmap.h - latency heatmaps: one column per interval snapshot (its histograms
 * summed), time across (each column from its meta's start to its end, so as wide as the
 * interval lasted), buckets up, the rate of each bucket (count per second of its interval)
 * as colour, drawn as SVG with its colour scale, legend and a time axis at round steps.
 *
 *	struct kagg_heatmap *hm = kagg_heatmap__new();
 *	every interval: kagg_heatmap__add(hm, snap);
 *	kagg_heatmap__write_svg(hm, f, NULL);
 *	kagg_heatmap__free(hm);
 *
 * The columns' buckets are those of the first histogram added (log2, linear or exponential):
 * snapshots of one session all have the same.
 */
#ifndef KAGG_HEATMAP_H
#define KAGG_HEATMAP_H

#include <stdio.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_heatmap;

struct kagg_heatmap_opts {
	size_t sz;
	const char *title; /* NULL: "TOOL: latency heatmap" */
};
#define kagg_heatmap_opts__last_field title

/* An empty heatmap; NULL + errno (ENOMEM). */
KAGG_API struct kagg_heatmap *kagg_heatmap__new(void);
/*
 * One column: snap's histograms summed bucket by bucket, over the interval of snap's meta
 * (start to end; without a start, the end less duration_s).  0 or -errno (EINVAL, ENOMEM).
 */
KAGG_API int kagg_heatmap__add(struct kagg_heatmap *hm, const struct kagg_snapshot *snap);
/* Number of columns added. */
KAGG_API size_t kagg_heatmap__columns(const struct kagg_heatmap *hm);
/* Draw the columns as an SVG document.  0 or -errno (EINVAL, EIO). */
KAGG_API int kagg_heatmap__write_svg(const struct kagg_heatmap *hm, FILE *f,
				     const struct kagg_heatmap_opts *opts);
/* NULL-safe. */
KAGG_API void kagg_heatmap__free(struct kagg_heatmap *hm);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_HEATMAP_H */
