// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Names from outside kagg (a comm a process gave itself with prctl(PR_SET_NAME), a binary's
 * symbols, a path, a tool line) through every output format: bytes that are not UTF-8 (ff fe,
 * c3 28, a cut sequence), overlong forms, surrogates, U+FFFE/U+FFFF, code points above
 * U+10FFFF, ESC/BEL/CR/DEL and a C1 control, markup, quotes, backslash and newline.
 *
 * Each output is checked against the exact text its format's rule gives for every name
 * (utf8.h), and with its real parser when that is installed (else the test says which is
 * missing and skips): the Prometheus text format with `promtool check metrics`, OpenMetrics
 * with the prometheus_client parser (python3-prometheus-client), protobuf decoded back with
 * protobuf-c, flame graph and heatmap SVG with `xmllint --noout`, the HTML report with
 * xmllint's HTML parser, pprof with `go tool pprof -raw` and decoded back, JSON with python3's
 * json; every one also strictly UTF-8 without stray controls (python3's decoder).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <kagg/kagg.h>
#include "snapshot/snapshot_internal.h"
#include "syms/demangle.h"
#include "syms/syms.h"
#include "prometheus_metrics.pb-c.h"
#include "profile.pb-c.h"
#include "testutil.h"
#include "unit_util.h"

#define R "\xef\xbf\xbd" /* U+FFFD */

/*
 * A hostile name and what each rule makes of it: label values (U+FFFD for each byte outside
 * UTF-8 and each control but the newline), pprof strings (the newline too), XML text ('?'
 * for those and for U+FFFE/U+FFFF, markup as entities).  Each fits a comm (15 bytes).
 */
static const struct hname {
	const char *raw, *label, *pprof, *xml;
} names[] = {
	{ "\xff\xfe\xc3\x28"
	  "ab",
	  R R R "(ab", R R R "(ab",
	  "??"
	  "?(ab" },
	{ "o\xc0\xaf\xe0\x80\x80", "o" R R R R R, "o" R R R R R, "o?????" },
	{ "s\xed\xa0\x80\xed\xbf\xbf", "s" R R R R R R, "s" R R R R R R, "s??????" },
	{ "n\xef\xbf\xbe\xef\xbf\xbf", "n\xef\xbf\xbe\xef\xbf\xbf", "n\xef\xbf\xbe\xef\xbf\xbf",
	  "n??" },
	{ "b\xf4\x90\x80\x80\xf5\x80", "b" R R R R R R, "b" R R R R R R, "b??????" },
	{ "e\x1b[31m\x07\r\t\x7f", "e" R "[31m" R R R R, "e" R "[31m" R R R R, "e?[31m????" },
	{ "c\xc2\x9b"
	  "1m",
	  "c" R "1m", "c" R "1m", "c?1m" },
	{ "<&>\"'\\", "<&>\"'\\", "<&>\"'\\", "&lt;&amp;&gt;&quot;&#39;\\" },
	{ "l\nm", "l\nm", "l" R "m", "l?m" },
	{ "caf\xc3\xa9\xf0\x9f\x90\xa7", "caf\xc3\xa9\xf0\x9f\x90\xa7",
	  "caf\xc3\xa9\xf0\x9f\x90\xa7", "caf\xc3\xa9\xf0\x9f\x90\xa7" },
	{ "x\xe6\x97", "x" R R, "x" R R, "x??" },
};
#define NR_NAMES (sizeof(names) / sizeof(names[0]))

/* A tool line (the tool_id label), a filter and an event with hostile bytes too. */
#define TOOL_ID "fl\xff\x1b\"\\\n"
#define TOOL_ID_TEXT "fl" R R "\\\"\\\\\\n"
#define FILTERS "cgroup /sys/fs/cgroup/\xed\xa0\x80\x07"
#define FILTERS_TEXT "cgroup /sys/fs/cgroup/" R R R R
#define EVENT "uprobe:/bin/x:\xc0\xaf<b>"

/* ------------------------------------------------------------ helpers */

/* Whether cmd (a shell word) is installed. */
static bool have(const char *cmd)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "command -v %s >/dev/null 2>&1", cmd);
	return !system(buf);
}

/* len bytes of data into a new temporary file, whose name goes to path (32 bytes). */
static void tmp_write(char *path, const void *data, size_t len)
{
	int fd;

	strcpy(path, "/tmp/kagg-names-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/*
 * Strictly UTF-8, by python3's decoder (which refuses overlong forms, surrogates and code
 * points above U+10FFFF), without controls but those in ok ("n": newline, "t": tab): each
 * NUL-separated string of the file.  0 when so; 1 with the reason on stderr when not; -1
 * without python3.
 */
static const char py_check[] =
	"import sys\n"
	"ok = ''.join({'n': '\\n', 't': '\\t'}[c] for c in sys.argv[1])\n"
	"for s in open(sys.argv[2], 'rb').read().split(b'\\0'):\n"
	"    try:\n"
	"        t = s.decode('utf-8')\n"
	"    except UnicodeDecodeError as e:\n"
	"        sys.exit('not UTF-8: %s in %r' % (e, s[max(0, e.start - 20):e.end + 20]))\n"
	"    for c in t:\n"
	"        if (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0) and c not in ok:\n"
	"            sys.exit('control %r in %r' % (c, t[:80]))\n";

static int utf8_check(const char *path, const char *ok)
{
	char script[64];
	int rc;

	if (!have("python3"))
		return -1;
	tmp_write(script, py_check, strlen(py_check));
	rc = tu_sh("python3 %s '%s' %s", script, ok, path);
	unlink(script);
	return rc ? 1 : 0;
}

/* utf8_check() of len bytes of data, which must pass (skipped, said once, without python3). */
static void assert_utf8(const void *data, size_t len, const char *ok)
{
	char path[32];
	int rc;

	tmp_write(path, data, len);
	rc = utf8_check(path, ok);
	unlink(path);
	if (rc < 0)
		printf("  (no python3: UTF-8 not checked)\n");
	else if (rc)
		fail_msg("output not strictly UTF-8 without controls (see above)");
}

/* s escaped as a label value of the text formats: backslash, quote and newline. */
static void label_text(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n')
			out[n++] = '\\';
		out[n++] = *s == '\n' ? 'n' : *s;
	}
	out[n] = 0;
}

static void assert_has(const char *text, const char *what)
{
	if (!strstr(text, what))
		fail_msg("missing: %s", what);
}

/* ------------------------------------------------------------ snapshots */

/*
 * offcpu -P as it would read: one histogram per process named by a hostile comm, one stack
 * each (comm; the name and the next one as user frames, in a file with a hostile path;
 * schedule), hostile filters and event.
 */
static struct kagg_snapshot *make_procs(void)
{
	struct kagg_snapshot *snap = snap_new();
	size_t i;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, NR_NAMES, 64), 0);
	assert_int_equal(snap_alloc_stacks(snap, NR_NAMES), 0);
	snap->nr_stacks = NR_NAMES;
	for (i = 0; i < NR_NAMES; i++) {
		struct kagg_hist *h = &snap->hists[i];
		struct kagg_stack *st = &snap->stacks[i];
		const struct kagg_frame *const *up, *const *kp;
		struct kagg_frame *uf, *kf;

		h->unit = KAGG_UNIT_NSECS;
		h->key.mode = KAGG_KEY_PID;
		h->key.pid = 100 + i;
		strncpy(h->key.comm, names[i].raw, sizeof(h->key.comm) - 1);
		((uint64_t *)h->slots)[10 + i] = 1;
		h->total = 1;
		h->has_sum = true;
		h->sum = 1ull << (10 + i);

		strncpy(st->comm, names[i].raw, sizeof(st->comm) - 1);
		st->pid = st->tid = 100 + i;
		st->total_ns = 1000000 * (i + 1);
		st->count = i + 1;
		uf = snap_frames(snap, 2, &up);
		kf = snap_frames(snap, 1, &kp);
		assert_true(uf && kf);
		uf[0].sym = names[i].raw; /* innermost first */
		uf[0].ip = 0x1000 + i;
		uf[0].module = "/tmp/lib\xff\x1b\xed\xa0\x80.so";
		uf[1].sym = names[(i + 1) % NR_NAMES].raw;
		uf[1].ip = 0x2000 + i;
		kf[0].sym = "schedule";
		kf[0].module = "[kernel]";
		uu_stack_frames(st, kp, 1, up, 2);
	}
	uu_meta(&snap->meta, "offcpu", EVENT, "tp_btf", "6.1.0-\x1b[2J", FILTERS);
	snap->meta.unit = "nsecs";
	snap->meta.start.tv_sec = 1700000000;
	snap->meta.end.tv_sec = 1700000001;
	snap->meta.duration_s = 1;
	snap->meta.events_seen = snap->meta.events_recorded = NR_NAMES;
	snap->meta.has_frames = true;
	snap_add_drop(snap, "task_storage", "no task storage", 0, true);
	return snap;
}

/* funclat as it would read: one histogram per function, keyed by a binary's hostile symbols. */
static struct kagg_snapshot *make_funcs(void)
{
	struct kagg_snapshot *snap = snap_new();
	size_t i;

	assert_non_null(snap);
	assert_int_equal(snap_alloc_hists(snap, NR_NAMES, 64), 0);
	for (i = 0; i < NR_NAMES; i++) {
		struct kagg_hist *h = &snap->hists[i];

		h->unit = KAGG_UNIT_NSECS;
		h->key.id = i + 1;
		h->key.label = names[i].raw;
		((uint64_t *)h->slots)[20] = 1;
		h->total = 1;
	}
	uu_meta(&snap->meta, "funclat", EVENT, "uprobe", "6.1.0", FILTERS);
	return snap;
}

/* Both instances in a kagg_prom, written in fmt (malloc'd, its length in *len). */
static char *prom_output(enum kagg_prom_format fmt, size_t *len)
{
	struct kagg_snapshot *procs = make_procs(), *funcs = make_funcs();
	struct kagg_prom *p = kagg_prom__new(NULL);
	struct uu_mem m;

	assert_non_null(p);
	assert_int_equal(kagg_prom__add_tool(p, "offcpu -P"), 0);
	assert_int_equal(kagg_prom__add_tool(p, TOOL_ID), 1);
	assert_int_equal(kagg_prom__update(p, 0, procs), 0);
	assert_int_equal(kagg_prom__update(p, 1, funcs), 0);
	assert_int_equal(kagg_prom__write(p, uu_mem_open(&m), fmt), 0);
	uu_mem_text(&m);
	*len = m.len;
	kagg_prom__free(p);
	kagg_snapshot__free(procs);
	kagg_snapshot__free(funcs);
	return m.buf;
}

/* ------------------------------------------------------------ Prometheus */

/* The label values of both text formats, exactly. */
static void check_prom_labels(const char *text)
{
	char want[512], esc[256];
	size_t i;

	for (i = 0; i < NR_NAMES; i++) {
		label_text(esc, sizeof(esc), names[i].label);
		snprintf(want, sizeof(want),
			 "kagg_offcpu_seconds_count{tool_id=\"offcpu -P\","
			 "tool=\"offcpu\",pid=\"%zu\",comm=\"%s\"} 1\n",
			 100 + i, esc);
		assert_has(text, want);
		snprintf(want, sizeof(want),
			 "kagg_funclat_seconds_bucket{tool_id=\"" TOOL_ID_TEXT
			 "\",tool=\"funclat\",key=\"%s\",le=\"+Inf\"} 1\n",
			 esc);
		assert_has(text, want);
	}
	assert_has(text, "filters=\"" FILTERS_TEXT "\"");
	assert_has(text, "kernel=\"6.1.0-" R "[2J\"");
	assert_has(text, "event=\"uprobe:/bin/x:" R R "<b>\"");
}

/* The parser first, then the bytes, then each value exactly. */
static void test_prom_text(void **state)
{
	size_t len;
	char *text = prom_output(KAGG_PROM_TEXT, &len), path[32];
	bool parsed = have("promtool");

	if (parsed) {
		tmp_write(path, text, len);
		if (tu_sh("promtool check metrics < %s", path))
			fail_msg("promtool check metrics refused %s", path);
		unlink(path);
	}
	assert_utf8(text, len, "n");
	check_prom_labels(text);
	free(text);
	if (!parsed) {
		printf("SKIP %s: no promtool (Debian package prometheus)\n", __func__);
		skip();
	}
}

/* The OpenMetrics parser of the Prometheus Python client, over the file at argv[1]. */
static const char py_om[] =
	"import sys\n"
	"from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
	"n = 0\n"
	"for f in text_string_to_metric_families(open(sys.argv[1], 'rb').read().decode('utf-8')):\n"
	"    n += len(f.samples)\n"
	"print('  prometheus_client read %d samples' % n)\n";

static void test_openmetrics(void **state)
{
	size_t len;
	char *text = prom_output(KAGG_PROM_OPENMETRICS, &len), path[32], script[32];
	bool parsed = !tu_sh("/usr/bin/python3 -c 'import prometheus_client.openmetrics.parser' "
			     "2>/dev/null");

	if (parsed) {
		tmp_write(path, text, len);
		tmp_write(script, py_om, strlen(py_om));
		if (tu_sh("/usr/bin/python3 %s %s", script, path))
			fail_msg("the OpenMetrics parser refused %s", path);
		unlink(script);
		unlink(path);
	}
	assert_true(len > 6 && !strcmp(text + len - 6, "# EOF\n"));
	assert_utf8(text, len, "n");
	check_prom_labels(text);
	free(text);
	if (!parsed) {
		printf("SKIP %s: no OpenMetrics parser "
		       "(Debian package python3-prometheus-client)\n",
		       __func__);
		skip();
	}
}

/* Every label value of the protobuf output, decoded, each exactly as the rule says. */
static void test_protobuf(void **state)
{
	size_t len, off = 0, nr_values = 0, i, j, k;
	char *buf = prom_output(KAGG_PROM_PROTOBUF, &len), *values = NULL, path[32];
	bool seen[2][NR_NAMES] = {}, bad_id = false, bad_filters = false;
	size_t vlen = 0;
	FILE *vf = open_memstream(&values, &vlen);

	assert_non_null(vf);
	while (off < len) {
		Io__Prometheus__Client__MetricFamily *f;
		uint64_t n = uu_varint((const uint8_t *)buf, &off);

		assert_true(off + n <= len);
		f = io__prometheus__client__metric_family__unpack(NULL, n, (uint8_t *)buf + off);
		assert_non_null(f);
		off += n;
		for (i = 0; i < f->n_metric; i++) {
			for (j = 0; j < f->metric[i]->n_label; j++) {
				const Io__Prometheus__Client__LabelPair *lp;
				bool comm, key;

				lp = f->metric[i]->label[j];
				comm = !strcmp(lp->name, "comm");
				key = !strcmp(lp->name, "key");

				fwrite(lp->value, 1, strlen(lp->value) + 1, vf);
				nr_values++;
				if (!strcmp(lp->name, "tool_id") && strcmp(lp->value, "offcpu -P"))
					bad_id |= strcmp(lp->value, "fl" R R "\"\\\n") != 0;
				if (!strcmp(lp->name, "filters"))
					bad_filters |= strcmp(lp->value, FILTERS_TEXT) != 0;
				if (!comm && !key)
					continue;
				for (k = 0; k < NR_NAMES; k++)
					if (!strcmp(lp->value, names[k].label))
						seen[key][k] = true;
			}
		}
		io__prometheus__client__metric_family__free_unpacked(f, NULL);
	}
	fclose(vf);
	printf("  %zu label values decoded\n", nr_values);
	tmp_write(path, values, vlen);
	if (utf8_check(path, "n") > 0)
		fail_msg("a label value is not strictly UTF-8 without controls");
	unlink(path);
	for (k = 0; k < NR_NAMES; k++)
		if (!seen[0][k] || !seen[1][k])
			fail_msg("name %zu (%s) not found as comm and key", k, names[k].label);
	assert_false(bad_id);
	assert_false(bad_filters);
	free(values);
	free(buf);
}

/* ------------------------------------------------------------ SVG, HTML */

/* 0 when xmllint reads the file as XML; -1 without xmllint. */
static int xmllint(const char *doc, size_t len)
{
	char path[32];
	int rc;

	if (!have("xmllint"))
		return -1;
	tmp_write(path, doc, len);
	rc = tu_sh("xmllint --noout %s", path);
	if (!rc)
		unlink(path);
	return rc;
}

static void test_flame_svg(void **state)
{
	struct kagg_snapshot *snap = make_procs();
	KAGG_OPTS(kagg_flame_opts, o, .cold = true, .unit = KAGG_UNIT_NSECS);
	char want[256];
	struct uu_mem m;
	size_t i;
	int rc;

	assert_int_equal(kagg_flame__write_svg(snap, uu_mem_open(&m), &o), 0);
	uu_mem_text(&m);
	kagg_snapshot__free(snap);
	rc = xmllint(m.buf, m.len);
	if (rc > 0)
		fail_msg("xmllint refused the flame graph (above)");
	assert_utf8(m.buf, m.len, "n");
	for (i = 0; i < NR_NAMES; i++) {
		snprintf(want, sizeof(want), "<title>%s (", names[i].xml);
		assert_has(m.buf, want);
	}
	assert_has(m.buf, "filters cgroup /sys/fs/cgroup/????");
	free(m.buf);
	if (rc < 0) {
		printf("SKIP %s: no xmllint (Debian package libxml2-utils)\n", __func__);
		skip();
	}
}

static void test_heatmap(void **state)
{
	struct kagg_heatmap *hm = kagg_heatmap__new();
	KAGG_OPTS(kagg_heatmap_opts, o);
	struct uu_mem m;
	size_t i;
	int rc;

	assert_non_null(hm);
	for (i = 0; i < NR_NAMES; i++) {
		struct kagg_snapshot *snap = make_funcs();

		/* the hist's value name (kagg hist --value) and the tool name are drawn */
		snap->hists[0].value = names[i].raw;
		snap->meta.tool = names[(i + 1) % NR_NAMES].raw;
		snap->meta.end.tv_sec = i + 1;
		assert_int_equal(kagg_heatmap__add(hm, snap), 0);
		kagg_snapshot__free(snap);
	}
	assert_int_equal(kagg_heatmap__write_svg(hm, uu_mem_open(&m), NULL), 0);
	uu_mem_text(&m);
	rc = xmllint(m.buf, m.len);
	if (rc > 0)
		fail_msg("xmllint refused the heatmap (above)");
	assert_utf8(m.buf, m.len, "n");
	assert_has(m.buf, names[0].xml); /* the first column's value name is the unit */
	assert_has(m.buf, names[1].xml); /* its tool's name is the title */
	free(m.buf);
	/* and a title given by the caller */
	o.title = names[2].raw;
	assert_int_equal(kagg_heatmap__write_svg(hm, uu_mem_open(&m), &o), 0);
	uu_mem_text(&m);
	if (rc == 0 && xmllint(m.buf, m.len))
		fail_msg("xmllint refused the heatmap with a title (above)");
	assert_has(m.buf, names[2].xml);
	free(m.buf);
	kagg_heatmap__free(hm);
	if (rc < 0) {
		printf("SKIP %s: no xmllint (Debian package libxml2-utils)\n", __func__);
		skip();
	}
}

/*
 * The HTML report through xmllint's HTML parser: no error but its not knowing HTML5's tags
 * (svg, section...), which says nothing of the text; the inline flame graph as XML.
 */
static void test_html(void **state)
{
	struct kagg_snapshot *snap = make_procs();
	KAGG_OPTS(kagg_html_opts, o, .cold = true, .unit = KAGG_UNIT_NSECS);
	char path[32], want[256], *svg, *end;
	struct uu_mem m;
	size_t i;

	bool parsed = have("xmllint");

	assert_int_equal(kagg_html__write(snap, uu_mem_open(&m), &o), 0);
	uu_mem_text(&m);
	kagg_snapshot__free(snap);
	if (parsed) {
		tmp_write(path, m.buf, m.len);
		if (tu_sh("xmllint --html --noout %s 2>&1 | grep 'parser error' | "
			  "grep -v 'Tag [a-zA-Z]* invalid' | grep .",
			  path) != 1)
			fail_msg("xmllint --html found errors in %s (above)", path);
		unlink(path);
		svg = strstr(m.buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
				    "id=\"kagg-flame\"");
		assert_non_null(svg);
		end = strstr(svg, "</svg>\n");
		assert_non_null(end);
		if (xmllint(svg, end + 7 - svg))
			fail_msg("xmllint refused the report's flame graph (above)");
	}
	assert_utf8(m.buf, m.len, "n");
	for (i = 0; i < NR_NAMES; i++) {
		snprintf(want, sizeof(want), "%s pid %zu", names[i].xml, 100 + i);
		assert_has(m.buf, want);
	}
	assert_has(m.buf, "<td>"
			  "cgroup /sys/fs/cgroup/????"
			  "</td>");
	free(m.buf);
	if (!parsed) {
		printf("SKIP %s: no xmllint (Debian package libxml2-utils)\n", __func__);
		skip();
	}
}

/* ------------------------------------------------------------ pprof */

/* The gzip'd profile in buf decoded (NULL when it is not one). */
static Perftools__Profiles__Profile *pprof_decode(const char *buf, size_t len)
{
	Perftools__Profiles__Profile *prof;
	z_stream z = {};
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (uint8_t *)buf;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	prof = perftools__profiles__profile__unpack(NULL, z.total_out, out);
	inflateEnd(&z);
	free(out);
	return prof;
}

/* The text of the file at path (malloc'd), its length in *len. */
static char *read_file(const char *path, size_t *len)
{
	struct uu_mem m;
	FILE *f = fopen(path, "r");
	int c;

	assert_non_null(f);
	uu_mem_open(&m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m.f);
	fclose(f);
	uu_mem_text(&m);
	*len = m.len;
	return m.buf;
}

/*
 * go tool pprof -raw prints every string of the profile as it is: UTF-8 without controls
 * but its own newlines and tabs; then each string decoded back, and the names exactly.
 */
static void test_pprof(void **state)
{
	struct kagg_snapshot *snap = make_procs();
	KAGG_OPTS(kagg_pprof_opts, o, .off_cpu = true);
	Perftools__Profiles__Profile *prof;
	char path[32], raw[40], *strs = NULL, *text = NULL;
	size_t slen = 0, tlen = 0, i, k;
	bool parsed = have("go");
	struct uu_mem m;
	FILE *sf;

	assert_int_equal(kagg_pprof__write(snap, uu_mem_open(&m), &o), 0);
	uu_mem_text(&m);
	kagg_snapshot__free(snap);
	if (parsed) {
		tmp_write(path, m.buf, m.len);
		snprintf(raw, sizeof(raw), "%s.raw", path);
		if (tu_sh("HOME=/tmp go tool pprof -raw %s > %s", path, raw))
			fail_msg("go tool pprof -raw refused %s", path);
		text = read_file(raw, &tlen);
		assert_utf8(text, tlen, "nt");
		unlink(raw);
		unlink(path);
	}
	prof = pprof_decode(m.buf, m.len);
	assert_non_null(prof);
	sf = open_memstream(&strs, &slen);
	for (i = 0; i < prof->n_string_table; i++)
		fwrite(prof->string_table[i], 1, strlen(prof->string_table[i]) + 1, sf);
	fclose(sf);
	tmp_write(path, strs, slen);
	if (utf8_check(path, "") > 0)
		fail_msg("a pprof string is not strictly UTF-8 without controls");
	unlink(path);
	for (k = 0; k < NR_NAMES; k++) {
		for (i = 0; i < prof->n_string_table; i++)
			if (!strcmp(prof->string_table[i], names[k].pprof))
				break;
		if (i == prof->n_string_table)
			fail_msg("name %zu (%s) not in the string table", k, names[k].pprof);
		if (text)
			assert_has(text, names[k].pprof);
	}
	perftools__profiles__profile__free_unpacked(prof, NULL);
	free(strs);
	free(text);
	free(m.buf);
	if (!parsed) {
		printf("SKIP %s: no go tool pprof (Debian package golang-go)\n", __func__);
		skip();
	}
}

/* ------------------------------------------------------------ text, JSON */

static void test_json(void **state)
{
	struct kagg_snapshot *snap = make_procs();
	KAGG_OPTS(kagg_print_opts, o, .format = KAGG_FORMAT_JSON);
	char path[32];
	struct uu_mem m;

	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &o), 0);
	uu_mem_text(&m);
	kagg_snapshot__free(snap);
	assert_utf8(m.buf, m.len, "n");
	if (!have("python3")) {
		free(m.buf);
		printf("SKIP %s: no python3\n", __func__);
		skip();
	}
	tmp_write(path, m.buf, m.len);
	if (tu_sh("python3 -c 'import json, sys; "
		  "json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"))' %s",
		  path))
		fail_msg("python3 json refused %s", path);
	unlink(path);
	free(m.buf);
}

/* Terminal text: the snapshot and its folded stacks, UTF-8 with no control but newlines. */
static void test_text(void **state)
{
	struct kagg_snapshot *snap = make_procs();
	KAGG_OPTS(kagg_print_opts, o);
	KAGG_OPTS(kagg_print_opts, folded, .folded = true);
	struct uu_mem m;

	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &o), 0);
	uu_mem_text(&m);
	assert_has(m.buf, "\\377\\376\\303(ab");
	assert_utf8(m.buf, m.len, "n");
	free(m.buf);
	assert_int_equal(kagg_snapshot__print(snap, uu_mem_open(&m), &folded), 0);
	uu_mem_text(&m);
	assert_utf8(m.buf, m.len, "n");
	free(m.buf);
	kagg_snapshot__free(snap);
}

/* ------------------------------------------------------------ demangler */

/*
 * Symbol names come from the binaries traced.  For the first Rust v0 name here libiberty's
 * demangler hands an empty piece to its sink as (NULL, 0), which went to memcpy: UBSan's
 * "null pointer passed as argument 2" under make check-unit-asan.
 */
static void test_demangle_empty_piece(void **state)
{
	static const char *const hostile[] = {
		"_RYxYYAYC0YYYYYYYYYYYYYY", "_RNvC0", "_R", "_ZN", "_RINvC1a1bE",
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		int err = demangle_name(hostile[i], buf, sizeof(buf));

		assert_true(err == 0 || err == -ENOENT || err == -ENAMETOOLONG);
		assert_true(strlen(buf) < sizeof(buf));
		if (err)
			assert_true(err == -ENAMETOOLONG || !buf[0]);
		printf("  %s: %d '%s'\n", hostile[i], err, buf);
	}
}

UU_MAIN(cmocka_unit_test(test_prom_text), cmocka_unit_test(test_openmetrics),
	cmocka_unit_test(test_protobuf), cmocka_unit_test(test_flame_svg),
	cmocka_unit_test(test_heatmap), cmocka_unit_test(test_html), cmocka_unit_test(test_pprof),
	cmocka_unit_test(test_json), cmocka_unit_test(test_text),
	cmocka_unit_test(test_demangle_empty_piece))
