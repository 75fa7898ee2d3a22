/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Process notes: tell userspace when a process first shows up in a user stack, so it reads
 * the process's maps while the process lives (a process that exits before the snapshot is
 * symbolized then all the same; perf gets the same from its mmap events).
 *
 * A process is new to a CPU with each address space (an exec gives it a new mm) and each
 * size of its executable mappings (mm->exec_vm): an exec maps the program after the new mm
 * exists, and the dynamic loader maps the libraries after that, so maps read at the first
 * event of a process can miss what its later stacks run in.  Each change is noted again,
 * and userspace reads the maps again.
 *
 * The hot path is one per-CPU array lookup and three compares: each CPU remembers, in a
 * small direct-mapped table indexed by tgid, the (tgid, mm, exec size) it noted last in that
 * slot.  Only a miss reserves a record in `proc_notes` (woken at once: the process may not
 * live long).  A process is noted again by another CPU, after an exec or a new executable
 * mapping, or when another process took its slot: userspace drops the repeats.  A note that
 * finds the ring full is not marked as sent, so the process's next event tries again; each
 * such failure is counted in proc_notes_lost.
 */
#ifndef KAGG_PROC_NOTES_BPF_H
#define KAGG_PROC_NOTES_BPF_H

#include "shared/common.h"
#include "maps.bpf.h"

#define KAGG_PROC_SLOTS 256 /* per CPU, a power of two */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024); /* userspace shrinks it to a page when unused */
} proc_notes SEC(".maps");

struct kagg_proc_seen {
	__u64 mm[KAGG_PROC_SLOTS];
	__u32 tgid[KAGG_PROC_SLOTS];
	__u32 exec_pages[KAGG_PROC_SLOTS];
};

KAGG_MAP(proc_seen, BPF_MAP_TYPE_PERCPU_ARRAY, 1, __u32, struct kagg_proc_seen);

__u64 proc_notes_lost = 0;

/* Note process tgid (address space mm, exec_pages executable) unless this CPU did already. */
static __always_inline void kagg_note_proc(__u32 tgid, __u64 mm, __u32 exec_pages)
{
	__u32 zero = 0, i = tgid & (KAGG_PROC_SLOTS - 1);
	struct kagg_proc_seen *ps = bpf_map_lookup_elem(&proc_seen, &zero);
	struct kagg_proc_note *n;

	if (!ps || (ps->tgid[i] == tgid && ps->mm[i] == mm && ps->exec_pages[i] == exec_pages))
		return;
	n = bpf_ringbuf_reserve(&proc_notes, sizeof(*n), 0);
	if (!n) {
		__sync_fetch_and_add(&proc_notes_lost, 1);
		return;
	}
	ps->tgid[i] = tgid;
	ps->mm[i] = mm;
	ps->exec_pages[i] = exec_pages;
	n->tgid = tgid;
	n->exec_pages = exec_pages;
	n->mm = mm;
	bpf_ringbuf_submit(n, 0);
}

/*
 * Note task t of process tgid: t is a BTF pointer when btf (tp_btf, or the current task),
 * else read through CO-RE probe reads.
 */
static __always_inline void kagg_note_task(__u32 tgid, struct task_struct *t, const bool btf)
{
	struct mm_struct *mm = btf ? t->mm : BPF_CORE_READ(t, mm);
	__u32 exec_pages;

	if (btf)
		exec_pages = mm ? mm->exec_vm : 0;
	else
		exec_pages = BPF_CORE_READ(mm, exec_vm);
	kagg_note_proc(tgid, (__u64)mm, exec_pages);
}

#endif /* KAGG_PROC_NOTES_BPF_H */
