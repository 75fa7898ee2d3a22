/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: the trace event registry's layout, shared by the registry
 * (rb_events.c), the format-file parser/writer (rb_format.c), the
 * record-to-text printer (rb_printfmt.c) and the stream consumers.
 */
#ifndef KAGG_RB_EVENTS_INTERNAL_H
#define KAGG_RB_EVENTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "util/opts.h"
#include "util/u64map.h"

/* sz of a struct kagg_rb_event of the first release: the least the formats read of one */
#define FT_EVENT_MIN_SZ offsetofend(struct kagg_rb_event, missed)

/* An event format (opaque in the API: kagg_rb_format__*() read it). */
struct kagg_rb_format {
	char *system, *name;
	int id;
	struct kagg_rb_field *fields; /* each with sz set (add_field) */
	size_t nr_fields;
	size_t nr_common; /* the common_* fields come first */
	char *print_fmt;  /* the text after "print fmt: ", or NULL */
};

struct kagg_rb_events {
	struct kagg_rb_format **v;
	size_t n, cap;
	struct u64map by_id; /* id -> index in v: files may hold tens of thousands of formats */
	int next_id;
	bool old_flags;
	int flag_cols; /* 4 or 5 */
};

/* Free a format and everything it owns; NULL is fine. */
void rb_fmt_free(struct kagg_rb_format *f);
/* Add f to the registry (which then owns it): 0, -EEXIST (id taken) or -ENOMEM. */
int rb_events_add(struct kagg_rb_events *evs, struct kagg_rb_format *f);

#endif
