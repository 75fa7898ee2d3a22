// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pictures.c - --format svg|html|heatmap|pprof: the snapshot printers that draw through
 * libkagg's renderers (kagg/flame.h, ...) instead of printing text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kagg/kagg.h>
#include "cli.h"

static struct {
	bool cold;
	bool by_count;
	enum kagg_unit unit;
} pic;

static int print_svg(const struct kagg_snapshot *snap, FILE *f, const struct kagg_print_opts *o)
{
	struct kagg_flame_opts fo = {
		.sz = sizeof(fo), .by_count = pic.by_count, .cold = pic.cold, .unit = pic.unit
	};

	return kagg_flame__write_svg(snap, f, &fo);
}

static int print_pprof(const struct kagg_snapshot *snap, FILE *f, const struct kagg_print_opts *o)
{
	struct kagg_pprof_opts po = { .sz = sizeof(po), .off_cpu = pic.cold };

	return kagg_pprof__write(snap, f, &po);
}

static int print_html(const struct kagg_snapshot *snap, FILE *f, const struct kagg_print_opts *o)
{
	struct kagg_html_opts ho = { .sz = sizeof(ho),
				     .by_count = pic.by_count,
				     .cold = pic.cold,
				     .unit = pic.unit,
				     .percentiles = o->percentiles,
				     .nr_percentiles = o->nr_percentiles };

	return kagg_html__write(snap, f, &ho);
}

static struct kagg_heatmap *heatmap;

static int add_column(const struct kagg_snapshot *snap, FILE *f, const struct kagg_print_opts *o)
{
	return kagg_heatmap__add(heatmap, snap);
}

static int write_heatmap(FILE *f)
{
	int err = kagg_heatmap__write_svg(heatmap, f, NULL);

	kagg_heatmap__free(heatmap);
	heatmap = NULL;
	return err;
}

static const char *const pic_names[] = {
	[CLI_PIC_SVG] = "svg",
	[CLI_PIC_HTML] = "html",
	[CLI_PIC_HEATMAP] = "heatmap",
	[CLI_PIC_PPROF] = "pprof",
};

int cli_pictures(struct cli_common *cm, unsigned int allowed, bool cold, bool by_count)
{
	const char *name = pic_names[cm->picture];

	if (!cm->picture)
		return 0;
	if (!(allowed & CLI_PIC_BIT(cm->picture)))
		return cli_err(CLI_EXIT_USAGE, "--format %s: not with these options%s", name,
			       cm->picture == CLI_PIC_HEATMAP
				       ? " (heatmaps: histograms by interval)"
				       : " (needs stacks)");
	if (cm->print.folded)
		return cli_err(CLI_EXIT_USAGE, "--folded and --format %s exclude each other", name);
	if (cm->picture == CLI_PIC_HEATMAP && !cm->interval)
		return cli_err(CLI_EXIT_USAGE, "--format heatmap draws intervals: add -i SEC");
	if (cm->picture != CLI_PIC_HEATMAP && cm->interval)
		return cli_err(CLI_EXIT_USAGE, "--format %s draws once: drop -i", name);
	pic.cold = cold;
	pic.by_count = by_count;
	pic.unit = cm->unit;
	switch (cm->picture) {
	case CLI_PIC_SVG:
		cm->printer = print_svg;
		break;
	case CLI_PIC_HTML:
		cm->printer = print_html;
		break;
	case CLI_PIC_HEATMAP:
		heatmap = kagg_heatmap__new();
		if (!heatmap)
			return cli_err(CLI_EXIT_FAIL, "out of memory");
		cm->printer = add_column;
		cm->finish = write_heatmap;
		break;
	case CLI_PIC_PPROF:
		if (isatty(STDOUT_FILENO))
			return cli_err(CLI_EXIT_USAGE,
				       "--format pprof writes binary data: redirect it to a file");
		cm->printer = print_pprof;
		break;
	}
	return 0;
}
