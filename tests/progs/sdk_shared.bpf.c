// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sdk_shared: every CPU adding to one key (test_prog).  Each getppid() of
 * target_tgid records the calling thread's id, keyed by the process, into a
 * log2 histogram (or its exp buckets) and a counter: the threads of the test,
 * on different CPUs at once, all land on the same entries.
 */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

const volatile __u32 target_tgid = 0;

struct proc_key {
	__u32 tgid;
};

KAGG_HIST_LOG2(tids, struct proc_key, 4);
KAGG_COUNT(tid_sum, struct proc_key, 4);

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_shared_getppid(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct proc_key k = { .tgid = id >> 32 };

	if (k.tgid != target_tgid)
		return 0;
	tids__record(&k, (__u32)id);
	tid_sum__record(&k, (__u32)id);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
