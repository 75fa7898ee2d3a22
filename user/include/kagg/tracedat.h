/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/tracedat.h - trace-cmd `trace.dat` files, version 6: a writer that
 * stores the reference ring buffer's sub-buffer images with the header pages,
 * event formats and saved cmdlines (so `trace-cmd report` and libtraceevent
 * read them), and a reader for those files and simple v6 files written by
 * trace-cmd (little-endian, 64-bit, flyrecord).  See docs/tracedat.md.
 *
 * Thread-safety: a writer or reader handle is used by one thread at a time.
 */
#ifndef KAGG_TRACEDAT_H
#define KAGG_TRACEDAT_H

#include <stdio.h>

#include <kagg/common.h>
#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ writer */

struct kagg_tracedat_writer_opts {
	size_t sz;
	size_t page_size; /* sub-buffer size of the pages added: 4096 << 0..7; 0: 4096 */
	int nr_cpus;	  /* CPU blocks in the file, >= 1 (required) */
	const struct kagg_rb_events *events; /* formats stored; NULL: none.  Events of
					      * system "ftrace" go to the ftrace section.
					      * Read at __finish(), so keep it alive. */
	const char *cmdlines;	 /* initial saved_cmdlines text, "PID COMM\n" lines; NULL: none */
	const char *trace_clock; /* clock name stored as a TRACECLOCK option ("mono",
				  * "local", ...); NULL: no option (trace-cmd assumes local) */
	const char *tmp_dir;	 /* where pages are spooled when path is not a regular
				  * file; NULL: $TMPDIR or /tmp */
};
#define kagg_tracedat_writer_opts__last_field tmp_dir

struct kagg_tracedat_writer;

/*
 * A writer for `path`, which is never removed or truncated.  A regular file
 * (or a new one; a symlink is followed) is replaced by rename: the pages go
 * to a working file created beside it, ".NAME.XXXXXX", itself a valid
 * trace.dat at every moment, renamed over path by the first __add_page();
 * __finish() replaces it with the compact file.  Any other path (a FIFO, a
 * device, /dev/stdout on a pipe) is opened for writing here and gets the
 * whole file at __finish(), the pages being spooled in tmp_dir meanwhile.
 * See docs/tracedat.md, "Writing safely".  NULL with errno EINVAL (bad
 * opts: nr_cpus < 1, page_size not 4096 << 0..7, unparsable cmdlines),
 * EISDIR, ENOENT (a missing directory, a dangling symlink), ENOMEM, or the
 * error of creating or writing the working file (EACCES: the directory is
 * not writable; ENOSPC).
 */
KAGG_API struct kagg_tracedat_writer *
kagg_tracedat_writer__new(const char *path, const struct kagg_tracedat_writer_opts *opts);

/*
 * Remember comm for pid in the saved cmdlines (a later call for the same pid
 * replaces it; comm is cut at 15 bytes, as the kernel's TASK_COMM_LEN).  It
 * is in the working file at once while its reserved 256 KiB last, and in
 * the final file in any case.  0, -EINVAL (pid < 0, comm NULL/empty or
 * holding a newline), -ENOMEM, or -errno of writing it.
 */
KAGG_API int kagg_tracedat_writer__add_cmdline(struct kagg_tracedat_writer *w, int pid,
					       const char *comm);

/*
 * Append one sub-buffer image (trace_pipe_raw / kagg_rb__read_page() layout)
 * to cpu's block.  size <= page_size; a shorter image is zero-filled to
 * page_size.  Pages of a CPU must come in the order they were read.  When
 * it returns 0 the page is in the file (a killed process leaves it there),
 * and after the first one the file is at path.  0, -EINVAL (cpu out of
 * range, commit size beyond the image, or after __finish()), -E2BIG (size
 * > page_size), -EIO/-ENOSPC writing, or the error of renaming the working
 * file over path.
 */
KAGG_API int kagg_tracedat_writer__add_page(struct kagg_tracedat_writer *w, int cpu,
					    const void *page, size_t size);

/*
 * Drain rb with kagg_rb__read_page() on every CPU (CPU i of rb goes to block
 * i) and add the pages.  rb's sub-buffer size must equal page_size and its CPU
 * count be <= nr_cpus.  Returns the number of pages added, or -EINVAL or an
 * error of __add_page().
 */
KAGG_API int kagg_tracedat_writer__add_rb(struct kagg_tracedat_writer *w, struct kagg_rb *rb);

/* Pages added so far to cpu (cpu < 0: all CPUs). */
KAGG_API uint64_t kagg_tracedat_writer__nr_pages(const struct kagg_tracedat_writer *w, int cpu);

/*
 * Write the compact file: header, formats, cmdlines, options, flyrecord
 * offsets and every CPU's pages, back to back, each CPU block aligned to
 * page_size; to a new ".NAME.XXXXXX" renamed over path (or to the stream).
 * Once only; the writer then only accepts __free().  0, -EINVAL (called
 * twice), -ENOMEM, -EIO/-ENOSPC: path then holds what it held (the working
 * file with every page, once one was added; else the file it was before).
 */
KAGG_API int kagg_tracedat_writer__finish(struct kagg_tracedat_writer *w);

/*
 * Free the writer.  Without __finish(), path keeps every page added (the
 * working file) or, when none was, what it was before; only the working
 * file nobody saw is removed.  NULL is fine.
 */
KAGG_API void kagg_tracedat_writer__free(struct kagg_tracedat_writer *w);

/* ------------------------------------------------------------------ reader */

struct kagg_tracedat_opts {
	size_t sz;
	bool old_flags; /* common_flags 0x02 = IRQS_NOSUPPORT (kernels < 6.13) when printing */
	uint64_t *error_offset; /* out, optional: when __open() read the file but it did not
				 * parse, the file offset of the part that did not */
};
#define kagg_tracedat_opts__last_field error_offset

struct kagg_tracedat;

/*
 * Open and parse a v6 trace.dat (the file is mapped read-only).  Event
 * formats the registry cannot parse are skipped and counted
 * (kagg_tracedat__bad_formats()).  NULL with errno: EINVAL (not a trace.dat,
 * truncated, malformed, bad opts), ENOTSUP (another version, big-endian,
 * 32-bit, a latency file, compressed), EISDIR (a directory), ESPIPE (not a
 * regular file: a FIFO, a socket or a device, which cannot be mapped), ENOMEM,
 * or the error of opening it;
 * opts->error_offset then says where, when the file was read.  Every length
 * and count in the file is checked against the bytes left; nothing is
 * allocated that the file's size cannot hold.
 */
KAGG_API struct kagg_tracedat *kagg_tracedat__open(const char *path,
						   const struct kagg_tracedat_opts *opts);
/* NULL is fine. */
KAGG_API void kagg_tracedat__free(struct kagg_tracedat *t);

KAGG_API int kagg_tracedat__nr_cpus(const struct kagg_tracedat *t);
KAGG_API size_t kagg_tracedat__page_size(const struct kagg_tracedat *t);
/* The event formats of the file, owned by t. */
KAGG_API const struct kagg_rb_events *kagg_tracedat__events(const struct kagg_tracedat *t);
KAGG_API int kagg_tracedat__bad_formats(const struct kagg_tracedat *t);
/* Saved comm of pid, or NULL. */
KAGG_API const char *kagg_tracedat__comm(const struct kagg_tracedat *t, int pid);
/* The TRACECLOCK option's current clock ("mono"), or NULL when absent. */
KAGG_API const char *kagg_tracedat__trace_clock(const struct kagg_tracedat *t);
/* File offset and size of cpu's block.  0 or -EINVAL. */
KAGG_API int kagg_tracedat__cpu_data(const struct kagg_tracedat *t, int cpu, uint64_t *offset,
				     uint64_t *size);

/*
 * Next event of all CPUs merged in timestamp order (ties: lower CPU first),
 * with ev->cpu set and ev->missed from the page's RB_MISSED_* flags on the
 * first event after a loss.  ev->data points into the mapped file and stays
 * valid until kagg_tracedat__free().  0, -ENOENT at the end, -EINVAL when a
 * page or record is malformed (kagg_tracedat__error_offset() says where; the
 * rest of that CPU is skipped, later calls go on with the other CPUs) or
 * ev->sz is too small.  The error comes in its place in time: after every
 * event, of any CPU, older than the damaged CPU's last good one.
 */
KAGG_API int kagg_tracedat__next(struct kagg_tracedat *t, struct kagg_rb_event *ev);
/*
 * File offset of the malformed page commit word or record behind the last
 * -EINVAL of __next()/__fprint(), or UINT64_MAX when there was none.
 */
KAGG_API uint64_t kagg_tracedat__error_offset(const struct kagg_tracedat *t);
/* Start reading again from the first event. */
KAGG_API void kagg_tracedat__rewind(struct kagg_tracedat *t);

/*
 * Print ev as a line of the kernel's `trace` file (comm-pid [cpu] flags ts:
 * name: fields) with comms from the saved cmdlines.  As
 * kagg_rb_events__fprint_event().
 */
KAGG_API int kagg_tracedat__fprint_event(const struct kagg_tracedat *t, FILE *f,
					 const struct kagg_rb_event *ev);
/*
 * Rewind, then print every event (cpu >= 0: only that CPU's) in timestamp
 * order.  A loss is printed first as "CPU:N [LOST M EVENTS]" ("[LOST EVENTS]"
 * when the count is unknown).  Returns the number of events printed, or
 * -EINVAL (bad cpu, malformed page or record: the lines before it are printed,
 * kagg_tracedat__error_offset() says where).
 */
KAGG_API long kagg_tracedat__fprint(struct kagg_tracedat *t, FILE *f, int cpu);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_TRACEDAT_H */
