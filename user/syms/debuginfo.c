// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * debuginfo.c - the symbols of a file without .symtab, from wherever they live (debuginfo.h).
 *
 * Every format is read by the library made for it: libelf and libdwelf (build id,
 * .gnu_debuglink), liblzma (MiniDebugInfo), zlib's crc32 (the debuglink CRC is CRC-32),
 * libdebuginfod (servers and their cache).  Nothing here parses a format by hand.
 *
 * A debuginfod query runs in a thread of its own, with a client of its own, and the caller
 * waits for it until the per-file timeout (libdebuginfod's own limits, DEBUGINFOD_TIMEOUT and
 * its retries, can add up to minutes for a server that accepts and never answers).  A query
 * given up on is left to finish alone: what it fetches lands in libdebuginfod's cache, for
 * the next run, and the thread frees its job.
 */
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "syms/syms.h"
#include "syms/debuginfo.h"

#define DBG_DEBUG_DIR "/usr/lib/debug"
#define DBG_TIMEOUT_S 5		  /* per file, KAGG_DEBUGINFOD_TIMEOUT overrides */
#define DBG_DOWN_AFTER 3	  /* failures in a row (not "not found") before giving up */
#define DBG_MINI_MAX (256u << 20) /* largest MiniDebugInfo image inflated */

struct dbg {
	double timeout_s;
	unsigned int fails_in_row;
	struct dbg_stats st;
};

/* One query, shared by its thread and the caller waiting for it: the last one frees it. */
struct dbg_job {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool done;
	int fd; /* the answer: a debug file, or -errno */
	unsigned char id[64];
	int n;
};

static void job_put(struct dbg_job *j)
{
	bool last;

	pthread_mutex_lock(&j->mu);
	last = !--j->refs;
	pthread_mutex_unlock(&j->mu);
	if (!last)
		return;
	if (j->fd >= 0)
		close(j->fd);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

static void *job_run(void *arg)
{
	struct dbg_job *j = arg;
	debuginfod_client *c = debuginfod_begin();
	char *path = NULL;
	int fd = -ENOMEM;

	if (c)
		fd = debuginfod_find_debuginfo(c, j->id, j->n, &path);
	free(path);
	debuginfod_end(c);
	pthread_mutex_lock(&j->mu);
	j->fd = fd;
	j->done = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	job_put(j);
	return NULL;
}

/* Ask for build id (n bytes) within timeout_s: an fd, -ETIMEDOUT, or the client's -errno. */
static int job_ask(const unsigned char *id, int n, double timeout_s)
{
	pthread_condattr_t ca;
	struct dbg_job *j;
	struct timespec ts;
	pthread_attr_t ta;
	pthread_t t;
	int fd = -ETIMEDOUT, err;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	pthread_mutex_init(&j->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	memcpy(j->id, id, n);
	j->n = n;
	j->fd = -1;
	j->refs = 2;
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &ta, job_run, j);
	pthread_attr_destroy(&ta);
	if (err) {
		j->refs = 1;
		job_put(j);
		return -err;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)timeout_s;
	ts.tv_nsec += (long)((timeout_s - (time_t)timeout_s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&j->mu);
	while (!j->done && pthread_cond_timedwait(&j->cv, &j->mu, &ts) != ETIMEDOUT)
		;
	if (j->done) {
		fd = j->fd;
		j->fd = -1; /* ours now */
	}
	pthread_mutex_unlock(&j->mu);
	job_put(j);
	return fd;
}

struct dbg *dbg_new(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *t = getenv("KAGG_DEBUGINFOD_TIMEOUT");
	struct dbg *d;

	if (!urls || !*urls)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->timeout_s = t && atof(t) > 0 ? atof(t) : DBG_TIMEOUT_S;
	return d;
}

void dbg_free(struct dbg *d)
{
	free(d);
}

void dbg_get_stats(const struct dbg *d, struct dbg_stats *st)
{
	if (d)
		*st = d->st;
	else
		memset(st, 0, sizeof(*st));
}

int dbg_build_id(Elf *elf, unsigned char *id)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 1 || n > 64)
		return -ENOENT;
	memcpy(id, p, n);
	return (int)n;
}

/* Does elf have a .symtab with entries? */
static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB &&
		    sh.sh_size > sh.sh_entsize)
			return true;
	return false;
}

void dbg_syms_free(struct dbg_syms *x)
{
	elf_end(x->elf);
	if (x->fd >= 0)
		close(x->fd);
	free(x->buf);
	x->elf = NULL;
	x->fd = -1;
	x->buf = NULL;
}

/* Keep fd as x's when it is an ELF with a .symtab from src; else close it.  0 or -ENOENT. */
static int take_fd(struct dbg_syms *x, int fd, int src)
{
	Elf *e;

	if (fd < 0)
		return -ENOENT;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!has_symtab(e)) {
		elf_end(e);
		close(fd);
		return -ENOENT;
	}
	x->elf = e;
	x->fd = fd;
	x->src = src;
	return 0;
}

/* ------------------------------------------------------------ MiniDebugInfo */

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	const char *n;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The ELF image xz-compressed in .gnu_debugdata (Fedora's MiniDebugInfo), inflated. */
static int mini_debuginfo(Elf *elf, struct dbg_syms *x)
{
	Elf_Scn *scn = find_section(elf, ".gnu_debugdata");
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 0, len = 0;
	uint8_t *buf = NULL, *nb;
	Elf_Data *data;
	lzma_ret ret;
	int err = -ENOENT;

	data = scn ? elf_rawdata(scn, NULL) : NULL;
	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : data->d_size * 4;
			if (cap > DBG_MINI_MAX)
				goto cleanup;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nb;
		}
		strm.next_out = buf + len;
		strm.avail_out = cap - len;
		ret = lzma_code(&strm, LZMA_FINISH);
		len = cap - strm.avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK)
			goto cleanup;
	}
	x->elf = elf_memory((char *)buf, len);
	if (!has_symtab(x->elf)) {
		elf_end(x->elf);
		x->elf = NULL;
		goto cleanup;
	}
	x->buf = buf;
	x->src = SYM_SRC_MINIDEBUG;
	buf = NULL;
	err = 0;
cleanup:
	lzma_end(&strm);
	free(buf);
	return err;
}

/* ------------------------------------------------------------ separate debug files */

static int open_build_id(const unsigned char *id, int n, struct dbg_syms *x)
{
	char path[sizeof(DBG_DEBUG_DIR) + 16 + 2 * 64 + 8];
	int i, len;

	len = snprintf(path, sizeof(path), DBG_DEBUG_DIR "/.build-id/%02x/", id[0]);
	for (i = 1; i < n; i++)
		len += snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	return take_fd(x, open(path, O_RDONLY | O_CLOEXEC), SYM_SRC_DEBUGFILE);
}

/* CRC-32 of the whole file fd (the .gnu_debuglink checksum), from its start. */
static int file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	if (n < 0)
		return -errno;
	*crc = (uint32_t)c;
	return lseek(fd, 0, SEEK_SET) < 0 ? -errno : 0;
}

/* The file .gnu_debuglink names, where gdb looks for it, with the CRC it records. */
static int open_debuglink(Elf *elf, const char *path, struct dbg_syms *x)
{
	char dir[PATH_MAX], cand[PATH_MAX * 2 + 64];
	const char *name, *slash;
	GElf_Word want;
	uint32_t crc = 0;
	int i, fd;

	name = dwelf_elf_gnu_debuglink(elf, &want);
	if (!name || !*name || strchr(name, '/') || !path || path[0] != '/')
		return -ENOENT;
	slash = strrchr(path, '/');
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, path, slash - path);
	dir[slash - path] = '\0';
	for (i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(cand, sizeof(cand), "%s/%s", dir, name);
		else if (i == 1)
			snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, name);
		else
			snprintf(cand, sizeof(cand), DBG_DEBUG_DIR "%s/%s", dir, name);
		if (!strcmp(cand, path))
			continue;
		fd = open(cand, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (file_crc(fd, &crc) || crc != want) {
			close(fd);
			continue;
		}
		if (!take_fd(x, fd, SYM_SRC_DEBUGFILE))
			return 0;
	}
	return -ENOENT;
}

/* ------------------------------------------------------------ debuginfod */

static int ask_debuginfod(struct dbg *d, const unsigned char *id, int n, struct dbg_syms *x)
{
	int fd, why;

	if (d->fails_in_row >= DBG_DOWN_AFTER) {
		x->why = DBG_WHY_SKIPPED;
		d->st.failed[DBG_WHY_SKIPPED]++;
		return -ENOENT;
	}
	d->st.queries++;
	fd = job_ask(id, n, d->timeout_s);
	if (fd >= 0) {
		d->fails_in_row = 0;
		if (!take_fd(x, fd, SYM_SRC_DEBUGINFOD)) {
			d->st.found++;
			return 0;
		}
		why = DBG_WHY_NOT_FOUND; /* a debug file without symbols */
	} else if (fd == -ETIMEDOUT) {
		why = DBG_WHY_TIMEOUT;
	} else if (fd == -ENOENT) {
		why = DBG_WHY_NOT_FOUND;
	} else {
		why = DBG_WHY_ERROR;
	}
	if (why == DBG_WHY_NOT_FOUND)
		d->fails_in_row = 0;
	else
		d->fails_in_row++;
	d->st.failed[why]++;
	x->why = why;
	return -ENOENT;
}

int dbg_find(struct dbg *d, Elf *elf, const char *path, struct dbg_syms *x)
{
	unsigned char id[64];
	int n, err;

	memset(x, 0, sizeof(*x));
	x->fd = -1;
	err = mini_debuginfo(elf, x);
	if (err != -ENOENT)
		return err;
	n = dbg_build_id(elf, id);
	if (n > 0 && !open_build_id(id, n, x))
		return 0;
	if (!open_debuglink(elf, path, x))
		return 0;
	if (d && n > 0)
		return ask_debuginfod(d, id, n, x);
	return -ENOENT;
}
