// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Block I/O latency by disk and operation: from a request's issue to its
 * completion, one histogram per (device, operation).
 *
 *	kagg run biolat.bpf.o -i 1 --unit usecs
 */
#include <kagg/bpf/vmlinux.h>
#include <kagg/bpf/kagg.bpf.h>

struct disk_op {
	kagg_dev_t dev; /* printed major:minor */
	enum req_op op; /* printed by name: REQ_OP_READ... */
};

KAGG_PAIR(io, 65536);
KAGG_HIST_TIME(biolat, struct disk_op, 1024);

static __always_inline int issue(struct request *rq)
{
	io__start_id((__u64)rq);
	return 0;
}

static __always_inline int complete(struct request *rq)
{
	struct disk_op k = {};
	struct gendisk *d;
	__u64 ns;

	if (!io__stop_id((__u64)rq, &ns))
		return 0;
	d = BPF_CORE_READ(rq, q, disk);
	k.dev = BPF_CORE_READ(d, major) << 20 | BPF_CORE_READ(d, first_minor);
	k.op = BPF_CORE_READ(rq, cmd_flags) & 0xff; /* REQ_OP_MASK */
	biolat__record(&k, ns);
	return 0;
}

KAGG_TP(issue, "block_rq_issue", issue(rq), struct request *rq);
KAGG_TP(complete, "block_rq_complete", complete(rq), struct request *rq, blk_status_t error,
	unsigned int nr_bytes);

char LICENSE[] SEC("license") = "Dual BSD/GPL";
