/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the trace event registry's layout, shared by the registry
 * (rb_events.c), the format-file parser/writer (rb_format.c) and the
 * record-to-text printer (rb_printfmt.c).
 */
#ifndef KAGG_RB_EVENTS_INTERNAL_H
#define KAGG_RB_EVENTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <kagg/rb_format.h>
#include "u64map.h"

struct kagg_rb_events {
	struct kagg_rb_format **v;
	size_t n, cap;
	struct u64map by_id; /* id -> index in v: files may hold tens of thousands of formats */
	int next_id;
	bool old_flags;
};

/* Free a format and everything it owns; NULL is fine. */
void rb_fmt_free(struct kagg_rb_format *f);
/* Add f to the registry (which then owns it): 0, -EEXIST (id taken) or -ENOMEM. */
int rb_events_add(struct kagg_rb_events *evs, struct kagg_rb_format *f);

#endif
