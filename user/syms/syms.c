// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * syms.c - kernel and user stack address symbolizer.
 *
 *   struct syms
 *   |- ktab       /proc/kallsyms: one read() into one buffer, parsed in place (names are NUL
 *   |             terminated inside it), qsort only if out of order, one entry per address;
 *   |             the readable names of mangled (Rust) kernel symbols, made on first use.
 *   |- procs[]    pid -> sorted file mappings of /proc/PID/maps, each pointing at a file.
 *   `- files[]    (dev, inode, path) -> PT_LOAD segments + sorted FUNC symbols of .symtab and
 *                 .dynsym, names copied into one string pool; the Elf handle is closed.
 *                 Each symbol's readable name (demangled, unversioned) is made on first use.
 *
 *   user addr --maps--> file offset --PT_LOAD--> ELF vaddr --bsearch--> symbol + offset
 *
 * Guarantees: every lookup is a binary search once the tables are loaded; nothing is loaded
 * before it is needed; strings handed out live until syms__free(), or for a file's
 * symbols until syms__forget_gone() drops the last cached process mapping it; no global state
 * besides libelf's elf_version().
 * A file without .symtab also gets the .symtab of the first of its MiniDebugInfo, a separate
 * debug file (build id, .gnu_debuglink) and a debuginfod server that has one
 * (syms/debuginfo.h); code in no file mapping is named from /tmp/perf-PID.map (syms/perfmap.h).
 * Each symbol remembers where its name came from (sym.src).
 * A process that may exit before its lookups is captured with syms__add_pid() while it
 * lives: its maps, and the files that cannot be reopened by path later.
 * Does not: read DWARF (no inlined frames, no lines), notice a pid
 * reused after its maps were cached (see syms__forget_pid()), or notice a deleted file
 * whose inode got reused under the same path.  A library dlopen()ed after the maps were read
 * is found only after syms__recheck_maps(), and only while the process lives.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syms/debuginfo.h"
#include "syms/demangle.h"
#include "syms/perfmap.h"
#include "syms/syms.h"
#include "util/array.h"
#include "util/u64map.h"

#define SYMS_PID_BUCKETS 1024
#define SYMS_FILE_BUCKETS 256
#define KSYM_KERNEL UINT32_MAX /* ksym.mod of a vmlinux symbol */
#define DELETED_SUFFIX " (deleted)"
#define FUNC_MAX 1024 /* longest readable name kept; longer demangled names are cut */

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset of the name in ktab.buf; the type letter is at name - 2 */
	uint32_t mod;  /* offset of the module name in ktab.buf, or KSYM_KERNEL */
};

struct ktab {
	char *buf;
	struct ksym *syms;
	size_t cnt;
	bool loaded;
	int err;	     /* load error, returned by every later lookup */
	struct u64map funcs; /* name offset -> malloc'd readable name (mangled names only) */
};

struct usym {
	uint64_t addr;
	uint64_t size;
	const char *name;
	const char *func; /* readable name: NULL until first asked, name itself, or malloc'd */
	uint32_t rank;	  /* lower wins among symbols at one address */
	uint32_t src;	  /* enum sym_src */
};

_Static_assert(offsetof(struct ksym, addr) == 0 && offsetof(struct usym, addr) == 0,
	       "sym_covering() reads the address first");

/*
 * In a sorted array of n symbols of sz bytes, each starting with its
 * uint64_t address, the one that covers addr: the last at or below it
 * (binary search for the first above).  NULL when addr is below them all.
 */
static const void *sym_covering(const void *syms, size_t n, size_t sz, uint64_t addr)
{
	const char *base = syms;
	size_t lo = 0, hi = n, mid;
	uint64_t a;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&a, base + mid * sz, sizeof(a));
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? base + (lo - 1) * sz : NULL;
}

struct seg {
	uint64_t off;
	uint64_t vaddr;
	uint64_t memsz;
};

struct file {
	struct file *next;
	uint64_t dev;
	uint64_t ino;
	char *path; /* as /proc/PID/maps shows it, " (deleted)" included */
	bool loaded;
	bool reachable; /* seen to open by path (same inode): loading can wait */
	bool mapped;	/* a cached process maps it (syms__forget_gone()'s mark) */
	int err;
	int dbg_why; /* enum dbg_why: debuginfod asked for its symbols in vain */
	struct usym *syms;
	size_t cnt;
	char *strs;
	struct seg *segs;
	size_t nsegs;
};

struct map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	struct file *file;
};

struct proc {
	struct proc *next;
	int pid;
	bool gone;	    /* found gone by syms__forget_gone() */
	unsigned int epoch; /* kagg_syms.epoch when the maps were read or last re-read */
	struct map *maps;
	size_t cnt;
	unsigned int uid; /* its owner: who may own its perf map besides root */
	bool pmap_read;	  /* /tmp/perf-PID.map read (or found missing) at pmap_epoch */
	unsigned int pmap_epoch;
	struct pmap pmap;
};

struct syms {
	struct ktab k;
	struct proc *procs[SYMS_PID_BUCKETS];
	struct file *files[SYMS_FILE_BUCKETS];
	unsigned int epoch;   /* bumped by syms__recheck_maps() */
	struct file *images;  /* syms__image()'s, newest first */
	struct dbg *dbg;      /* debuginfod, when DEBUGINFOD_URLS is set */
	const char *pmap_dir; /* where perf maps are: /tmp */
};

/* ------------------------------------------------------------------ helpers */

/* Read a whole (proc) file into a NUL-terminated malloc()ed buffer. */
static int read_all(const char *path, size_t cap, char **bufp, size_t *lenp)
{
	size_t len = 0;
	char *buf, *nb;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		if (cap - len < 65536) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

/* Parse lowercase/uppercase hex digits at *pp, advance *pp past them. */
static uint64_t parse_hex(char **pp)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned int d;

	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		v = v << 4 | d;
	}
	*pp = (char *)p;
	return v;
}

static void sym_clear(struct sym *out)
{
	out->name = NULL;
	out->offset = 0;
	out->module = NULL;
	out->func = NULL;
	out->src = SYM_SRC_NONE;
	out->dbg_why = 0;
}

char *syms_func_name(const char *name)
{
	const char *at = name[0] ? strchr(name + 1, '@') : NULL;
	char base[FUNC_MAX], out[FUNC_MAX];
	size_t n = at ? (size_t)(at - name) : strlen(name);
	int err;

	if (n >= sizeof(base))
		return at ? strndup(name, n) : NULL;
	memcpy(base, name, n);
	base[n] = '\0';
	err = demangle_name(base, out, sizeof(out));
	if (!err || err == -ENAMETOOLONG)
		return strdup(out);
	return at ? strdup(base) : NULL;
}

/* ------------------------------------------------------------------ kernel */

/* Among symbols at one address prefer global text, then local text, then weak, then data. */
static int ksym_rank(char type)
{
	switch (type) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
	case 'w':
		return 2;
	default:
		return 3;
	}
}

static int ksym_cmp(const void *a, const void *b, void *ctx)
{
	const struct ksym *x = a, *y = b;
	const char *buf = ctx;
	int rx, ry;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	rx = ksym_rank(buf[x->name - 2]);
	ry = ksym_rank(buf[y->name - 2]);
	if (rx != ry)
		return rx - ry;
	/* file order: deterministic and keeps vmlinux's first alias */
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Lines are "ffffffff81000000 T _stext\n" or "ffffffffc0201000 t name\t[module]\n".  Absolute
 * symbols (a/A, per-cpu offsets near 0) can never be a stack address and are dropped.
 */
static int ktab_load(struct ktab *k)
{
	char *p, *end, *nl, *name, *mod;
	size_t len, n = 0, cap = 1;
	bool nonzero = false;
	struct ksym *ks;
	uint64_t addr;
	char type;
	int err;

	err = read_all("/proc/kallsyms", 4 << 20, &k->buf, &len);
	if (err)
		return err;
	if (len >= KSYM_KERNEL)
		return -EFBIG;
	p = realloc(k->buf, len + 1); /* give back the read slack */
	if (p)
		k->buf = p;
	end = k->buf + len;
	for (p = k->buf; (p = memchr(p, '\n', end - p)); p++)
		cap++;
	k->syms = malloc(cap * sizeof(*k->syms));
	if (!k->syms)
		return -ENOMEM;

	for (p = k->buf; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		*nl = '\0';
		addr = parse_hex(&p);
		if (p[0] != ' ' || !p[1] || p[2] != ' ' || !p[3])
			continue;
		type = p[1];
		if (type == 'a' || type == 'A')
			continue;
		name = p + 3;
		mod = strchr(name, '\t');
		ks = &k->syms[n];
		ks->mod = KSYM_KERNEL;
		if (mod) {
			*mod++ = '\0';
			if (*mod == '[')
				mod++;
			mod[strcspn(mod, "]")] = '\0';
			ks->mod = mod - k->buf;
		}
		ks->addr = addr;
		ks->name = name - k->buf;
		nonzero |= addr != 0;
		n++;
	}
	/* kptr_restrict / unprivileged: every address reads as 0, nothing can be resolved */
	if (!nonzero)
		n = 0;

	/* vmlinux is listed in address order; only modules and BPF programs may break it */
	for (size_t i = 1; i < n; i++) {
		if (ksym_cmp(&k->syms[i - 1], &k->syms[i], k->buf) > 0) {
			qsort_r(k->syms, n, sizeof(*k->syms), ksym_cmp, k->buf);
			break;
		}
	}
	k->cnt = 0;
	for (size_t i = 0; i < n; i++)
		if (!k->cnt || k->syms[i].addr != k->syms[k->cnt - 1].addr)
			k->syms[k->cnt++] = k->syms[i];
	return 0;
}

/* Readable name of the symbol named at offset name of k->buf: only Rust ones are mangled. */
static const char *ktab_func(struct ktab *k, uint32_t name)
{
	const char *raw = k->buf + name;
	uint64_t *v;
	char *f;

	if (raw[0] != '_' || (raw[1] != 'R' && raw[1] != 'Z'))
		return raw;
	if (!k->funcs.cap && u64map_init(&k->funcs, 64))
		return raw;
	v = u64map_get(&k->funcs, name);
	if (v)
		return (const char *)(uintptr_t)*v;
	f = syms_func_name(raw);
	if (!f || u64map_put(&k->funcs, name, (uintptr_t)f)) {
		free(f);
		return raw;
	}
	return f;
}

int syms__kernel(struct syms *s, uint64_t addr, struct sym *out)
{
	struct ktab *k;
	const struct ksym *ks;

	if (!s || !out)
		return -EINVAL;
	sym_clear(out);
	k = &s->k;
	if (!k->loaded) {
		k->err = ktab_load(k);
		k->loaded = true;
	}
	if (k->err)
		return k->err;

	ks = sym_covering(k->syms, k->cnt, sizeof(*k->syms), addr);
	if (!ks)
		return -ENOENT;
	out->name = k->buf + ks->name;
	out->offset = addr - ks->addr;
	out->module = ks->mod == KSYM_KERNEL ? "[kernel]" : k->buf + ks->mod;
	out->func = ktab_func(k, ks->name);
	out->src = SYM_SRC_KALLSYMS;
	return 0;
}

/* ------------------------------------------------------------------ ELF files */

static int usym_cmp(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint32_t usym_rank(unsigned char bind, bool dynsym)
{
	uint32_t r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;

	/* .symtab first: same names, but it also has the locals */
	return r * 2 + dynsym;
}

/*
 * Append the FUNC/IFUNC symbols of elf's .symtab (and .dynsym unless symtab_only) to *syms;
 * names still point into the Elf.  *has_symtab tells whether a .symtab with data was seen.
 */
static int elf_collect(Elf *elf, bool symtab_only, uint32_t symtab_src, bool *has_symtab,
		       struct usym **syms, size_t *cnt, size_t *cap)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	struct usym *ns;
	const char *name;
	unsigned char type;
	GElf_Shdr sh;
	GElf_Sym sym;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
			continue;
		if (sh.sh_type != SHT_SYMTAB && (symtab_only || sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			*has_symtab = true;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 1; i < n; i++) {
			if (!gelf_getsym(data, i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (*cnt == *cap) {
				*cap = *cap ? *cap * 2 : 256;
				ns = realloc(*syms, *cap * sizeof(**syms));
				if (!ns)
					return -ENOMEM;
				*syms = ns;
			}
			ns = &(*syms)[(*cnt)++];
			ns->addr = sym.st_value;
			ns->size = sym.st_size;
			ns->name = name;
			ns->func = NULL;
			ns->rank = usym_rank(GELF_ST_BIND(sym.st_info), sh.sh_type == SHT_DYNSYM);
			ns->src = sh.sh_type == SHT_DYNSYM ? SYM_SRC_DYNSYM : symtab_src;
		}
	}
	return 0;
}

int syms_elf_build_id(const char *path, char *hex, size_t len)
{
	unsigned char id[64];
	int fd, i, n = -ENOENT;
	Elf *elf;

	if (len < 3)
		return -EINVAL;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		n = dbg_build_id(elf, id);
	if (n > 0 && (size_t)n * 2 + 1 > len)
		n = -ENAMETOOLONG;
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	elf_end(elf);
	close(fd);
	return n < 0 ? n : 0;
}

/*
 * Fill f->segs and f->syms from elf.  Symbols sorted, one per address, names in f->strs.
 * Without a .symtab, the first other source that has one adds its symbols (debuginfod through
 * d when not NULL).
 */
static int elf_load(struct file *f, Elf *elf, struct dbg *d)
{
	size_t i, n, cnt = 0, cap = 0, strsz = 0;
	struct dbg_syms x = { .fd = -1 };
	struct usym *syms = NULL;
	bool has_symtab = false;
	int err = 0;
	GElf_Phdr ph;
	char *p;

	if (elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (elf_getphdrnum(elf, &n)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	f->segs = calloc(n ? n : 1, sizeof(*f->segs));
	if (!f->segs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs].off = ph.p_offset;
		f->segs[f->nsegs].vaddr = ph.p_vaddr;
		f->segs[f->nsegs].memsz = ph.p_memsz;
		f->nsegs++;
	}

	err = elf_collect(elf, false, SYM_SRC_SYMTAB, &has_symtab, &syms, &cnt, &cap);
	if (err)
		goto cleanup;
	/* stripped: add the symbols of the first other source that has them */
	if (!has_symtab) {
		err = dbg_find(d, elf, f->path, &x);
		f->dbg_why = x.why;
		if (!err)
			err = elf_collect(x.elf, true, x.src, &has_symtab, &syms, &cnt, &cap);
		if (err && err != -ENOENT)
			goto cleanup;
		err = 0;
	}

	if (cnt) /* syms is NULL without symbols: qsort's argument must not be */
		qsort(syms, cnt, sizeof(*syms), usym_cmp);
	n = 0;
	for (i = 0; i < cnt; i++) {
		if (n && syms[i].addr == syms[n - 1].addr) {
			if (syms[i].size > syms[n - 1].size)
				syms[n - 1].size = syms[i].size;
			continue;
		}
		syms[n++] = syms[i];
		strsz += strlen(syms[i].name) + 1;
	}
	/* move the names out of the Elf so it can be closed */
	f->strs = malloc(strsz ? strsz : 1);
	if (!f->strs) {
		err = -ENOMEM;
		goto cleanup;
	}
	p = f->strs;
	for (i = 0; i < n; i++) {
		size_t l = strlen(syms[i].name) + 1;

		memcpy(p, syms[i].name, l);
		syms[i].name = p;
		p += l;
	}
	if (n < cnt) {
		struct usym *ns = realloc(syms, (n ? n : 1) * sizeof(*syms));

		if (ns)
			syms = ns;
	}
	f->syms = syms;
	f->cnt = n;
	syms = NULL;
cleanup:
	dbg_syms_free(&x);
	free(syms);
	return err;
}

/* The symbols of elf into f (NULL: not an ELF image, -ENOEXEC), then elf let go. */
static int elf_load_end(struct file *f, Elf *elf, struct dbg *d)
{
	int err = elf ? elf_load(f, elf, d) : -ENOEXEC;

	elf_end(elf);
	return err;
}

/* [vdso] has no file: copy it out of the process and parse the copy. */
static int file_load_vdso(struct syms *s, struct file *f, int pid, const struct map *m)
{
	size_t len = m->end - m->start;
	char path[64], *img = NULL;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	img = malloc(len);
	if (!img) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (pread(fd, img, len, m->start) != (ssize_t)len) {
		err = errno ? -errno : -EIO;
		goto cleanup;
	}
	err = elf_load_end(f, elf_memory(img, len), s->dbg);
cleanup:
	free(img);
	close(fd);
	return err;
}

/*
 * Open the file behind mapping m of pid: map_files works for deleted files and other mount
 * namespaces but needs CAP_SYS_ADMIN; then the pid's root; then the path as we see it.  The
 * last two are checked against the inode so a replaced file is not read instead.
 */
static int file_open(const struct file *f, int pid, const struct map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	size_t plen;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;

	/* a deleted file cannot be reopened by name; without map_files only the exe is reachable */
	plen = strlen(f->path);
	if (plen > strlen(DELETED_SUFFIX) &&
	    !strcmp(f->path + plen - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		char link[PATH_MAX];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0 || (size_t)n != plen || memcmp(link, f->path, plen))
			return -ENOENT;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (!fstat(fd, &st) && st.st_ino == f->ino)
			return fd;
		close(fd);
		return -ENOENT;
	}
	for (i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, f->path);
		fd = open(i == 0 ? path : f->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && st.st_ino == f->ino)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

static int file_load(struct syms *s, struct file *f, int pid, const struct map *m)
{
	int fd, err;

	if (!strcmp(f->path, "[vdso]"))
		return file_load_vdso(s, f, pid, m);
	fd = file_open(f, pid, m);
	if (fd < 0)
		return fd;
	err = elf_load_end(f, elf_begin(fd, ELF_C_READ_MMAP, NULL), s->dbg);
	close(fd);
	return err;
}

static void file_free(struct file *f)
{
	size_t i;

	for (i = 0; i < f->cnt; i++)
		if (f->syms[i].func != f->syms[i].name)
			free((char *)f->syms[i].func);
	free(f->path);
	free(f->syms);
	free(f->strs);
	free(f->segs);
	free(f);
}

static struct file *file_get(struct syms *s, uint64_t dev, uint64_t ino, const char *path)
{
	struct file **head = &s->files[(dev * 31 + ino) % SYMS_FILE_BUCKETS], *f;

	for (f = *head; f; f = f->next)
		if (f->dev == dev && f->ino == ino && !strcmp(f->path, path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	f->next = *head;
	*head = f;
	return f;
}

/* ------------------------------------------------------------------ processes */

static void proc_free(struct proc *p)
{
	pmap_free(&p->pmap);
	free(p->maps);
	free(p);
}

/* Put p in the cache, in place of the maps cached for its pid if any. */
static void proc_insert(struct syms *s, struct proc *p)
{
	struct proc **pp, *old;

	for (pp = &s->procs[p->pid % SYMS_PID_BUCKETS]; (old = *pp); pp = &old->next) {
		if (old->pid == p->pid) {
			*pp = old->next;
			proc_free(old);
			break;
		}
	}
	p->epoch = s->epoch;
	p->next = s->procs[p->pid % SYMS_PID_BUCKETS];
	s->procs[p->pid % SYMS_PID_BUCKETS] = p;
}

/*
 * Read the maps of pid into the cache (replacing older ones).  Keep file-backed mappings and
 * [vdso]; the kernel lists them sorted and disjoint.
 */
static int proc_load(struct syms *s, int pid, struct proc **pp)
{
	size_t len, cap = 0;
	char path[64], *buf = NULL, *line, *nl, *name;
	struct proc *p = NULL;
	unsigned int maj, min;
	unsigned long long start, end, pgoff, ino;
	struct map *nm;
	struct file *f;
	struct stat st;
	int n, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = read_all(path, 16384, &buf, &len);
	if (err == -ENOENT)
		err = -ESRCH;
	if (err)
		goto cleanup;
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (!stat(path, &st))
		p->uid = st.st_uid;
	for (line = buf; line < buf + len; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		*nl = '\0';
		n = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &start, &end, &pgoff, &maj,
			   &min, &ino, &n) < 6 ||
		    !n)
			continue;
		name = line + n;
		if (!*name || (*name == '[' && strcmp(name, "[vdso]")))
			continue;
		if (!strcmp(name, "[vdso]")) {
			/* one image per kernel and ABI: key it by its size */
			maj = min = UINT32_MAX;
			ino = end - start;
		}
		f = file_get(s, (uint64_t)maj << 32 | min, ino, name);
		if (!f) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (p->cnt == cap) {
			cap = cap ? cap * 2 : 64;
			nm = realloc(p->maps, cap * sizeof(*nm));
			if (!nm) {
				err = -ENOMEM;
				goto cleanup;
			}
			p->maps = nm;
		}
		nm = &p->maps[p->cnt++];
		nm->start = start;
		nm->end = end;
		nm->pgoff = pgoff;
		nm->file = f;
	}
	/* a zombie (or kernel thread) has no address space left */
	if (!p->cnt) {
		err = -ESRCH;
		goto cleanup;
	}
	proc_insert(s, p);
	*pp = p;
	p = NULL;
cleanup:
	if (p)
		proc_free(p);
	free(buf);
	return err;
}

static const struct map *proc_find_map(const struct proc *p, uint64_t addr)
{
	size_t lo = ARRAY_UPPER(p->maps, p->cnt, start, addr);

	if (!lo || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

static uint64_t file_vaddr(const struct file *f, uint64_t off)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++)
		if (off >= f->segs[i].off && off - f->segs[i].off < f->segs[i].memsz)
			return off - f->segs[i].off + f->segs[i].vaddr;
	return off;
}

static int file_sym(const struct file *f, uint64_t off, struct sym *out);

/*
 * An address in no file mapping: JIT code, named by the process's perf map if it has one.
 * The map is read on the first such lookup, and again after a syms__recheck_maps() when
 * it has grown (a JIT appends as it compiles).
 */
static int proc_pmap_sym(struct syms *s, struct proc *p, uint64_t addr, struct sym *out)
{
	const struct pmap_sym *ps;
	char path[4096];
	struct stat st;

	if (!p->pmap_read || (p->pmap_epoch != s->epoch && !p->gone)) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", s->pmap_dir, p->pid);
		if (!p->pmap_read || (!stat(path, &st) && st.st_size != p->pmap.size))
			pmap_load(&p->pmap, s->pmap_dir, p->pid, p->uid);
		p->pmap_read = true;
		p->pmap_epoch = s->epoch;
	}
	ps = pmap_find(&p->pmap, addr);
	if (!ps)
		return -ENOENT;
	out->name = ps->name;
	out->func = ps->name;
	out->offset = addr - ps->start;
	out->src = SYM_SRC_PERFMAP;
	return 0;
}

int syms__user(struct syms *s, int pid, uint64_t addr, struct sym *out)
{
	const struct map *m;
	struct file *f;
	struct proc *p;
	uint64_t off;
	int err;

	if (!s || !out || pid <= 0)
		return -EINVAL;
	sym_clear(out);
	for (p = s->procs[pid % SYMS_PID_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			break;
	if (!p) {
		err = proc_load(s, pid, &p);
		if (err)
			return err;
	}
	m = proc_find_map(p, addr);
	if (!m && p->epoch != s->epoch) {
		/* maps read before a syms__recheck_maps(): maybe a library came since */
		p->epoch = s->epoch;
		if (!proc_load(s, pid, &p))
			m = proc_find_map(p, addr);
	}
	if (!m)
		return proc_pmap_sym(s, p, addr, out);
	f = m->file;
	out->module = f->path;
	off = addr - m->start + m->pgoff;
	out->offset = off;
	if (!f->loaded) {
		f->err = file_load(s, f, pid, m);
		f->loaded = true;
	}
	err = f->err ? -ENOENT : file_sym(f, off, out);
	if (err)
		out->dbg_why = f->dbg_why;
	return err;
}

/* The symbol of file offset off in a loaded file: as syms__user() once the map is found. */
static int file_sym(const struct file *f, uint64_t off, struct sym *out)
{
	struct usym *us;

	off = file_vaddr(f, off);
	out->offset = off;
	/* f->syms is ours: the function name is filled in on first use */
	us = (struct usym *)sym_covering(f->syms, f->cnt, sizeof(*f->syms), off);
	if (!us)
		return -ENOENT;
	if (us->size && off - us->addr >= us->size)
		return -ENOENT;
	if (!us->func) {
		us->func = syms_func_name(us->name);
		if (!us->func)
			us->func = us->name;
	}
	out->name = us->name;
	out->func = us->func;
	out->offset = off - us->addr;
	out->src = us->src;
	return 0;
}

/* Can f be opened by its path later, without the process: the same inode, not deleted? */
static bool file_reachable(struct file *f)
{
	size_t plen = strlen(f->path), dlen = strlen(DELETED_SUFFIX);
	struct stat st;

	if (!f->reachable)
		f->reachable = f->path[0] == '/' &&
			       !(plen > dlen && !strcmp(f->path + plen - dlen, DELETED_SUFFIX)) &&
			       !stat(f->path, &st) && st.st_ino == f->ino;
	return f->reachable;
}

int syms__add_pid(struct syms *s, int pid)
{
	struct proc *p;
	size_t i;
	int err;

	if (!s || pid <= 0)
		return -EINVAL;
	err = proc_load(s, pid, &p);
	if (err)
		return err;
	for (i = 0; i < p->cnt; i++) {
		struct file *f = p->maps[i].file;

		if (f->loaded || file_reachable(f))
			continue;
		f->err = file_load(s, f, pid, &p->maps[i]);
		f->loaded = true;
	}
	return 0;
}

void syms__recheck_maps(struct syms *s)
{
	if (s)
		s->epoch++;
}

int syms__image(struct syms *s, void *img, size_t len, uint64_t off, struct sym *out)
{
	struct file *f;

	if (!s || !img || !out)
		return -EINVAL;
	sym_clear(out);
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->path = strdup("[image]");
	if (!f->path) {
		free(f);
		return -ENOMEM;
	}
	f->next = s->images;
	s->images = f;
	f->loaded = true;
	f->err = elf_load_end(f, elf_memory(img, len), NULL);
	out->module = f->path;
	out->offset = off;
	if (f->err)
		return f->err;
	return file_sym(f, off, out);
}

void syms__forget_pid(struct syms *s, int pid)
{
	struct proc **pp, *p;

	if (!s || pid <= 0)
		return;
	for (pp = &s->procs[pid % SYMS_PID_BUCKETS]; (p = *pp); pp = &p->next) {
		if (p->pid == pid) {
			*pp = p->next;
			proc_free(p);
			return;
		}
	}
}

/* Free the files that no cached process maps any more: their last process was dropped. */
static void files_forget_unmapped(struct syms *s)
{
	struct file **fp, *f;
	struct proc *p;
	size_t i, m;

	for (i = 0; i < SYMS_FILE_BUCKETS; i++)
		for (f = s->files[i]; f; f = f->next)
			f->mapped = false;
	for (i = 0; i < SYMS_PID_BUCKETS; i++)
		for (p = s->procs[i]; p; p = p->next)
			for (m = 0; m < p->cnt; m++)
				if (p->maps[m].file)
					p->maps[m].file->mapped = true;
	for (i = 0; i < SYMS_FILE_BUCKETS; i++) {
		for (fp = &s->files[i]; (f = *fp);) {
			if (f->mapped) {
				fp = &f->next;
				continue;
			}
			*fp = f->next;
			file_free(f);
		}
	}
}

void syms__dbg_stats(const struct syms *s, struct dbg_stats *st)
{
	dbg_get_stats(s ? s->dbg : NULL, st);
}

size_t syms__nr_files(const struct syms *s)
{
	const struct file *f;
	size_t i, n = 0;

	for (i = 0; s && i < SYMS_FILE_BUCKETS; i++)
		for (f = s->files[i]; f; f = f->next)
			n++;
	return n;
}

size_t syms__forget_gone(struct syms *s)
{
	struct proc **pp, *p;
	size_t i, n = 0;

	for (i = 0; s && i < SYMS_PID_BUCKETS; i++) {
		for (pp = &s->procs[i]; (p = *pp);) {
			if (p->gone) {
				*pp = p->next;
				proc_free(p);
				n++;
				continue;
			}
			p->gone = syms_pid_gone(p->pid);
			pp = &p->next;
		}
	}
	if (n) /* no process dropped: no file lost its last one */
		files_forget_unmapped(s);
	return n;
}

/* ------------------------------------------------------------------ lifetime, format */

struct syms *syms__new(void)
{
	struct syms *s;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ELIBBAD;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL; /* errno ENOMEM, from calloc */
	s->pmap_dir = "/tmp";
	s->dbg = dbg_new();
	return s;
}

void syms__free(struct syms *s)
{
	struct proc *p, *pn;
	struct file *f, *fn;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < SYMS_PID_BUCKETS; i++)
		for (p = s->procs[i]; p; p = pn) {
			pn = p->next;
			proc_free(p);
		}
	for (i = 0; i < SYMS_FILE_BUCKETS; i++)
		for (f = s->files[i]; f; f = fn) {
			fn = f->next;
			file_free(f);
		}
	for (i = 0; i < s->k.funcs.cap; i++)
		if (s->k.funcs.keys[i] != U64MAP_EMPTY)
			free((char *)(uintptr_t)s->k.funcs.vals[i]);
	u64map_free(&s->k.funcs);
	for (f = s->images; f; f = fn) {
		fn = f->next;
		file_free(f);
	}
	dbg_free(s->dbg);
	free(s->k.syms);
	free(s->k.buf);
	free(s);
}

const char *sym__format(const struct sym *sym, uint64_t addr, unsigned int flags, char *buf,
			size_t len)
{
	const char *func = sym ? (sym->func ? sym->func : sym->name) : NULL;
	const char *base;

	if (!buf || !len)
		return buf;
	if (flags & SYM_ADDRS) {
		if (func)
			snprintf(buf, len, "%s+0x%" PRIx64, func, sym->offset);
		else if (sym && sym->module)
			snprintf(buf, len, "%s+0x%" PRIx64, sym->module, sym->offset);
		else
			snprintf(buf, len, "[unknown] 0x%" PRIx64, addr);
		return buf;
	}
	if (func) {
		snprintf(buf, len, "%s", func);
	} else if (sym && sym->module) {
		/* as perf's flame graph scripts do: the file's base name, in brackets */
		base = strrchr(sym->module, '/');
		base = base ? base + 1 : sym->module;
		snprintf(buf, len, base[0] == '[' ? "%s" : "[%s]", base);
	} else {
		snprintf(buf, len, "[unknown]");
	}
	return buf;
}
