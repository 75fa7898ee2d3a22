// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: kagg hist's --filter parser.  The first byte picks the
 * field buffer's size (1..64), the rest is the filter text; a value that
 * parses is then read as a signed and as an unsigned number.  The parser must
 * only accept a field name that fits and a known operator.
 *
 * Seeds (corpus/fuzz_hist_filter): filters from docs/hist.md and the tests.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builtin/hist_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char field[64], *str;
	const char *val = NULL;
	enum hist_op op;
	size_t fsz, n;
	__u64 v;

	if (!size)
		return 0;
	fsz = 1 + data[0] % sizeof(field);
	str = malloc(size);
	if (!str)
		abort();
	memcpy(str, data + 1, size - 1);
	str[size - 1] = 0;
	if (!hist_parse_filter(str, field, fsz, &op, &val)) {
		n = strlen(field);
		if (!n || n >= fsz || !val || !*val || val < str || val > str + strlen(str))
			abort();
		while (n--)
			if (!isalnum((unsigned char)field[n]) && field[n] != '_')
				abort();
		hist_parse_value(val, true, &v);
		hist_parse_value(val, false, &v);
	}
	free(str);
	return 0;
}
