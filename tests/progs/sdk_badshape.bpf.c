// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sdk_badshape: a histogram descriptor over a map of the wrong value (test_prog: refused). */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

struct sdk_bad_key {
	__u32 gen;
	__u32 __pad;
	__u32 k;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16);
	__type(key, struct sdk_bad_key);
	__type(value, __u64);
} sdk_bad SEC(".maps");

const volatile struct kagg_sdk_desc sdk_bad__kagg = { .kind = KAGG_SDK_LOG2, .drop = 3 };

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_badshape(void *ctx)
{
	struct sdk_bad_key k = {};
	__u64 one = 1;

	bpf_map_update_elem(&sdk_bad, &k, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
