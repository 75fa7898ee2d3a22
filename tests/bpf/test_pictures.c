// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of the pictures, checked by the programs people read them with.  A helper
 * spins in spin_three() and spin_one() 3:1 (CPU time) under `kagg profile -p PID -U`:
 *   - the flame-graph SVG parses (xmllint) and the two frames are 75% and 25% of main's
 *     width, within 3 points;
 *   - headless Chromium renders the SVG and the HTML report to screenshots that are not
 *     blank, and the SVG's DOM after a scripted search (FILE.svg#s=spin_three) shows the
 *     match line with the matched share, 75% within 3 points;
 *   - go tool pprof -top reads the pprof file and lists the two functions at 75% and 25%;
 * and a helper that sleeps 30 ms in nap_long() and 10 ms in nap_short() under
 * `kagg offcpu --stacks -p PID` draws nap_long as the widest of the two (at least half of
 * the whole), and `kagg runqlat -i` draws a heatmap with one column per interval, each as
 * wide as its interval lasted (the short last one narrower).
 * Each reader that is missing skips its test with the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

static char dir[] = "/tmp/kagg-pictures-XXXXXX";
static char path_buf[1024];

static const char *in_dir(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
	return path_buf;
}

static bool have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return !system(cmd);
}

/* Start helper MODE SECONDS; its pid. */
static pid_t start_helper(const char *mode, const char *secs)
{
	char helper[512];
	pid_t pid = fork();

	tu_helper("pictures_target", helper, sizeof(helper));
	if (!pid) {
		execl(helper, "pictures_target", mode, secs, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	return pid;
}

/* sh -c cmd; its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static char *slurp(const char *name)
{
	char *s = tu_slurp(in_dir(name), NULL);

	assert_non_null(s);
	return s;
}

/* The rect width of the frame whose tooltip starts with "name (", -1 when absent. */
static double frame_width(const char *svg, const char *name)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s (", name);
	p = strstr(svg, key);
	if (!p)
		return -1;
	p = strstr(p, "width=\"");
	return p ? strtod(p + 7, NULL) : -1;
}

static pid_t spin_pid; /* the helper the pprof profile was taken of */

static int setup(void **state)
{
	pid_t pid;
	int rc;

	if (geteuid() != 0)
		return 0;
	if (!mkdtemp(dir))
		return -1;
	/* One spinning helper for the three profile runs (svg, html, pprof). */
	pid = start_helper("spin", "16");
	spin_pid = pid;
	tu_sleep_ms(400);
	rc = sh("%s profile -p %d -U -F 997 -d 5 --format svg > %s/cpu.svg", tu_kagg(), pid, dir);
	rc |= sh("%s profile -p %d -U -F 997 -d 2 --format html > %s/cpu.html", tu_kagg(), pid,
		 dir);
	rc |= sh("%s profile -p %d -U -F 997 -d 5 --format pprof > %s/cpu.pb.gz", tu_kagg(), pid,
		 dir);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pid = start_helper("nap", "5");
	tu_sleep_ms(200);
	rc |= sh("%s offcpu --stacks -p %d -d 3 --format svg > %s/off.svg", tu_kagg(), pid, dir);
	waitpid(pid, NULL, 0);
	rc |= sh("%s runqlat -i 0.5 -d 2.6 --format heatmap > %s/rq.svg", tu_kagg(), dir);
	return rc ? -1 : 0;
}

static int teardown(void **state)
{
	if (geteuid() == 0 && strcmp(dir + strlen(dir) - 6, "XXXXXX"))
		sh("rm -rf %s", dir);
	return 0;
}

static void test_svg_widths(void **state)
{
	double wm, w3, w1;
	char *svg;

	TU_SKIP_UNLESS_ROOT();
	if (!have("xmllint")) {
		printf("SKIP %s: xmllint not installed (make deps)\n", __func__);
		skip();
	}
	assert_int_equal(sh("xmllint --noout %s/cpu.svg", dir), 0);
	svg = slurp("cpu.svg");
	wm = frame_width(svg, "main");
	w3 = frame_width(svg, "spin_three");
	w1 = frame_width(svg, "spin_one");
	printf("# spin_three %.1f%%, spin_one %.1f%% of main\n", 100 * w3 / wm, 100 * w1 / wm);
	assert_true(wm > 0 && w3 > 0 && w1 > 0);
	assert_true(fabs(100 * w3 / wm - 75) <= 3);
	assert_true(fabs(100 * w1 / wm - 25) <= 3);
	free(svg);
}

/* The PNG at path has more than a handful of distinct byte values once inflated. */
static bool png_not_blank(const char *path)
{
	size_t len, at = 8, out_cap = 64 << 20;
	unsigned char *png = (unsigned char *)tu_slurp(path, &len), *out;
	bool seen[256] = {};
	z_stream z = {};
	int distinct = 0, i;

	if (!png || len < 8 || memcmp(png, "\x89PNG", 4))
		return false;
	out = malloc(out_cap);
	assert_non_null(out);
	inflateInit(&z);
	z.next_out = out;
	z.avail_out = out_cap;
	while (at + 12 <= len) {
		uint32_t n = (uint32_t)png[at] << 24 | png[at + 1] << 16 | png[at + 2] << 8 |
			     png[at + 3];

		if (!memcmp(png + at + 4, "IDAT", 4)) {
			z.next_in = png + at + 8;
			z.avail_in = n;
			inflate(&z, Z_NO_FLUSH);
		}
		at += 12 + n;
	}
	for (i = 0; i < (int)(out_cap - z.avail_out); i++)
		seen[out[i]] = true;
	for (i = 0; i < 256; i++)
		distinct += seen[i];
	inflateEnd(&z);
	free(out);
	free(png);
	return distinct > 16;
}

#define CHROMIUM                                                              \
	"HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu " \
	"--hide-scrollbars --window-size=1200,900 "

static void test_chromium(void **state)
{
	const char *p;
	char *dom;
	double share;

	TU_SKIP_UNLESS_ROOT();
	if (!have("chromium")) {
		printf("SKIP %s: chromium not installed (make deps)\n", __func__);
		skip();
	}
	sh(CHROMIUM "--screenshot=%s/cpu.png file://%s/cpu.svg 2>/dev/null", dir, dir, dir);
	assert_true(png_not_blank(in_dir("cpu.png")));
	sh(CHROMIUM "--screenshot=%s/html.png file://%s/cpu.html 2>/dev/null", dir, dir, dir);
	assert_true(png_not_blank(in_dir("html.png")));
	/* The scripted search: the SVG reads #s=REGEX at load. */
	assert_int_equal(sh(CHROMIUM "--dump-dom 'file://%s/cpu.svg#s=spin_three' > %s/dom.txt "
				     "2>/dev/null",
			    dir, dir, dir),
			 0);
	dom = slurp("dom.txt");
	p = strstr(dom, "id=\"kagg-matched\"");
	assert_non_null(p);
	p = strstr(p, ">Matched: ");
	assert_non_null(p);
	share = strtod(p + strlen(">Matched: "), NULL);
	printf("# search spin_three: matched %.2f%%\n", share);
	assert_true(fabs(share - 75) <= 3);
	free(dom);
}

/* Skip test unless go is installed. */
static void need_go(const char *test)
{
	if (!have("go")) {
		printf("SKIP %s: go not installed (golang-go, make deps)\n", test);
		skip();
	}
}

/* What `go tool pprof -VIEW` prints of the profile (asserted to succeed), kept as VIEW.txt. */
static char *go_pprof(const char *view)
{
	char name[32];

	snprintf(name, sizeof(name), "%s.txt", view);
	assert_int_equal(sh("HOME=%s GOCACHE=%s/gocache GOPATH=%s/go GOFLAGS=-mod=mod timeout 300 "
			    "go tool pprof -%s %s/cpu.pb.gz > %s/%s 2>&1",
			    dir, dir, dir, view, dir, dir, name),
			 0);
	return slurp(name);
}

static void test_go_pprof(void **state)
{
	double three = -1, one = -1;
	char line[512], *out;
	FILE *f;

	TU_SKIP_UNLESS_ROOT();
	need_go(__func__);
	out = go_pprof("top");
	f = fmemopen(out, strlen(out), "r");
	while (fgets(line, sizeof(line), f)) {
		double flat, flatp, sum, cum, cump;
		char name[256];

		/* "flat flat% sum% cum cum% name": the units vary (ms, s), the shares do not. */
		if (sscanf(line, " %lf%*[a-zµ] %lf%% %lf%% %lf%*[a-zµ] %lf%% %255s", &flat, &flatp,
			   &sum, &cum, &cump, name) != 6)
			continue;
		if (!strcmp(name, "spin_three"))
			three = cump;
		else if (!strcmp(name, "spin_one"))
			one = cump;
	}
	fclose(f);
	printf("# go tool pprof: spin_three %.2f%%, spin_one %.2f%%\n", three, one);
	assert_true(fabs(three - 75) <= 3);
	assert_true(fabs(one - 25) <= 3);
	free(out);
}

/* go tool pprof -tags: every sample labelled with the helper's pid, tid and comm. */
static void test_go_pprof_tags(void **state)
{
	char want[64], *out, *p;

	TU_SKIP_UNLESS_ROOT();
	need_go(__func__);
	out = go_pprof("tags");
	printf("%s", out);
	/* " pid: Total 5s" then "   5s (100%): 1234": one value, the helper's */
	snprintf(want, sizeof(want), "%%): %d\n", spin_pid);
	p = strstr(out, " pid: Total");
	assert_non_null(p);
	assert_non_null(strstr(p, want));
	p = strstr(out, " tid: Total");
	assert_non_null(p);
	assert_non_null(strstr(p, want));
	p = strstr(out, " comm: Total");
	assert_non_null(p);
	assert_non_null(strstr(p, "%): pictures_target\n"));
	free(out);
	/* the helper's frames in its own file's mapping */
	out = go_pprof("raw");
	p = strstr(out, "Mappings");
	assert_non_null(p);
	assert_non_null(strstr(p, "/pictures_target "));
	free(out);
}

static void test_offcpu_widest(void **state)
{
	double wl, ws, wall;
	char *svg;

	TU_SKIP_UNLESS_ROOT();
	svg = slurp("off.svg");
	assert_non_null(strstr(svg, "off-CPU flame graph"));
	wall = frame_width(svg, "all");
	wl = frame_width(svg, "nap_long");
	ws = frame_width(svg, "nap_short");
	printf("# nap_long %.1f%%, nap_short %.1f%% of all\n", 100 * wl / wall, 100 * ws / wall);
	assert_true(wl > ws);
	assert_true(wl >= wall / 2);
	if (have("xmllint"))
		assert_int_equal(sh("xmllint --noout %s/off.svg", dir), 0);
	free(svg);
}

/* The number after `attr="` in the element at p, -1 when the element has none. */
static double elem_attr(const char *p, const char *attr)
{
	const char *v = tu_elem_attr(p, attr);

	return v ? strtod(v, NULL) : -1;
}

static void test_heatmap(void **state)
{
	double px_per_s = 0, first_w = 0, last_w = 0;
	size_t cols = 0;
	const char *p;
	char *svg;

	TU_SKIP_UNLESS_ROOT();
	svg = slurp("rq.svg");
	for (p = svg; (p = strstr(p, "<g class=\"col\"")); p++) {
		const char *cell = strstr(p, "<rect class=\"cell\""), *next;
		double t0 = elem_attr(p, "data-t0"), t1 = elem_attr(p, "data-t1"), w;

		cols++;
		next = strstr(p + 1, "<g class=\"col\"");
		assert_true(t0 >= 0 && t1 > t0);
		if (!cell || (next && cell > next)) {
			last_w = 0;
			continue; /* nothing ran in that interval */
		}
		/* Every column as wide as its interval lasted: one scale for all. */
		w = elem_attr(cell, "width");
		if (!px_per_s)
			px_per_s = w / (t1 - t0);
		assert_true(fabs(w / (t1 - t0) - px_per_s) < 1e-3 * px_per_s);
		first_w = first_w ? first_w : w;
		last_w = w;
	}
	printf("# first column %.1f px, last %.1f px, %.1f px/s\n", first_w, last_w, px_per_s);
	/* -i 0.5 -d 2.6: five intervals and the last 0.1 s, drawn narrower. */
	assert_int_equal(cols, 6);
	if (last_w)
		assert_true(last_w < first_w / 2);
	assert_non_null(strstr(svg, ">events/s</text>"));
	assert_non_null(strstr(svg, "data-columns=\"6\""));
	if (have("xmllint"))
		assert_int_equal(sh("xmllint --noout %s/rq.svg", dir), 0);
	free(svg);
}

KT_MAIN_GROUP(setup, teardown, cmocka_unit_test(test_svg_widths), cmocka_unit_test(test_chromium),
	      cmocka_unit_test(test_go_pprof), cmocka_unit_test(test_go_pprof_tags),
	      cmocka_unit_test(test_offcpu_widest), cmocka_unit_test(test_heatmap))
