// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * demangle.c - C++ and Rust symbol names made readable, through libiberty's demanglers (the
 * ones c++filt, gdb and perf use).  Kept apart from syms.c: libiberty.h declares a good part
 * of libc again, so only this file sees it.
 *
 * Rust first: rust_demangle takes both manglings (v0 "_R..." and the legacy "_ZN...17h<hash>E"
 * that is also valid Itanium C++) and drops the legacy hash, which the C++ demangler would
 * print as a name component.  Then the Itanium C++ ABI demangler for "_Z".  The callback entry
 * points write into the caller's buffer: no allocation per name.
 *
 * Licence: the three objects linked from libiberty.a (cp-demangle.o, rust-demangle.o,
 * safe-ctype.o) are GPL-2.0+ or LGPL-2.0+, the first two with the GCC linking exception; see
 * docs/stacks.md ("Licence of the demangler").
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "syms/demangle.h"

#define DEMANGLE_OPTS (DMGL_PARAMS | DMGL_ANSI)

struct out {
	char *buf;
	size_t len;
	size_t used;
	bool cut;
};

static void out_add(const char *s, size_t n, void *ctx)
{
	struct out *o = ctx;
	size_t room = o->len - 1 - o->used;

	if (n > room) {
		n = room;
		o->cut = true;
	}
	memcpy(o->buf + o->used, s, n);
	o->used += n;
	o->buf[o->used] = '\0';
}

int demangle_name(const char *name, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };

	if (!name || !buf || len < 2)
		return -EINVAL;
	buf[0] = '\0';
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return -ENOENT;
	if (rust_demangle_callback(name, DEMANGLE_OPTS, out_add, &o))
		return o.cut ? -ENAMETOOLONG : 0;
	o.used = 0;
	o.cut = false;
	buf[0] = '\0';
	if (name[1] == 'Z' && cplus_demangle_v3_callback(name, DEMANGLE_OPTS, out_add, &o))
		return o.cut ? -ENAMETOOLONG : 0;
	buf[0] = '\0';
	return -ENOENT;
}
