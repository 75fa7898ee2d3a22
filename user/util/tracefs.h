/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal: tracefs access for tools that need it (hist, funclat): mount
 * check / mount of /sys/kernel/tracing, reading its files, and an event's
 * parsed format (through the ring buffer's format parser, rb_format.c).
 */
#ifndef KAGG_TRACEFS_H
#define KAGG_TRACEFS_H

#include <stddef.h>

#define TRACEFS_DIR "/sys/kernel/tracing"

struct kagg_rb_events;
struct kagg_rb_format;

/*
 * Make sure tracefs is mounted on TRACEFS_DIR, mounting it when it is not.
 * 0, or -errno with a one-line reason in msg.
 */
int tracefs_ensure(char *msg, size_t msg_sz);

/* Read TRACEFS_DIR/rel (rel itself when absolute) into a malloc'd NUL-terminated buffer.
 * 0 or -errno. */
int tracefs_read(const char *rel, char **buf, size_t *len);

/*
 * Parse events/SYS/NAME/format into evs and return it in *out.
 * 0, -ENOENT (no such event), -EINVAL (unparsable), -errno.
 */
int tracefs_event_format(struct kagg_rb_events *evs, const char *sys, const char *name,
			 const struct kagg_rb_format **out);

#endif
