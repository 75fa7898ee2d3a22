// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * heatmap.c - latency heatmaps: each interval snapshot becomes a column of bucket counts;
 * drawn as SVG with the rows of the buckets that ever counted something, a sequential
 * colour scale (light yellow to dark red, linear in the count) and its legend.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/heatmap.h>
#include "util/array.h"
#include "render/render_internal.h"

struct hm_col {
	uint64_t *slots; /* nr_slots counts */
	double t;	 /* end of the interval, seconds since the first began */
};

struct kagg_heatmap {
	struct hm_col *cols;
	size_t nr, cap;
	unsigned int nr_slots;
	double *low, *high; /* bounds of each slot, in unit */
	char unit[64];
	char tool[32];
	struct timespec start;
	double t_first; /* duration of the first column */
};

struct kagg_heatmap *kagg_heatmap__new(void)
{
	return calloc(1, sizeof(struct kagg_heatmap));
}

void kagg_heatmap__free(struct kagg_heatmap *hm)
{
	size_t i;

	if (!hm)
		return;
	for (i = 0; i < hm->nr; i++)
		free(hm->cols[i].slots);
	free(hm->cols);
	free(hm->low);
	free(hm->high);
	free(hm);
}

size_t kagg_heatmap__columns(const struct kagg_heatmap *hm)
{
	return hm ? hm->nr : 0;
}

/* The buckets of h become the heatmap's rows (the first histogram with slots decides). */
static int hm_buckets(struct kagg_heatmap *hm, const struct kagg_hist *h)
{
	unsigned int k;

	hm->low = calloc(h->nr_slots, sizeof(double));
	hm->high = calloc(h->nr_slots, sizeof(double));
	if (!hm->low || !hm->high)
		return -ENOMEM;
	for (k = 0; k < h->nr_slots; k++)
		kagg_hist__bounds(h, k, &hm->low[k], &hm->high[k]);
	hm->nr_slots = h->nr_slots;
	snprintf(hm->unit, sizeof(hm->unit), "%s",
		 KAGG_HAS_FIELD(h, kagg_hist, value) && h->value ? h->value
								 : kagg_unit__name(h->unit));
	return 0;
}

int kagg_heatmap__add(struct kagg_heatmap *hm, const struct kagg_snapshot *snap)
{
	const struct kagg_meta *m;
	size_t i, n;
	struct hm_col *c;
	int err;

	if (!hm || !snap)
		return -EINVAL;
	m = kagg_snapshot__meta(snap);
	n = kagg_snapshot__hist_cnt(snap);
	for (i = 0; i < n && !hm->nr_slots; i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);

		if (h->nr_slots && (err = hm_buckets(hm, h)))
			return err;
	}
	if (GROW_ARRAY(hm->cols, hm->cap, hm->nr, 64))
		return -ENOMEM;
	c = &hm->cols[hm->nr];
	c->slots = calloc(hm->nr_slots ? hm->nr_slots : 1, sizeof(uint64_t));
	if (!c->slots)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct kagg_hist *h = kagg_snapshot__hist(snap, i);
		unsigned int k;

		for (k = 0; k < h->nr_slots && k < hm->nr_slots; k++)
			c->slots[k] += h->slots[k];
	}
	if (!hm->nr && m) {
		hm->start = m->start;
		snprintf(hm->tool, sizeof(hm->tool), "%s", m->tool ? m->tool : "kagg");
	}
	c->t = m ? (m->end.tv_sec - hm->start.tv_sec) + (m->end.tv_nsec - hm->start.tv_nsec) / 1e9
		 : hm->nr + 1.0;
	hm->nr++;
	return 0;
}

/* Light yellow (t = 0) to dark red (t = 1), through orange: a sequential scale. */
static void hm_colour(double t, char *buf, size_t len)
{
	static const unsigned char stops[][3] = {
		{ 255, 255, 204 }, { 254, 217, 118 }, { 253, 141, 60 },
		{ 227, 26, 28 },   { 128, 0, 38 },
	};
	double x = t * 4;
	int i = x >= 4 ? 3 : (int)x;
	double f = x - i;

	snprintf(buf, len, "rgb(%d,%d,%d)",
		 (int)(stops[i][0] + (stops[i + 1][0] - stops[i][0]) * f + 0.5),
		 (int)(stops[i][1] + (stops[i + 1][1] - stops[i][1]) * f + 0.5),
		 (int)(stops[i][2] + (stops[i + 1][2] - stops[i][2]) * f + 0.5));
}

#define HM_LEFT 90
#define HM_TOP 50
#define HM_PLOT_W 900
#define HM_ROW_H 18
#define HM_RIGHT 130
#define HM_BOTTOM 50

int kagg_heatmap__write_svg(const struct kagg_heatmap *hm, FILE *f,
			    const struct kagg_heatmap_opts *opts)
{
	unsigned int kmin = UINT32_MAX, kmax = 0, k, rows, width, height;
	uint64_t max = 0;
	double cw;
	char col[32], title[96];
	size_t i;

	if (!hm || !f || (opts && opts->sz < sizeof(size_t)))
		return -EINVAL;
	for (i = 0; i < hm->nr; i++)
		for (k = 0; k < hm->nr_slots; k++)
			if (hm->cols[i].slots[k]) {
				kmin = k < kmin ? k : kmin;
				kmax = k > kmax ? k : kmax;
				max = hm->cols[i].slots[k] > max ? hm->cols[i].slots[k] : max;
			}
	if (!max)
		kmin = kmax = 0;
	rows = kmax - kmin + 1;
	cw = hm->nr ? (double)HM_PLOT_W / hm->nr : HM_PLOT_W;
	width = HM_LEFT + HM_PLOT_W + HM_RIGHT;
	height = HM_TOP + rows * HM_ROW_H + HM_BOTTOM;
	snprintf(title, sizeof(title), "%s: latency heatmap", hm->tool[0] ? hm->tool : "kagg");
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"kagg-heatmap\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-columns=\"%zu\" "
		"data-max=\"%" PRIu64 "\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:11px;fill:#000}"
		".h{font-size:16px;text-anchor:middle}.r{text-anchor:end}.m{text-anchor:middle}"
		"</style>\n<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#fff\"/>\n",
		width, height, width, height, hm->nr, max, width, height);
	fprintf(f, "<text class=\"h\" x=\"%u\" y=\"22\">", width / 2);
	xml_puts(f, opts && opts->title ? opts->title : title);
	fprintf(f, "</text>\n<text class=\"m\" x=\"%u\" y=\"40\">%zu intervals, buckets in ",
		HM_LEFT + HM_PLOT_W / 2, hm->nr);
	xml_puts(f, hm->unit[0] ? hm->unit : "?");
	fputs(", colour: count in the bucket</text>\n", f);
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%u\" fill=\"#f4f4f4\" "
		"stroke=\"#888\"/>\n",
		HM_LEFT, HM_TOP, HM_PLOT_W, rows * HM_ROW_H);
	/* Rows: the low bound of each bucket on the left. */
	for (k = kmin; k <= kmax && hm->nr_slots; k++) {
		unsigned int y = HM_TOP + (kmax - k) * HM_ROW_H;

		fprintf(f, "<text class=\"r\" x=\"%d\" y=\"%u\">%.15g</text>\n", HM_LEFT - 4,
			y + HM_ROW_H - 5, hm->low[k]);
	}
	fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\">", 18,
		HM_TOP + rows * HM_ROW_H / 2, 18, HM_TOP + rows * HM_ROW_H / 2);
	xml_puts(f, hm->unit[0] ? hm->unit : "?");
	fputs(" (bucket low bound)</text>\n", f);
	for (i = 0; i < hm->nr; i++) {
		double x = HM_LEFT + i * cw;

		fprintf(f, "<g class=\"col\" data-t=\"%.3f\">", hm->cols[i].t);
		for (k = kmin; k <= kmax && hm->nr_slots; k++) {
			uint64_t v = hm->cols[i].slots[k];

			if (!v)
				continue;
			hm_colour((double)v / max, col, sizeof(col));
			fprintf(f,
				"<rect class=\"cell\" x=\"%.3f\" y=\"%u\" width=\"%.3f\" "
				"height=\"%d\" fill=\"%s\" data-count=\"%" PRIu64 "\"><title>"
				"%.3f s: [%.15g, %.15g] ",
				x, HM_TOP + (kmax - k) * HM_ROW_H, cw, HM_ROW_H, col, v,
				hm->cols[i].t, hm->low[k], hm->high[k]);
			xml_puts(f, hm->unit);
			fprintf(f, ": %" PRIu64 "</title></rect>", v);
		}
		fputs("</g>\n", f);
		/* Time labels: about ten along the axis. */
		if (hm->nr <= 10 || i % ((hm->nr + 9) / 10) == 0 || i == hm->nr - 1)
			fprintf(f, "<text class=\"m\" x=\"%.3f\" y=\"%u\">%.3g</text>\n",
				x + cw / 2, HM_TOP + rows * HM_ROW_H + 14, hm->cols[i].t);
	}
	fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%u\">time (s, end of each interval)</text>\n",
		HM_LEFT + HM_PLOT_W / 2, HM_TOP + rows * HM_ROW_H + 34);
	/* Legend: the scale from 1 to the largest count. */
	fputs("<defs><linearGradient id=\"kagg-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">", f);
	for (k = 0; k <= 4; k++) {
		hm_colour(k / 4.0, col, sizeof(col));
		fprintf(f, "<stop offset=\"%u%%\" stop-color=\"%s\"/>", k * 25, col);
	}
	fputs("</linearGradient></defs>\n", f);
	fprintf(f,
		"<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%u\" "
		"fill=\"url(#kagg-scale)\" stroke=\"#888\"/>"
		"<text x=\"%d\" y=\"%d\">%" PRIu64 "</text><text x=\"%d\" y=\"%u\">%d</text>"
		"<text x=\"%d\" y=\"%d\">count</text></g>\n",
		HM_LEFT + HM_PLOT_W + 20, HM_TOP, rows * HM_ROW_H, HM_LEFT + HM_PLOT_W + 40,
		HM_TOP + 10, max, HM_LEFT + HM_PLOT_W + 40, HM_TOP + rows * HM_ROW_H, max ? 1 : 0,
		HM_LEFT + HM_PLOT_W + 16, HM_TOP - 6);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
