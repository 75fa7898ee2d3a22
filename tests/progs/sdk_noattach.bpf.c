// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sdk_noattach: a section naming a tracepoint no kernel has (test_prog: refused). */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

struct sdk_nkey {
	__u32 nr;
};

KAGG_COUNT(sdk_ncnt, struct sdk_nkey, 16);

SEC("tracepoint/sdk_nosuch/sdk_event")
int sdk_noattach(void *ctx)
{
	struct sdk_nkey k = {};

	sdk_ncnt__record(&k, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
