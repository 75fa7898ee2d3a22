// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Latency of a function in a user binary: from its entry (uprobe) to its
 * return (uretprobe) in the same thread, one histogram per process.
 *
 *	kagg run ulat.bpf.o --binary /usr/bin/myapp --func handle_request -i 1
 */
#include <kagg/bpf/vmlinux.h>
#include <kagg/bpf/kagg.bpf.h>

struct proc {
	kagg_pid_t pid;
};

KAGG_PAIR(call, 10240);
KAGG_HIST_TIME(latency, struct proc, 1024);

SEC("uprobe")
int BPF_UPROBE(enter)
{
	call__start();
	return 0;
}

SEC("uretprobe")
int BPF_URETPROBE(ret)
{
	struct proc k = {};
	__u64 ns;

	if (!call__stop(&ns))
		return 0;
	k.pid = bpf_get_current_pid_tgid() >> 32;
	latency__record(&k, ns);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
