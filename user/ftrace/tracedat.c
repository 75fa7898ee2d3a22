// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * trace-cmd trace.dat version 6: writer and reader.  Written from the format
 * description (docs/ftrace-format.md, "trace.dat, version 6"; trace-cmd's
 * trace-cmd.dat.v6 manual page); no trace-cmd code.
 *
 *   magic 17 08 44 "tracing" "6\0" | endian u8 | long size u8 | page size u32
 *   "header_page\0"  u64 len, text     "header_event\0" u64 len, text
 *   u32 n ftrace formats  { u64 len, text }
 *   u32 n systems { "sys\0" u32 n { u64 len, text } }
 *   u32 len kallsyms | u32 len printk formats | u64 len saved_cmdlines
 *   u32 nr_cpus
 *   ["options  \0" { u16 id, u32 size, data } u16 0]
 *   "flyrecord\0" nr_cpus x { u64 offset, u64 size } [u64 len, trace_clock]
 *   pad to page size | CPU 0 pages | CPU 1 pages | ...
 *
 * Writer: never removes or truncates the path it is given, and a killed
 * writer leaves a valid file.  Pages go, as they are added, into a working
 * file that is a trace.dat at every moment (below, "The working file"):
 * created unnamed in path's directory (O_TMPFILE; on a filesystem without
 * it, beside path as ".NAME.XXXXXX"), given path's name by the first page,
 * so from then on path is the recording and nothing lies elsewhere; before
 * that path is untouched, and a writer that fails or is killed leaves
 * nothing.  __finish() writes the compact file (the layout above, CPU blocks
 * back to back) to another such file and renames it over path.  A path
 * that is not a regular file (FIFO, device) gets the compact file written
 * to it at __finish(); its working file is an unlinked file in tmp_dir.
 * Memory stays flat however long the recording.  Integers are written
 * little-endian byte by byte, whatever the host.
 *
 * Reader: maps the file, parses the header into a kagg_rb_events registry,
 * and merges the CPUs' records by timestamp with one kagg_rb_page_iter per
 * CPU.  Only little-endian files with 8-byte longs (what x86_64 and arm64
 * kernels write), flyrecord data, top-level buffer: instance buffers
 * (BUFFER options) and v7 (sectioned, compressed) files are not read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kagg/tracedat.h>
#include "util/array.h"
#include "util/opts.h"
#include "ftrace/rb_events_internal.h"

#define TD_OPT_DONE 0
#define TD_OPT_TRACECLOCK 4
#define TD_COMM_LEN 16

static const char td_magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* ------------------------------------------------------------ saved cmdlines */

struct td_comm {
	int pid;
	char comm[TD_COMM_LEN];
};

/* pid -> comm, sorted by pid. */
struct td_cmdlines {
	struct td_comm *v;
	size_t nr, cap;
};

static size_t cl_find(const struct td_cmdlines *cl, int pid, bool *found)
{
	size_t lo = 0, hi = cl->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cl->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < cl->nr && cl->v[lo].pid == pid;
	return lo;
}

static int cl_set(struct td_cmdlines *cl, int pid, const char *comm, size_t len)
{
	bool found;
	size_t i = cl_find(cl, pid, &found);

	if (!found) {
		if (GROW_ARRAY(cl->v, cl->cap, cl->nr, 64))
			return -ENOMEM;
		memmove(&cl->v[i + 1], &cl->v[i], (cl->nr - i) * sizeof(*cl->v));
		cl->nr++;
		cl->v[i].pid = pid;
	}
	if (len > TD_COMM_LEN - 1)
		len = TD_COMM_LEN - 1;
	memcpy(cl->v[i].comm, comm, len);
	cl->v[i].comm[len] = 0;
	return 0;
}

static const char *cl_get(const struct td_cmdlines *cl, int pid)
{
	bool found;
	size_t i = cl_find(cl, pid, &found);

	return found ? cl->v[i].comm : NULL;
}

struct cl_line {
	struct td_comm c;
	size_t seq; /* line number: of two lines for one pid the later wins */
};

static int cl_line_cmp(const void *a, const void *b)
{
	const struct cl_line *x = a, *y = b;

	if (x->c.pid != y->c.pid)
		return x->c.pid < y->c.pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Parse saved_cmdlines text ("PID COMM\n" lines; COMM may hold spaces) into
 * cl: collected, sorted once and merged, so n lines cost O(n log n) whatever
 * their order.  strict: a malformed line is -EINVAL; otherwise it is skipped.
 */
static int cl_parse(struct td_cmdlines *cl, const char *text, size_t len, bool strict)
{
	const char *p = text, *end = text + len;
	struct cl_line *v = NULL;
	size_t n = 0, cap = 0, i;
	int err = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *q = p;
		long pid = 0;
		bool digits = false;

		while (q < eol && *q >= '0' && *q <= '9' && pid < (1L << 30)) {
			pid = pid * 10 + (*q++ - '0');
			digits = true;
		}
		if (eol == p || (eol == p + 1 && *p == '\r')) {
			/* empty line */
		} else if (!digits || q >= eol - 1 || *q != ' ' ||
			   memchr(q + 1, 0, (size_t)(eol - q - 1))) {
			if (strict) {
				err = -EINVAL;
				goto cleanup;
			}
		} else {
			size_t l = (size_t)(eol - q - 1);

			err = GROW_ARRAY(v, cap, n, 64);
			if (err)
				goto cleanup;
			if (l > TD_COMM_LEN - 1)
				l = TD_COMM_LEN - 1;
			v[n].c.pid = (int)pid;
			memcpy(v[n].c.comm, q + 1, l);
			v[n].c.comm[l] = 0;
			v[n].seq = n;
			n++;
		}
		p = eol + (nl ? 1 : 0);
	}
	if (!n)
		goto cleanup;
	qsort(v, n, sizeof(*v), cl_line_cmp);
	for (i = 0; i < n; i++) {
		if (i + 1 < n && v[i + 1].c.pid == v[i].c.pid)
			continue; /* a later line for this pid follows */
		err = cl_set(cl, v[i].c.pid, v[i].c.comm, strlen(v[i].c.comm));
		if (err)
			goto cleanup;
	}
cleanup:
	free(v);
	return err;
}

static void cl_free(struct td_cmdlines *cl)
{
	free(cl->v);
	memset(cl, 0, sizeof(*cl));
}

static const char *cl_comm_cb(void *ctx, int pid)
{
	return cl_get(ctx, pid);
}

/* ------------------------------------------------------------ writer */

/*
 * The working file: a valid trace.dat at every moment, so that a killed
 * writer leaves one.  After the usual header, with room reserved for the
 * saved cmdlines, each CPU's pages sit in a region of their own:
 *
 *   header ... | u64 cap, cmdlines text, '\n' up to cap | nr_cpus, options,
 *   "flyrecord", nr_cpus x {u64 offset, u64 size} (16-aligned), clock
 *   | CPU a: region of 64 pages | CPU b: region | CPU a: region of 128 ...
 *
 * A page is written past its CPU's published size, then the size is
 * published: 8 aligned bytes, one write that a killed process either made
 * or did not (the kernel checks for a fatal signal only between the
 * blocks of a write).  A full region is copied to one twice as large at
 * the end of the file, whose offset and size are published together (16
 * aligned bytes), and the old one is punched out.  A cmdline is appended
 * to the reserved text, never across a 4 KiB block, so a kill leaves whole
 * lines; the readers skip the empty ones; one that does not fit reaches
 * only the final file.
 */
#define CK_CMDLINES (256 * 1024)
#define CK_REGION_PAGES 64
#define CK_BLOCK 4096

struct td_region {
	uint64_t off, cap, used; /* bytes; cap 0: none yet */
};

struct kagg_tracedat_writer {
	char *target; /* the regular file replaced (symlinks resolved), or NULL */
	int out_fd;   /* a path that is not a regular file, opened at __new() */
	size_t page_size;
	int nr_cpus;
	const struct kagg_rb_events *events;
	char *trace_clock;
	struct td_cmdlines cl;
	/* the working file */
	int ck_fd;
	char *ck_path;	   /* its name while ours alone (NULL: none, renamed, unlinked) */
	bool ck_published; /* renamed over target */
	uint64_t ck_table; /* offset of the flyrecord table */
	uint64_t ck_end;   /* where the next region goes */
	uint64_t cl_off, cl_cap, cl_used; /* the reserved cmdlines text */
	struct td_region *reg;		  /* per CPU */
	uint64_t *pages;		  /* per CPU */
	uint8_t *page;			  /* page_size bytes: an image zero-filled */
	/* the regular file replaced, whose mode and owner the new one keeps */
	bool replaces;
	struct stat old;
	bool finished;
};

static bool td_page_size_ok(size_t ps)
{
	int order;

	for (order = 0; order <= 7; order++)
		if (ps == (size_t)4096 << order)
			return true;
	return false;
}

/* len bytes at off (off < 0: at the file position, for streams).  0 or -errno. */
static int td_write(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

static int td_put_u64(int fd, uint64_t v, off_t off)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return td_write(fd, b, 8, off);
}

/*
 * len bytes of in from in_off to out at out_off (< 0: at its position):
 * copy_file_range when the kernel can, else through a buffer.
 */
static int td_copy(int in, uint64_t in_off, int out, off_t out_off, uint64_t len)
{
	static const size_t chunk = 1 << 20;
	loff_t ioff = (loff_t)in_off, ooff = out_off;
	char *buf = NULL;
	int err = 0;

	while (len) {
		size_t n = len < chunk ? (size_t)len : chunk;
		ssize_t r = copy_file_range(in, &ioff, out, out_off < 0 ? NULL : &ooff, n, 0);

		if (r > 0) {
			len -= (uint64_t)r;
			continue;
		}
		if (r < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
		    errno != EOPNOTSUPP && errno != EBADF)
			return -errno;
		break; /* r == 0 (cannot happen within the file) or not supported here */
	}
	while (len && !err) {
		size_t n = len < chunk ? (size_t)len : chunk;
		ssize_t r;

		if (!buf && !(buf = malloc(chunk)))
			return -ENOMEM;
		r = pread(in, buf, n, ioff);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		err = td_write(out, buf, (size_t)r, out_off < 0 ? -1 : ooff);
		ioff += r;
		ooff += r;
		len -= (uint64_t)r;
	}
	free(buf);
	return err;
}

/* A name beside target, ".NAME.XXXXXX" (random letters): malloc'd, or NULL. */
static char *td_beside_name(const char *target, int tries)
{
	static const char letters[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	const char *slash = strrchr(target, '/');
	size_t dlen = slash ? (size_t)(slash - target) + 1 : 0, n;
	const char *base = target + dlen;
	uint8_t rnd[6];
	char *p, *x;
	int i;

	n = dlen + strlen(base) + sizeof("/..XXXXXX");
	p = malloc(n);
	if (!p)
		return NULL;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < 6; i++)
			rnd[i] = (uint8_t)((ts.tv_nsec >> (5 * i)) ^ (getpid() >> i) ^ tries);
	}
	snprintf(p, n, "%.*s.%s.XXXXXX", (int)dlen, target, base);
	x = p + strlen(p) - 6;
	for (i = 0; i < 6; i++)
		x[i] = letters[rnd[i] % (sizeof(letters) - 1)];
	return p;
}

/*
 * A new file beside target, ".NAME.XXXXXX", created exclusively with mode
 * 0666 less the umask.  The fd, and its name in *name (malloc'd); -errno.
 */
static int td_create_beside(const char *target, char **name)
{
	int tries, fd = -1, err;
	char *p = NULL;

	for (tries = 0; tries < 100; tries++) {
		free(p);
		p = td_beside_name(target, tries);
		if (!p)
			return -ENOMEM;
		fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		free(p);
		return err;
	}
	*name = p;
	return fd;
}

/*
 * A new file for target, mode 0666 less the umask: unnamed in target's
 * directory (O_TMPFILE), so that a writer killed before td_publish() leaves
 * nothing; beside it as ".NAME.XXXXXX" (*name) where the filesystem has no
 * O_TMPFILE.  *name NULL for an unnamed one.  The fd or -errno.
 */
static int td_create_for(const char *target, char **name)
{
	const char *slash = strrchr(target, '/');
	char *dir;
	int fd;

	*name = NULL;
	dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	free(dir);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return td_create_beside(target, name);
}

/* Link the unnamed file fd at to: through /proc, else by its fd (CAP_DAC_READ_SEARCH). */
static int td_link(int fd, const char *to)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno == EEXIST)
		return -EEXIST;
	return linkat(fd, "", AT_FDCWD, to, AT_EMPTY_PATH) ? -errno : 0;
}

/*
 * Make the file of td_create_for() (fd, name) target, replacing what is there.  An unnamed
 * one is linked at target when nothing is there, else at a random name beside it for the
 * instant before its rename over target.  0 or -errno.
 */
static int td_publish(int fd, const char *name, const char *target)
{
	char *tmp = NULL;
	int err, tries;

	if (name)
		return rename(name, target) ? -errno : 0;
	err = td_link(fd, target);
	if (err != -EEXIST)
		return err;
	for (tries = 0; tries < 100 && err == -EEXIST; tries++) {
		free(tmp);
		tmp = td_beside_name(target, tries);
		if (!tmp)
			return -ENOMEM;
		err = td_link(fd, tmp);
	}
	if (!err && rename(tmp, target)) {
		err = -errno;
		unlink(tmp);
	}
	free(tmp);
	return err;
}

/* A new file of ours gets the mode and owner of the regular file it will replace. */
static void td_take_over(const struct kagg_tracedat_writer *w, int fd)
{
	if (!w->replaces)
		return;
	/* best effort: a file we may not give away stays ours */
	if (fchown(fd, w->old.st_uid, w->old.st_gid) < 0)
		errno = 0;
	if (fchmod(fd, w->old.st_mode & 07777) < 0)
		errno = 0;
}

/* An unlinked file in dir, for the pages of a path that is not a regular file.  fd or -errno. */
static int td_spool_open(const char *dir)
{
	size_t n = strlen(dir) + sizeof("/kagg-tracedat-XXXXXX");
	char *name = malloc(n);
	int fd, err;

	if (!name)
		return -ENOMEM;
	snprintf(name, n, "%s/kagg-tracedat-XXXXXX", dir);
	fd = mkostemp(name, O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (fd >= 0)
		unlink(name);
	free(name);
	return fd >= 0 ? fd : err;
}

/* v in `bytes` little-endian bytes; past the eighth, zeroes (a 16-byte table slot). */
static void put_le(FILE *f, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		fputc(i < 8 ? (int)((v >> (8 * i)) & 0xff) : 0, f);
}

/* u64/u32 length then the bytes. */
static void put_blob(FILE *f, const char *s, size_t len, int len_bytes)
{
	put_le(f, len, len_bytes);
	if (len)
		fwrite(s, 1, len, f);
}

static void put_format(FILE *f, const struct kagg_rb_format *fmt, int *err)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&txt, &len);

	if (!m) {
		*err = -ENOMEM;
		return;
	}
	kagg_rb_format__fprint(fmt, m);
	if (fclose(m)) {
		*err = -ENOMEM;
		free(txt);
		return;
	}
	put_blob(f, txt, len, 8);
	free(txt);
}

/* Everything before the saved cmdlines. */
static int td_header_start(struct kagg_tracedat_writer *w, FILE *f)
{
	const struct kagg_rb_events *evs = w->events;
	size_t nev = evs ? kagg_rb_events__count(evs) : 0, i, j, nsys = 0, nftrace = 0;
	const char **sys = NULL;
	char *txt = NULL;
	size_t len = 0;
	FILE *m;
	int err = 0;

	fwrite(td_magic, 1, sizeof(td_magic), f);
	fwrite("6", 1, 2, f);
	put_le(f, 0, 1); /* little-endian */
	put_le(f, 8, 1); /* long size */
	put_le(f, w->page_size, 4);

	m = open_memstream(&txt, &len);
	if (!m)
		return -ENOMEM;
	kagg_rb__fprint_header_page(w->page_size, m);
	if (fclose(m))
		return -ENOMEM;
	fwrite("header_page", 1, 12, f);
	put_blob(f, txt, len, 8);
	free(txt);
	txt = NULL;
	m = open_memstream(&txt, &len);
	if (!m)
		return -ENOMEM;
	kagg_rb__fprint_header_event(m);
	if (fclose(m))
		return -ENOMEM;
	fwrite("header_event", 1, 13, f);
	put_blob(f, txt, len, 8);
	free(txt);

	/* systems in first-seen order */
	sys = calloc(nev ? nev : 1, sizeof(*sys));
	if (!sys)
		return -ENOMEM;
	for (i = 0; i < nev; i++) {
		const struct kagg_rb_format *fm = kagg_rb_events__at(evs, i);

		if (!strcmp(fm->system, "ftrace")) {
			nftrace++;
			continue;
		}
		for (j = 0; j < nsys && strcmp(sys[j], fm->system); j++)
			;
		if (j == nsys)
			sys[nsys++] = fm->system;
	}
	put_le(f, nftrace, 4);
	for (i = 0; i < nev; i++)
		if (!strcmp(kagg_rb_events__at(evs, i)->system, "ftrace"))
			put_format(f, kagg_rb_events__at(evs, i), &err);
	put_le(f, nsys, 4);
	for (j = 0; j < nsys; j++) {
		size_t n = 0;

		for (i = 0; i < nev; i++)
			n += !strcmp(kagg_rb_events__at(evs, i)->system, sys[j]);
		fwrite(sys[j], 1, strlen(sys[j]) + 1, f);
		put_le(f, n, 4);
		for (i = 0; i < nev; i++)
			if (!strcmp(kagg_rb_events__at(evs, i)->system, sys[j]))
				put_format(f, kagg_rb_events__at(evs, i), &err);
	}
	free(sys);

	put_le(f, 0, 4); /* kallsyms */
	put_le(f, 0, 4); /* printk formats */
	return err;
}

/* The saved cmdlines text, "PID COMM\n" sorted by pid, malloc'd in *txt. */
static int td_cmdlines_text(const struct kagg_tracedat_writer *w, char **txt, size_t *len)
{
	FILE *m = open_memstream(txt, len);
	size_t i;

	if (!m)
		return -ENOMEM;
	for (i = 0; i < w->cl.nr; i++)
		fprintf(m, "%d %s\n", w->cl.v[i].pid, w->cl.v[i].comm);
	if (fclose(m)) {
		free(*txt);
		*txt = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* After the saved cmdlines, up to the flyrecord table. */
static void td_header_end(struct kagg_tracedat_writer *w, FILE *f)
{
	put_le(f, (uint64_t)w->nr_cpus, 4);
	if (w->trace_clock) {
		/* the trace_clock file's text: the current clock in brackets */
		size_t n = strlen(w->trace_clock) + 4; /* "[", "]\n", NUL */

		fwrite("options  ", 1, 10, f);
		put_le(f, TD_OPT_TRACECLOCK, 2);
		put_le(f, n, 4);
		fprintf(f, "[%s]\n", w->trace_clock);
		fputc(0, f);
		put_le(f, TD_OPT_DONE, 2);
	}
	fwrite("flyrecord", 1, 10, f);
}

/*
 * A whole header, up to the first page (page-aligned), malloc'd in *hdr:
 * the cmdlines text cl padded with '\n' to cl_cap bytes (at offset *cl_at),
 * then the flyrecord table (at *table) with every CPU at offset 0, size 0.
 */
static int td_header(struct kagg_tracedat_writer *w, const char *cl, size_t cl_len, size_t cl_cap,
		     char **hdr, size_t *hlen, uint64_t *cl_at, uint64_t *table)
{
	FILE *m = open_memstream(hdr, hlen);
	size_t pad;
	int err, cpu;

	if (!m)
		return -ENOMEM;
	err = td_header_start(w, m);
	put_le(m, cl_cap, 8);
	if (fflush(m))
		err = -ENOMEM;
	*cl_at = *hlen;
	fwrite(cl, 1, cl_len, m);
	for (; cl_len < cl_cap; cl_len++)
		fputc('\n', m);
	td_header_end(w, m);
	if (fflush(m))
		err = -ENOMEM;
	*table = *hlen;
	for (cpu = 0; cpu < w->nr_cpus; cpu++)
		put_le(m, 0, 16);
	if (w->trace_clock) {
		put_le(m, strlen(w->trace_clock) + 3, 8); /* "[clock]\n" */
		fprintf(m, "[%s]\n", w->trace_clock);
	}
	if (fflush(m))
		err = -ENOMEM;
	for (pad = (w->page_size - *hlen % w->page_size) % w->page_size; pad; pad--)
		fputc(0, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (err) {
		free(*hdr);
		*hdr = NULL;
	}
	return err;
}

static void le64(char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (char)(v >> (8 * i));
}

/* The working file's header: every CPU empty, the cmdlines so far, room for more. */
static int td_ck_start(struct kagg_tracedat_writer *w)
{
	char *cl = NULL, *hdr = NULL;
	size_t cl_len = 0, cap, hlen, pad;
	int err, cpu;

	err = td_cmdlines_text(w, &cl, &cl_len);
	if (err)
		return err;
	cap = cl_len + CK_CMDLINES;
	err = td_header(w, cl, cl_len, cap, &hdr, &hlen, &w->cl_off, &w->ck_table);
	/* padding the cmdlines aligns the table to 16 bytes */
	pad = (16 - w->ck_table % 16) % 16;
	if (!err && pad) {
		free(hdr);
		cap += pad;
		err = td_header(w, cl, cl_len, cap, &hdr, &hlen, &w->cl_off, &w->ck_table);
	}
	if (err)
		goto cleanup;
	/* empty CPUs point at the end of the header, inside the file */
	for (cpu = 0; cpu < w->nr_cpus; cpu++)
		le64(hdr + w->ck_table + 16 * (size_t)cpu, hlen);
	w->cl_cap = cap;
	w->cl_used = cl_len;
	w->ck_end = hlen;
	err = td_write(w->ck_fd, hdr, hlen, 0);
cleanup:
	free(cl);
	free(hdr);
	return err;
}

struct kagg_tracedat_writer *kagg_tracedat_writer__new(const char *path,
						       const struct kagg_tracedat_writer_opts *opts)
{
	struct kagg_tracedat_writer *w = NULL;
	const char *cmdlines, *clock, *tmp;
	struct stat st;
	int err = -EINVAL;

	if (!path || !*path || !opts || !opts_valid(opts, OPTS_END(kagg_tracedat_writer_opts)))
		goto cleanup;
	w = calloc(1, sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto cleanup;
	}
	w->out_fd = w->ck_fd = -1;
	w->page_size = OPTS_GET(opts, kagg_tracedat_writer_opts, page_size, 0);
	if (!w->page_size)
		w->page_size = 4096;
	w->nr_cpus = OPTS_GET(opts, kagg_tracedat_writer_opts, nr_cpus, 0);
	w->events = OPTS_GET(opts, kagg_tracedat_writer_opts, events, NULL);
	cmdlines = OPTS_GET(opts, kagg_tracedat_writer_opts, cmdlines, NULL);
	clock = OPTS_GET(opts, kagg_tracedat_writer_opts, trace_clock, NULL);
	tmp = OPTS_GET(opts, kagg_tracedat_writer_opts, tmp_dir, NULL);
	if (!tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (w->nr_cpus < 1 || w->nr_cpus > 65536 || !td_page_size_ok(w->page_size))
		goto cleanup;
	if (clock && (!*clock || strpbrk(clock, "[] \n")))
		goto cleanup;
	if (cmdlines) {
		err = cl_parse(&w->cl, cmdlines, strlen(cmdlines), true);
		if (err)
			goto cleanup;
	}
	err = -ENOMEM;
	w->trace_clock = clock ? strdup(clock) : NULL;
	w->reg = calloc((size_t)w->nr_cpus, sizeof(*w->reg));
	w->pages = calloc((size_t)w->nr_cpus, sizeof(*w->pages));
	w->page = malloc(w->page_size);
	if ((clock && !w->trace_clock) || !w->reg || !w->pages || !w->page)
		goto cleanup;

	/* where the file goes: a regular file is replaced, anything else written to */
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto cleanup;
	}
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		w->ck_fd = td_spool_open(tmp);
		if (w->ck_fd < 0) {
			err = w->ck_fd;
			goto cleanup;
		}
		err = td_ck_start(w);
		if (err)
			goto cleanup;
		/* last: a FIFO waits here for its reader */
		w->out_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (w->out_fd < 0) {
			err = -errno;
			goto cleanup;
		}
		return w;
	}
	if (!lstat(path, &st) && S_ISLNK(st.st_mode))
		w->target = realpath(path, NULL); /* dangling: ENOENT */
	else
		w->target = strdup(path);
	if (!w->target) {
		err = -errno;
		goto cleanup;
	}
	/* replacing a file takes the right to write it, not only its directory */
	w->replaces = !stat(w->target, &w->old);
	if (w->replaces && faccessat(AT_FDCWD, w->target, W_OK, AT_EACCESS)) {
		err = -errno;
		goto cleanup;
	}
	w->ck_fd = td_create_for(w->target, &w->ck_path);
	if (w->ck_fd < 0) {
		err = w->ck_fd;
		goto cleanup;
	}
	td_take_over(w, w->ck_fd);
	err = td_ck_start(w);
	if (err)
		goto cleanup;
	return w;

cleanup:
	kagg_tracedat_writer__free(w);
	errno = -err;
	return NULL;
}

/* Append "PID COMM\n" to the working file's cmdlines, while there is room. */
static int td_ck_cmdline(struct kagg_tracedat_writer *w, int pid, const char *comm)
{
	char line[32];
	uint64_t at = w->cl_used, len;
	int n = snprintf(line, sizeof(line), "%d %s\n", pid, comm);

	if (n < 0 || (size_t)n >= sizeof(line))
		return 0;
	len = (uint64_t)n;
	/* a line never straddles a block, so a kill leaves whole lines */
	if ((w->cl_off + at) / CK_BLOCK != (w->cl_off + at + len - 1) / CK_BLOCK)
		at = (w->cl_off + at + CK_BLOCK - 1) / CK_BLOCK * CK_BLOCK - w->cl_off;
	if (at + len > w->cl_cap)
		return 0; /* full: the final file has it */
	w->cl_used = at + len;
	return td_write(w->ck_fd, line, (size_t)len, (off_t)(w->cl_off + at));
}

int kagg_tracedat_writer__add_cmdline(struct kagg_tracedat_writer *w, int pid, const char *comm)
{
	bool found;
	int err;

	if (!w || pid < 0 || !comm || !*comm || strchr(comm, '\n'))
		return -EINVAL;
	err = cl_set(&w->cl, pid, comm, strlen(comm));
	if (err || w->finished)
		return err;
	return td_ck_cmdline(w, pid, w->cl.v[cl_find(&w->cl, pid, &found)].comm);
}

/*
 * Room for one more page in cpu's region: a first region, or the pages so
 * far copied to one twice as large, published, and the old one punched out.
 */
static int td_ck_grow(struct kagg_tracedat_writer *w, int cpu)
{
	struct td_region *r = &w->reg[cpu], old = *r;
	uint8_t pair[16];
	int err, i;

	if (r->cap && r->used + w->page_size <= r->cap)
		return 0;
	r->cap = old.cap ? old.cap * 2 : (uint64_t)CK_REGION_PAGES * w->page_size;
	r->off = w->ck_end;
	w->ck_end += r->cap;
	if (!old.used)
		return 0;
	err = td_copy(w->ck_fd, old.off, w->ck_fd, (off_t)r->off, old.used);
	if (err) {
		*r = old;
		return err;
	}
	for (i = 0; i < 8; i++) {
		pair[i] = (uint8_t)(r->off >> (8 * i));
		pair[8 + i] = (uint8_t)(r->used >> (8 * i));
	}
	err = td_write(w->ck_fd, pair, 16, (off_t)(w->ck_table + 16 * (uint64_t)cpu));
	if (err) {
		*r = old;
		return err;
	}
	fallocate(w->ck_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)old.off,
		  (off_t)old.cap); /* space back where the filesystem can; harmless where not */
	return 0;
}

int kagg_tracedat_writer__add_page(struct kagg_tracedat_writer *w, int cpu, const void *page,
				   size_t size)
{
	struct td_region *r;
	uint64_t commit, slot = w ? w->ck_table + 16 * (uint64_t)cpu : 0;
	int err;

	if (!w || w->finished || cpu < 0 || cpu >= w->nr_cpus || !page || size < KAGG_RB_PAGE_HDR)
		return -EINVAL;
	if (size > w->page_size)
		return -E2BIG;
	memcpy(&commit, (const uint8_t *)page + 8, 8);
	if ((commit & KAGG_RB_COMMIT_MASK) > size - KAGG_RB_PAGE_HDR)
		return -EINVAL;
	err = td_ck_grow(w, cpu);
	if (err)
		return err;
	r = &w->reg[cpu];
	memcpy(w->page, page, size);
	memset(w->page + size, 0, w->page_size - size);
	err = td_write(w->ck_fd, w->page, w->page_size, (off_t)(r->off + r->used));
	if (err)
		return err;
	/* publish: the offset with the first page, then the size alone */
	if (!r->used)
		err = td_put_u64(w->ck_fd, r->off, (off_t)slot);
	if (!err)
		err = td_put_u64(w->ck_fd, r->used + w->page_size, (off_t)(slot + 8));
	if (err)
		return err;
	r->used += w->page_size;
	w->pages[cpu]++;
	/* the first page makes the working file the recording, at path */
	if (w->target && !w->ck_published) {
		err = td_publish(w->ck_fd, w->ck_path, w->target);
		if (err)
			return err;
		w->ck_published = true;
		free(w->ck_path);
		w->ck_path = NULL;
	}
	return 0;
}

int kagg_tracedat_writer__add_rb(struct kagg_tracedat_writer *w, struct kagg_rb *rb)
{
	uint8_t *buf;
	int cpu, n = 0, ret, err = 0;

	if (!w || !rb || w->finished || kagg_rb__subbuf_size(rb) != w->page_size ||
	    kagg_rb__nr_cpus(rb) > w->nr_cpus)
		return -EINVAL;
	buf = malloc(w->page_size);
	if (!buf)
		return -ENOMEM;
	for (cpu = 0; cpu < kagg_rb__nr_cpus(rb) && !err; cpu++) {
		while ((ret = kagg_rb__read_page(rb, cpu, buf, w->page_size)) > 0) {
			err = kagg_tracedat_writer__add_page(w, cpu, buf, (size_t)ret);
			if (err)
				break;
			n++;
		}
		if (!err && ret < 0 && ret != -EAGAIN)
			err = ret;
	}
	free(buf);
	return err ? err : n;
}

uint64_t kagg_tracedat_writer__nr_pages(const struct kagg_tracedat_writer *w, int cpu)
{
	uint64_t n = 0;
	int i;

	if (!w || cpu >= w->nr_cpus)
		return 0;
	if (cpu >= 0)
		return w->pages[cpu];
	for (i = 0; i < w->nr_cpus; i++)
		n += w->pages[i];
	return n;
}

/* The compact file to fd (off < 0: a stream, at its position): header, then each CPU's pages. */
static int td_write_final(struct kagg_tracedat_writer *w, int fd, bool stream)
{
	char *cl = NULL, *hdr = NULL;
	size_t cl_len = 0, hlen;
	uint64_t cl_at, table, off;
	int err, cpu;

	err = td_cmdlines_text(w, &cl, &cl_len);
	if (!err)
		err = td_header(w, cl, cl_len, cl_len, &hdr, &hlen, &cl_at, &table);
	if (err)
		goto cleanup;
	for (off = hlen, cpu = 0; cpu < w->nr_cpus; cpu++) {
		le64(hdr + table + 16 * (size_t)cpu, off);
		le64(hdr + table + 16 * (size_t)cpu + 8, w->reg[cpu].used);
		off += w->reg[cpu].used;
	}
	err = td_write(fd, hdr, hlen, stream ? -1 : 0);
	for (off = hlen, cpu = 0; !err && cpu < w->nr_cpus; cpu++) {
		err = td_copy(w->ck_fd, w->reg[cpu].off, fd, stream ? -1 : (off_t)off,
			      w->reg[cpu].used);
		off += w->reg[cpu].used;
	}
cleanup:
	free(cl);
	free(hdr);
	return err;
}

int kagg_tracedat_writer__finish(struct kagg_tracedat_writer *w)
{
	char *name = NULL;
	int fd, err;

	if (!w || w->finished)
		return -EINVAL;
	w->finished = true;
	if (w->out_fd >= 0) {
		err = td_write_final(w, w->out_fd, true);
		if (close(w->out_fd) && !err)
			err = -errno;
		w->out_fd = -1;
		return err;
	}
	fd = td_create_for(w->target, &name);
	if (fd < 0)
		return fd;
	td_take_over(w, fd);
	err = td_write_final(w, fd, false);
	if (!err)
		err = td_publish(fd, name, w->target);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		if (name)
			unlink(name); /* ours; path keeps the working file when it is there */
	} else if (w->ck_path) {
		unlink(w->ck_path); /* never published: no page came */
		free(w->ck_path);
		w->ck_path = NULL;
	}
	free(name);
	return err;
}

void kagg_tracedat_writer__free(struct kagg_tracedat_writer *w)
{
	if (!w)
		return;
	if (w->ck_fd >= 0)
		close(w->ck_fd);
	if (w->ck_path)
		unlink(w->ck_path); /* ours, and nobody saw it */
	if (w->out_fd >= 0)
		close(w->out_fd);
	cl_free(&w->cl);
	free(w->reg);
	free(w->pages);
	free(w->page);
	free(w->target);
	free(w->ck_path);
	free(w->trace_clock);
	free(w);
}

/* ------------------------------------------------------------ reader */

struct td_cpu {
	uint64_t off, size; /* block in the file */
	uint64_t next_page; /* index of the next page to load */
	struct kagg_rb_page_iter it;
	bool in_page, have, done;
	bool bad;		  /* a malformed page or record comes next ... */
	uint64_t bad_ts, bad_off; /* ... after the time bad_ts, at file offset bad_off */
	int64_t carry;		  /* loss flagged on a page without events */
	struct kagg_rb_event ev;
};

struct kagg_tracedat {
	uint8_t *map;
	size_t len;
	size_t page_size;
	int nr_cpus;
	struct kagg_rb_events *evs;
	int bad_formats;
	struct td_cmdlines cl;
	char *clock;
	struct td_cpu *cpus;
	uint64_t err_off; /* file offset of the last malformed part found, or UINT64_MAX */
};

/*
 * A cursor over the header: every take is checked against what is left, and
 * item is where the last item taken (or refused) starts, for error offsets.
 */
struct td_cur {
	const uint8_t *base, *p;
	size_t left;
	size_t item;
};

static int cur_take(struct td_cur *c, size_t n, const uint8_t **out)
{
	c->item = (size_t)(c->p - c->base);
	if (n > c->left)
		return -EINVAL;
	*out = c->p;
	c->p += n;
	c->left -= n;
	return 0;
}

static int cur_le(struct td_cur *c, int bytes, uint64_t *v)
{
	const uint8_t *p;
	int i;

	if (cur_take(c, (size_t)bytes, &p))
		return -EINVAL;
	*v = 0;
	for (i = 0; i < bytes; i++)
		*v |= (uint64_t)p[i] << (8 * i);
	return 0;
}

/* A length (len_bytes wide) then that many bytes; item: the length. */
static int cur_blob(struct td_cur *c, int len_bytes, const uint8_t **p, size_t *len)
{
	size_t at = (size_t)(c->p - c->base);
	uint64_t n;
	int err;

	err = cur_le(c, len_bytes, &n);
	if (!err && n > c->left)
		err = -EINVAL;
	if (!err) {
		*len = (size_t)n;
		err = cur_take(c, (size_t)n, p);
	}
	c->item = at;
	return err;
}

static int cur_str(struct td_cur *c, const char **s)
{
	const uint8_t *nul = memchr(c->p, 0, c->left);
	const uint8_t *p;

	c->item = (size_t)(c->p - c->base);
	if (!nul)
		return -EINVAL;
	*s = (const char *)c->p;
	return cur_take(c, (size_t)(nul - c->p) + 1, &p);
}

static int cur_tag(struct td_cur *c, const char *tag, size_t n)
{
	const uint8_t *p;

	if (cur_take(c, n, &p))
		return -EINVAL;
	return memcmp(p, tag, n) ? -EINVAL : 0;
}

static void td_parse_format(struct kagg_tracedat *t, const char *sys, const uint8_t *p, size_t len)
{
	if (kagg_rb_events__parse(t->evs, sys, (const char *)p, len, NULL))
		t->bad_formats++;
}

/* Current clock of a trace_clock text: the name in brackets. */
static char *td_clock_name(const uint8_t *p, size_t len)
{
	const char *s = memchr(p, '[', len), *e;

	if (!s)
		return NULL;
	e = memchr(s, ']', len - (size_t)(s - (const char *)p));
	if (!e || e == s + 1)
		return NULL;
	return strndup(s + 1, (size_t)(e - s - 1));
}

/*
 * Parse the header of the mapped file.  Counts taken from the file (formats,
 * systems, CPUs) are only trusted as far as the bytes left can hold them.  On
 * failure c->item is the file offset of the part that did not parse.
 */
static int td_parse(struct kagg_tracedat *t, struct td_cur *c)
{
	const uint8_t *p;
	const char *s;
	uint64_t v, n, i, k;
	size_t len;
	bool clock_opt = false;
	int cpu;

	if (cur_tag(c, td_magic, sizeof(td_magic)) || cur_str(c, &s))
		return -EINVAL;
	if (strcmp(s, "6"))
		return -ENOTSUP;
	if (cur_le(c, 1, &v))
		return -EINVAL;
	if (v != 0)
		return -ENOTSUP; /* big-endian */
	if (cur_le(c, 1, &v))
		return -EINVAL;
	if (v != 8)
		return -ENOTSUP;
	if (cur_le(c, 4, &v))
		return -EINVAL;
	if (v < 4096 || v > (1u << 30))
		return -EINVAL;
	t->page_size = (size_t)v;

	if (cur_tag(c, "header_page", 12) || cur_blob(c, 8, &p, &len) ||
	    cur_tag(c, "header_event", 13) || cur_blob(c, 8, &p, &len))
		return -EINVAL;

	if (cur_le(c, 4, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (cur_blob(c, 8, &p, &len))
			return -EINVAL;
		td_parse_format(t, "ftrace", p, len);
	}
	if (cur_le(c, 4, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint64_t m;

		if (cur_str(c, &s) || cur_le(c, 4, &m))
			return -EINVAL;
		for (k = 0; k < m; k++) {
			if (cur_blob(c, 8, &p, &len))
				return -EINVAL;
			td_parse_format(t, s, p, len);
		}
	}
	if (cur_blob(c, 4, &p, &len) || cur_blob(c, 4, &p, &len)) /* kallsyms, printk */
		return -EINVAL;
	if (cur_blob(c, 8, &p, &len))
		return -EINVAL;
	if (cl_parse(&t->cl, (const char *)p, len, false))
		return -ENOMEM;
	if (cur_le(c, 4, &v))
		return -EINVAL;
	if (v < 1 || v > 65536)
		return -EINVAL;
	t->nr_cpus = (int)v;

	if (cur_take(c, 10, &p))
		return -EINVAL;
	if (!memcmp(p, "options  \0", 10)) {
		for (;;) {
			uint64_t id;

			if (cur_le(c, 2, &id))
				return -EINVAL;
			if (id == TD_OPT_DONE)
				break;
			if (cur_blob(c, 4, &p, &len))
				return -EINVAL;
			if (id == TD_OPT_TRACECLOCK) {
				clock_opt = true;
				free(t->clock);
				t->clock = td_clock_name(p, len);
			}
		}
		if (cur_take(c, 10, &p))
			return -EINVAL;
	}
	if (!memcmp(p, "latency  \0", 10))
		return -ENOTSUP;
	if (memcmp(p, "flyrecord\0", 10))
		return -EINVAL;

	/* 16 bytes of offset and size per CPU must follow before we allocate for them */
	c->item = (size_t)(c->p - c->base);
	if ((uint64_t)t->nr_cpus * 16 > c->left)
		return -EINVAL;
	t->cpus = calloc((size_t)t->nr_cpus, sizeof(*t->cpus));
	if (!t->cpus)
		return -ENOMEM;
	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		struct td_cpu *tc = &t->cpus[cpu];
		size_t at = (size_t)(c->p - c->base);

		if (cur_le(c, 8, &tc->off) || cur_le(c, 8, &tc->size))
			return -EINVAL;
		c->item = at;
		if (tc->size && (tc->off > t->len || tc->size > t->len - tc->off))
			return -EINVAL;
	}
	/* With a TRACECLOCK option, v6 repeats the trace_clock text here. */
	if (clock_opt && !cur_blob(c, 8, &p, &len) && !t->clock)
		t->clock = td_clock_name(p, len);
	return 0;
}

struct kagg_tracedat *kagg_tracedat__open(const char *path, const struct kagg_tracedat_opts *opts)
{
	struct kagg_tracedat *t = NULL;
	struct td_cur c = { 0 };
	struct stat st;
	int fd = -1, err = -EINVAL;

	if (!path || !opts_valid(opts, OPTS_END(kagg_tracedat_opts)))
		goto cleanup;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	{
		KAGG_OPTS(kagg_rb_events_opts, eo,
			  .old_flags = OPTS_GET(opts, kagg_tracedat_opts, old_flags, false));

		t->evs = kagg_rb_events__new(&eo);
	}
	if (!t->evs) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* O_NONBLOCK: a FIFO is refused, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ESPIPE; /* only a regular file is mapped */
		goto cleanup;
	}
	if (st.st_size < 16)
		goto cleanup;
	t->len = (size_t)st.st_size;
	t->map = mmap(NULL, t->len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		err = -errno;
		goto cleanup;
	}
	c.base = c.p = t->map;
	c.left = t->len;
	err = td_parse(t, &c);
	if (err)
		goto cleanup;
	t->err_off = UINT64_MAX;
	close(fd);
	return t;

cleanup:
	if (c.base) { /* the file did not parse: say where */
		uint64_t *eo = OPTS_GET(opts, kagg_tracedat_opts, error_offset, NULL);

		if (eo)
			*eo = c.item;
	}
	if (fd >= 0)
		close(fd);
	kagg_tracedat__free(t);
	errno = -err;
	return NULL;
}

void kagg_tracedat__free(struct kagg_tracedat *t)
{
	if (!t)
		return;
	if (t->map)
		munmap(t->map, t->len);
	kagg_rb_events__free(t->evs);
	cl_free(&t->cl);
	free(t->clock);
	free(t->cpus);
	free(t);
}

int kagg_tracedat__nr_cpus(const struct kagg_tracedat *t)
{
	return t ? t->nr_cpus : 0;
}

size_t kagg_tracedat__page_size(const struct kagg_tracedat *t)
{
	return t ? t->page_size : 0;
}

const struct kagg_rb_events *kagg_tracedat__events(const struct kagg_tracedat *t)
{
	return t ? t->evs : NULL;
}

int kagg_tracedat__bad_formats(const struct kagg_tracedat *t)
{
	return t ? t->bad_formats : 0;
}

const char *kagg_tracedat__comm(const struct kagg_tracedat *t, int pid)
{
	return t ? cl_get(&t->cl, pid) : NULL;
}

const char *kagg_tracedat__trace_clock(const struct kagg_tracedat *t)
{
	return t ? t->clock : NULL;
}

int kagg_tracedat__cpu_data(const struct kagg_tracedat *t, int cpu, uint64_t *offset,
			    uint64_t *size)
{
	if (!t || cpu < 0 || cpu >= t->nr_cpus)
		return -EINVAL;
	if (offset)
		*offset = t->cpus[cpu].off;
	if (size)
		*size = t->cpus[cpu].size;
	return 0;
}

void kagg_tracedat__rewind(struct kagg_tracedat *t)
{
	int cpu;

	if (!t)
		return;
	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		struct td_cpu *tc = &t->cpus[cpu];

		tc->next_page = 0;
		tc->in_page = tc->have = tc->done = tc->bad = false;
		tc->carry = 0;
		tc->ev.ts = 0;
	}
}

/*
 * Make tc->ev the CPU's next event.  0, -ENOENT (no more), -EBADMSG (a
 * malformed page or record comes next: tc->bad_ts is the time reached before
 * it, tc->bad_off its file offset; the rest of the CPU is skipped).
 */
static int td_fill(struct kagg_tracedat *t, int cpu)
{
	struct td_cpu *tc = &t->cpus[cpu];

	while (!tc->have) {
		uint64_t page_off;

		if (tc->bad)
			return -EBADMSG;
		if (tc->done)
			return -ENOENT;
		if (tc->in_page) {
			bool first = tc->it.off == 0;
			int err = kagg_rb_page_iter__next(&tc->it, &tc->ev);

			if (!err) {
				tc->ev.cpu = cpu;
				if (tc->carry && tc->ev.missed >= 0)
					tc->ev.missed =
						tc->carry < 0 ? -1 : tc->ev.missed + tc->carry;
				tc->carry = 0;
				tc->have = true;
				return 0;
			}
			tc->in_page = false;
			if (err != -ENOENT) {
				page_off = tc->off + (tc->next_page - 1) * t->page_size;
				tc->bad = true;
				tc->bad_ts = tc->it.ts;
				tc->bad_off = page_off + KAGG_RB_PAGE_HDR + tc->it.off;
				return -EBADMSG;
			}
			if (first && tc->it.missed)
				tc->carry = tc->it.missed < 0 || tc->carry < 0
						    ? -1
						    : tc->carry + tc->it.missed;
			continue;
		}
		if (tc->next_page >= tc->size / t->page_size) {
			tc->done = true;
			return -ENOENT;
		}
		tc->it.sz = sizeof(tc->it);
		tc->ev.sz = sizeof(tc->ev);
		page_off = tc->off + tc->next_page * t->page_size;
		if (kagg_rb_page_iter__init(&tc->it, t->map + page_off, t->page_size)) {
			tc->bad = true;
			tc->bad_ts = tc->ev.ts;	    /* the last event's */
			tc->bad_off = page_off + 8; /* the commit word */
			return -EBADMSG;
		}
		tc->next_page++;
		tc->in_page = true;
	}
	return 0;
}

/*
 * The CPUs' events are merged by time; a CPU whose next page or record is
 * malformed takes its turn at the time it had reached, so every event before
 * the damage (on any CPU) comes out first, then -EINVAL once for that CPU.
 */
int kagg_tracedat__next(struct kagg_tracedat *t, struct kagg_rb_event *ev)
{
	int cpu, best = -1;
	uint64_t best_ts = 0;

	if (!t || !sz_valid(ev, FT_EVENT_MIN_SZ))
		return -EINVAL;
	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		int r = td_fill(t, cpu);
		uint64_t ts;

		if (r == -ENOENT)
			continue;
		ts = r ? t->cpus[cpu].bad_ts : t->cpus[cpu].ev.ts;
		if (best < 0 || ts < best_ts) {
			best = cpu;
			best_ts = ts;
		}
	}
	if (best < 0)
		return -ENOENT;
	if (t->cpus[best].bad) {
		t->cpus[best].bad = false;
		t->cpus[best].done = true;
		t->err_off = t->cpus[best].bad_off;
		return -EINVAL;
	}
	sz_copy(ev, &t->cpus[best].ev, sizeof(t->cpus[best].ev));
	t->cpus[best].have = false;
	return 0;
}

uint64_t kagg_tracedat__error_offset(const struct kagg_tracedat *t)
{
	return t ? t->err_off : UINT64_MAX;
}

int kagg_tracedat__fprint_event(const struct kagg_tracedat *t, FILE *f,
				const struct kagg_rb_event *ev)
{
	if (!t || !f || !ev)
		return -EINVAL;
	return kagg_rb_events__fprint_event(t->evs, f, ev, cl_comm_cb, (void *)&t->cl);
}

long kagg_tracedat__fprint(struct kagg_tracedat *t, FILE *f, int cpu)
{
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	long n = 0;
	int err;

	if (!t || !f || cpu >= t->nr_cpus)
		return -EINVAL;
	kagg_tracedat__rewind(t);
	while ((err = kagg_tracedat__next(t, &ev)) == 0) {
		if (cpu >= 0 && ev.cpu != cpu)
			continue;
		if (ev.missed > 0)
			fprintf(f, "CPU:%d [LOST %lld EVENTS]\n", ev.cpu, (long long)ev.missed);
		else if (ev.missed < 0)
			fprintf(f, "CPU:%d [LOST EVENTS]\n", ev.cpu);
		kagg_tracedat__fprint_event(t, f, &ev);
		n++;
	}
	return err == -ENOENT ? n : err;
}
