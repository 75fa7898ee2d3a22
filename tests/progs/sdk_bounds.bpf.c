// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sdk_bounds: a linear histogram whose bounds the loader sets, and drop causes
 * of the program's own (test_prog).  The i-th getppid() of target_tgid:
 * i % 4 == 0 or 1 records 10 * i - 100; 2 counts the drop "negative", 3 the drop
 * "unreadable".
 */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

const volatile __u32 target_tgid = 0;

KAGG_HIST_LINEAR(lin, struct kagg_nokey, 1, -100, 10);
KAGG_DROP(negative, false, "a value below 0, left out");
KAGG_DROP(unreadable, true, "a value that could not be read");

__u32 calls = 0;

SEC("tracepoint/syscalls/sys_enter_getppid")
int sdk_bounds_getppid(void *ctx)
{
	__u32 i;

	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	i = calls++;
	if (i % 4 == 2)
		negative__count();
	else if (i % 4 == 3)
		unreadable__count();
	else
		lin__record(NULL, (__u64)(10 * (__s64)i - 100));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
