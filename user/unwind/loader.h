/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * loader.h - internal: the unwind tables of the processes a session sees, in its BPF maps.
 *
 *	l = unwl_new(skel->maps.unw_rows, skel->maps.unw_files, skel->maps.unw_procs);
 *	unwl_add_pid(l, pid);   // when the process first shows up (its process note)
 *
 * unwl_add_pid() is called from one thread at a time (the session's loading thread);
 * unwl_forget_pid() and unwl_get_stats() from any.
 *
 * Each executable file mapping of the process gets its file's table, built once per file
 * (keyed by its build id, or device and inode without one) and shared by every process
 * that maps it: its rows go into unw_rows (an mmap()ed array, filled in place), its extent
 * into unw_files; the process's mappings, with the file key and load bias of each, into
 * unw_procs.  A table that does not fit in what is left of unw_rows is not loaded (counted
 * in full); its frames are walked by frame pointer (auto) or end the walk (table).
 */
#ifndef KAGG_UNWIND_LOADER_H
#define KAGG_UNWIND_LOADER_H

#include <stdint.h>

struct bpf_map;
struct unwl;

struct unwl_stats {
	uint64_t procs;	     /* processes whose mappings were loaded */
	uint64_t files;	     /* tables loaded */
	uint64_t rows;	     /* rows in use (of unw_rows' max_entries) */
	uint64_t bytes;	     /* their bytes */
	uint64_t full;	     /* files whose table did not fit */
	uint64_t procs_full; /* processes whose mappings did not fit in unw_procs */
	uint64_t no_cfi;     /* files without call frame information, or unreadable */
	uint64_t maps_over;  /* executable mappings past UNW_MAX_MAPS in one process */
	uint64_t build_ns;   /* time spent building tables */
	uint64_t cfi_bytes;  /* .eh_frame + .debug_frame bytes compiled */
};

/* NULL + errno: ENOMEM, or mmap()'s error on unw_rows. */
struct unwl *unwl_new(struct bpf_map *rows, struct bpf_map *files, struct bpf_map *procs);
void unwl_free(struct unwl *l);
/* Load the tables of pid's executable mappings.  0, -ESRCH (gone), -errno. */
int unwl_add_pid(struct unwl *l, int pid);
/* Forget pid's mappings (it exited). */
void unwl_forget_pid(struct unwl *l, int pid);
/* The stats as of the end of the last unwl_add_pid(). */
void unwl_get_stats(struct unwl *l, struct unwl_stats *st);

#endif
