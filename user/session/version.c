// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The release, as the Makefile names it (KAGG_VERSION, generated into kagg_version.h). */
#include <kagg/common.h>
#include "kagg_version.h"

const char *kagg_version(void)
{
	return KAGG_VERSION;
}
