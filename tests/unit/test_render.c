// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of the renderers with crafted input: flame-graph widths exact to the
 * values (a 3:1 split of a parent, siblings side by side), XML escaping of frame names
 * (markup characters, invalid UTF-8, control bytes, cuts on character boundaries), the
 * documents parsing as XML (xmllint, skipped when missing), a heatmap's columns and rows,
 * its columns as wide as their intervals lasted and coloured by rate, its time axis at even
 * steps, a snapshot's stacks drawn in process/user/kernel order, and the HTML report's flame
 * graph as tall as what it draws.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kagg/kagg.h>
#include "render/render_internal.h"
#include "snapshot/snapshot_internal.h"
#include "testutil.h"
#include "unit_util.h"

/* The number after attr (as `width="`) in the frame whose tooltip starts with "name (". */
static double frame_attr(const char *svg, const char *name, const char *attr)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s (", name);
	p = strstr(svg, key);
	assert_non_null(p);
	p = strstr(p, attr);
	assert_non_null(p);
	return strtod(p + strlen(attr), NULL);
}

#define frame_width(svg, name) frame_attr(svg, name, "width=\"")
#define frame_x(svg, name) frame_attr(svg, name, "<rect x=\"")

/* 0 when xmllint accepts the document, 1 when it refuses it, -1 when there is no xmllint. */
static int xmllint(const char *doc)
{
	char path[] = "/tmp/kagg-render-XXXXXX", cmd[128];
	FILE *f;
	int fd, rc;

	if (system("command -v xmllint >/dev/null 2>&1"))
		return -1;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(doc, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>/dev/null", path);
	rc = system(cmd);
	unlink(path);
	return rc ? 1 : 0;
}

static char *draw(const struct flame *fl, bool by_count)
{
	struct flame_svg o = { .title = "t", .subtitle = "s", .by_count = by_count };
	struct uu_mem m;

	assert_int_equal(flame_svg(fl, uu_mem_open(&m), &o), 0);
	return uu_mem_text(&m);
}

static void test_widths_exact(void **state)
{
	const char *a[] = { "app", "main", "spin_a" }, *b[] = { "app", "main", "spin_b" };
	const char *c[] = { "app", "other" };
	struct flame fl;
	double wm, wa, wb;
	char *svg;

	assert_int_equal(flame_init(&fl), 0);
	assert_int_equal(flame_add(&fl, a, 3, 300), 0);
	assert_int_equal(flame_add(&fl, b, 3, 100), 0);
	assert_int_equal(flame_add(&fl, c, 2, 400), 0);
	assert_int_equal(flame_add(&fl, a, 3, 300), 0); /* the same path again: summed */
	assert_int_equal(fl.depth, 4);
	svg = draw(&fl, true);
	wm = frame_width(svg, "main");
	wa = frame_width(svg, "spin_a");
	wb = frame_width(svg, "spin_b");
	/* 1180 px for 1100 samples: main 700, spin_a 600, spin_b 100, to 1e-4 px. */
	assert_true(fabs(frame_width(svg, "all") - 1180) < 1e-3);
	assert_true(fabs(wm - 1180.0 * 700 / 1100) < 1e-3);
	assert_true(fabs(wa - 1180.0 * 600 / 1100) < 1e-3);
	assert_true(fabs(wb - 1180.0 * 100 / 1100) < 1e-3);
	/* Side by side in name order, the first child at its parent's x. */
	assert_true(fabs(frame_x(svg, "spin_a") - frame_x(svg, "main")) < 1e-3);
	assert_true(fabs(frame_x(svg, "spin_b") - (frame_x(svg, "spin_a") + wa)) < 1e-3);
	assert_non_null(strstr(svg, "<title>spin_a (600 samples, 54.55%)</title>"));
	assert_non_null(strstr(svg, "<title>all (1100 samples, 100.00%)</title>"));
	if (xmllint(svg) >= 0)
		assert_int_equal(xmllint(svg), 0);
	free(svg);
	flame_fini(&fl);
}

/* The svg element's height attribute. */
static unsigned int svg_height(const char *svg)
{
	const char *p = strstr(svg, "<svg ");

	assert_non_null(p);
	p = strstr(p, " height=\"");
	assert_non_null(p);
	return strtoul(p + 9, NULL, 10);
}

/*
 * A 132-frame tower of one sample in 2000 (0.05%) is not drawn, nor counted in the height;
 * one of 0.1% is.
 */
static void test_narrow_frames_hidden(void **state)
{
	const char *deep[132], *app[] = { "app", "main", "work" }, *t[] = { "app", "tick" };
	char names[132][16];
	struct flame fl;
	unsigned int i;
	char *svg;

	for (i = 0; i < 132; i++) {
		snprintf(names[i], sizeof(names[i]), "junk%u", i);
		deep[i] = names[i];
	}
	deep[0] = "app";
	assert_int_equal(flame_init(&fl), 0);
	assert_int_equal(flame_add(&fl, app, 3, 1997), 0);
	assert_int_equal(flame_add(&fl, deep, 132, 1), 0);
	assert_int_equal(flame_add(&fl, t, 2, 2), 0);
	svg = draw(&fl, true);
	assert_null(strstr(svg, "junk1 "));
	assert_null(strstr(svg, "junk131"));
	assert_non_null(strstr(svg, "<title>tick (2 samples, 0.10%)</title>"));
	/* all, app, main, work: 4 rows of 16 px, 64 above, 28 below */
	assert_int_equal(svg_height(svg), 64 + 4 * 16 + 28);
	free(svg);
	flame_fini(&fl);
}

static void test_escaping(void **state)
{
	const char *p[] = { "a<b>&\"c'", "bad\xff\x01utf8", "caf\xc3\xa9" };
	struct flame fl;
	struct uu_mem m;
	char *svg, *buf;

	assert_int_equal(flame_init(&fl), 0);
	assert_int_equal(flame_add(&fl, p, 3, 5), 0);
	svg = draw(&fl, false);
	assert_null(strstr(svg, "a<b>"));
	TU_ASSERT_HAS(svg, "<title>a&lt;b&gt;&amp;&quot;c&#39; (0.005 us, 100.00%)",
		      "<title>bad??utf8 (", "<title>caf\xc3\xa9 (");
	if (xmllint(svg) >= 0)
		assert_int_equal(xmllint(svg), 0);
	free(svg);
	flame_fini(&fl);

	/* A cut never splits a character: "caf" and not half of the e-acute. */
	xml_putn(uu_mem_open(&m), "caf\xc3\xa9", 4);
	buf = uu_mem_text(&m);
	assert_string_equal(buf, "caf");
	free(buf);
}

/* The one stack of snap (snap_new(), checked here): comm's, count times, total_ns long. */
static struct kagg_stack *one_stack(struct kagg_snapshot *snap, const char *comm, uint64_t count,
				    uint64_t total_ns)
{
	struct kagg_stack *st;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_stacks(snap, 1), 0);
	snap->nr_stacks = 1;
	st = &snap->stacks[0];
	snprintf(st->comm, sizeof(st->comm), "%s", comm);
	st->count = count;
	st->total_ns = total_ns;
	return st;
}

/* A crafted snapshot: comm, user frames, kernel frames, as flame_from_snapshot orders them. */
static void test_snapshot_order(void **state)
{
	struct kagg_snapshot *snap = snap_new();
	const struct kagg_frame *const *up, *const *kp;
	struct kagg_frame *uf, *kf;
	struct kagg_flame_opts o = { .sz = sizeof(o), .cold = true, .unit = KAGG_UNIT_MSECS };
	struct kagg_stack *st;
	struct uu_mem m;
	char *buf;

	st = one_stack(snap, "sleeper", 3, 30000000);
	uf = snap_frames(snap, 2, &up);
	kf = snap_frames(snap, 1, &kp);
	uf[0].sym = "nanosleep"; /* innermost first */
	uf[1].sym = "main";
	kf[0].sym = "schedule";
	st->uframes = up;
	st->nr_uframes = 2;
	st->kframes = kp;
	st->nr_kframes = 1;
	snap->meta.tool = "offcpu";
	snap->meta.event = "sched:sched_switch";
	snap->meta.filters = "pid=7";
	assert_int_equal(kagg_flame__write_svg(snap, uu_mem_open(&m), &o), 0);
	buf = uu_mem_text(&m);
	TU_ASSERT_HAS(buf, "offcpu: off-CPU flame graph", "event sched:sched_switch, filters pid=7",
		      "<title>schedule (30.000 ms, 100.00%)");
	/* Bottom to top: sleeper, main, nanosleep, schedule (y grows downward). */
	TU_ASSERT_HAS(buf, "data-d=\"1\"><title>sleeper (", "data-d=\"2\"><title>main (",
		      "data-d=\"3\"><title>nanosleep (", "data-d=\"4\"><title>schedule (");
	free(buf);
	kagg_snapshot__free(snap);
}

static void test_heatmap_columns(void **state)
{
	struct kagg_heatmap *hm = kagg_heatmap__new();
	struct uu_mem m;
	char *buf;
	const char *p;
	size_t cols = 0, cells = 0;
	int i;

	assert_non_null(hm);
	for (i = 0; i < 4; i++) {
		struct kagg_snapshot *snap = snap_new();

		assert_int_equal(snap_alloc_hists(snap, 2, 8), 0);
		snap->hists[0].slots = (uint64_t[8]){ 0, 0, 1, (uint64_t)i, 0 };
		snap->hists[1].slots = (uint64_t[8]){ 0, 0, 2, 0, 0, 5 };
		snap->meta.tool = "runqlat";
		snap->meta.end.tv_sec = i + 1;
		assert_int_equal(kagg_heatmap__add(hm, snap), 0);
		kagg_snapshot__free(snap);
	}
	assert_int_equal(kagg_heatmap__columns(hm), 4);
	assert_int_equal(kagg_heatmap__write_svg(hm, uu_mem_open(&m), NULL), 0);
	buf = uu_mem_text(&m);
	for (p = buf; (p = strstr(p, "<g class=\"col\"")); p++)
		cols++;
	for (p = buf; (p = strstr(p, "class=\"cell\"")); p++)
		cells++;
	assert_int_equal(cols, 4);
	/* Slots 2 (3 each column), 3 (i: 3 columns) and 5 (5 each): 4 + 3 + 4 cells. */
	assert_int_equal(cells, 11);
	assert_non_null(strstr(buf, "data-max=\"5\""));
	assert_non_null(strstr(buf, "data-count=\"3\" data-rate=\""));
	if (xmllint(buf) >= 0)
		assert_int_equal(xmllint(buf), 0);
	free(buf);
	kagg_heatmap__free(hm);
}

/* The number in attribute attr (as "width") of the element that starts at p. */
static double elem_attr(const char *p, const char *attr)
{
	const char *v = tu_elem_attr(p, attr);

	assert_non_null(v);
	return strtod(v, NULL);
}

/* The red, green and blue of the element's fill="rgb(r,g,b)", summed: lower is hotter. */
static int elem_fill_sum(const char *p)
{
	const char *a = strstr(p, " fill=\"rgb(");
	int r, g, b;

	assert_non_null(a);
	assert_int_equal(sscanf(a, " fill=\"rgb(%d,%d,%d)", &r, &g, &b), 3);
	return r + g + b;
}

/* A heatmap column of count values in slot 3 over [start, end) (seconds, in ms steps). */
static void hm_add_interval(struct kagg_heatmap *hm, unsigned int start_ms, unsigned int end_ms,
			    uint64_t count)
{
	struct kagg_snapshot *snap = snap_new();
	uint64_t slots[8] = { 0 };

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, 1, 8), 0);
	slots[3] = count;
	snap->hists[0].slots = slots;
	snap->meta.tool = "runqlat";
	snap->meta.start = (struct timespec){ 1000 + start_ms / 1000, start_ms % 1000 * 1000000L };
	snap->meta.end = (struct timespec){ 1000 + end_ms / 1000, end_ms % 1000 * 1000000L };
	snap->meta.duration_s = (end_ms - start_ms) / 1000.0;
	assert_int_equal(kagg_heatmap__add(hm, snap), 0);
	kagg_snapshot__free(snap);
}

/*
 * Intervals of 0.1 s, 0.4 s, a 0.5 s gap and 0.5 s, 8 events each: the columns are 1 : 4 : 5
 * wide with a gap of 5 between the second and third, the first is four times the rate of the
 * second (and hotter), and the time axis is labelled at even, round steps from the start.
 */
static void test_heatmap_time(void **state)
{
	struct kagg_heatmap *hm = kagg_heatmap__new();
	double x[3], w[3], rate[3], tx[32], tv[32], step, px_per_s;
	int fill[3];
	size_t n = 0, j;
	struct uu_mem m;
	const char *p;
	char *buf;

	assert_non_null(hm);
	hm_add_interval(hm, 0, 100, 8);
	hm_add_interval(hm, 100, 500, 8);
	hm_add_interval(hm, 1000, 1500, 8);
	assert_int_equal(kagg_heatmap__write_svg(hm, uu_mem_open(&m), NULL), 0);
	buf = uu_mem_text(&m);
	for (p = buf; (p = strstr(p, "<g class=\"col\"")); p++) {
		const char *cell = strstr(p, "<rect class=\"cell\"");

		assert_true(n < 3);
		assert_non_null(cell);
		x[n] = elem_attr(cell, "x");
		w[n] = elem_attr(cell, "width");
		rate[n] = elem_attr(cell, "data-rate");
		fill[n] = elem_fill_sum(cell);
		n++;
	}
	assert_int_equal(n, 3);
	/* Widths in proportion to the durations, the gap as wide as it lasted. */
	assert_true(fabs(w[1] - 4 * w[0]) < 1e-3);
	assert_true(fabs(w[2] - 5 * w[0]) < 1e-3);
	assert_true(fabs(x[1] - (x[0] + w[0])) < 1e-3);
	assert_true(fabs(x[2] - (x[1] + w[1] + 5 * w[0])) < 1e-3);
	/* Colour by rate: 80/s, 20/s and 16/s; the short interval the hottest. */
	assert_true(fabs(rate[0] - 80) < 1e-6 && fabs(rate[1] - 20) < 1e-6);
	assert_true(fabs(rate[2] - 16) < 1e-6);
	assert_true(fill[0] < fill[1] && fill[1] < fill[2]);
	TU_ASSERT_HAS(buf, ">events/s</text>", "data-max-rate=\"80\"");
	/* Time labels: evenly spaced, at round values, from the start of the first interval. */
	for (p = buf, n = 0; (p = strstr(p, "<text class=\"m tick\"")); p++) {
		assert_true(n < 32);
		tx[n] = elem_attr(p, "x");
		tv[n] = strtod(strchr(p, '>') + 1, NULL);
		n++;
	}
	assert_true(n >= 4);
	step = tv[1] - tv[0];
	px_per_s = w[0] / 0.1;
	assert_true(fabs(tv[0]) < 1e-9 && fabs(tx[0] - x[0]) < 1e-3);
	assert_true(fabs(step - 0.2) < 1e-9); /* 1.5 s: 0, 0.2, ... 1.4 */
	assert_int_equal(n, 8);
	for (j = 1; j < n; j++) {
		assert_true(fabs(tv[j] - tv[j - 1] - step) < 1e-9);
		assert_true(fabs(tx[j] - tx[j - 1] - step * px_per_s) < 1e-3);
	}
	if (xmllint(buf) >= 0)
		assert_int_equal(xmllint(buf), 0);
	free(buf);
	kagg_heatmap__free(hm);
}

/* The steps of the time axis for a few spans: 1, 2 or 5 times a power of ten. */
static void test_heatmap_axis_steps(void **state)
{
	static const struct {
		unsigned int ms;
		double step;
	} cases[] = { { 300, 0.05 }, { 2600, 0.5 }, { 10000, 2 }, { 60000, 10 }, { 3600000, 500 } };
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct kagg_heatmap *hm = kagg_heatmap__new();
		struct uu_mem m;
		const char *p;
		double first = -1, second = -1;
		char *buf;

		assert_non_null(hm);
		hm_add_interval(hm, 0, cases[c].ms, 1);
		assert_int_equal(kagg_heatmap__write_svg(hm, uu_mem_open(&m), NULL), 0);
		buf = uu_mem_text(&m);
		p = strstr(buf, "<text class=\"m tick\"");
		assert_non_null(p);
		first = strtod(strchr(p, '>') + 1, NULL);
		p = strstr(p + 1, "<text class=\"m tick\"");
		assert_non_null(p);
		second = strtod(strchr(p, '>') + 1, NULL);
		assert_true(fabs(first) < 1e-9);
		assert_true(fabs(second - cases[c].step) < 1e-9 * cases[c].step);
		free(buf);
		kagg_heatmap__free(hm);
	}
}

/* The HTML report's flame graph is as tall as the rows it draws: a shallow stack, a low one. */
static void test_html_flame_height(void **state)
{
	struct kagg_snapshot *snap = snap_new();
	const struct kagg_frame *const *up;
	struct kagg_html_opts o = { .sz = sizeof(o), .by_count = true };
	struct kagg_frame *uf;
	struct kagg_stack *st;
	struct uu_mem m;
	const char *svg;
	char *buf;

	st = one_stack(snap, "app", 5, 5000000);
	uf = snap_frames(snap, 1, &up);
	uf[0].sym = "main";
	st->uframes = up;
	st->nr_uframes = 1;
	snap->meta.tool = "profile";
	assert_int_equal(kagg_html__write(snap, uu_mem_open(&m), &o), 0);
	buf = uu_mem_text(&m);
	svg = strstr(buf,
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"kagg-flame\"");
	assert_non_null(svg);
	/* all, app, main: 3 rows of 16 px, 64 above, 28 below; the view box the same. */
	assert_int_equal(svg_height(svg), 64 + 3 * 16 + 28);
	assert_true(elem_attr(svg, "width") == 1200);
	assert_non_null(strstr(svg, "viewBox=\"0 0 1200 140\""));
	/* The page lets it keep its proportions at any width. */
	assert_non_null(strstr(buf, ".flame svg{width:100%;height:auto}"));
	free(buf);
	kagg_snapshot__free(snap);
}

UU_MAIN(cmocka_unit_test(test_widths_exact), cmocka_unit_test(test_narrow_frames_hidden),
	cmocka_unit_test(test_escaping), cmocka_unit_test(test_snapshot_order),
	cmocka_unit_test(test_heatmap_columns), cmocka_unit_test(test_heatmap_time),
	cmocka_unit_test(test_heatmap_axis_steps), cmocka_unit_test(test_html_flame_height))
