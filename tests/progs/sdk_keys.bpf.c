// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sdk_keys: a key of every kind the loader prints by name (test_prog): an enum,
 * a string, a pid, a cgroup id, a kernel stack, a nested struct; counted per
 * getppid() of target_tgid.  ro_limit is const without volatile: no tunable.
 * On the raw sys_enter tracepoint (its BTF flavour): the classic syscall
 * tracepoints hand bpf_get_stackid() the user registers of the system call
 * before 6.x, so a kernel stack there is empty (5.10: -EFAULT).
 */
#include "vmlinux.h"
#include "sdk/kagg.bpf.h"

const volatile __u32 target_tgid = 0;
const volatile char label[8] = "hello";
const __u32 ro_limit = 5;

#if defined(__TARGET_ARCH_arm64)
#define GETPPID_NR 173
#else
#define GETPPID_NR 110 /* x86_64 */
#endif

enum sdk_color { SDK_RED = 1, SDK_GREEN = 2 };

struct sdk_inner {
	__u16 port;
	__u16 __pad;
};

struct sdk_key {
	enum sdk_color color;
	char name[8];
	kagg_pid_t pid;
	kagg_cgroup_t cg;
	kagg_kstack_t stack;
	__u32 __pad;
	struct sdk_inner in;
	__u32 __pad2;
};

KAGG_COUNT(sdk_calls, struct sdk_key, 64);

SEC("tp_btf/sys_enter")
int BPF_PROG(sdk_getppid, struct pt_regs *regs, long id)
{
	struct sdk_key k = {};
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	int i;

	if (tgid != target_tgid || id != GETPPID_NR)
		return 0;
	k.color = ro_limit > 3 ? SDK_GREEN : SDK_RED;
	for (i = 0; i < 8; i++)
		k.name[i] = label[i];
	k.pid = tgid;
	k.cg = bpf_get_current_cgroup_id();
	k.stack = kagg_kstack(ctx);
	k.in.port = 80;
	sdk_calls__record(&k, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
