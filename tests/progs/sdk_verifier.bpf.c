// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sdk_verifier: reads a map value without checking it (test_prog: the verifier refuses). */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"
#include "sdk_refused.h"

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_verifier(void *ctx)
{
	struct sdk_rcnt__key mk = {};
	struct sdk_rkey k = {};
	struct kagg_sdk_count *c = bpf_map_lookup_elem(&sdk_rcnt, &mk);

	k.nr = c->count; /* no NULL check */
	sdk_rcnt__record(&k, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
