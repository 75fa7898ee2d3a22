// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Event formats: the format files we write are accepted by libtraceevent,
 * records of our events written to our ring buffer are printed identically by
 * libtraceevent (from kbuffer-decoded pages) and by us, and the parser reads
 * back what we wrote field by field.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event-parse.h>
#include <kbuffer.h>
#include <trace-seq.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "unit_util.h"

static char *to_text(void (*fn)(const void *, FILE *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(arg, f);
	fclose(f);
	return buf;
}

static void fmt_printer(const void *a, FILE *f)
{
	kagg_rb_format__fprint(a, f);
}

static void hp_printer(const void *a, FILE *f)
{
	kagg_rb__fprint_header_page(4096, f);
}

static struct tep_handle *tep_for(struct kagg_rb_events *evs)
{
	struct tep_handle *tep = tep_alloc();
	char *hp = to_text(hp_printer, NULL);
	size_t i;

	assert_int_equal(tep_parse_header_page(tep, hp, strlen(hp), 8), 0);
	free(hp);
	for (i = 0; i < kagg_rb_events__count(evs); i++) {
		const struct kagg_rb_format *f = kagg_rb_events__at(evs, i);
		char *t = to_text(fmt_printer, f);

		assert_int_equal(tep_parse_event(tep, t, strlen(t), kagg_rb_format__system(f)), 0);
		free(t);
	}
	return tep;
}

/* What libtraceevent prints as the fields ("info") of a size-byte record of evs. */
static char *tep_info(struct kagg_rb_events *evs, void *data, int size)
{
	struct tep_handle *tep = tep_for(evs);
	struct tep_record rec = { .data = data, .size = size };
	struct trace_seq sq;
	char *info;

	trace_seq_init(&sq);
	tep_print_event(tep, &sq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&sq);
	info = strdup(sq.buffer);
	trace_seq_destroy(&sq);
	tep_free(tep);
	return info;
}

/* Record r (size bytes) of f, its fields as we print them: want, and as libtraceevent does. */
static void assert_info(struct kagg_rb_events *evs, const struct kagg_rb_format *f, void *r,
			int size, const char *want)
{
	char mine[512], *theirs = tep_info(evs, r, size);

	kagg_rb_events__format_info(evs, f, r, size, mine, sizeof(mine));
	assert_string_equal(mine, want);
	assert_string_equal(mine, theirs);
	free(theirs);
}

static void test_sched_replicas_match_kernel_layout_and_print_like_libtraceevent(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *sw, *wk;
	struct kagg_rb *rb;
	struct tep_handle *tep;
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint8_t page[4096];
	long states[] = { 0, 1, 2, 0x101, 0x80, 0x3, 0x100, 0x40 };
	int i, n = 0;

	assert_int_equal(kagg_rb_events__define_sched(evs), 0);
	sw = kagg_rb_events__find_by_name(evs, "sched", "sched_switch");
	wk = kagg_rb_events__find_by_name(evs, "sched", "sched_wakeup");
	assert_non_null(sw);
	assert_non_null(wk);
	assert_int_equal(kagg_rb_format__field(sw, "prev_state")->offset, 32);
	assert_int_equal(kagg_rb_format__field(sw, "next_prio")->offset, 60);
	assert_int_equal(kagg_rb_format__field(wk, "target_cpu")->offset, 32);
	tep = tep_for(evs);
	{
		KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = 1);
		rb = kagg_rb__new(&o);
	}
	for (i = 0; i < 8; i++) {
		uint8_t r[64] = { 0 };

		kagg_rb_entry__init(r, kagg_rb_format__id(sw), 0x01, 2, 1000 + i);
		snprintf((char *)r + 8, 16, "task%d", i);
		*(int32_t *)(r + 24) = 1000 + i;
		*(int32_t *)(r + 28) = 120 - i;
		*(int64_t *)(r + 32) = states[i];
		snprintf((char *)r + 40, 16, "next-%d", i);
		*(int32_t *)(r + 56) = 2000 + i;
		*(int32_t *)(r + 60) = 100;
		assert_int_equal(kagg_rb__write(rb, 0, r, 64), 0);
		memset(r, 0, sizeof(r));
		kagg_rb_entry__init(r, kagg_rb_format__id(wk), 0, 0, 1000 + i);
		snprintf((char *)r + 8, 16, "wakee%d", i);
		*(int32_t *)(r + 24) = 3000 + i;
		*(int32_t *)(r + 28) = 120;
		*(int32_t *)(r + 32) = i;
		assert_int_equal(kagg_rb__write(rb, 0, r, 36), 0);
	}
	assert_int_equal(kagg_rb__read_page(rb, 0, page, sizeof(page)), 4096);
	kbuffer_load_subbuffer(kb, page);
	{
		unsigned long long ts;
		void *d;

		for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
			struct tep_record rec = {
				.ts = ts, .data = d, .cpu = 0, .size = kbuffer_event_size(kb)
			};
			const struct kagg_rb_format *f = kagg_rb_events__find(evs, *(uint16_t *)d);
			struct trace_seq sq;
			char mine[512];

			trace_seq_init(&sq);
			tep_print_event(tep, &sq, &rec, "%s: %s", TEP_PRINT_NAME, TEP_PRINT_INFO);
			trace_seq_terminate(&sq);
			assert_non_null(f);
			snprintf(mine, sizeof(mine), "%s: ", kagg_rb_format__name(f));
			kagg_rb_events__format_info(evs, f, d, rec.size, mine + strlen(mine),
						    sizeof(mine) - strlen(mine));
			assert_string_equal(mine, sq.buffer);
			trace_seq_destroy(&sq);
			n++;
		}
	}
	assert_int_equal(n, 16);
	kbuffer_free(kb);
	tep_free(tep);
	kagg_rb__free(rb);
	kagg_rb_events__free(evs);
}

static void test_defined_event_with_data_loc_and_arrays_prints_like_libtraceevent(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *f;
	uint8_t r[96] = { 0 };
	uint32_t loc;

	assert_int_equal(kagg_rb_events__define(
				 evs, "kagg", "demo",
				 "u8 a; s32 b; unsigned int c; u64 d; __data_loc char[] name; "
				 "char tag[8]; long e",
				 "\"a=%u b=%d c=0x%x d=%llu name=%s tag=%s e=%ld sym=%s\", REC->a, "
				 "REC->b, REC->c, REC->d, __get_str(name), REC->tag, REC->e, "
				 "__print_symbolic(REC->a, { 1, \"ONE\" }, { 7, \"SEVEN\" })",
				 &f),
			 0);
	assert_int_equal(kagg_rb_format__id(f), 1000);
	assert_int_equal(kagg_rb_format__field(f, "a")->offset, 8);
	assert_int_equal(kagg_rb_format__field(f, "b")->offset, 12);
	assert_int_equal(kagg_rb_format__field(f, "c")->offset, 16);
	assert_int_equal(kagg_rb_format__field(f, "d")->offset, 24);
	assert_int_equal(kagg_rb_format__field(f, "name")->offset, 32);
	assert_int_equal(kagg_rb_format__field(f, "tag")->offset, 36);
	assert_int_equal(kagg_rb_format__field(f, "e")->offset, 48);
	kagg_rb_entry__init(r, kagg_rb_format__id(f), 0, 0, 42);
	r[8] = 7;
	*(int32_t *)(r + 12) = -5;
	*(uint32_t *)(r + 16) = 0xbeef;
	*(uint64_t *)(r + 24) = 123456789012ULL;
	loc = (6u << 16) | 56;
	memcpy(r + 32, &loc, 4);
	memcpy(r + 36, "tagged", 7);
	*(int64_t *)(r + 48) = -99;
	memcpy(r + 56, "hello", 6);
	assert_info(evs, f, r, 64,
		    "a=7 b=-5 c=0xbeef d=123456789012 name=hello tag=tagged e=-99 "
		    "sym=SEVEN");
	kagg_rb_events__free(evs);
}

/* raw_syscalls:sys_enter's print fmt indexes an array: REC->args[N], as libtraceevent prints it. */
static void test_array_element_in_print_fmt_like_libtraceevent(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *f;
	uint8_t r[64] = { 0 };
	uint64_t args[6] = { 0x21, 0x7ffe92d98280ULL, 0, 8, 0, 0xe800000011ULL };
	char mine[256];
	int64_t id = 13;

	assert_int_equal(kagg_rb_events__define(
				 evs, "raw_syscalls", "sys_enter", "long id; unsigned long args[6]",
				 "\"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, "
				 "REC->args[0], REC->args[1], REC->args[2], "
				 "REC->args[3], REC->args[4], REC->args[5]",
				 &f),
			 0);
	kagg_rb_entry__init(r, kagg_rb_format__id(f), 0, 0, 42);
	memcpy(r + 8, &id, 8);
	memcpy(r + 16, args, sizeof(args));
	assert_info(evs, f, r, 64, "NR 13 (21, 7ffe92d98280, 0, 8, 0, e800000011)");
	/* an index past the array is not guessed at: field=value instead */
	kagg_rb_events__free(evs);
	evs = kagg_rb_events__new(NULL);
	assert_int_equal(kagg_rb_events__define(evs, "kagg", "bad", "unsigned long args[2]",
						"\"%lx\", REC->args[2]", &f),
			 0);
	kagg_rb_events__format_info(evs, f, r, 24, mine, sizeof(mine));
	assert_null(strstr(mine, "0x"));
	assert_non_null(strstr(mine, "args="));
	kagg_rb_events__free(evs);
}

static void test_format_text_round_trips_through_our_parser(void **s)
{
	struct kagg_rb_events *a = kagg_rb_events__new(NULL), *b = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *f, *g;
	size_t i;
	char *t;

	assert_int_equal(kagg_rb_events__define_sched(a), 0);
	f = kagg_rb_events__find_by_name(a, "sched", "sched_switch");
	t = to_text(fmt_printer, f);
	assert_int_equal(kagg_rb_events__parse(b, "sched", t, strlen(t), &g), 0);
	assert_int_equal(kagg_rb_format__id(g), kagg_rb_format__id(f));
	assert_int_equal(kagg_rb_format__nr_fields(g), kagg_rb_format__nr_fields(f));
	assert_int_equal(kagg_rb_format__nr_common(g), 4);
	for (i = 0; i < kagg_rb_format__nr_fields(f); i++) {
		const struct kagg_rb_field *gf = kagg_rb_format__field_at(g, i);
		const struct kagg_rb_field *ff = kagg_rb_format__field_at(f, i);

		assert_string_equal(gf->name, ff->name);
		assert_string_equal(gf->type, ff->type);
		assert_int_equal(gf->offset, ff->offset);
		assert_int_equal(gf->size, ff->size);
		assert_int_equal(gf->is_signed, ff->is_signed);
	}
	assert_string_equal(kagg_rb_format__print_fmt(g), kagg_rb_format__print_fmt(f));
	/* the same ID twice is refused, malformed text is refused */
	assert_int_equal(kagg_rb_events__parse(b, "sched", t, strlen(t), NULL), -EEXIST);
	assert_int_equal(kagg_rb_events__parse(b, "x", "name: x\n", 8, NULL), -EINVAL);
	assert_int_equal(kagg_rb_events__define(b, "x", "y", "float z", NULL, NULL), -EINVAL);
	free(t);
	kagg_rb_events__free(a);
	kagg_rb_events__free(b);
}

static void test_unknown_print_fmt_construct_falls_back_to_field_values(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	const struct kagg_rb_format *f;
	uint8_t r[16] = { 0 };
	char buf[128];

	assert_int_equal(kagg_rb_events__define(evs, "kagg", "odd", "int x; u32 y",
						"\"%d\", some_helper(REC->x)", &f),
			 0);
	kagg_rb_entry__init(r, kagg_rb_format__id(f), 0, 0, 1);
	*(int32_t *)(r + 8) = -3;
	*(uint32_t *)(r + 12) = 4000000000u;
	kagg_rb_events__format_info(evs, f, r, 16, buf, sizeof(buf));
	assert_string_equal(buf, "x=-3 y=4000000000");
	kagg_rb_events__free(evs);
}

static void test_trace_line_has_kernel_context_columns(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	struct uu_wakeup w;
	char *buf;

	uu_wakeup_init(&w, evs, 1375816604499ULL, 3);
	/* irqs off + bh off, need-resched, hardirq, preempt 2, migrate-disable 1 */
	uu_wakeup_fill(&w, 0x01 | 0x80 | 0x04 | 0x08, 0x12, 77, "x");
	buf = uu_wakeup_line(evs, &w, NULL, NULL, NULL);
	assert_string_equal(buf, "           <...>-77      [003] Dnh21  1375.816604: sched_wakeup: "
				 "comm=x pid=5 prio=120 target_cpu=001\n");
	free(buf);
	kagg_rb_events__free(evs);
}

/* Four columns (5.10's trace file): the preempt count whole, in hex, no migrate-disable. */
static void test_trace_line_four_flag_columns(void **s)
{
	KAGG_OPTS(kagg_rb_events_opts, eo, .flag_cols = 4);
	KAGG_OPTS(kagg_rb_events_opts, bad, .flag_cols = 3);
	struct kagg_rb_events *evs = kagg_rb_events__new(&eo);
	struct uu_wakeup w;
	static const struct {
		uint8_t pc;
		const char *flags;
	} c[] = { { 0x00, "dn.." }, { 0x02, "dn.2" }, { 0x12, "dn.12" } };
	size_t i;

	assert_non_null(evs);
	assert_null(kagg_rb_events__new(&bad));
	assert_int_equal(errno, EINVAL);
	uu_wakeup_init(&w, evs, 1375816604499ULL, 3);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *buf, want[160];

		uu_wakeup_fill(&w, 0x01 | 0x04, c[i].pc, 77, "x");
		buf = uu_wakeup_line(evs, &w, NULL, NULL, NULL);
		snprintf(want, sizeof(want),
			 "           <...>-77      [003] %s  1375.816604: "
			 "sched_wakeup: comm=x pid=5 prio=120 target_cpu=001\n",
			 c[i].flags);
		assert_string_equal(buf, want);
		free(buf);
	}
	kagg_rb_events__free(evs);
}

UU_MAIN(cmocka_unit_test(test_sched_replicas_match_kernel_layout_and_print_like_libtraceevent),
	cmocka_unit_test(test_defined_event_with_data_loc_and_arrays_prints_like_libtraceevent),
	cmocka_unit_test(test_array_element_in_print_fmt_like_libtraceevent),
	cmocka_unit_test(test_format_text_round_trips_through_our_parser),
	cmocka_unit_test(test_unknown_print_fmt_construct_falls_back_to_field_values),
	cmocka_unit_test(test_trace_line_has_kernel_context_columns),
	cmocka_unit_test(test_trace_line_four_flag_columns))
