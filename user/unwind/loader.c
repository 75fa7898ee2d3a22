// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * loader.c - unwind tables into a session's BPF maps (loader.h).
 *
 * A file is opened through /proc/PID/map_files (the very inode mapped, deleted or in
 * another mount namespace) or, failing that, /proc/PID/root + its path checked against the
 * inode; [vdso] is read out of /proc/PID/mem.  Its table is built from the image with
 * libelf/libdw (table.c) and copied into the next free rows of unw_rows.  Rows are never
 * freed while the session lives: the cap bounds them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elfutils/libdwelf.h>

#include "unwind/loader.h"
#include "unwind/table.h"
#include "util/u64map.h"

/* u64map values of a file key: its state */
#define FILE_FAILED UINT64_C(1)
#define FILE_FULL UINT64_C(2)
#define FILE_LOADED UINT64_C(3)

struct unwl {
	int rows_fd, files_fd, procs_fd;
	struct unw_row *rows; /* the mmap()ed unw_rows */
	size_t rows_map_len;
	uint32_t max_rows;
	uint32_t used;
	struct u64map files;   /* file key -> FILE_* */
	struct unwl_stats st;  /* the loading thread's */
	pthread_mutex_t lock;  /* of pub */
	struct unwl_stats pub; /* st as of the end of the last unwl_add_pid(), for any thread */
};

struct unwl *unwl_new(struct bpf_map *rows, struct bpf_map *files, struct bpf_map *procs)
{
	struct unwl *l = calloc(1, sizeof(*l));
	size_t pg = sysconf(_SC_PAGESIZE);

	if (!l || u64map_init(&l->files, 256)) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT);
	pthread_mutex_init(&l->lock, NULL);
	l->rows_fd = bpf_map__fd(rows);
	l->files_fd = bpf_map__fd(files);
	l->procs_fd = bpf_map__fd(procs);
	l->max_rows = bpf_map__max_entries(rows);
	l->rows_map_len = ((size_t)l->max_rows * sizeof(struct unw_row) + pg - 1) / pg * pg;
	l->rows = mmap(NULL, l->rows_map_len, PROT_READ | PROT_WRITE, MAP_SHARED, l->rows_fd, 0);
	if (l->rows == MAP_FAILED) {
		int err = errno;

		u64map_free(&l->files);
		pthread_mutex_destroy(&l->lock);
		free(l);
		errno = err;
		return NULL;
	}
	return l;
}

void unwl_free(struct unwl *l)
{
	if (!l)
		return;
	munmap(l->rows, l->rows_map_len);
	u64map_free(&l->files);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void unwl_get_stats(struct unwl *l, struct unwl_stats *st)
{
	if (!l) {
		memset(st, 0, sizeof(*st));
		return;
	}
	pthread_mutex_lock(&l->lock);
	*st = l->pub;
	pthread_mutex_unlock(&l->lock);
}

void unwl_forget_pid(struct unwl *l, int pid)
{
	__u32 k = pid;

	if (l)
		bpf_map_delete_elem(l->procs_fd, &k);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Bytes of the CFI sections (.eh_frame, .debug_frame) of elf. */
static uint64_t cfi_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	const char *name;
	uint64_t n = 0;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".eh_frame") || !strcmp(name, ".debug_frame")))
			n += sh.sh_size;
	}
	return n;
}

/* Build elf's table and load it under key: FILE_LOADED, FILE_FULL or FILE_FAILED. */
static uint64_t load_table(struct unwl *l, Elf *elf, uint64_t key)
{
	struct unw_table t = {};
	struct unw_file f;
	uint64_t t0 = mono_ns(), state = FILE_FAILED;

	if (!elf || elf_kind(elf) != ELF_K_ELF || unw_build_elf(elf, &t) || !t.nr) {
		l->st.no_cfi++;
		goto cleanup;
	}
	l->st.cfi_bytes += cfi_bytes(elf);
	if (t.nr > l->max_rows - l->used) {
		l->st.full++;
		state = FILE_FULL;
		goto cleanup;
	}
	memcpy(l->rows + l->used, t.rows, t.nr * sizeof(*t.rows));
	f.first = l->used;
	f.nr = t.nr;
	if (bpf_map_update_elem(l->files_fd, &key, &f, BPF_ANY)) {
		l->st.full++; /* unw_files full */
		state = FILE_FULL;
		goto cleanup;
	}
	l->used += t.nr;
	l->st.files++;
	l->st.rows = l->used;
	l->st.bytes = (uint64_t)l->used * sizeof(struct unw_row);
	state = FILE_LOADED;
cleanup:
	l->st.build_ns += mono_ns() - t0;
	unw_table_free(&t);
	return state;
}

/* The key of a file: its build id's first 8 bytes, else a hash of device and inode. */
static uint64_t file_key(Elf *elf, uint64_t dev, uint64_t ino)
{
	const void *id;
	uint64_t k = 0;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : 0;

	if (n >= 8) {
		memcpy(&k, id, 8);
	} else {
		k = (dev * 0x9e3779b97f4a7c15ULL) ^ (ino + 0x632be59bd9b4e019ULL);
		k *= 0xff51afd7ed558ccdULL;
	}
	if (k == U64MAP_EMPTY)
		k--;
	return k;
}

/* The load bias of a mapping of file offset pgoff at start: ELF vaddr = address - bias. */
static int map_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (pgoff >= (ph.p_offset & ~4095ULL) && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = start - pgoff + ph.p_offset - ph.p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* Open the file mapped at [start, end) of pid, the inode ino. */
static int open_mapped(int pid, uint64_t start, uint64_t end, const char *path, uint64_t ino)
{
	char p[4200];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(p, sizeof(p), "/proc/%d/root%s", pid, path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st) && st.st_ino == ino)
		return fd;
	if (fd >= 0)
		close(fd);
	return -ENOENT;
}

int unwl_add_pid(struct unwl *l, int pid)
{
	unsigned long long start, end, pgoff, ino;
	char path[64], line[4400], perms[8], name[4096];
	struct unw_proc *p = NULL;
	unsigned int maj, min;
	uint64_t key, *state, bias;
	char *img = NULL;
	FILE *f = NULL;
	__u32 k = pid;
	int err = 0, fd, n;
	Elf *elf;

	if (!l)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (fgets(line, sizeof(line), f)) {
		name[0] = '\0';
		n = sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095[^\n]", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, name);
		if (n < 7 || perms[2] != 'x')
			continue;
		if (name[0] != '/' && strcmp(name, "[vdso]"))
			continue;
		if (p->nr == UNW_MAX_MAPS) {
			l->st.maps_over++;
			continue;
		}
		elf = NULL;
		fd = -1;
		if (!strcmp(name, "[vdso]")) {
			size_t len = end - start;
			int mem;

			snprintf(path, sizeof(path), "/proc/%d/mem", pid);
			mem = open(path, O_RDONLY | O_CLOEXEC);
			free(img);
			img = mem >= 0 ? malloc(len) : NULL;
			if (img && pread(mem, img, len, start) == (ssize_t)len)
				elf = elf_memory(img, len);
			if (mem >= 0)
				close(mem);
			maj = min = UINT32_MAX;
			ino = len;
		} else {
			fd = open_mapped(pid, start, end, name, ino);
			if (fd >= 0)
				elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		}
		if (!elf || map_bias(elf, start, pgoff, &bias)) {
			elf_end(elf);
			if (fd >= 0)
				close(fd);
			continue;
		}
		key = file_key(elf, (uint64_t)maj << 32 | min, ino);
		state = u64map_get(&l->files, key);
		if (!state) {
			err = u64map_put(&l->files, key, load_table(l, elf, key));
			if (err)
				goto cleanup;
			state = u64map_get(&l->files, key);
		}
		elf_end(elf);
		if (fd >= 0)
			close(fd);
		if (*state != FILE_LOADED)
			continue;
		p->maps[p->nr].start = start;
		p->maps[p->nr].end = end;
		p->maps[p->nr].bias = bias;
		p->maps[p->nr].file = key;
		p->nr++;
	}
	/* /proc/PID/maps is sorted by address: so is p->maps */
	if (bpf_map_update_elem(l->procs_fd, &k, p, BPF_ANY)) {
		err = -errno;
		if (err == -E2BIG)
			l->st.procs_full++;
	} else
		l->st.procs++;
cleanup:
	free(img);
	free(p);
	fclose(f);
	pthread_mutex_lock(&l->lock);
	l->pub = l->st;
	pthread_mutex_unlock(&l->lock);
	return err;
}
