// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <kagg/common.h>

#ifndef KAGG_VERSION
#define KAGG_VERSION "0.1.0"
#endif

const char *kagg_version(void)
{
	return KAGG_VERSION;
}
