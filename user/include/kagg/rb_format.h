/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/rb_format.h - trace event formats for the ring buffer: a registry that
 * assigns event IDs, a parser for tracefs `format` files (the kernel's and
 * ours), the `format` text for events we define, and `trace`-style text
 * output of records.
 *
 * Thread-safety: a registry is not locked; define/parse from one thread, then
 * any number of threads may print concurrently.
 */
#ifndef KAGG_RB_FORMAT_H
#define KAGG_RB_FORMAT_H

#include <stdio.h>

#include <kagg/common.h>
#include <kagg/ringbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kagg_rb_field_kind {
	KAGG_RB_FIELD_PLAIN,	/* scalar */
	KAGG_RB_FIELD_ARRAY,	/* TYPE name[N] (char arrays print as strings) */
	KAGG_RB_FIELD_DATA_LOC, /* __data_loc: u32 (len << 16) | offset from record start */
	KAGG_RB_FIELD_REL_LOC,	/* __rel_loc: u32 (len << 16) | offset from the field's end */
};

/*
 * One field of an event format, owned by the registry and read-only.  It is
 * only ever reached through a pointer (kagg_rb_format__field(),
 * kagg_rb_format__field_at()), never by indexing an array, so it can grow at
 * the end: the library sets sz, and a field appended after 0.1 is there when
 * KAGG_HAS_FIELD(f, kagg_rb_field, NAME).
 */
struct kagg_rb_field {
	size_t sz;
	char *type; /* as written: "unsigned short", "char", "__data_loc char[]" */
	char *name;
	int offset, size;
	bool is_signed;
	enum kagg_rb_field_kind kind;
	int array_len;	/* KAGG_RB_FIELD_ARRAY */
	bool is_string; /* char arrays and char data_loc/rel_loc */
};

/*
 * An event format: opaque, owned by the registry, read through the
 * accessors below.  Opaque rather than sized because it owns an array of
 * fields whose element size must stay the library's business.
 */
struct kagg_rb_format;

struct kagg_rb_events;

/* An empty registry.  IDs of events we define start at first_id (0: 1000). */
struct kagg_rb_events_opts {
	size_t sz;
	int first_id;
	bool old_flags; /* common_flags 0x02 = IRQS_NOSUPPORT (< 6.13) instead of LAZY */
	/*
	 * Latency-flag columns printed, as the kernel's own `trace` file has
	 * them: 5 (0 means 5: irqs, resched, hardirq/softirq, preempt depth,
	 * migrate disable) or 4 (kernels without the migrate-disable column,
	 * 5.10: the preempt count whole, in hex).
	 */
	int flag_cols;
};
#define kagg_rb_events_opts__last_field flag_cols

KAGG_API struct kagg_rb_events *kagg_rb_events__new(const struct kagg_rb_events_opts *opts);
KAGG_API void kagg_rb_events__free(struct kagg_rb_events *evs);

/*
 * Parse one tracefs format file (text, len bytes) of `system` and register it
 * under its own ID.  0 or -EINVAL (malformed; nothing registered), -EEXIST
 * (ID taken), -ENOMEM.  *out (optional) gets the registered format.
 * Malformed: no name, ID or field; a name, ID or print fmt line given twice;
 * an ID outside 0..65535 (common_type is 16 bits); more than 1024 fields; a
 * field with an offset or size that is not a number, negative, or ending past
 * 2^30 - 1 bytes; a scalar field of a size other than 1, 2, 4 or 8; a
 * __data_loc/__rel_loc of a size other than 4; an array of N elements whose
 * size is not a multiple of N.  The printers rely on these checks.
 */
KAGG_API int kagg_rb_events__parse(struct kagg_rb_events *evs, const char *system, const char *text,
				   size_t len, const struct kagg_rb_format **out);
/*
 * Parse every DIR/SYSTEM/EVENT/format.  Returns the number parsed, or -errno
 * when DIR cannot be read; *failed (optional) counts files that did not parse
 * (a format that is not a regular file or is larger than 1 MiB counts too).
 */
KAGG_API int kagg_rb_events__load_dir(struct kagg_rb_events *evs, const char *dir, int *failed);

/*
 * Define an event: fields are C declarations separated by ';', e.g.
 * "char comm[16]; pid_t pid; int prio; __data_loc char[] name", laid out
 * after the common fields with natural alignment.  The next free ID is
 * assigned.  0 or -EINVAL (unknown type, bad syntax, a field past 2^30 - 1
 * bytes), -EEXIST (the next ID is taken: IDs stop at INT_MAX), -ENOMEM.
 */
KAGG_API int kagg_rb_events__define(struct kagg_rb_events *evs, const char *system,
				    const char *name, const char *fields, const char *print_fmt,
				    const struct kagg_rb_format **out);
/* Define replicas of sched/sched_switch, sched_wakeup and sched_wakeup_new (kernel layout, print
 * fmt). */
KAGG_API int kagg_rb_events__define_sched(struct kagg_rb_events *evs);

KAGG_API const struct kagg_rb_format *kagg_rb_events__find(const struct kagg_rb_events *evs,
							   int id);
KAGG_API const struct kagg_rb_format *kagg_rb_events__find_by_name(const struct kagg_rb_events *evs,
								   const char *system,
								   const char *name);
/* The field called name, or NULL. */
KAGG_API const struct kagg_rb_field *kagg_rb_format__field(const struct kagg_rb_format *fmt,
							   const char *name);
/* Field i (0 <= i < __nr_fields(), the common_* ones first), or NULL. */
KAGG_API const struct kagg_rb_field *kagg_rb_format__field_at(const struct kagg_rb_format *fmt,
							      size_t i);
KAGG_API size_t kagg_rb_format__nr_fields(const struct kagg_rb_format *fmt);
/* Number of common_* fields at the start (4 for every format we define). */
KAGG_API size_t kagg_rb_format__nr_common(const struct kagg_rb_format *fmt);
/* The event's ID (the common_type of its records); -EINVAL for NULL. */
KAGG_API int kagg_rb_format__id(const struct kagg_rb_format *fmt);
/* Its system ("sched") and name ("sched_switch"). */
KAGG_API const char *kagg_rb_format__system(const struct kagg_rb_format *fmt);
KAGG_API const char *kagg_rb_format__name(const struct kagg_rb_format *fmt);
/* The text after "print fmt: ", or NULL. */
KAGG_API const char *kagg_rb_format__print_fmt(const struct kagg_rb_format *fmt);
/* Number of registered events; i-th one (registration order) or NULL. */
KAGG_API size_t kagg_rb_events__count(const struct kagg_rb_events *evs);
KAGG_API const struct kagg_rb_format *kagg_rb_events__at(const struct kagg_rb_events *evs,
							 size_t i);

/* Write fmt as a tracefs `format` file. */
KAGG_API void kagg_rb_format__fprint(const struct kagg_rb_format *fmt, FILE *f);
/* The fixed texts of tracefs events/header_page (for subbuf_size) and events/header_event. */
KAGG_API void kagg_rb__fprint_header_page(size_t subbuf_size, FILE *f);
KAGG_API void kagg_rb__fprint_header_event(FILE *f);

/* Fill the common fields (struct trace_entry) at the start of a payload. */
static inline void kagg_rb_entry__init(void *payload, int id, uint8_t flags, uint8_t preempt,
				       int32_t pid)
{
	uint8_t *p = (uint8_t *)payload;
	uint16_t t = (uint16_t)id;

	memcpy(p, &t, 2);
	p[2] = flags;
	p[3] = preempt;
	memcpy(p + 4, &pid, 4);
}

/*
 * Read an integer field of a record (sign-extended when signed); f from the
 * accessors above.  Reads at most f->size bytes at f->offset (8 when larger);
 * the caller checks that they lie inside the record.
 */
KAGG_API int64_t kagg_rb_field__int(const struct kagg_rb_field *f, const void *rec);

/*
 * comm lookup for the `comm-pid` column: return a name for pid or NULL
 * ("<...>"; pid 0 prints "<idle>").
 */
typedef const char *(*kagg_rb_comm_fn)(void *ctx, int pid);

/*
 * Print one record as a line of the kernel's `trace` file:
 *	"%16s-%-7d [%03d] FLAGS %5lu.%06lu: name: <print fmt output>\n"
 * The print fmt is interpreted (printf conversions; REC->field, __get_str,
 * __print_flags, __print_symbolic, C operators, ?:); when it uses anything
 * else the fields are printed as "name=value" instead.  The comm, the event
 * name and the text after it are printed safe for a terminal, which the
 * kernel's `trace` file is not: control bytes, DEL, bytes that are not
 * UTF-8 and the C1 controls as "\ooo" (ESC is "\033"), a backslash as
 * "\134".  0, -ENOENT (unknown event id: a line "<unknown event id N>" is
 * still printed), -EINVAL (also: ev->sz too small, or bytes of *ev past
 * what this library knows not zero).
 */
KAGG_API int kagg_rb_events__fprint_event(const struct kagg_rb_events *evs, FILE *f,
					  const struct kagg_rb_event *ev, kagg_rb_comm_fn comm,
					  void *comm_ctx);
/*
 * Just the part after "name: " into buf (NUL-terminated, truncated), as the
 * record has it: not escaped.  Returns its length.
 */
KAGG_API int kagg_rb_events__format_info(const struct kagg_rb_events *evs,
					 const struct kagg_rb_format *fmt, const void *rec,
					 uint32_t len, char *buf, size_t buf_sz);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_RB_FORMAT_H */
