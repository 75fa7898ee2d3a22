// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sdk_anytp: one classic tracepoint program for whatever tracepoint the loader
 * is given (kagg_prog_opts.tracepoint): the events of target_tgid, counted.
 */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

const volatile __u32 target_tgid = 0;

KAGG_COUNT(hits, struct kagg_nokey, 1);

SEC("tracepoint")
int sdk_anytp(void *ctx)
{
	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	hits__record(NULL, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
