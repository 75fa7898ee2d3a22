// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sizes of the reads that returned data, a log2 histogram per command
 * (bpftrace's `@[comm] = hist(args->ret)` on sys_exit_read).
 *
 *	kagg run readsize.bpf.o -d 5 [--set comm=nginx]
 */
#include <kagg/bpf/vmlinux.h>
#include <kagg/bpf/kagg.bpf.h>

const volatile char comm[16] = ""; /* only this command ("": all) */

struct cmd {
	char comm[16];
};

KAGG_HIST_LOG2(bytes, struct cmd, 10240);

SEC("tracepoint/syscalls/sys_exit_read")
int read_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct cmd k = {};
	int i;

	if (ctx->ret <= 0)
		return 0;
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	if (comm[0]) {
		for (i = 0; i < 16 && comm[i]; i++)
			if (k.comm[i] != comm[i])
				return 0;
		if (i < 16 && k.comm[i])
			return 0;
	}
	bytes__record(&k, ctx->ret);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
