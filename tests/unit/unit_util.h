/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers shared by the unprivileged unit tests (tests/unit/): a test's
 * main(), a test snapshot's meta and stacks, printing into memory to check
 * what a printer wrote, and reading delimited protobuf messages.
 * Include after <cmocka.h>.
 */
#ifndef KAGG_UNIT_UTIL_H
#define KAGG_UNIT_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif /* KAGG_UNIT_UTIL_H */
