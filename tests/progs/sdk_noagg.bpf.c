// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sdk_noagg: built with the SDK, declares no aggregation (test_prog: refused). */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

KAGG_PAIR(sdk_pair, 16);

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_noagg(void *ctx)
{
	sdk_pair__start();
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
