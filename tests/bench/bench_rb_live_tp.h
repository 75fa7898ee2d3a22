/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The LTTng-UST tracepoint bench_rb_live writes: 64 bytes of payload. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER kagg_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "bench/bench_rb_live_tp.h"

#if !defined(KAGG_BENCH_RB_LIVE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define KAGG_BENCH_RB_LIVE_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(kagg_bench, ev, LTTNG_UST_TP_ARGS(const char *, payload),
			   LTTNG_UST_TP_FIELDS(lttng_ust_field_array(char, payload, payload, 64)))

#endif

#include <lttng/tracepoint-event.h>
