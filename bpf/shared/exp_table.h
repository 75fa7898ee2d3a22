/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Exponential-histogram thresholds, exact, for every unit and scale kagg
 * supports.  kagg_exp_table[unit][scale].thresh[m] is floor() of the m-th
 * bucket boundary u * 2^(i/2^scale) that lies in [2^63, 2^64); see
 * kagg_exp_slot() in bpf/shared/buckets.h for how a value is bucketed with it.
 *
 * The table itself is computed exactly (integer roots) by bpf/exp_table.py,
 * which the build runs to write exp_table_data.h into build/include.
 */
#ifndef KAGG_EXP_TABLE_H
#define KAGG_EXP_TABLE_H

#include "shared/bucket_math.h" /* KAGG_EXP_MAX_SCALE, KAGG_EXP_MAX_N */

#define KAGG_EXP_UNITS 4 /* units: 1, 1e3, 1e6, 1e9 */

/* Slots of one histogram at scale s: 64 octaves of 2^s buckets, plus one. */
#define KAGG_EXP_SLOTS(s) ((64 << (s)) + 1)

struct kagg_exp_params {
	__u64 thresh[KAGG_EXP_MAX_N]; /* ascending; only the first 2^scale are used */
	__s64 base_index;	      /* bucket index of slot 0 */
	__u64 unit;		      /* u */
	__u32 scale;
	__u32 pad;
};

/* kagg_exp_table[KAGG_EXP_UNITS][KAGG_EXP_MAX_SCALE + 1] */
#include "exp_table_data.h"

#endif /* KAGG_EXP_TABLE_H */
