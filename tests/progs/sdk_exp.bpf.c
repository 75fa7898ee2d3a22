// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sdk_exp: known values into log2 histograms (test_prog, --buckets exp:S or
 * log2): the i-th getppid() of target_tgid records vals[i % 5] unkeyed and keyed
 * by i % 2, and vals[i % 5] - 2000 (signed) in a linear histogram.
 */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

const volatile __u32 target_tgid = 0;

struct exp_key {
	__u32 parity;
};

KAGG_HIST_LOG2(sizes, struct kagg_nokey, 1);
KAGG_HIST_LOG2(by_parity, struct exp_key, 4);
KAGG_HIST_LINEAR(shifted, struct kagg_nokey, 1, -3000, 20000);

__u32 calls = 0;

/* 0, 1, 1000, 1500, 1000000 for i % 5 = 0 .. 4 */
static __always_inline __u64 val_of(__u32 i)
{
	switch (i % 5) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 1000;
	case 3:
		return 1500;
	}
	return 1000000;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_exp_getppid(void *ctx)
{
	struct exp_key k = {};
	__u64 v;
	__u32 i;

	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	i = calls++;
	k.parity = i & 1;
	v = val_of(i);
	sizes__record(NULL, v);
	by_parity__record(&k, v);
	shifted__record(NULL, v - 2000);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
