// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the ELF symbolizer on a file image (syms__image, the
 * path [vdso] takes): program headers, .symtab/.dynsym, build-id notes.  The
 * image is looked up at three file offsets: its start, its middle, and the
 * offset held in its last 8 bytes.  libelf itself is not instrumented: this
 * checks our use of it.
 *
 * Seeds (corpus/fuzz_syms): tiny ELF files: a relocatable object, a static
 * executable with symbols, the same stripped with a build-id note.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syms/syms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syms *s = syms__new();
	uint64_t offs[3] = { 0, size / 2, 0 };
	struct sym out;
	char buf[256];
	void *img;
	int i;

	if (!s)
		abort();
	if (size >= 8)
		memcpy(&offs[2], data + size - 8, 8);
	for (i = 0; i < 3; i++) {
		img = malloc(size ? size : 1); /* writable, exactly the file */
		if (!img)
			abort();
		memcpy(img, data, size);
		if (!syms__image(s, img, size, offs[i], &out) && (!out.name || !*out.name))
			abort();
		sym__format(&out, offs[i], 0, buf, sizeof(buf));
		sym__format(&out, offs[i], SYM_ADDRS, buf, sizeof(buf));
		free(img);
	}
	syms__free(s);
	return 0;
}
