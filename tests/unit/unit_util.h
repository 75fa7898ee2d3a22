/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers shared by the unprivileged unit tests (tests/unit/): a test's
 * main(), a test snapshot's meta and stacks, printing into memory to check
 * what a printer wrote, reading delimited protobuf messages, and ring buffer
 * records: a sched_wakeup one built and printed, a kbuffer event as
 * libtraceevent's record.
 * Include after <cmocka.h>.
 */
#ifndef KAGG_UNIT_UTIL_H
#define KAGG_UNIT_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include <kagg/snapshot.h>

#include "test_main.h"

/*
 * main() running the cmocka tests listed, in order, with the group's SETUP
 * and TEARDOWN (NULL for none), KAGG_TEST_FILTER honoured (test_main.h):
 *	UU_MAIN_GROUP(setup, teardown,
 *		      cmocka_unit_test(test_a),
 *		      cmocka_unit_test(test_b))
 */
#define UU_MAIN_GROUP KT_MAIN_GROUP

/*
 * Skip (with the reason printed) when the tests run under a user-mode emulator
 * (KAGG_TEST_RUNNER, e.g. qemu-aarch64 on x86_64, `make ARCH=arm64 check-unit-qemu`):
 * there a child's /proc/PID/maps are the emulator's, not the program's.
 */
#define UU_SKIP_UNDER_EMULATION(WHY)                                                 \
	do {                                                                         \
		const char *uu_runner = getenv("KAGG_TEST_RUNNER");                  \
                                                                                     \
		if (uu_runner && *uu_runner) {                                       \
			printf("SKIP %s: under %s, %s\n", __func__, uu_runner, WHY); \
			skip();                                                      \
		}                                                                    \
	} while (0)

/* main() running the cmocka tests listed, without group setup. */
#define UU_MAIN(...) UU_MAIN_GROUP(NULL, NULL, __VA_ARGS__)

/*
 * A memory stream a test prints into: uu_mem_open() gives the FILE to print
 * to, uu_mem_text() closes it and hands over what was written (malloc'd,
 * NUL-terminated; the caller frees it).
 */
struct uu_mem {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *uu_mem_open(struct uu_mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	return m->f;
}

static inline char *uu_mem_text(struct uu_mem *m)
{
	fclose(m->f);
	return m->buf;
}

/*
 * The base-128 varint at buf + *off (a delimited protobuf message's length prefix);
 * *off moves past it.
 */
static inline uint64_t uu_varint(const uint8_t *buf, size_t *off)
{
	uint64_t n = 0;
	int shift = 0;

	do {
		n |= (uint64_t)(buf[*off] & 0x7f) << shift;
		shift += 7;
	} while (buf[(*off)++] & 0x80);
	return n;
}

/* The strings of a test snapshot's meta m that every printer shows. */
static inline void uu_meta(struct kagg_meta *m, const char *tool, const char *event,
			   const char *attach, const char *kernel, const char *filters)
{
	m->tool = tool;
	m->event = event;
	m->attach = attach;
	m->kernel = kernel;
	m->filters = filters;
}

/* The frames of test stack st: nk kernel frames at k, nu user frames at u, innermost first. */
static inline void uu_stack_frames(struct kagg_stack *st, const struct kagg_frame *const *k,
				   unsigned int nk, const struct kagg_frame *const *u,
				   unsigned int nu)
{
	st->kframes = k;
	st->nr_kframes = nk;
	st->uframes = u;
	st->nr_uframes = nu;
}

/* A sched:sched_wakeup record, its format, and the ring buffer event that hands it over. */
struct uu_wakeup {
	uint8_t r[64];
	const struct kagg_rb_format *f;
	struct kagg_rb_event ev;
};

/* w as evs (its sched events defined here) has it, the record zeroed, at ts on cpu. */
static inline void uu_wakeup_init(struct uu_wakeup *w, struct kagg_rb_events *evs, uint64_t ts,
				  int cpu)
{
	memset(w, 0, sizeof(*w));
	assert_int_equal(kagg_rb_events__define_sched(evs), 0);
	w->f = kagg_rb_events__find_by_name(evs, "sched", "sched_wakeup");
	w->ev = (struct kagg_rb_event){
		.sz = sizeof(w->ev), .ts = ts, .data = w->r, .len = sizeof(w->r), .cpu = cpu
	};
}

/*
 * w's record: common flags and preempt count pc, pid; comm (under 16 bytes), pid 5,
 * prio 120, target_cpu 1.
 */
static inline void uu_wakeup_fill(struct uu_wakeup *w, uint8_t flags, uint8_t pc, int pid,
				  const char *comm)
{
	kagg_rb_entry__init(w->r, kagg_rb_format__id(w->f), flags, pc, pid);
	memcpy(w->r + 8, comm, strlen(comm) + 1);
	*(int32_t *)(w->r + 24) = 5;
	*(int32_t *)(w->r + 28) = 120;
	*(int32_t *)(w->r + 32) = 1;
}

/*
 * The trace line evs prints for w's record (comm and comm_ctx as
 * kagg_rb_events__fprint_event takes them): malloc'd, its length in *len unless NULL.
 */
static inline char *uu_wakeup_line(const struct kagg_rb_events *evs, const struct uu_wakeup *w,
				   kagg_rb_comm_fn comm, void *comm_ctx, size_t *len)
{
	struct uu_mem m;
	char *buf;

	kagg_rb_events__fprint_event(evs, uu_mem_open(&m), &w->ev, comm, comm_ctx);
	buf = uu_mem_text(&m);
	if (len)
		*len = m.len;
	return buf;
}

/*
 * kb's event d, read at ts from a page of cpu, as libtraceevent's record *rec; the event
 * tep finds for it, asserted found and named name.
 */
static inline struct tep_event *uu_kb_event(struct tep_handle *tep, struct kbuffer *kb, void *d,
					    unsigned long long ts, int cpu, const char *name,
					    struct tep_record *rec)
{
	struct tep_event *e;

	*rec = (struct tep_record){
		.ts = ts, .data = d, .cpu = cpu, .size = kbuffer_event_size(kb)
	};
	e = tep_find_event_by_record(tep, rec);
	assert_non_null(e);
	assert_string_equal(e->name, name);
	return e;
}

#endif /* KAGG_UNIT_UTIL_H */
