// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * heatmap.c - latency heatmaps: each interval snapshot becomes a column of bucket counts
 * spanning the interval's real time (its meta's start and end), so a short interval is a
 * narrow column and a gap between intervals stays empty.  Drawn as SVG with the rows of the
 * buckets that ever counted something, a sequential colour scale (light yellow to dark red,
 * linear in the rate: the count over the column's duration), its legend, and a time axis
 * labelled at round steps.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/heatmap.h>
#include "util/array.h"
#include "render/render_internal.h"

struct hm_col {
	uint64_t *slots; /* nr_slots counts */
	double t0, t1;	 /* start and end of the interval, seconds since hm->origin */
};

struct kagg_heatmap {
	struct hm_col *cols;
	size_t nr, cap;
	unsigned int nr_slots;
	double *low, *high; /* bounds of each slot, in unit */
	char unit[64];
	char tool[32];
	struct timespec origin; /* where the columns' times count from */
	bool has_origin;
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

static bool ts_set(const struct timespec *ts)
{
	return ts->tv_sec || ts->tv_nsec;
}

/* Seconds from o to ts. */
static double ts_since(const struct timespec *ts, const struct timespec *o)
{
	return (double)(ts->tv_sec - o->tv_sec) + (ts->tv_nsec - o->tv_nsec) / 1e9;
}

/*
 * The interval a column covers: the meta's start and end; without a start (or one not before
 * the end), the end less the duration; without an end, the second after the previous column.
 */
static void hm_times(struct kagg_heatmap *hm, const struct kagg_meta *m, double *t0, double *t1)
{
	double prev = hm->nr ? hm->cols[hm->nr - 1].t1 : 0;

	if (!m || !ts_set(&m->end)) {
		*t0 = prev;
		*t1 = prev + 1;
		return;
	}
	if (!hm->has_origin) {
		hm->origin = ts_set(&m->start) ? m->start : m->end;
		hm->has_origin = true;
	}
	*t1 = ts_since(&m->end, &hm->origin);
	if (ts_set(&m->start) && ts_since(&m->end, &m->start) > 0)
		*t0 = ts_since(&m->start, &hm->origin);
	else if (m->duration_s > 0)
		*t0 = *t1 - m->duration_s;
	else
		*t0 = hm->nr ? prev : *t1 - 1;
	if (!(*t0 < *t1))
		*t0 = *t1 - 1; /* no duration known: a second */
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
	if (!hm->nr && m)
		snprintf(hm->tool, sizeof(hm->tool), "%s", m->tool ? m->tool : "kagg");
	hm_times(hm, m, &c->t0, &c->t1);
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
#define HM_TICKS 8 /* about this many steps along the time axis, at most */

/* A number for a label: whole above 1000, else three significant digits. */
static void hm_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, v >= 1000 ? "%.0f" : "%.3g", v);
}

/* The step of the time axis: 1, 2 or 5 times a power of ten, span / HM_TICKS or more. */
static double hm_step(double span)
{
	double raw = span / HM_TICKS, mag = 1, f;

	while (mag > raw)
		mag /= 10;
	while (mag * 10 <= raw)
		mag *= 10;
	f = raw / mag; /* 1 <= f < 10 */
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* The time axis under the plot: a tick and a label every step from 0 to span seconds. */
static void hm_axis(FILE *f, double span, unsigned int y)
{
	double step = hm_step(span), scale = HM_PLOT_W / span;
	unsigned int k;
	int decimals = 0;
	double s;

	for (s = step; s < 1 - 1e-9 && decimals < 9; s *= 10)
		decimals++;

	for (k = 0; k * step <= span * (1 + 1e-9); k++) {
		double x = HM_LEFT + k * step * scale;

		fprintf(f,
			"<line class=\"tick\" x1=\"%.4f\" y1=\"%u\" x2=\"%.4f\" y2=\"%u\" "
			"stroke=\"#888\"/><text class=\"m tick\" x=\"%.4f\" y=\"%u\">%.*f</text>\n",
			x, y, x, y + 4, x, y + 16, decimals, k * step);
	}
}

int kagg_heatmap__write_svg(const struct kagg_heatmap *hm, FILE *f,
			    const struct kagg_heatmap_opts *opts)
{
	unsigned int kmin = UINT32_MAX, kmax = 0, k, rows, width, height;
	double tmin = 0, tmax = 0, span, scale, rmax = 0;
	uint64_t max = 0;
	char col[32], title[96], num[32];
	size_t i;

	if (!hm || !f || (opts && opts->sz < sizeof(size_t)))
		return -EINVAL;
	for (i = 0; i < hm->nr; i++) {
		const struct hm_col *c = &hm->cols[i];

		tmin = !i || c->t0 < tmin ? c->t0 : tmin;
		tmax = !i || c->t1 > tmax ? c->t1 : tmax;
		for (k = 0; k < hm->nr_slots; k++)
			if (c->slots[k]) {
				double r = c->slots[k] / (c->t1 - c->t0);

				kmin = k < kmin ? k : kmin;
				kmax = k > kmax ? k : kmax;
				max = c->slots[k] > max ? c->slots[k] : max;
				rmax = r > rmax ? r : rmax;
			}
	}
	if (!max)
		kmin = kmax = 0;
	span = tmax - tmin > 0 ? tmax - tmin : 1;
	scale = HM_PLOT_W / span;
	rows = kmax - kmin + 1;
	width = HM_LEFT + HM_PLOT_W + HM_RIGHT;
	height = HM_TOP + rows * HM_ROW_H + HM_BOTTOM;
	snprintf(title, sizeof(title), "%s: latency heatmap", hm->tool[0] ? hm->tool : "kagg");
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"kagg-heatmap\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-columns=\"%zu\" "
		"data-max=\"%" PRIu64 "\" data-max-rate=\"%.6g\" data-span=\"%.6f\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:11px;fill:#000}"
		".h{font-size:16px;text-anchor:middle}.r{text-anchor:end}.m{text-anchor:middle}"
		"</style>\n<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#fff\"/>\n",
		width, height, width, height, hm->nr, max, rmax, span, width, height);
	fprintf(f, "<text class=\"h\" x=\"%u\" y=\"22\">", width / 2);
	xml_puts(f, opts && opts->title ? opts->title : title);
	fprintf(f, "</text>\n<text class=\"m\" x=\"%u\" y=\"40\">%zu intervals, buckets in ",
		HM_LEFT + HM_PLOT_W / 2, hm->nr);
	xml_puts(f, hm->unit[0] ? hm->unit : "?");
	fputs(", colour: events per second in the bucket</text>\n", f);
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
	/* Columns: from the interval's start to its end on the time axis. */
	for (i = 0; i < hm->nr; i++) {
		const struct hm_col *c = &hm->cols[i];
		double t0 = c->t0 - tmin, t1 = c->t1 - tmin, x = HM_LEFT + t0 * scale;
		double cw = (t1 - t0) * scale;

		fprintf(f, "<g class=\"col\" data-t=\"%.3f\" data-t0=\"%.6f\" data-t1=\"%.6f\">",
			t1, t0, t1);
		for (k = kmin; k <= kmax && hm->nr_slots; k++) {
			uint64_t v = c->slots[k];
			double r = v / (c->t1 - c->t0);

			if (!v)
				continue;
			hm_colour(r / rmax, col, sizeof(col));
			hm_num(num, sizeof(num), r);
			fprintf(f,
				"<rect class=\"cell\" x=\"%.4f\" y=\"%u\" width=\"%.4f\" "
				"height=\"%d\" fill=\"%s\" data-count=\"%" PRIu64 "\" "
				"data-rate=\"%.6g\"><title>%.3f-%.3f s: [%.15g, %.15g] ",
				x, HM_TOP + (kmax - k) * HM_ROW_H, cw, HM_ROW_H, col, v, r, t0, t1,
				hm->low[k], hm->high[k]);
			xml_puts(f, hm->unit);
			fprintf(f, ": %" PRIu64 ", %s/s</title></rect>", v, num);
		}
		fputs("</g>\n", f);
	}
	hm_axis(f, span, HM_TOP + rows * HM_ROW_H);
	fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%u\">time (s since the start)</text>\n",
		HM_LEFT + HM_PLOT_W / 2, HM_TOP + rows * HM_ROW_H + 34);
	/* Legend: the scale from 0 to the highest rate. */
	fputs("<defs><linearGradient id=\"kagg-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">", f);
	for (k = 0; k <= 4; k++) {
		hm_colour(k / 4.0, col, sizeof(col));
		fprintf(f, "<stop offset=\"%u%%\" stop-color=\"%s\"/>", k * 25, col);
	}
	fputs("</linearGradient></defs>\n", f);
	hm_num(num, sizeof(num), rmax);
	fprintf(f,
		"<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%u\" "
		"fill=\"url(#kagg-scale)\" stroke=\"#888\"/>"
		"<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%u\">0</text>"
		"<text x=\"%d\" y=\"%d\">events/s</text></g>\n",
		HM_LEFT + HM_PLOT_W + 20, HM_TOP, rows * HM_ROW_H, HM_LEFT + HM_PLOT_W + 40,
		HM_TOP + 10, num, HM_LEFT + HM_PLOT_W + 40, HM_TOP + rows * HM_ROW_H,
		HM_LEFT + HM_PLOT_W + 16, HM_TOP - 6);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
