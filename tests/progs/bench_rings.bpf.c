// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Benchmark only (tests/bench/bench_stream.c): one shared BPF ring buffer
 * against one ring buffer per CPU (an array of ring buffer maps), for the
 * same 88-byte sched_switch record as offcpu's streaming program (struct
 * offcpu_rec), with the same watermark wakeups.  Userspace loads one of the
 * two programs, sizes and fills the maps.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "shared/offcpu.h"

const volatile __u64 wake_bytes = 0;
__u32 armed = 0;

struct cnt {
	__u64 seen, dropped;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cnt);
} cnt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} shared_ring SEC(".maps");

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* userspace resizes the template */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* userspace: one per possible CPU */
	__type(key, __u32);
	__array(values, struct ring);
} cpu_rings SEC(".maps");

static __always_inline void fill(struct offcpu_rec *r, struct task_struct *prev,
				 struct task_struct *next, __u32 cpu, __u64 seq)
{
	r->ts = bpf_ktime_get_ns();
	r->seq = seq;
	r->cpu = cpu;
	r->gen = 0;
	r->prev_pid = prev->pid;
	r->prev_tgid = prev->tgid;
	r->next_pid = next->pid;
	r->next_tgid = next->tgid;
	r->prev_prio = prev->prio;
	r->next_prio = next->prio;
	r->prev_state = 0;
	r->selected = 1;
	r->pad[0] = r->pad[1] = r->pad[2] = 0;
	bpf_probe_read_kernel(r->prev_comm, sizeof(r->prev_comm), prev->comm);
	bpf_probe_read_kernel(r->next_comm, sizeof(r->next_comm), next->comm);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(rec_shared, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct offcpu_rec *r;
	__u32 zero = 0;
	struct cnt *c;

	c = bpf_map_lookup_elem(&cnt, &zero);
	if (!c || !armed)
		return 0;
	c->seen++;
	r = bpf_ringbuf_reserve(&shared_ring, sizeof(*r), 0);
	if (!r) {
		c->dropped++;
		return 0;
	}
	fill(r, prev, next, bpf_get_smp_processor_id(), c->seen);
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&shared_ring, BPF_RB_AVAIL_DATA) >= wake_bytes
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(rec_percpu, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct offcpu_rec *r;
	struct cnt *c;
	void *ring;

	c = bpf_map_lookup_elem(&cnt, &zero);
	if (!c || !armed)
		return 0;
	c->seen++;
	ring = bpf_map_lookup_elem(&cpu_rings, &cpu);
	if (!ring) {
		c->dropped++;
		return 0;
	}
	r = bpf_ringbuf_reserve(ring, sizeof(*r), 0);
	if (!r) {
		c->dropped++;
		return 0;
	}
	fill(r, prev, next, cpu, c->seen);
	bpf_ringbuf_submit(r, bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wake_bytes
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
