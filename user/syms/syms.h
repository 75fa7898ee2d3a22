/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * syms.h - stack address symbolizer (internal, not exported from libkagg).
 *
 * One struct syms caches the kernel symbol table (/proc/kallsyms, loaded on first kernel
 * lookup), the mappings of every pid looked up (/proc/PID/maps, read on the first lookup for
 * that pid, or when syms__add_pid() is called while the process lives) and the ELF symbols
 * of every mapped file (.symtab + .dynsym, loaded on the first lookup that lands in that file,
 * shared by all pids that map it).
 *
 * Strings returned in struct sym (name, func, module) are owned by the cache and stay valid
 * until syms__free(), or, for a user file's, until syms__forget_gone() drops it.
 * A struct syms is not thread-safe: use one per thread or lock.
 */
#ifndef KAGG_SYMS_H
#define KAGG_SYMS_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct syms; /* cache: kernel symbols + per-pid user symbols */
struct dbg_stats;

/* Where a symbol's name came from (sym.src), in the order a file's sources are tried. */
enum sym_src {
	SYM_SRC_NONE = 0,   /* no name */
	SYM_SRC_KALLSYMS,   /* /proc/kallsyms */
	SYM_SRC_SYMTAB,	    /* the file's .symtab */
	SYM_SRC_DYNSYM,	    /* the file's .dynsym (exported names only) */
	SYM_SRC_MINIDEBUG,  /* the .symtab of its MiniDebugInfo (.gnu_debugdata, xz) */
	SYM_SRC_DEBUGFILE,  /* a separate debug file: by build id, or by .gnu_debuglink */
	SYM_SRC_DEBUGINFOD, /* a debug file from a debuginfod server */
	SYM_SRC_PERFMAP,    /* /tmp/perf-PID.map, written by a JIT */
	SYM_SRC_MAX,
};

struct sym {		    /* result of a lookup */
	const char *name;   /* symbol name as the table has it ("_ZN2ns1C1fEi",
			     * "clock_nanosleep@@GLIBC_2.17"), NULL when unknown */
	uint64_t offset;    /* addr - symbol start (see syms__user() when name is NULL) */
	const char *module; /* kernel module name ("[kernel]" for vmlinux) or the mapped file
			     * path; may be NULL */
	const char *func;   /* the function's readable name: name without its symbol version
			     * ("@@GLIBC_2.17"), C++ and Rust names demangled ("ns::C::f(int)");
			     * NULL when name is */
	int src;	    /* enum sym_src: where name came from */
	int dbg_why;	    /* enum dbg_why (syms/debuginfo.h): the file has no .symtab and
			     * debuginfod was asked for one and did not give it; else 0 */
};

/* New, empty cache.  Loads nothing yet.  NULL + errno (ENOMEM) on failure. */
struct syms *syms__new(void);

/* Free the cache and every string it handed out.  NULL-safe. */
void syms__free(struct syms *s);

/*
 * Kernel address: from /proc/kallsyms (loaded on first use, sorted, binary search).
 * Returns 0 and fills *out, or
 *   -ENOENT  address before the first symbol, or kallsyms shows zeros (unprivileged);
 *   -EINVAL  NULL argument;
 *   -errno   reading /proc/kallsyms failed (-ENOMEM, -EACCES, ...).
 * out->module is "[kernel]" for vmlinux symbols, the bare module name ("ext4", "bpf") otherwise.
 * A failed load is remembered: later calls return the same error without re-reading.
 */
int syms__kernel(struct syms *s, uint64_t addr, struct sym *out);

/*
 * User address in process pid: /proc/PID/maps (cached per pid) + ELF .symtab and .dynsym via
 * libelf (cached per file, keyed by dev/inode/path), handling PIE and shared libraries (file
 * offset -> ELF vaddr through the PT_LOAD program headers), deleted files (opened through
 * /proc/PID/map_files or /proc/PID/root) and [vdso] (read from /proc/PID/mem).
 * Returns 0 and fills *out, or
 *   -ENOENT  no symbol covers addr.  When addr is inside a file mapping, out->module is the
 *            path (as /proc/PID/maps shows it) and out->offset the ELF virtual address of addr
 *            in that file (what addr2line -e module expects; the file offset when the file
 *            could not be read); otherwise module is NULL and offset 0;
 *   -ESRCH   the process is gone (or a zombie) and was never cached;
 *   -EINVAL  NULL argument or pid <= 0;
 *   -errno   reading /proc/PID/maps failed (-EACCES, -ENOMEM, ...).
 * Once a pid's maps are cached they are used even after the process exits; call
 * syms__forget_pid() when a pid may have been reused or has dlopen()ed new objects.
 */
int syms__user(struct syms *s, int pid, uint64_t addr, struct sym *out);

/*
 * File offset off of the ELF image in memory at img (len bytes, writable: libelf may convert it
 * in place): symbolized as syms__user() does once the mapping is found.  How [vdso] is read;
 * tests and the fuzzer feed files through it.  The image is parsed on every call and its symbols
 * are kept until syms__free() (img may be freed on return).  0 and *out filled, -ENOENT (no
 * symbol), -ENOEXEC (not ELF), -EINVAL, -ENOMEM.
 */
int syms__image(struct syms *s, void *img, size_t len, uint64_t off, struct sym *out);

/*
 * Drop the cached maps of pid.  Its files' symbols stay cached, and the strings already
 * returned valid, until a syms__forget_gone() that drops a process finds no cached
 * process mapping them.
 */
void syms__forget_pid(struct syms *s, int pid);

/*
 * Keep the cache to the processes that may still be looked up: drop the maps of every process
 * that was already gone at the previous call (it had no event since, so the lookups made
 * between the two calls were its last), and mark those gone now.  Call it after a batch of
 * lookups that covered every event up to the batch (a snapshot that reset its aggregates).
 * When it dropped any, it then drops the symbols of every file no cached process maps any
 * more (a long run sees binaries come and go too), and the strings returned for them.
 * Returns how many processes were dropped.
 */
size_t syms__forget_gone(struct syms *s);

/* What the debuginfod servers were asked and how they answered (zeros when not in use). */
void syms__dbg_stats(const struct syms *s, struct dbg_stats *st);

/* How many files (executables, libraries, [vdso]) the cache holds. */
size_t syms__nr_files(const struct syms *s);

/* Has process pid exited (and been reaped)?  EPERM means alive, someone else's. */
static inline bool syms_pid_gone(int pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

/*
 * Capture now, while pid lives, what its later lookups need: its mappings (read again when
 * cached: call it after an exec) and the symbols of the files that could not be opened by path
 * once it is gone ([vdso], deleted or replaced files, other mount namespaces: read through
 * /proc/PID).  Files still reachable by path load on their first lookup, as usual.
 * 0, or -ESRCH (gone, or a zombie), -EINVAL, -errno (reading /proc/PID/maps).  A file that
 * fails to load is not an error here: its lookups return -ENOENT with the module named.
 */
int syms__add_pid(struct syms *s, int pid);

/*
 * Cached mappings may be out of date (a library dlopen()ed since they were read): from now on,
 * the first lookup of each pid that falls outside its known mappings reads them again if the
 * process still lives (and keeps the old ones if it does not).  Call it once per batch of
 * lookups, e.g. per snapshot.
 */
void syms__recheck_maps(struct syms *s);

#define SYM_ADDRS (1u << 0) /* sym__format: the address, not just the function */

/*
 * Format sym into buf, by function (flags 0): "func" when the name is known, "[file]" (the
 * module's base name) when only the module is, "[unknown]" otherwise; with SYM_ADDRS:
 * "func+0xoff", "module+0xoff", "[unknown] 0xADDR".  func is sym->func, or sym->name when func
 * is NULL.  Truncates to len (always NUL-terminated when len > 0).  sym may be NULL (unknown).
 * Returns buf.
 */
const char *sym__format(const struct sym *sym, uint64_t addr, unsigned int flags, char *buf,
			size_t len);

/*
 * The GNU build-id of the ELF file at path, as lower-case hex into hex (len >= 2 * bytes + 1).
 * 0, -ENOENT (no build-id note, or not ELF), -ENAMETOOLONG, -errno (open).
 */
int syms_elf_build_id(const char *path, char *hex, size_t len);

/*
 * The readable name of a symbol: without its symbol version ("clock_nanosleep@@GLIBC_2.17"
 * names the binding, not the function: "clock_nanosleep"), demangled (demangle_name()).
 * malloc'd, or NULL when that is name itself (or on ENOMEM: use name as it is).
 */
char *syms_func_name(const char *name);

#endif /* KAGG_SYMS_H */
