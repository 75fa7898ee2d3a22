/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by bpf/runqlat.bpf.c and the library (user/runqlat.c). */
#ifndef KAGG_BPF_RUNQLAT_H
#define KAGG_BPF_RUNQLAT_H

#include "common.h"

/* Per-CPU counters (array map `counters`, index = enum value). */
enum runqlat_counter {
	RUNQLAT_CNT_EVENTS = 0,		/* sched_switch runs (wakeups are not counted) */
	RUNQLAT_CNT_SAMPLES,		/* run-queue latencies recorded */
	RUNQLAT_CNT_FILTERED_CPU,	/* latencies ended on a CPU other than --cpu (not a loss) */
	RUNQLAT_CNT_DROP_STORAGE,	/* enqueue not recorded: task storage / start hash full */
	RUNQLAT_CNT_DROP_KEYS_FULL,	/* latency not aggregated: per-key map full */
	RUNQLAT_CNT_MAX,
};

#endif /* KAGG_BPF_RUNQLAT_H */
