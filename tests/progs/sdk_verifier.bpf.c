// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sdk_verifier: reads a map value without checking it (test_prog: the verifier refuses). */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

struct sdk_vkey {
	__u32 nr;
};

KAGG_COUNT(sdk_vcnt, struct sdk_vkey, 16);

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_verifier(void *ctx)
{
	struct sdk_vcnt__key mk = {};
	struct sdk_vkey k = {};
	struct kagg_sdk_count *c = bpf_map_lookup_elem(&sdk_vcnt, &mk);

	k.nr = c->count; /* no NULL check */
	sdk_vcnt__record(&k, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
