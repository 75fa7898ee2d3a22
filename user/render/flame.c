// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * flame.c - flame graphs: a snapshot's stacks as a tree of frames, drawn as one SVG that
 * carries its own script (search, zoom, tooltips).  x and width of each frame are its offset
 * and value as fractions of the root's, printed to 1/10000 of a pixel, so the widths are the
 * values.  Children are drawn in name order (as flamegraph.pl does), so equal inputs draw
 * the same picture.  Frames under a minimum share (0.1% by default) are left out, as
 * flamegraph.pl's --minwidth does, and the picture is as tall as what is drawn.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/flame.h>
#include "util/array.h"
#include "render/render_internal.h"
#include "util/utf8.h"

#define FL_FRAME_H 16 /* pixels per frame row */
#define FL_TOP 64     /* title, subtitle, controls */
#define FL_BOTTOM 28  /* details line */
#define FL_PAD 10
#define FL_CHAR_W 7 /* average glyph width of the 12px font */

/* ------------------------------------------------------------ XML text */

/*
 * Only characters XML 1.0 allows, as they are or as entities: '?' for each byte outside UTF-8,
 * each control (tab, newline and CR too: a name holding one is no name to show) and U+FFFE,
 * U+FFFF.
 */
void xml_putn(FILE *f, const char *str, size_t max)
{
	static const char *const entities[128] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
	};
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (s[i] && i < max) {
		uint32_t c;
		size_t n = utf8_next(s + i, SIZE_MAX, &c);

		if (n > max - i)
			break; /* a character the cut would split */
		if (c < 128 && entities[c])
			fputs(entities[c], f);
		else if (c == UTF8_BAD || utf8_is_control(c) || c == 0xfffe || c == 0xffff)
			fputc('?', f);
		else
			fwrite(s + i, 1, n, f);
		i += n;
	}
}

void xml_puts(FILE *f, const char *s)
{
	xml_putn(f, s, SIZE_MAX);
}

void render_value(char *buf, size_t len, uint64_t v, bool by_count, enum kagg_unit unit)
{
	static const char *const names[] = {
		[KAGG_UNIT_USECS] = "us",
		[KAGG_UNIT_NSECS] = "ns",
		[KAGG_UNIT_MSECS] = "ms",
	};
	double div = unit == KAGG_UNIT_NSECS ? 1 : unit == KAGG_UNIT_MSECS ? 1e6 : 1e3;

	if (by_count)
		snprintf(buf, len, "%" PRIu64 " sample%s", v, v == 1 ? "" : "s");
	else if (unit == KAGG_UNIT_NSECS)
		snprintf(buf, len, "%" PRIu64 " ns", v);
	else
		snprintf(buf, len, "%.3f %s", v / div, (unsigned int)unit < 3 ? names[unit] : "us");
}

void render_meta_line(const struct kagg_meta *m, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "event %s, filters %s, %.3f s, %" PRIu64 " drops",
		     m->event ? m->event : "?", m->filters ? m->filters : "none", m->duration_s,
		     m->drops_total);
	if (n > 0 && (size_t)n < len && m->has_frames && m->stacks_lost)
		snprintf(buf + n, len - n, ", %" PRIu64 " stacks lost", m->stacks_lost);
}

/* ------------------------------------------------------------ the tree */

static int node_new(struct flame *fl, const char *name)
{
	if (GROW_ARRAY(fl->n, fl->cap, fl->nr, 256))
		return -ENOMEM;
	fl->n[fl->nr] = (struct flame_node){ .name = strdup(name) };
	if (!fl->n[fl->nr].name)
		return -ENOMEM;
	return fl->nr++;
}

int flame_init(struct flame *fl)
{
	memset(fl, 0, sizeof(*fl));
	fl->depth = 1;
	return node_new(fl, "all") < 0 ? -ENOMEM : 0;
}

void flame_fini(struct flame *fl)
{
	size_t i;

	for (i = 0; i < fl->nr; i++)
		free(fl->n[i].name);
	free(fl->n);
	memset(fl, 0, sizeof(*fl));
}

int flame_add(struct flame *fl, const char *const *path, size_t n, uint64_t value)
{
	size_t at = 0, i;

	fl->n[0].value += value;
	for (i = 0; i < n; i++) {
		size_t c;
		int k;

		for (c = fl->n[at].child; c; c = fl->n[c].next)
			if (!strcmp(fl->n[c].name, path[i]))
				break;
		if (!c) {
			k = node_new(fl, path[i]);
			if (k < 0)
				return k;
			c = k;
			fl->n[c].next = fl->n[at].child;
			fl->n[at].child = c;
		}
		fl->n[c].value += value;
		at = c;
	}
	if (n + 1 > fl->depth)
		fl->depth = n + 1;
	return 0;
}

int flame_from_snapshot(struct flame *fl, const struct kagg_snapshot *snap, bool by_count)
{
	size_t i, nr = kagg_snapshot__stack_cnt(snap), cap = 0;
	const char **path = NULL;
	int err = flame_init(fl);

	for (i = 0; !err && i < nr; i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);
		char comm[sizeof(st->comm) + 1];
		unsigned int k;
		size_t n = 0;

		if (cap < st->nr_uframes + st->nr_kframes + 3u) {
			const char **p;

			cap = st->nr_uframes + st->nr_kframes + 3u;
			p = realloc(path, cap * sizeof(*p));
			if (!p) {
				err = -ENOMEM;
				break;
			}
			path = p;
		}
		memcpy(comm, st->comm, sizeof(st->comm));
		comm[sizeof(st->comm)] = 0;
		path[n++] = comm[0] ? comm : "[unknown]";
		if (st->ustack_err && st->ustack_err != -ENOENT)
			path[n++] = "[user stack lost]";
		for (k = st->nr_uframes; k > 0; k--)
			path[n++] = st->uframes[k - 1]->sym;
		if (st->kstack_err && st->kstack_err != -ENOENT)
			path[n++] = "[kernel stack lost]";
		for (k = st->nr_kframes; k > 0; k--)
			path[n++] = st->kframes[k - 1]->sym;
		err = flame_add(fl, path, n, by_count ? st->count : st->total_ns);
	}
	free(path);
	if (err)
		flame_fini(fl);
	return err;
}

/* ------------------------------------------------------------ drawing */

uint64_t render_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void frame_fill(char *buf, size_t len, const char *name, bool cold)
{
	uint32_t h = render_hash(name); /* a frame keeps its colour from run to run */
	unsigned int a = h & 0xff, b = (h >> 8) & 0xff;

	if (cold) /* blues */
		snprintf(buf, len, "rgb(%u,%u,%u)", 60 + a * 70 / 255, 110 + a * 80 / 255,
			 200 + b * 55 / 255);
	else /* reds, oranges, yellows */
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + a * 50 / 255, b * 200 / 255,
			 (a ^ b) * 55 / 255);
}

static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct flame_node *n = arg;

	return strcmp(n[*(const size_t *)a].name, n[*(const size_t *)b].name);
}

struct draw {
	const struct flame *fl;
	const struct flame_svg *o;
	FILE *f;
	double w;	    /* drawing width: the root's */
	size_t *kids;	    /* scratch: one node's children, sorted */
	uint64_t min;	    /* narrowest value drawn */
	unsigned int depth; /* frames in the deepest path drawn, the root included */
};

/* The frames of the deepest path from i (at depth) whose frames are all at least min. */
static unsigned int drawn_depth(const struct flame *fl, size_t i, unsigned int depth, uint64_t min)
{
	unsigned int d = depth + 1, k;
	size_t c;

	for (c = fl->n[i].child; c; c = fl->n[c].next) {
		if (fl->n[c].value < min)
			continue;
		k = drawn_depth(fl, c, depth + 1, min);
		if (k > d)
			d = k;
	}
	return d;
}

static void draw_frame(struct draw *d, size_t i, unsigned int depth, double x)
{
	const struct flame_node *n = &d->fl->n[i];
	double total = d->fl->n[0].value ? (double)d->fl->n[0].value : 1;
	double fx = x / total, fw = n->value / total;
	double px = FL_PAD + fx * d->w, pw = fw * d->w;
	double y = FL_TOP + (d->depth - 1 - depth) * FL_FRAME_H;
	char val[64], fill[32];
	size_t fit;

	render_value(val, sizeof(val), n->value, d->o->by_count, d->o->unit);
	frame_fill(fill, sizeof(fill), n->name, d->o->cold);
	if (!i)
		strcpy(fill, "rgb(200,200,200)");
	fprintf(d->f, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\"><title>", fx,
		fw, depth);
	xml_puts(d->f, n->name);
	fprintf(d->f,
		" (%s, %.2f%%)</title><rect x=\"%.4f\" y=\"%.1f\" width=\"%.4f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.4f\" y=\"%.1f\">",
		val, fw * 100, px, y, pw, FL_FRAME_H - 1, fill, px + 3, y + 11.5);
	fit = pw > 3 * FL_CHAR_W ? (size_t)((pw - 6) / FL_CHAR_W) : 0;
	if (fit >= strlen(n->name)) {
		xml_puts(d->f, n->name);
	} else if (fit >= 3) {
		xml_putn(d->f, n->name, fit - 2);
		fputs("..", d->f);
	}
	fputs("</text></g>\n", d->f);
}

/* Depth-first; the children of a node in name order, left to right. */
static int draw_tree(struct draw *d, size_t i, unsigned int depth, double x)
{
	const struct flame_node *n = d->fl->n;
	size_t nk = 0, c, k, *kids;

	draw_frame(d, i, depth, x);
	for (c = n[i].child; c; c = n[c].next)
		nk++;
	if (!nk)
		return 0;
	kids = malloc(nk * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	nk = 0;
	for (c = n[i].child; c; c = n[c].next)
		kids[nk++] = c;
	qsort_r(kids, nk, sizeof(*kids), cmp_name, (void *)n);
	for (k = 0; k < nk; k++) {
		int err = n[kids[k]].value < d->min ? 0 : draw_tree(d, kids[k], depth + 1, x);

		if (err) {
			free(kids);
			return err;
		}
		x += n[kids[k]].value;
	}
	free(kids);
	return 0;
}

/* The script: zoom, reset, search (prompt, Ctrl-F or #s=REGEX), tooltips' details line. */
static const char flame_js[] =
	"(function(){\n"
	"var PAD=10,W=0,fr=[],zoomed=null,root=document.getElementById('kagg-flame');\n"
	"function $(id){return document.getElementById(id);}\n"
	"function nm(g){var s=g.querySelector('title').textContent;return "
	"s.substring(0,s.lastIndexOf(' ('));}\n"
	"function fit(f,x,w){var t=f.t,n=f.n,c=Math.floor((w-6)/7);\n"
	" t.setAttribute('x',(x+3).toFixed(4));\n"
	" t.textContent=w<21||c<3?'':(c>=n.length?n:n.substring(0,c-2)+'..');}\n"
	"function place(f,x,w,show){f.g.style.display=show?'':'none';if(!show)return;\n"
	" f.r.setAttribute('x',(PAD+x*W).toFixed(4));f.r.setAttribute('width',(w*W).toFixed(4));\n"
	" fit(f,PAD+x*W,w*W);}\n"
	"function zoom(z){zoomed=z;$('kagg-unzoom').style.opacity=z?1:0.3;\n"
	" fr.forEach(function(f){if(!z){place(f,f.x,f.w,true);f.g.style.opacity='';return;}\n"
	"  var e=1e-12,inside=f.x>=z.x-e&&f.x+f.w<=z.x+z.w+e;\n"
	"  if(f.d<z.d){var "
	"anc=f.x<=z.x+e&&f.x+f.w>=z.x+z.w-e;place(f,0,1,anc);f.g.style.opacity=0.6;}\n"
	"  else{place(f,(f.x-z.x)/z.w,f.w/z.w,inside);f.g.style.opacity='';}});}\n"
	"function search(re){var rx;try{rx=new RegExp(re);}catch(e){return;}\n"
	" var iv=[];fr.forEach(function(f){var m=re!==''&&rx.test(f.n);\n"
	"  f.r.setAttribute('fill',m?'rgb(230,0,230)':f.fill);if(m)iv.push([f.x,f.x+f.w]);});\n"
	" iv.sort(function(a,b){return a[0]-b[0];});var s=0,end=-1;\n"
	" iv.forEach(function(v){if(v[0]>=end){s+=v[1]-v[0];end=v[1];}else "
	"if(v[1]>end){s+=v[1]-end;end=v[1];}});\n"
	" var m=$('kagg-matched');m.textContent=re===''?'':'Matched: '+(s*100).toFixed(2)+'%';\n"
	" m.setAttribute('data-share',(s*100).toFixed(2));m.setAttribute('data-search',re);\n"
	" $('kagg-search').textContent=re===''?'Search':'Clear';}\n"
	"function ask(){if($('kagg-search').textContent==='Clear'){search('');return;}\n"
	" var re=prompt('Search frames (regular expression):','');if(re)search(re);}\n"
	"W=+root.getAttribute('data-width');\n"
	"var gs=root.querySelectorAll('g.f');\n"
	"for(var i=0;i<gs.length;i++){var g=gs[i],r=g.querySelector('rect');\n"
	" var "
	"f={g:g,r:r,t:g.querySelector('text'),x:+g.getAttribute('data-x'),w:+g.getAttribute('data-"
	"w'),\n"
	"  d:+g.getAttribute('data-d'),fill:r.getAttribute('fill'),n:nm(g)};fr.push(f);\n"
	" (function(f){g.addEventListener('click',function(){zoom(f.d?f:null);});\n"
	"  "
	"g.addEventListener('mouseover',function(){$('kagg-details').textContent=g.querySelector('"
	"title').textContent;});\n"
	"  g.addEventListener('mouseout',function(){$('kagg-details').textContent=' ';});})(f);}\n"
	"$('kagg-unzoom').addEventListener('click',function(){zoom(null);});\n"
	"$('kagg-search').addEventListener('click',ask);\n"
	"document.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.key==='f'){e."
	"preventDefault();ask();}});\n"
	"var h=location.hash.match(/[#&]s=([^&]*)/);if(h)search(decodeURIComponent(h[1]));\n"
	"})();\n";

int flame_svg(const struct flame *fl, FILE *f, const struct flame_svg *o)
{
	unsigned int width = o->width ? o->width : 1200, height;
	struct draw d = { .fl = fl, .o = o, .f = f, .w = width - 2.0 * FL_PAD };
	double share = o->min_share ? o->min_share : FLAME_MIN_SHARE, min;
	int err;

	/* a frame at least the minimum share (and 1, so zero-valued ones are left out) */
	min = share < 0 ? 0 : fl->n[0].value * share / 100;
	d.min = (uint64_t)min;
	if (d.min < min)
		d.min++;
	if (d.min < 1)
		d.min = 1;
	d.depth = drawn_depth(fl, 0, 0, d.min);
	height = FL_TOP + d.depth * FL_FRAME_H + FL_BOTTOM;

	if (!o->inline_svg)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", f);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"kagg-flame\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" data-width=\"%.4f\" "
		"data-total=\"%" PRIu64 "\">\n",
		width, height, width, height, d.w, fl->n[0].value);
	fputs("<style>\n#kagg-flame text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
	      "#kagg-flame .h{font-size:17px;text-anchor:middle}\n"
	      "#kagg-flame .s{fill:#555;text-anchor:middle}\n"
	      "#kagg-flame .b{cursor:pointer;fill:#036}\n"
	      "#kagg-flame g.f{cursor:pointer}\n#kagg-flame g.f:hover "
	      "rect{stroke:#000;stroke-width:0.5}\n"
	      "</style>\n",
	      f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"%s\"/>\n", width,
		height, o->cold ? "#eef2fa" : "#fbf5e8");
	fprintf(f, "<text class=\"h\" x=\"%u\" y=\"22\">", width / 2);
	xml_puts(f, o->title ? o->title : "flame graph");
	fprintf(f, "</text>\n<text class=\"s\" x=\"%u\" y=\"40\">", width / 2);
	xml_puts(f, o->subtitle ? o->subtitle : "");
	fprintf(f,
		"</text>\n<text id=\"kagg-unzoom\" class=\"b\" x=\"%d\" y=\"58\" "
		"style=\"opacity:0.3\">Reset Zoom</text>\n",
		FL_PAD);
	fprintf(f,
		"<text id=\"kagg-search\" class=\"b\" x=\"%u\" y=\"58\" "
		"style=\"text-anchor:end\">Search</text>\n",
		width - FL_PAD);
	fprintf(f,
		"<text id=\"kagg-matched\" x=\"%u\" y=\"%u\" style=\"text-anchor:end\" "
		"data-share=\"\"></text>\n",
		width - FL_PAD, height - 10);
	fprintf(f, "<text id=\"kagg-details\" x=\"%d\" y=\"%u\"> </text>\n", FL_PAD, height - 10);
	err = draw_tree(&d, 0, 0, 0);
	if (err)
		return err;
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fputs(flame_js, f);
	fputs("]]></script>\n</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

int kagg_flame__write_svg(const struct kagg_snapshot *snap, FILE *f,
			  const struct kagg_flame_opts *opts)
{
	struct kagg_flame_opts o = {};
	const struct kagg_meta *m;
	char title[128], sub[512], val[64];
	struct flame fl;
	struct flame_svg s;
	int err, n;

	if (!snap || !f || (opts && opts->sz > sizeof(o)))
		return -EINVAL;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	m = kagg_snapshot__meta(snap);
	err = flame_from_snapshot(&fl, snap, o.by_count);
	if (err)
		return err;
	snprintf(title, sizeof(title), "%s: %s flame graph", m && m->tool ? m->tool : "kagg",
		 o.cold ? "off-CPU" : "on-CPU");
	n = 0;
	sub[0] = 0;
	if (m) {
		render_meta_line(m, sub, sizeof(sub));
		n = strlen(sub);
	}
	render_value(val, sizeof(val), fl.n[0].value, o.by_count, o.unit);
	snprintf(sub + n, sizeof(sub) - n, "%stotal %s", n ? ", " : "", val);
	s = (struct flame_svg){ .title = o.title ? o.title : title,
				.subtitle = sub,
				.by_count = o.by_count,
				.cold = o.cold,
				.unit = o.unit,
				.width = o.width,
				.min_share = o.min_share };
	err = flame_svg(&fl, f, &s);
	flame_fini(&fl);
	return err;
}
