// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: names from outside kagg through every escaper, and the demangler.
 *
 * The input's first byte picks the sizes (the demangler's buffer, where xml_putn cuts), the
 * rest is the name.  Checks beyond the sanitizers:
 *   - utf8_next() reads every position as a decoder written apart here does (RFC 3629);
 *   - utf8_clean() gives UTF-8 without controls (but newlines when kept), at most 3 bytes per
 *     byte, leaves a clean name as it is and a cleaned one unchanged, as utf8_is_clean() says;
 *   - xml_putn(): XML 1.0 characters only, markup only as the five entities;
 *   - text_fputn(): UTF-8 without controls, a backslash only before three octal digits;
 *   - jw_str(): a JSON string (RFC 8259): UTF-8, no raw control, only JSON's escapes;
 *   - kagg_prom__write() with the name as tool line, comm, key and filters: the text format
 *     and OpenMetrics read back with their label grammar (only \\ \" \n escapes, values
 *     UTF-8 without controls), the protobuf families decoded with UTF-8 label values;
 *   - demangle_name() as "_R" or "_Z" + name and as it is: 0, -ENOENT or -ENAMETOOLONG, a
 *     NUL-terminated result inside the buffer.
 *
 * Seeds (corpus/fuzz_escape): the hostile names of tests/unit/test_hostile_names.c and a few
 * mangled C++ and Rust names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include "util/json.h"
#include "render/render_internal.h"
#include "snapshot/snapshot_internal.h"
#include "syms/demangle.h"
#include "syms/syms.h"
#include "util/text.h"
#include "util/utf8.h"
#include "prometheus_metrics.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                             \
	do {                                                                                 \
		if (!(x)) {                                                                  \
			fprintf(stderr, "fuzz_escape: %s:%d: %s\n", __FILE__, __LINE__, #x); \
			abort();                                                             \
		}                                                                            \
	} while (0)

/* The code point at s (n bytes readable), by RFC 3629, apart from utf8.c: its length, 0 if none. */
static size_t fz_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static bool fz_control(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c < 0xa0);
}

/* s[0..n) is UTF-8 whose only controls are in ok. */
static bool fz_utf8(const char *str, size_t n, const char *ok)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, k;
	uint32_t c;

	while (i < n) {
		k = fz_decode(s + i, n - i, &c);
		if (!k || (fz_control(c) && (!c || !strchr(ok, (int)c))))
			return false;
		i += k;
	}
	return true;
}

/* utf8_next() against fz_decode() at every byte of s. */
static void check_decoder(const unsigned char *s, size_t n)
{
	size_t i, a, b;
	uint32_t ca = 0, cb = 0;

	for (i = 0; i < n; i++) {
		a = utf8_next(s + i, n - i, &ca);
		b = fz_decode(s + i, n - i, &cb);
		if (b) {
			CHECK(a == b && ca == cb);
		} else {
			CHECK(a == 1 && ca == UTF8_BAD);
		}
	}
}

static void check_clean(const char *name, unsigned int flags)
{
	size_t len = utf8_clean(NULL, name, flags), again;
	char *out = malloc(len + 1), *out2;

	CHECK(out);
	CHECK(utf8_clean(out, name, flags) == len && strlen(out) == len);
	CHECK(len <= 3 * strlen(name));
	CHECK(fz_utf8(out, len, flags & UTF8_KEEP_NL ? "\n" : ""));
	CHECK(utf8_is_clean(out, flags));
	CHECK(utf8_is_clean(name, flags) == !strcmp(out, name));
	again = utf8_clean(NULL, out, flags);
	out2 = malloc(again + 1);
	CHECK(out2);
	utf8_clean(out2, out, flags);
	CHECK(!strcmp(out2, out));
	free(out2);
	free(out);
}

/* What f (a memstream over *buf) holds, closed. */
static char *fz_close(FILE *f, char **buf, size_t *len)
{
	CHECK(!fclose(f));
	(void)len;
	return *buf;
}

static void check_xml(const char *name, size_t cut)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f);
	xml_putn(f, name, cut);
	fputc('|', f);
	xml_puts(f, name);
	fz_close(f, &buf, &len);
	CHECK(fz_utf8(buf, len, ""));
	CHECK(!strstr(buf, "\xef\xbf\xbe") && !strstr(buf, "\xef\xbf\xbf"));
	for (i = 0; i < len; i++) {
		CHECK(buf[i] != '<' && buf[i] != '>' && buf[i] != '"' && buf[i] != '\'');
		if (buf[i] == '&')
			CHECK(!strncmp(buf + i, "&amp;", 5) || !strncmp(buf + i, "&lt;", 4) ||
			      !strncmp(buf + i, "&gt;", 4) || !strncmp(buf + i, "&quot;", 6) ||
			      !strncmp(buf + i, "&#39;", 5));
	}
	/* the cut part is at most cut bytes of the name, escaped: at most 6 bytes each */
	CHECK((size_t)(strchr(buf, '|') - buf) <= 6 * cut);
	free(buf);
}

static void check_text(const uint8_t *data, size_t size)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	struct text_esc e = {};
	const char *esc;

	CHECK(f);
	CHECK(!text_fputn(f, (const char *)data, size));
	fz_close(f, &buf, &len);
	CHECK(fz_utf8(buf, len, ""));
	for (i = 0; i < len; i++)
		if (buf[i] == '\\')
			CHECK(i + 3 < len && buf[i + 1] >= '0' && buf[i + 1] <= '3' &&
			      buf[i + 2] >= '0' && buf[i + 2] <= '7' && buf[i + 3] >= '0' &&
			      buf[i + 3] <= '7');
	esc = text_esc(&e, (const char *)data, size);
	CHECK(!strcmp(esc, buf));
	text_esc_free(&e);
	free(buf);
}

static bool fz_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static void check_json(const char *name)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	struct jw w;

	CHECK(f);
	jw_init(&w, f, false);
	jw_obj_begin(&w, NULL);
	jw_str(&w, name, name);
	jw_obj_end(&w);
	fz_close(f, &buf, &len);
	CHECK(fz_utf8(buf, len, ""));
	CHECK(buf[0] == '{' && buf[1] == '"' && buf[len - 1] == '}');
	/* two strings: "key":"value"; inside them only JSON's escapes */
	for (i = 2; i < len - 1 && buf[i] != '"'; i++) {
		if (buf[i] != '\\')
			continue;
		i++;
		CHECK(strchr("\"\\/bfnrtu", buf[i]));
		if (buf[i] == 'u')
			CHECK(i + 4 < len && fz_hex(buf[i + 1]) && fz_hex(buf[i + 2]) &&
			      fz_hex(buf[i + 3]) && fz_hex(buf[i + 4]));
	}
	CHECK(buf[i] == '"' && buf[i + 1] == ':' && buf[i + 2] == '"');
	free(buf);
}

/* One text-format line "name{k="v",...} value" read with the label grammar of both formats. */
static void check_sample_line(const char *p, const char *end)
{
	while (p < end && *p != '{' && *p != ' ')
		p++;
	if (p == end || *p == ' ')
		return;
	p++;
	while (p < end && *p != '}') {
		const char *v;

		while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				   (*p >= '0' && *p <= '9') || *p == '_'))
			p++;
		CHECK(p + 1 < end && p[0] == '=' && p[1] == '"');
		p += 2;
		v = p;
		while (p < end && *p != '"') {
			if (*p == '\\') {
				CHECK(p + 1 < end && strchr("\\\"n", p[1]));
				p++;
			}
			p++;
		}
		CHECK(p < end && fz_utf8(v, (size_t)(p - v), ""));
		p++;
		CHECK(p < end && (*p == ',' || *p == '}'));
		if (*p == ',')
			p++;
	}
	CHECK(p < end && p[1] == ' ');
}

static void check_prom_text(const char *buf, size_t len)
{
	const char *p = buf, *nl;

	CHECK(fz_utf8(buf, len, "\n"));
	while (p < buf + len) {
		nl = memchr(p, '\n', (size_t)(buf + len - p));
		CHECK(nl);
		if (*p != '#')
			check_sample_line(p, nl);
		p = nl + 1;
	}
}

static void check_prom_pb(const uint8_t *buf, size_t len)
{
	size_t off = 0, i, j;

	while (off < len) {
		Io__Prometheus__Client__MetricFamily *f;
		uint64_t n = 0;
		int shift = 0;

		do {
			CHECK(off < len && shift < 64);
			n |= (uint64_t)(buf[off] & 0x7f) << shift;
			shift += 7;
		} while (buf[off++] & 0x80);
		CHECK(n <= len - off);
		f = io__prometheus__client__metric_family__unpack(NULL, n, buf + off);
		CHECK(f);
		off += n;
		for (i = 0; i < f->n_metric; i++)
			for (j = 0; j < f->metric[i]->n_label; j++) {
				const char *v = f->metric[i]->label[j]->value;

				CHECK(fz_utf8(v, strlen(v), "\n"));
			}
		io__prometheus__client__metric_family__free_unpacked(f, NULL);
	}
}

static void check_prom(const char *name)
{
	static const enum kagg_prom_format fmts[] = {
		KAGG_PROM_TEXT,
		KAGG_PROM_OPENMETRICS,
		KAGG_PROM_PROTOBUF,
	};
	struct kagg_snapshot *snap = snap_new();
	struct kagg_prom *p = kagg_prom__new(NULL);
	size_t i;

	CHECK(snap && p);
	CHECK(!snap_alloc_hists(snap, 2, 4));
	snap->hists[0].key.mode = KAGG_KEY_PID;
	snap->hists[0].key.pid = 7;
	strncpy(snap->hists[0].key.comm, name, sizeof(snap->hists[0].key.comm) - 1);
	snap->hists[1].key.id = 1;
	snap->hists[1].key.label = name;
	for (i = 0; i < 2; i++) {
		((uint64_t *)snap->hists[i].slots)[1] = 1;
		snap->hists[i].total = 1;
	}
	snap->meta.tool = "funclat";
	snap->meta.filters = name;
	snap->meta.event = name;
	CHECK(kagg_prom__add_tool(p, *name ? name : "x") == 0);
	CHECK(!kagg_prom__update(p, 0, snap));
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		CHECK(f);
		CHECK(!kagg_prom__write(p, f, fmts[i]));
		fz_close(f, &buf, &len);
		if (fmts[i] == KAGG_PROM_PROTOBUF)
			check_prom_pb((const uint8_t *)buf, len);
		else
			check_prom_text(buf, len);
		free(buf);
	}
	kagg_prom__free(p);
	kagg_snapshot__free(snap);
}

static void check_demangle(const char *name, size_t buflen)
{
	char *buf = malloc(buflen);
	int err;

	CHECK(buf);
	err = demangle_name(name, buf, buflen);
	if (buflen < 2) {
		CHECK(err == -EINVAL);
	} else {
		CHECK(err == 0 || err == -ENOENT || err == -ENAMETOOLONG);
		CHECK(memchr(buf, 0, buflen));
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int sel;
	char *name, *mangled;

	if (!size)
		return 0;
	sel = data[0];
	data++;
	size--;
	name = malloc(size + 1);
	mangled = malloc(size + 3);
	if (!name || !mangled)
		abort();
	memcpy(name, data, size);
	name[size] = 0;

	check_decoder(data, size);
	check_clean(name, 0);
	check_clean(name, UTF8_KEEP_NL);
	check_xml(name, sel & 31);
	check_text(data, size);
	check_json(name);
	check_prom(name);

	snprintf(mangled, size + 3, "%s%s", sel & 0x40 ? "_Z" : "_R", name);
	check_demangle(mangled, (sel & 63) + 1);
	check_demangle(mangled, 4096);
	check_demangle(name, 256);

	free(mangled);
	free(name);
	return 0;
}
