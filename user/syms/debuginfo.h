/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * debuginfo.h - internal: where the full symbol table of a file without .symtab lives.
 *
 *	struct dbg_syms x;
 *	if (!dbg_find(d, elf, path, &x))      // x.elf: an ELF whose .symtab names elf's code
 *		... read x.elf's .symtab ...;  // its names live until dbg_syms_free(&x)
 *	dbg_syms_free(&x);
 *
 * Tried in this order, the first with a .symtab wins:
 *   1. MiniDebugInfo: the xz-compressed ELF in elf's .gnu_debugdata (liblzma);
 *   2. a separate debug file: /usr/lib/debug/.build-id/xx/yyyy.debug by build id, then the
 *      file .gnu_debuglink names (next to path, in its .debug/, under /usr/lib/debug/ + its
 *      directory), its CRC checked;
 *   3. a debuginfod server (libdebuginfod and its cache) when DEBUGINFOD_URLS is set: each
 *      file given up after KAGG_DEBUGINFOD_TIMEOUT seconds (default 5), the servers taken for
 *      down after 3 failures in a row that were not a plain "not found".
 */
#ifndef KAGG_SYMS_DEBUGINFO_H
#define KAGG_SYMS_DEBUGINFO_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

/* Why no debuginfod answer came (dbg_syms.why, dbg_stats). */
enum dbg_why {
	DBG_WHY_NONE = 0,
	DBG_WHY_NOT_FOUND, /* the servers have no debug file for the build id */
	DBG_WHY_TIMEOUT,   /* given up after the per-file timeout */
	DBG_WHY_ERROR,	   /* unreachable server or any other error */
	DBG_WHY_SKIPPED,   /* not asked: the servers were taken for down */
	DBG_WHY_MAX,
};

struct dbg; /* the debuginfod client, its timeout and counters; one per symbolizer */

struct dbg_syms {
	Elf *elf; /* NULL when nothing was found */
	int src;  /* enum sym_src of syms.h: where elf came from */
	int why;  /* enum dbg_why: debuginfod was asked and did not answer */
	int fd;
	void *buf; /* MiniDebugInfo's decompressed image */
};

struct dbg_stats {
	uint64_t queries; /* files asked of debuginfod */
	uint64_t found;
	uint64_t failed[DBG_WHY_MAX]; /* by cause; [DBG_WHY_NONE] unused */
};

/*
 * New debuginfod context: NULL (and nothing is ever asked) when DEBUGINFOD_URLS is unset or
 * empty, or the client cannot start.
 */
struct dbg *dbg_new(void);
void dbg_free(struct dbg *d);
void dbg_get_stats(const struct dbg *d, struct dbg_stats *st);

/*
 * Find the symbols of elf (mapped from path, for .gnu_debuglink; may be NULL) elsewhere,
 * debuginfod through d (NULL: not asked).  0 with x->elf set, -ENOENT with x->elf NULL (and
 * x->why set when debuginfod failed), -ENOMEM.  dbg_syms_free(x) in every case.
 */
int dbg_find(struct dbg *d, Elf *elf, const char *path, struct dbg_syms *x);
void dbg_syms_free(struct dbg_syms *x);

/* The GNU build-id note of elf into id (up to 64 bytes): its length, or -ENOENT. */
int dbg_build_id(Elf *elf, unsigned char *id);

#endif
