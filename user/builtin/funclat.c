// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * funclat sessions: resolve a function pattern (kernel, or LIB:FUNC /
 * PATH:FUNC in userspace) to a list of functions, load bpf/funclat.bpf.c
 * with the attach path the kernel accepts, and read one histogram per
 * function.
 *
 * Attach paths, in order of preference:
 *	kernel, one function:	fentry/fexit -> kprobe/kretprobe
 *	kernel, a glob:		kprobe.multi -> one kprobe/kretprobe per function
 *	user:			uprobe.multi -> one uprobe/uretprobe per function
 * A path is chosen at open by loading it and attaching it once (then
 * detaching): what failed, and why, goes into the meta's attach note.
 *
 * Function i (names sorted) gets attach cookie i: it is the histogram's
 * key.id.  Paths with one probe per function keep the links beyond the
 * first in the tool's state (the session holds one link per program).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/funclat.h>
#include "shared/funclat.h"
#include "funclat.skel.h"
#include "syms/ldcache.h"
#include "util/opts.h"
#include "session/session_internal.h"
#include "snapshot/snapshot_internal.h"
#include "util/tracefs.h"

#define slog session_log
/* Threads inside traced functions at once, without task storage (its hash's size). */
#define FUNCLAT_HASH_THREADS 8192

struct func {
	char *name;
	uint64_t offset; /* user functions: file offset of the entry */
};

enum fl_path { FL_FENTRY, FL_KPROBE_MULTI, FL_KPROBE, FL_UPROBE_MULTI, FL_UPROBE };

static const char *const path_names[] = {
	[FL_FENTRY] = "fentry", [FL_KPROBE_MULTI] = "kprobe.multi",
	[FL_KPROBE] = "kprobe", [FL_UPROBE_MULTI] = "uprobe.multi",
	[FL_UPROBE] = "uprobe",
};

struct funclat {
	struct funclat_bpf *skel;
	enum fl_path path;
	bool user;
	char binary[PATH_MAX];
	char event[PATH_MAX + 256]; /* meta event: "kernel:PATTERN" or "BINARY:PATTERN" */
	struct func *funcs;
	size_t nr_funcs;
	int pid;
	enum kagg_buckets buckets;
	int exp_scale;
	unsigned int exp_cells;
	bool exp_dense;	  /* exp buckets in exp_hist, one array per function (else exp_cells) */
	bool hist_shared; /* log2 histograms in hist_all, shared by the CPUs (else hist) */
	size_t percpu_max_bytes;
	unsigned int exp_hot_max; /* else: dense histograms for frequent functions */
	/* One-probe-per-function paths: links of functions 1..n-1 of programs 0 and 1. */
	struct bpf_link **extra[2];
};

/* ------------------------------------------------------------ resolving */

/* Copy src into out (truncating, always terminated). */
static void copy_str(char *out, size_t sz, const char *src)
{
	size_t n = strlen(src);

	if (n >= sz)
		n = sz - 1;
	memcpy(out, src, n);
	out[n] = '\0';
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static void free_funcs(struct func *f, size_t n)
{
	size_t i;

	for (i = 0; f && i < n; i++)
		free(f[i].name);
	free(f);
}

static int add_func(struct func **arr, size_t *n, size_t *cap, const char *name, uint64_t off)
{
	struct func *tmp;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		tmp = realloc(*arr, *cap * sizeof(**arr));
		if (!tmp)
			return -ENOMEM;
		*arr = tmp;
	}
	(*arr)[*n].name = strdup(name);
	if (!(*arr)[*n].name)
		return -ENOMEM;
	(*arr)[(*n)++].offset = off;
	return 0;
}

/* Sort by name, drop duplicates (same name; for user functions also same offset). */
static void unique_funcs(struct func *f, size_t *n, bool by_offset)
{
	size_t i, j, out = 0;

	qsort(f, *n, sizeof(*f), cmp_func);
	for (i = 0; i < *n; i++) {
		bool dup = out && !strcmp(f[out - 1].name, f[i].name);

		for (j = 0; !dup && by_offset && j < out; j++)
			dup = f[j].offset == f[i].offset;
		if (dup) {
			free(f[i].name);
			continue;
		}
		f[out++] = f[i];
	}
	*n = out;
}

/* Kernel functions matching pattern: available_filter_functions, else kallsyms text symbols. */
static int kernel_funcs(struct kagg_session *s, const char *pattern, struct func **out, size_t *nr)
{
	char msg[256], line[512], name[256];
	size_t cap = 0, n = 0;
	struct func *arr = NULL;
	bool ftrace = false;
	FILE *f = NULL;
	int err = 0;

	if (!tracefs_ensure(msg, sizeof(msg)))
		f = fopen(TRACEFS_DIR "/available_filter_functions", "re");
	if (f)
		ftrace = true;
	else
		f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type = 'T';

		if (ftrace) {
			if (sscanf(line, "%255s", name) != 1)
				continue;
		} else if (sscanf(line, "%*s %c %255s", &type, name) != 2 ||
			   (type != 't' && type != 'T')) {
			continue;
		}
		if (fnmatch(pattern, name, 0))
			continue;
		err = add_func(&arr, &n, &cap, name, 0);
		if (err)
			break;
	}
	fclose(f);
	if (!err && !n) {
		slog(s, KAGG_LOG_WARN, "no kernel function matches '%s' (see %s)", pattern,
		     ftrace ? TRACEFS_DIR "/available_filter_functions" : "/proc/kallsyms");
		err = -ENOENT;
	}
	if (err) {
		free_funcs(arr, n);
		return err;
	}
	unique_funcs(arr, &n, false);
	*out = arr;
	*nr = n;
	return 0;
}

/* A mapped file of pid named like lib. */
static int lib_from_maps(int pid, const char *lib, char *out, size_t out_sz)
{
	char path[64], line[PATH_MAX + 128];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *base;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		base = strrchr(p, '/') + 1;
		if (lib_name_matches(base, lib)) {
			copy_str(out, out_sz, p);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/*
 * A program name in $PATH's absolute directories.  An empty or relative
 * entry means the current directory (or one below it): a root tool never
 * runs what the directory it was started in offers, so those are skipped.
 */
static int from_path_env(const char *name, char *out, size_t out_sz)
{
	const char *env = getenv("PATH");
	char dir[PATH_MAX], path[2 * PATH_MAX + 2];
	const char *p = env, *e;

	while (p && *p) {
		e = strchr(p, ':');
		snprintf(dir, sizeof(dir), "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
		p = e ? e + 1 : NULL;
		if (dir[0] != '/')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (!access(path, X_OK)) {
			copy_str(out, out_sz, path);
			return 0;
		}
	}
	return -ENOENT;
}

static int resolve_binary(struct kagg_session *s, const char *what, int pid, char *out,
			  size_t out_sz)
{
	if (strchr(what, '/')) {
		if (access(what, R_OK)) {
			slog(s, KAGG_LOG_WARN, "cannot read %s: %s", what, strerror(errno));
			return -ENOENT;
		}
		if (!realpath(what, out))
			copy_str(out, out_sz, what);
		return 0;
	}
	if ((pid && !lib_from_maps(pid, what, out, out_sz)) ||
	    !ldcache_find_system(what, out, out_sz) || !from_path_env(what, out, out_sz))
		return 0;
	slog(s, KAGG_LOG_WARN,
	     "no library or program '%s' found (tried %s" LDCACHE_PATH ", the "
	     "standard library directories and $PATH); give a path instead",
	     what, pid ? "the process's maps, " : "");
	return -ENOENT;
}

/* Functions of ELF file path matching pattern, with their file offsets. */
static int elf_funcs(struct kagg_session *s, const char *path, const char *pattern,
		     struct func **out, size_t *nr)
{
	struct func *arr = NULL;
	size_t cap = 0, n = 0;
	Elf_Scn *scn = NULL;
	int fd, err = 0;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		slog(s, KAGG_LOG_WARN, "%s is not an ELF file", path);
		err = -EINVAL;
		goto out;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		for (i = 0; !err && i < cnt; i++) {
			GElf_Sym sym;
			GElf_Shdr tsh;
			Elf_Scn *tscn;
			const char *name;

			if (!gelf_getsym(data, i, &sym) ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || fnmatch(pattern, name, 0))
				continue;
			tscn = elf_getscn(elf, sym.st_shndx);
			if (!tscn || !gelf_getshdr(tscn, &tsh))
				continue;
			err = add_func(&arr, &n, &cap, name,
				       sym.st_value - tsh.sh_addr + tsh.sh_offset);
		}
	}
	if (!err && !n) {
		slog(s, KAGG_LOG_WARN, "no function matches '%s' in %s", pattern, path);
		err = -ENOENT;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		free_funcs(arr, n);
		return err;
	}
	unique_funcs(arr, &n, true);
	*out = arr;
	*nr = n;
	return 0;
}

/* ------------------------------------------------------------ attaching */

static void drop_extra(struct funclat *t, int i)
{
	size_t j;

	if (!t->extra[i])
		return;
	for (j = 0; j + 1 < t->nr_funcs; j++)
		bpf_link__destroy(t->extra[i][j]);
	free(t->extra[i]);
	t->extra[i] = NULL;
}

/* Attach function j of program i (exit = i == 1) on a one-probe-per-function path. */
static struct bpf_link *attach_one(struct funclat *t, struct bpf_program *prog, bool ret, size_t j)
{
	if (t->path == FL_KPROBE) {
		LIBBPF_OPTS(bpf_kprobe_opts, ko, .bpf_cookie = j, .retprobe = ret);

		return bpf_program__attach_kprobe_opts(prog, t->funcs[j].name, &ko);
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = j, .retprobe = ret);

		return bpf_program__attach_uprobe_opts(prog, t->pid ? t->pid : -1, t->binary,
						       t->funcs[j].offset, &uo);
	}
}

/* Attach program i (0 entry, 1 return) to every function; NULL + errno. */
static struct bpf_link *funclat_attach(struct kagg_session *s, int i)
{
	struct funclat *t = s->tool;
	struct bpf_program *prog = s->progs[i];
	struct bpf_link *first = NULL;
	bool ret = i == 1;
	__u64 *cookies;
	size_t j;
	int err;

	drop_extra(t, i);
	switch (t->path) {
	case FL_FENTRY:
		return bpf_program__attach(prog);
	case FL_KPROBE_MULTI:
	case FL_UPROBE_MULTI: {
		const char **syms = calloc(t->nr_funcs, sizeof(*syms));
		unsigned long *offs = calloc(t->nr_funcs, sizeof(*offs));

		cookies = calloc(t->nr_funcs, sizeof(*cookies));
		if (!syms || !offs || !cookies) {
			free(syms);
			free(offs);
			free(cookies);
			errno = ENOMEM;
			return NULL;
		}
		for (j = 0; j < t->nr_funcs; j++) {
			syms[j] = t->funcs[j].name;
			offs[j] = t->funcs[j].offset;
			cookies[j] = j;
		}
		if (t->path == FL_KPROBE_MULTI) {
			LIBBPF_OPTS(bpf_kprobe_multi_opts, ko, .syms = syms, .cookies = cookies,
				    .cnt = t->nr_funcs, .retprobe = ret);

			first = bpf_program__attach_kprobe_multi_opts(prog, NULL, &ko);
		} else {
			LIBBPF_OPTS(bpf_uprobe_multi_opts, uo, .offsets = offs, .cookies = cookies,
				    .cnt = t->nr_funcs, .retprobe = ret);

			first = bpf_program__attach_uprobe_multi(prog, t->pid ? t->pid : -1,
								 t->binary, NULL, &uo);
		}
		err = errno;
		free(syms);
		free(offs);
		free(cookies);
		errno = err;
		return first;
	}
	case FL_KPROBE:
	case FL_UPROBE:
		first = attach_one(t, prog, ret, 0);
		if (!first || t->nr_funcs == 1)
			return first;
		t->extra[i] = calloc(t->nr_funcs - 1, sizeof(struct bpf_link *));
		if (!t->extra[i]) {
			bpf_link__destroy(first);
			errno = ENOMEM;
			return NULL;
		}
		for (j = 1; j < t->nr_funcs; j++) {
			t->extra[i][j - 1] = attach_one(t, prog, ret, j);
			if (!t->extra[i][j - 1]) {
				err = errno;
				drop_extra(t, i);
				bpf_link__destroy(first);
				errno = err;
				return NULL;
			}
		}
		return first;
	}
	errno = EINVAL;
	return NULL;
}

/* ------------------------------------------------------------ loading */

static const char *errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);

	return n ? n : "error";
}

/* Load the programs of path p; 0 or -errno. */
static int load_path(struct kagg_session *s, enum fl_path p)
{
	struct funclat *t = s->tool;
	struct bpf_program *entry, *exit;
	struct funclat_bpf *skel;
	struct bpf_program *all[10];
	int err, i, n = 0;

	skel = funclat_bpf__open();
	if (!skel)
		return -errno;
	all[n++] = skel->progs.funclat_fentry;
	all[n++] = skel->progs.funclat_fexit;
	all[n++] = skel->progs.funclat_kprobe_multi;
	all[n++] = skel->progs.funclat_kretprobe_multi;
	all[n++] = skel->progs.funclat_kprobe;
	all[n++] = skel->progs.funclat_kretprobe;
	all[n++] = skel->progs.funclat_uprobe_multi;
	all[n++] = skel->progs.funclat_uretprobe_multi;
	all[n++] = skel->progs.funclat_uprobe;
	all[n++] = skel->progs.funclat_uretprobe;
	entry = all[2 * p];
	exit = all[2 * p + 1];
	for (i = 0; i < n; i++)
		bpf_program__set_autoload(all[i], all[i] == entry || all[i] == exit);
	if (p == FL_FENTRY) {
		err = bpf_program__set_attach_target(entry, 0, t->funcs[0].name);
		if (!err)
			err = bpf_program__set_attach_target(exit, 0, t->funcs[0].name);
		if (err)
			goto fail;
	}
	/* Without task storage (5.10) the stacks of entry times are in a hash by thread id. */
	if (session_task_storage(s, true)) {
		bpf_map__set_max_entries(skel->maps.stacks_hash, 1);
	} else {
		bpf_map__set_autocreate(skel->maps.stacks, false);
		bpf_map__set_max_entries(skel->maps.stacks_hash, FUNCLAT_HASH_THREADS);
	}
	err = session_atomics_fallback(s, skel->obj);
	if (err)
		goto fail;
	skel->rodata->target_tgid = t->pid;
	skel->rodata->filter_cgroup = s->cgroup_fd >= 0;
	skel->rodata->nr_funcs = t->nr_funcs;
	skel->rodata->unit_ns = units_ns(s->unit);
	skel->rodata->unit_ns_log2 = units_log2(s->unit);
	/* per-CPU log2 histograms while their copies fit in percpu_max_bytes */
	t->hist_shared = 2 * t->nr_funcs * sizeof(struct kagg_hist_val) * (size_t)s->nr_cpus >
			 t->percpu_max_bytes;
	skel->rodata->hist_shared = t->hist_shared;
	bpf_map__set_max_entries(t->hist_shared ? skel->maps.hist_all : skel->maps.hist,
				 2 * t->nr_funcs);
	/* exp: dense for a few functions (SESSION_EXP_DENSE_FIT), else sparse */
	/* (sparse also when the caller caps the cells) */
	t->exp_dense = t->buckets == KAGG_BUCKETS_EXP && !t->exp_cells &&
		       t->nr_funcs <= SESSION_EXP_DENSE_FIT(t->exp_scale, (unsigned int)s->nr_cpus);
	skel->rodata->exp_dense = t->exp_dense;
	if (t->exp_dense)
		err = session_buckets_setup(s, t->buckets, t->exp_scale, skel->maps.exp_hist,
					    skel->maps.exp_cells, &skel->rodata->exp_params,
					    &skel->rodata->exp_words)
			      ?: bpf_map__set_max_entries(skel->maps.exp_hist, 2 * t->nr_funcs);
	else
		err = session_exp_cells_setup(s, t->buckets, t->exp_scale, t->exp_cells,
					      skel->maps.exp_cells, &skel->rodata->exp_params,
					      &skel->rodata->exp_words)
			      ?: session_exp_hot_setup(s, skel->maps.exp_hist, t->exp_cells,
						       &skel->rodata->exp_hot_max);
	t->exp_hot_max = skel->rodata->exp_hot_max;
	if (!err && t->exp_hot_max)
		err = bpf_map__set_max_entries(skel->maps.exp_hot_id, t->nr_funcs);
	if (err)
		goto fail;
	err = funclat_bpf__load(skel);
	if (err)
		goto fail;
	t->skel = skel;
	t->path = p;
	s->progs[0] = entry;
	s->progs[1] = exit;
	s->nr_progs = 2;
	session_bind(s, &skel->bss->gen, &skel->bss->armed, skel->maps.counters, FUNCLAT_CNT_MAX,
		     path_names[p]);
	return 0;
fail:
	funclat_bpf__destroy(skel);
	return err;
}

static void unload(struct kagg_session *s)
{
	struct funclat *t = s->tool;

	funclat_bpf__destroy(t->skel);
	t->skel = NULL;
	s->nr_progs = 0;
	s->gen = s->armed = NULL;
	s->counters = NULL;
}

/* Load path p and attach its entry program once; 0, or -errno with the phase in *phase. */
static int try_path(struct kagg_session *s, enum fl_path p, const char **phase)
{
	struct funclat *t = s->tool;
	struct bpf_link *l;
	int err;

	*phase = "load";
	err = load_path(s, p);
	if (err)
		return err;
	*phase = "attach";
	/* One kprobe tells whether kprobes work; multi paths attach as a whole. */
	if (p == FL_KPROBE || p == FL_UPROBE)
		l = attach_one(t, s->progs[0], false, 0);
	else
		l = funclat_attach(s, 0);
	if (!l) {
		err = -errno;
		drop_extra(t, 0);
		unload(s);
		return err ? err : -EOPNOTSUPP;
	}
	bpf_link__destroy(l);
	drop_extra(t, 0);
	/*
	 * A tracing program whose link is gone cannot attach again on kernels
	 * without re-attach (5.10: ENOENT, its trampoline went with the link):
	 * the session attaches a fresh load.
	 */
	if (p == FL_FENTRY) {
		unload(s);
		*phase = "load";
		return load_path(s, p);
	}
	return 0;
}

static bool have_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe/type", F_OK) ||
	       !access(TRACEFS_DIR "/kprobe_events", F_OK);
}

/* Append "name ERRNO" (or the kprobe explanation) to the note of failed paths. */
static void note_failure(char *note, size_t sz, enum fl_path p, int err, const char *phase)
{
	size_t len = strlen(note);

	if (p == FL_KPROBE && !have_kprobes())
		snprintf(note + len, sz - len, "%skprobes not built (CONFIG_KPROBES)",
			 len ? ", " : "");
	else
		snprintf(note + len, sz - len, "%s%s %s%s%s", len ? ", " : "", path_names[p],
			 errname(err), strcmp(phase, "load") ? " at " : "",
			 strcmp(phase, "load") ? phase : "");
}

static int choose_path(struct kagg_session *s, enum kagg_funclat_attach want)
{
	struct funclat *t = s->tool;
	enum fl_path order[3];
	char note[192] = "";
	const char *phase = "";
	int n = 0, i, err = -EOPNOTSUPP;
	bool perm = true;

	if (t->user) {
		if (want == KAGG_FUNCLAT_AUTO || want == KAGG_FUNCLAT_UPROBE_MULTI)
			order[n++] = FL_UPROBE_MULTI;
		if (want == KAGG_FUNCLAT_AUTO || want == KAGG_FUNCLAT_UPROBE)
			order[n++] = FL_UPROBE;
	} else {
		if ((want == KAGG_FUNCLAT_AUTO && t->nr_funcs == 1) || want == KAGG_FUNCLAT_FENTRY)
			order[n++] = FL_FENTRY;
		if ((want == KAGG_FUNCLAT_AUTO && t->nr_funcs > 1) ||
		    want == KAGG_FUNCLAT_KPROBE_MULTI)
			order[n++] = FL_KPROBE_MULTI;
		if (want == KAGG_FUNCLAT_AUTO || want == KAGG_FUNCLAT_KPROBE)
			order[n++] = FL_KPROBE;
	}
	if (!n) {
		slog(s, KAGG_LOG_WARN, "attach type does not fit a %s function",
		     t->user ? "user" : "kernel");
		return -EINVAL;
	}
	/* Function i is told apart by its attach cookie i: one function without them. */
	if (t->nr_funcs > 1 && !session_has_attach_cookie(s)) {
		slog(s, KAGG_LOG_WARN,
		     "'%s' matches %zu functions: tracing more than one needs "
		     "BPF attach cookies (bpf_get_attach_cookie), which this kernel lacks",
		     t->funcs[0].name, t->nr_funcs);
		return -EOPNOTSUPP;
	}
	if (order[0] == FL_FENTRY && t->nr_funcs > 1) {
		slog(s, KAGG_LOG_WARN, "fentry traces one function; '%s' matches %zu",
		     t->funcs[0].name, t->nr_funcs);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		err = try_path(s, order[i], &phase);
		if (!err)
			break;
		perm = perm && session_perm_error(err);
		note_failure(note, sizeof(note), order[i], err, phase);
		slog(s, KAGG_LOG_INFO, "%s failed at %s: %s", path_names[order[i]], phase,
		     strerror(-err));
	}
	if (err) {
		if (perm && geteuid() != 0)
			slog(s, KAGG_LOG_WARN,
			     "loading BPF programs: %s: run as root or with "
			     "CAP_BPF and CAP_PERFMON",
			     strerror(-err));
		else
			slog(s, KAGG_LOG_WARN, "%s function tracing unavailable: %s",
			     t->user ? "user" : "kernel", note);
		return perm && geteuid() != 0 ? err : -EOPNOTSUPP;
	}
	if (note[0]) {
		/* the paths that failed first, then what load_path noted */
		char prev[sizeof(s->attach_note)];
		size_t n;

		memcpy(prev, s->attach_note, sizeof(prev));
		n = (size_t)snprintf(s->attach_note, sizeof(s->attach_note), "%s failed", note);
		if (prev[0] && n + 2 < sizeof(s->attach_note)) {
			strcat(s->attach_note, "; ");
			strncat(s->attach_note, prev, sizeof(s->attach_note) - n - 3);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ reading */

/* Function i's dense histogram of generation g, when it got one, added into h. */
static int fl_read_hot(struct kagg_session *s, __u32 i, __u32 g, bool reset, struct kagg_hist *h)
{
	struct funclat *t = s->tool;
	__u64 d;

	if (bpf_map__lookup_elem(t->skel->maps.exp_hot_id, &i, sizeof(i), &d, sizeof(d), 0) || !d ||
	    d > t->exp_hot_max)
		return 0;
	return session_exp_hist_get(s, t->skel->maps.exp_hist, g * t->exp_hot_max + d - 1, reset,
				    h);
}

static int funclat_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct funclat *t = s->tool;
	size_t vsz = sizeof(struct kagg_hist_val), i;
	struct kagg_hist_val *vals;
	int err;

	if (t->exp_dense)
		err = session_alloc_hists(s, snap, t->nr_funcs, s->exp_words - 1);
	else if (s->exp_words)
		err = session_read_exp_cells(s, t->skel->maps.exp_cells, g, reset, t->nr_funcs,
					     snap);
	else
		err = session_alloc_hists(s, snap, t->nr_funcs, KAGG_SLOTS);
	if (err)
		return err;
	vals = calloc(s->nr_cpus, vsz);
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < t->nr_funcs; i++) {
		struct kagg_hist *h = &snap->hists[i];
		__u32 idx = g * t->nr_funcs + i;

		h->key.mode = KAGG_KEY_NONE;
		h->key.id = i;
		h->key.label = snap_strdup(snap, t->funcs[i].name);
		if (t->exp_dense)
			err = session_exp_hist_get(s, t->skel->maps.exp_hist, idx, reset, h);
		else if (t->exp_hot_max)
			err = fl_read_hot(s, i, g, reset, h);
		else if (!s->exp_words)
			err = session_hist_fold(
				s, t->hist_shared ? t->skel->maps.hist_all : t->skel->maps.hist,
				idx, true, reset, vals, h);
		if (err)
			break;
	}
	free(vals);
	return err;
}

static void funclat_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			 bool reset)
{
	snap->meta.events_recorded = cnt[FUNCLAT_CNT_RETURNS];
	snap_add_drop(snap, "depth", "call nested deeper than 32 levels in one thread: not timed",
		      cnt[FUNCLAT_CNT_DROP_DEPTH], true);
	snap_add_drop(snap, "task_storage", "entry not recorded: task storage busy or full",
		      cnt[FUNCLAT_CNT_DROP_STORAGE], true);
	snap_add_drop(snap, "no_entry",
		      "return without a recorded entry (entered before "
		      "attach, or entry missed)",
		      cnt[FUNCLAT_CNT_NO_ENTRY], true);
	snap_add_drop(snap, "lost_return",
		      "entry discarded: its return was never seen "
		      "(longjmp, missed return probe)",
		      cnt[FUNCLAT_CNT_LOST_RETURN], true);
	if (s->exp_words && !((struct funclat *)s->tool)->exp_dense)
		snap_add_drop(snap, "exp_cells", "latency not counted: exp bucket map full",
			      cnt[FUNCLAT_CNT_DROP_EXP_CELLS], true);
}

static void funclat_destroy(struct kagg_session *s)
{
	struct funclat *t = s->tool;

	drop_extra(t, 0);
	drop_extra(t, 1);
	funclat_bpf__destroy(t->skel);
	free_funcs(t->funcs, t->nr_funcs);
}

/* Split the pattern and resolve it into t->funcs. */
static int resolve(struct kagg_session *s, const struct kagg_funclat_opts *o, unsigned int max)
{
	struct funclat *t = s->tool;
	const char *colon = strchr(o->pattern, ':');
	char lib[PATH_MAX];
	int err;

	if (!colon) {
		err = kernel_funcs(s, o->pattern, &t->funcs, &t->nr_funcs);
	} else {
		t->user = true;
		if (colon == o->pattern || !colon[1] ||
		    (size_t)(colon - o->pattern) >= sizeof(lib)) {
			slog(s, KAGG_LOG_WARN, "invalid function '%s' (LIB:FUNC or PATH:FUNC)",
			     o->pattern);
			return -EINVAL;
		}
		snprintf(lib, sizeof(lib), "%.*s", (int)(colon - o->pattern), o->pattern);
		err = resolve_binary(s, lib, o->pid, t->binary, sizeof(t->binary));
		if (!err)
			err = elf_funcs(s, t->binary, colon + 1, &t->funcs, &t->nr_funcs);
	}
	if (err)
		return err;
	snprintf(t->event, sizeof(t->event), "%s:%s", t->user ? t->binary : "kernel",
		 colon ? colon + 1 : o->pattern);
	s->event = t->event;
	if (t->nr_funcs > max) {
		slog(s, KAGG_LOG_WARN,
		     "'%s' matches %zu functions, more than %u: narrow the "
		     "pattern",
		     o->pattern, t->nr_funcs, max);
		return -E2BIG;
	}
	return 0;
}

static int funclat_open(struct kagg_session *s, void *opts)
{
	const struct kagg_funclat_opts *o = opts;
	struct session_tasks tk = { .cgroup = o->cgroup };
	struct funclat *t = s->tool;
	unsigned int max;
	int err;

	s->unit = o->unit;
	s->event = o->pattern;
	max = o->max_funcs ? o->max_funcs : FUNCLAT_MAX_FUNCS;
	if (!o->pattern || !*o->pattern || (unsigned int)o->unit > KAGG_UNIT_MSECS ||
	    (unsigned int)o->attach > KAGG_FUNCLAT_UPROBE_MULTI || o->pid < 0 ||
	    max > FUNCLAT_MAX_FUNCS) {
		slog(s, KAGG_LOG_WARN, "invalid funclat options");
		return -EINVAL;
	}
	if (o->pid && !session_task_exists(o->pid)) {
		slog(s, KAGG_LOG_WARN, "no such process: %d", o->pid);
		return -ESRCH;
	}
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP) {
		slog(s, KAGG_LOG_WARN, "invalid funclat buckets");
		return -EINVAL;
	}
	t->buckets = o->buckets;
	t->exp_scale = o->exp_scale;
	t->exp_cells = o->exp_cells;
	t->percpu_max_bytes = o->percpu_max_bytes ?: FUNCLAT_PERCPU_MAX_BYTES;
	t->pid = o->pid;
	if (o->pid)
		session_filters_add(s, "pid=%d ", o->pid);
	err = session_tasks_open(s, &tk);
	if (err)
		return err;
	session_filters_end(s);
	return session_need_btf(s) ?: resolve(s, o, max) ?: choose_path(s, o->attach) ?:
	       session_tasks_fill(s, &tk, NULL, NULL, t->skel->maps.cgroup);
}

SESSION_TOOL(funclat, struct funclat, .attach = funclat_attach);

int kagg_funclat__list(const char *pattern, int pid, int (*cb)(void *ctx, const char *name),
		       void *ctx, kagg_log_fn log, void *log_ctx)
{
	/* only the logger of a session: the lookups below log through it */
	struct kagg_session s = { .log = log, .log_ctx = log_ctx };
	const char *colon = pattern ? strchr(pattern, ':') : NULL;
	char lib[PATH_MAX], bin[PATH_MAX], name[PATH_MAX + 256];
	struct func *funcs = NULL;
	size_t i, n = 0;
	int err;

	if (!pattern || !*pattern || !cb || pid < 0)
		return -EINVAL;
	if (!colon) {
		err = kernel_funcs(&s, pattern, &funcs, &n);
	} else {
		if (colon == pattern || !colon[1] || (size_t)(colon - pattern) >= sizeof(lib)) {
			slog(&s, KAGG_LOG_WARN, "invalid function '%s' (LIB:FUNC or PATH:FUNC)",
			     pattern);
			return -EINVAL;
		}
		snprintf(lib, sizeof(lib), "%.*s", (int)(colon - pattern), pattern);
		err = resolve_binary(&s, lib, pid, bin, sizeof(bin))
			      ?: elf_funcs(&s, bin, colon + 1, &funcs, &n);
	}
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (colon)
			snprintf(name, sizeof(name), "%s:%s", bin, funcs[i].name);
		if (cb(ctx, colon ? name : funcs[i].name))
			break;
	}
	free_funcs(funcs, n);
	return (int)(i < n ? i + 1 : n);
}
