// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Units of time: their names (kagg_unit__name/parse) and their size in
 * nanoseconds.  The one place that knows what a kagg_unit is.
 */
#include <errno.h>
#include <string.h>

#include <kagg/snapshot.h>
#include "snapshot/snapshot_internal.h"

const char *kagg_unit__name(enum kagg_unit unit)
{
	switch (unit) {
	case KAGG_UNIT_USECS:
		return "usecs";
	case KAGG_UNIT_NSECS:
		return "nsecs";
	case KAGG_UNIT_MSECS:
		return "msecs";
	}
	return NULL;
}

int kagg_unit__parse(const char *s, enum kagg_unit *unit)
{
	if (!s || !unit)
		return -EINVAL;
	if (!strcmp(s, "usecs") || !strcmp(s, "us"))
		*unit = KAGG_UNIT_USECS;
	else if (!strcmp(s, "nsecs") || !strcmp(s, "ns"))
		*unit = KAGG_UNIT_NSECS;
	else if (!strcmp(s, "msecs") || !strcmp(s, "ms"))
		*unit = KAGG_UNIT_MSECS;
	else
		return -EINVAL;
	return 0;
}

uint64_t units_ns(enum kagg_unit unit)
{
	return unit == KAGG_UNIT_NSECS ? 1 : unit == KAGG_UNIT_MSECS ? 1000000 : 1000;
}

unsigned int units_log2(enum kagg_unit unit)
{
	return 63 - __builtin_clzll(units_ns(unit));
}
