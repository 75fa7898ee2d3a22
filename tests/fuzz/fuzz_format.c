// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: a tracefs format file, then a record printed with it.
 * Input: format text, a NUL byte, the record (its first two bytes are set to
 * the format's ID so the printer finds it).  The format is parsed into a new
 * registry; when it parses, the record goes through __format_info and
 * __fprint_event, and the format written back out by kagg_rb_format__fprint
 * must parse again (round trip).
 *
 * Seeds (corpus/fuzz_format): kernel formats (sched_switch from tests/data,
 * and formats using __data_loc, __print_flags, __print_symbolic, arrays and
 * casts) each with a record, and formats of events we define.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/rb_format.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	size_t rlen = nul ? size - tlen - 1 : 0;
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL), *again = NULL;
	const struct kagg_rb_format *fmt;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	uint8_t *rec = malloc(rlen ? rlen : 1); /* exactly the record: ASan sees overreads */
	char info[4096], *txt = NULL;
	size_t txtlen = 0;
	FILE *m;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!evs || !rec || !null)
		abort();
	if (kagg_rb_events__parse(evs, "fuzz", (const char *)data, tlen, &fmt))
		goto out;
	memcpy(rec, data + tlen + 1, rlen);
	if (rlen >= 2) {
		uint16_t id = (uint16_t)kagg_rb_format__id(fmt);

		memcpy(rec, &id, 2);
	}
	kagg_rb_events__format_info(evs, fmt, rec, (uint32_t)rlen, info, sizeof(info));
	ev.data = rec;
	ev.len = (uint32_t)rlen;
	kagg_rb_events__fprint_event(evs, null, &ev, NULL, NULL);

	m = open_memstream(&txt, &txtlen);
	if (!m)
		abort();
	kagg_rb_format__fprint(fmt, m);
	fclose(m);
	again = kagg_rb_events__new(NULL);
	if (!again || kagg_rb_events__parse(again, "fuzz", txt, txtlen, NULL)) {
		fprintf(stderr, "the written format does not parse again:\n%s\n", txt);
		abort();
	}
out:
	free(txt);
	kagg_rb_events__free(again);
	kagg_rb_events__free(evs);
	free(rec);
	return 0;
}
