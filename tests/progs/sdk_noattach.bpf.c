// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sdk_noattach: a section naming a tracepoint no kernel has (test_prog: refused). */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"
#include "sdk_refused.h"

SEC("tracepoint/sdk_nosuch/sdk_event")
int sdk_noattach(void *ctx)
{
	struct sdk_rkey k = {};

	sdk_rcnt__record(&k, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
