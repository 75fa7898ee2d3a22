/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * render_internal.h - internal: what the renderers (flame graph, heatmap, pprof, HTML report)
 * share.  A flame graph is built as a tree (flame_add per stack, from the root outward) and
 * drawn by flame_svg; unit tests craft trees directly.
 */
#ifndef KAGG_RENDER_INTERNAL_H
#define KAGG_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <kagg/common.h>
#include <kagg/snapshot.h>

struct flame_node {
	char *name;
	uint64_t value; /* this frame and everything above it */
	size_t child;	/* first child, 0: none (node 0 is the root) */
	size_t next;	/* next sibling, 0: none */
};

struct flame {
	struct flame_node *n; /* n[0]: the root, "all" */
	size_t nr, cap;
	unsigned int depth; /* frames in the deepest path, the root included */
};

/* An empty tree (just the root).  0 or -ENOMEM. */
int flame_init(struct flame *fl);
void flame_fini(struct flame *fl);
/* Add value to the path of n frames, outermost first.  0 or -ENOMEM. */
int flame_add(struct flame *fl, const char *const *path, size_t n, uint64_t value);
/* snap's stacks: process name, user frames outermost first, kernel frames.  0 or -errno. */
int flame_from_snapshot(struct flame *fl, const struct kagg_snapshot *snap, bool by_count);

struct flame_svg {
	const char *title;
	const char *subtitle;
	bool by_count;
	bool cold;
	enum kagg_unit unit;
	unsigned int width;
	bool inline_svg; /* inside an HTML page: no XML declaration */
	/*
	 * Frames narrower than this share of the root, in percent, are not drawn (nor their
	 * children), and the picture is as tall as the deepest frame drawn: 0 is FLAME_MIN_SHARE,
	 * < 0 draws every frame.
	 */
	double min_share;
};

#define FLAME_MIN_SHARE 0.1

/* Draw fl as an SVG document.  0 or -EIO. */
int flame_svg(const struct flame *fl, FILE *f, const struct flame_svg *o);

/* FNV-1a of a string (64 bits). */
uint64_t render_hash(const char *s);
/* s escaped for XML text and attributes: only XML 1.0 characters, '?' for the rest (utf8.h). */
void xml_puts(FILE *f, const char *s);
/* At most max bytes of s (cut on a character boundary), escaped. */
void xml_putn(FILE *f, const char *s, size_t max);
/* A value for people: "1234 samples" or a time in unit ("12.345 ms"). */
void render_value(char *buf, size_t len, uint64_t v, bool by_count, enum kagg_unit unit);
/* The run's meta in one line: event, filters, duration, drops (and stacks lost). */
void render_meta_line(const struct kagg_meta *m, char *buf, size_t len);

#endif
