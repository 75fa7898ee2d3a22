// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * html.c - a run's one-file HTML report: meta table, histograms as inline-SVG bar charts
 * with their percentiles, and the flame graph of the stacks (flame.c's SVG, inline).
 * No outside resource: the file opens offline.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kagg/html.h>
#include "render/render_internal.h"

static void row(FILE *f, const char *k, const char *v)
{
	fputs("<tr><th>", f);
	xml_puts(f, k);
	fputs("</th><td>", f);
	xml_puts(f, v ? v : "");
	fputs("</td></tr>\n", f);
}

static void row_u64(FILE *f, const char *k, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	row(f, k, buf);
}

struct row_count {
	const char *name;
	uint64_t v;
};

/* A row per count, up to the entry without a name. */
static void rows_u64(FILE *f, const struct row_count *r)
{
	for (; r->name; r++)
		row_u64(f, r->name, r->v);
}

static void row_time(FILE *f, const char *k, const struct timespec *ts)
{
	char buf[64];
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%06ldZ", ts->tv_nsec / 1000);
	row(f, k, buf);
}

static void meta_table(FILE *f, const struct kagg_meta *m)
{
	char buf[128];
	size_t i;

	fputs("<h2>Meta</h2>\n<table class=\"meta\">\n", f);
	row(f, "tool", m->tool);
	row(f, "event", m->event);
	row(f, "attach", m->attach);
	if (m->attach_note)
		row(f, "attach note", m->attach_note);
	row(f, "kernel", m->kernel);
	row(f, "kernel build", m->kernel_build);
	row(f, "clock", m->clock);
	row(f, "filters", m->filters);
	row(f, "unit", m->unit);
	snprintf(buf, sizeof(buf), "%d observed of %d possible", m->cpus_observed, m->nr_cpus);
	row(f, "CPUs", buf);
	row_time(f, "start", &m->start);
	row_time(f, "end", &m->end);
	snprintf(buf, sizeof(buf), "%.6f s", m->duration_s);
	row(f, "duration", buf);
	row_u64(f, "events seen", m->events_seen);
	row_u64(f, "events recorded", m->events_recorded);
	row_u64(f, "events filtered", m->events_filtered);
	row_u64(f, "drops (total)", m->drops_total);
	for (i = 0; i < m->nr_drops; i++) {
		snprintf(buf, sizeof(buf), "drop: %s", m->drops[i]->cause);
		snprintf(buf + 64, 64, "%" PRIu64, m->drops[i]->count);
		fputs("<tr><th>", f);
		xml_puts(f, buf);
		fputs("</th><td>", f);
		xml_puts(f, buf + 64);
		fputs(" <span class=\"what\">", f);
		xml_puts(f, m->drops[i]->what ? m->drops[i]->what : "");
		fputs("</span></td></tr>\n", f);
	}
	row(f, "snapshot", m->snapshot_exact ? "exact" : "not exact");
	if (m->snapshot_note)
		row(f, "snapshot note", m->snapshot_note);
	if (m->mode)
		row(f, "mode", m->mode);
	if (m->has_stream)
		rows_u64(f,
			 (const struct row_count[]){ { "stream: seen", m->stream_seen },
						     { "stream: sent", m->stream_sent },
						     { "stream: delivered", m->stream_delivered },
						     { "stream: dropped", m->stream_dropped },
						     { "stream: bytes", m->stream_bytes },
						     {} });
	for (i = 0; m->has_overhead && i < m->nr_progs; i++) {
		snprintf(buf, sizeof(buf), "%.1f ns per run, %" PRIu64 " runs",
			 m->progs[i]->ns_per_run, m->progs[i]->run_cnt);
		fputs("<tr><th>cost: ", f);
		xml_puts(f, m->progs[i]->prog);
		fputs("</th><td>", f);
		xml_puts(f, buf);
		fputs("</td></tr>\n", f);
	}
	if (m->has_frames)
		rows_u64(f, (const struct row_count[]){
				    { "frames", m->frames },
				    { "frames without maps", m->frames_no_maps },
				    { "frames without symbols", m->frames_no_symbols },
				    { "stacks lost", m->stacks_lost },
				    { "process notes lost", m->notes_lost },
				    {} });
	fputs("</table>\n", f);
}

#define CH_W 900
#define CH_BAR 18

/* One histogram: heading, bar chart of its non-empty range, percentiles. */
static void hist_section(FILE *f, const struct kagg_hist *h, const double *pcts, size_t npcts)
{
	const char *unit = KAGG_HAS_FIELD(h, kagg_hist, value) && h->value
				   ? h->value
				   : kagg_unit__name(h->unit);
	unsigned int k, lo = UINT32_MAX, hi = 0, rows;
	uint64_t max = 0;
	char buf[96];
	size_t i;

	for (k = 0; k < h->nr_slots; k++)
		if (h->slots[k]) {
			lo = k < lo ? k : lo;
			hi = k;
			max = h->slots[k] > max ? h->slots[k] : max;
		}
	fputs("<section class=\"hist\"><h3>", f);
	if (h->key.label) {
		xml_puts(f, h->key.label);
		fputs(" ", f);
	}
	if (h->key.mode == KAGG_KEY_CGROUP && h->cgroup) {
		xml_puts(f, h->cgroup);
		fputs(" ", f);
	} else if (h->key.mode == KAGG_KEY_CGROUP) {
		fprintf(f, "cgroup %" PRIu64 " ", h->cgroup_id);
	}
	if (h->key.mode != KAGG_KEY_NONE && h->key.mode != KAGG_KEY_CGROUP) {
		char comm[sizeof(h->key.comm) + 1];

		memcpy(comm, h->key.comm, sizeof(h->key.comm));
		comm[sizeof(h->key.comm)] = 0;
		xml_puts(f, comm);
		if (h->key.mode != KAGG_KEY_COMM)
			fprintf(f, " pid %d", h->key.pid);
		if (h->key.mode == KAGG_KEY_TID)
			fprintf(f, " tid %d", h->key.tid);
		fputs(" ", f);
	}
	fprintf(f, "(%" PRIu64 " values, ", h->total);
	xml_puts(f, unit);
	fputs(")</h3>\n", f);
	if (max) {
		rows = hi - lo + 1;
		fprintf(f,
			"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%d\" "
			"height=\"%u\">\n",
			CH_W, rows * CH_BAR + 4);
		for (k = lo; k <= hi; k++) {
			double low, high, w = 580.0 * h->slots[k] / max;
			unsigned int y = (k - lo) * CH_BAR;

			kagg_hist__bounds(h, k, &low, &high);
			fprintf(f,
				"<text x=\"200\" y=\"%u\" text-anchor=\"end\">%.15g -&gt; "
				"%.15g</text>"
				"<rect x=\"210\" y=\"%u\" width=\"%.3f\" height=\"%d\" "
				"fill=\"#4a7ab8\">"
				"<title>%" PRIu64
				"</title></rect><text x=\"%.3f\" y=\"%u\">%" PRIu64 "</text>\n",
				y + 13, low, high, y + 2, w, CH_BAR - 3, h->slots[k], 215 + w,
				y + 13, h->slots[k]);
		}
		fputs("</svg>\n", f);
	}
	fputs("<table class=\"pct\"><tr>", f);
	for (i = 0; i < npcts; i++) {
		if (pcts[i] >= 100)
			fputs("<th>max</th>", f);
		else
			fprintf(f, "<th>p%g</th>", pcts[i]);
	}
	fputs("</tr><tr>", f);
	for (i = 0; i < npcts; i++) {
		double v;

		if (kagg_hist__percentile(h, pcts[i], &v, NULL, NULL))
			snprintf(buf, sizeof(buf), "-");
		else
			snprintf(buf, sizeof(buf), "%.6g", v);
		fprintf(f, "<td>%s</td>", buf);
	}
	fputs("</tr></table></section>\n", f);
}

int kagg_html__puts(FILE *f, const char *s)
{
	if (!f || !s)
		return -EINVAL;
	xml_puts(f, s);
	return ferror(f) ? -EIO : 0;
}

int kagg_html__write(const struct kagg_snapshot *snap, FILE *f, const struct kagg_html_opts *opts)
{
	static const double def_pcts[] = { 50, 90, 99, 99.9, 100 };
	struct kagg_html_opts o = {};
	const struct kagg_meta *m;
	const double *pcts = def_pcts;
	size_t i, n, npcts = 5;
	char sub[512], title[128];
	int err = 0;

	if (!snap || !f || (opts && opts->sz > sizeof(o)))
		return -EINVAL;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (o.percentiles && o.nr_percentiles) {
		pcts = o.percentiles;
		npcts = o.nr_percentiles;
	}
	m = kagg_snapshot__meta(snap);
	snprintf(title, sizeof(title), "kagg %s report", m && m->tool ? m->tool : "");
	sub[0] = 0;
	if (m)
		render_meta_line(m, sub, sizeof(sub));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
	xml_puts(f, title);
	fputs("</title>\n<style>body{font-family:Verdana,sans-serif;font-size:13px;margin:20px;"
	      "color:#222}table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ccc;"
	      "padding:2px 8px;text-align:left}th{background:#f0f0f0}.what{color:#777}"
	      "svg.chart text{font-size:11px}.flame "
	      "svg{width:100%;height:auto}</style></head>\n<body>\n<h1>",
	      f);
	xml_puts(f, title);
	fputs("</h1>\n<p class=\"sub\">", f);
	xml_puts(f, sub);
	fputs("</p>\n", f);
	n = kagg_snapshot__hist_cnt(snap);
	if (n)
		fputs("<h2>Histograms</h2>\n", f);
	for (i = 0; i < n; i++)
		hist_section(f, kagg_snapshot__hist(snap, i), pcts, npcts);
	if (kagg_snapshot__stack_cnt(snap)) {
		struct flame fl;
		struct flame_svg s = { .title = o.cold ? "off-CPU flame graph"
						       : "on-CPU flame graph",
				       .subtitle = sub,
				       .by_count = o.by_count,
				       .cold = o.cold,
				       .unit = o.unit,
				       .inline_svg = true };

		fputs("<h2>Flame graph</h2>\n<div class=\"flame\">\n", f);
		err = flame_from_snapshot(&fl, snap, o.by_count);
		if (err)
			return err;
		err = flame_svg(&fl, f, &s);
		flame_fini(&fl);
		fputs("</div>\n", f);
	}
	if (m)
		meta_table(f, m);
	fputs("</body></html>\n", f);
	return err ? err : ferror(f) ? -EIO : 0;
}
