/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The map shapes kagg's BPF programs share, one macro per shape, each
 * declaring one map NAME (BTF-defined, in ".maps"); agg.bpf.h builds the
 * maps every tool has out of them.  Userspace may resize any of them
 * between open and load (bpf_map__set_max_entries), most often down to one
 * entry when a session does not use it.
 */
#ifndef KAGG_MAPS_BPF_H
#define KAGG_MAPS_BPF_H

/* A map of TYPE from KEY to VALUE, N entries (an array) or N at most (a hash). */
#define KAGG_MAP(NAME, TYPE, N, KEY, VALUE) KAGG_MAP_FLAGS(NAME, TYPE, N, 0, KEY, VALUE)
#define KAGG_MAP_FLAGS(NAME, TYPE, N, FLAGS, KEY, VALUE) \
	struct {                                         \
		__uint(type, TYPE);                      \
		__uint(max_entries, N);                  \
		__uint(map_flags, FLAGS);                \
		__type(key, KEY);                        \
		__type(value, VALUE);                    \
	} NAME SEC(".maps")

/* Per-CPU array of N VALUEs; per-CPU hash of at most N KEY -> VALUE. */
#define KAGG_PERCPU_ARRAY(NAME, N, VALUE) KAGG_MAP(NAME, BPF_MAP_TYPE_PERCPU_ARRAY, N, __u32, VALUE)
#define KAGG_PERCPU_HASH(NAME, N, KEY, VALUE) \
	KAGG_MAP(NAME, BPF_MAP_TYPE_PERCPU_HASH, N, KEY, VALUE)

/*
 * One array of N VALUEs, one hash of at most N KEY -> VALUE, shared by every
 * CPU: what grows with keys (a per-CPU copy of each would grow with CPUs x
 * keys).  Programs add to their values with __sync_fetch_and_add().
 */
#define KAGG_SHARED_ARRAY(NAME, N, VALUE) KAGG_MAP(NAME, BPF_MAP_TYPE_ARRAY, N, __u32, VALUE)
#define KAGG_SHARED_HASH(NAME, N, KEY, VALUE) KAGG_MAP(NAME, BPF_MAP_TYPE_HASH, N, KEY, VALUE)

/* A set of ids userspace fills (tgids, tids): __u32 -> __u8, 1024 at most. */
#define KAGG_ID_SET(NAME) KAGG_MAP(NAME, BPF_MAP_TYPE_HASH, 1024, __u32, __u8)

/* Stack traces: 16384 stacks of KAGG_MAX_STACK frames, by __u32 id. */
#define KAGG_STACKMAP(NAME)                                         \
	struct {                                                    \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);             \
		__uint(max_entries, 16384);                         \
		__uint(key_size, sizeof(__u32));                    \
		__uint(value_size, KAGG_MAX_STACK * sizeof(__u64)); \
	} NAME SEC(".maps")

/* Task local storage of VALUE (created on first use, freed with the task). */
#define KAGG_TASK_STORAGE(NAME, VALUE) \
	KAGG_MAP_FLAGS(NAME, BPF_MAP_TYPE_TASK_STORAGE, 0, BPF_F_NO_PREALLOC, int, VALUE)

/*
 * Where a tool keeps a per-task VALUE between two events: start_store, task
 * local storage (tp_btf), or start_hash, keyed by thread id, for the raw_tp
 * fallback, which cannot use task storage (userspace sizes the one not in
 * use down).
 */
#define KAGG_START_MAPS(VALUE)                 \
	KAGG_TASK_STORAGE(start_store, VALUE); \
	KAGG_MAP(start_hash, BPF_MAP_TYPE_HASH, 32768, __u32, VALUE)

#endif
