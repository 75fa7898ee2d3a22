/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The task filters tools share: process ids, thread ids and one cgroup v2
 * directory.  Userspace sets the switches between open and load and fills
 * the maps after load (user/session/session.c: session_tasks_fill); maps a session
 * does not use are sized down to one entry there.
 */
#ifndef KAGG_FILTERS_BPF_H
#define KAGG_FILTERS_BPF_H

#include "maps.bpf.h"

const volatile bool filter_tgid = false;
const volatile bool filter_tid = false;
const volatile bool filter_cgroup = false;

KAGG_ID_SET(tgids);
KAGG_ID_SET(tids);

KAGG_MAP(cgroup, BPF_MAP_TYPE_CGROUP_ARRAY, 1, __u32, __u32);

/* Do the id filters keep this task (tgid/pid as the kernel names them)? */
static __always_inline bool kagg_ids_selected(__u32 tgid, __u32 pid)
{
	if (filter_tgid && !bpf_map_lookup_elem(&tgids, &tgid))
		return false;
	if (filter_tid && !bpf_map_lookup_elem(&tids, &pid))
		return false;
	return true;
}

#endif
