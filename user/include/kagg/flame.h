/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/flame.h - a snapshot's stacks as a flame graph: one self-contained, interactive SVG.
 *
 *	struct kagg_flame_opts o = { .sz = sizeof(o), .cold = true, .unit = KAGG_UNIT_MSECS };
 *	kagg_flame__write_svg(snap, f, &o);
 *
 * Each stack is a tower: the process name at the bottom, then the user frames from the
 * outermost in, then the kernel frames; a frame's width is its share of the whole, exact to
 * the values (samples for profile, off-CPU time otherwise).  The SVG carries its own script:
 * click a frame to zoom into it, "Reset Zoom" to go back, "Search" (or Ctrl-F) for a regular
 * expression whose frames turn magenta and whose share of the whole is shown; opening the file
 * as FILE.svg#s=REGEX searches at once.  Each frame's tooltip gives its name, value and share.
 */
#ifndef KAGG_FLAME_H
#define KAGG_FLAME_H

#include <stdbool.h>
#include <stdio.h>
#include <kagg/common.h>
#include <kagg/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kagg_flame_opts {
	size_t sz;
	bool by_count;	     /* values are the stacks' counts (samples), not their times */
	bool cold;	     /* the cold (blue) palette of off-CPU time; else warm (on-CPU) */
	enum kagg_unit unit; /* times in the tooltips */
	const char *title;   /* NULL: "TOOL: on-CPU flame graph" or "off-CPU" with cold */
	unsigned int width;  /* pixels; 0: 1200 */
	/*
	 * Appended after 0.1: frames under this share of the whole, in percent, are not drawn
	 * (nor what is above them) and the picture is as tall as what is drawn; 0: 0.1, < 0:
	 * every frame.
	 */
	double min_share;
};
#define kagg_flame_opts__last_field min_share

/*
 * Write snap's stacks as an SVG document to f; the subtitle carries the meta (event,
 * filters, duration, drops).  0 or -errno: EINVAL (bad arguments), ENOMEM, EIO.
 */
KAGG_API int kagg_flame__write_svg(const struct kagg_snapshot *snap, FILE *f,
				   const struct kagg_flame_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_FLAME_H */
