// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: one sub-buffer image (the whole input, any size from 32
 * bytes) through kagg_rb_page_iter, its first events printed as `trace` lines
 * with the sched replicas' formats.  Beyond the sanitizers it checks that every
 * event lies inside the commit size and that an error points inside it.
 *
 * Seeds (corpus/fuzz_page): the kernel's pages of tests/data, pages of our
 * ring buffer (records of every length class, time extends, a discarded
 * record, a loss count), and a few hand-made 32..64-byte images.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kagg_rb_events *evs;
	static FILE *null;
	const uint8_t *lo = data + KAGG_RB_PAGE_HDR;
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	int err, n = 0;

	if (!evs) {
		evs = kagg_rb_events__new(NULL);
		null = fopen("/dev/null", "w");
		if (!evs || !null || kagg_rb_events__define_sched(evs))
			abort();
	}
	if (kagg_rb_page_iter__init(&it, data, size))
		return 0;
	while (!(err = kagg_rb_page_iter__next(&it, &ev))) {
		const uint8_t *p = ev.data;

		if (p < lo || p > lo + it.size || ev.len > (size_t)(lo + it.size - p) ||
		    it.off > it.size)
			abort();
		/* the print fmt interpreter is fuzz_format's: a few lines per page keep this fast
		 */
		if (n++ < 8)
			kagg_rb_events__fprint_event(evs, null, &ev, NULL, NULL);
	}
	if (err != -ENOENT && !(err == -EBADMSG && it.off < it.size))
		abort();
	return 0;
}
