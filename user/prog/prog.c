// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The generic loader: a BPF object written with <kagg/bpf/kagg.bpf.h> as an
 * ordinary session.  Its aggregations are found in its BTF (the contract is
 * bpf/sdk/kagg_sdk.h), its tunables set from "NAME=VALUE" strings checked
 * against their BTF types, its programs loaded in their BTF flavour (tp_btf,
 * fentry) or the other one (raw_tp, kprobe) and attached by section name.
 * The generic half of the session (user/session.c) does the rest: exact
 * read-and-reset through kagg_gen, armed, meta, overhead.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <kagg/prog.h>
#include "shared/kagg_sdk.h"
#include "shared/common.h"
#include "shared/buckets.h"
#include "shared/exp_table.h"
#include "util/array.h"
#include "util/opts.h"
#include "util/tracefs.h"
#include "prog/prog_internal.h"
#include "session/session_internal.h"
#include "snapshot/snapshot_internal.h"

#define slog session_log

_Static_assert(sizeof(struct kagg_sdk_stack_key) == sizeof(struct kagg_key) &&
		       sizeof(struct kagg_sdk_stack_val) == sizeof(struct kagg_stack_val) &&
		       KAGG_SDK_MAX_STACK == KAGG_MAX_STACK && KAGG_SDK_NO_STACK == KAGG_NO_STACK,
	       "SDK stacks read as the session's");
_Static_assert(KAGG_SDK_NR_CNT <= SESSION_MAX_COUNTERS, "counters fit the session's");
_Static_assert(sizeof(struct kagg_sdk_exp_params) == sizeof(struct kagg_exp_params) &&
		       offsetof(struct kagg_sdk_exp_params, base_index) ==
			       offsetof(struct kagg_exp_params, base_index) &&
		       offsetof(struct kagg_sdk_exp_params, scale) ==
			       offsetof(struct kagg_exp_params, scale) &&
		       KAGG_SDK_EXP_MAX_SCALE == KAGG_EXP_MAX_SCALE,
	       "the SDK's exp parameters are libkagg's");

/* ------------------------------------------------------------ the object */

static int read_file(struct kagg_session *s, const char *path, void **buf, size_t *size)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		slog(s, KAGG_LOG_WARN, "cannot read %s: %s", path, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		slog(s, KAGG_LOG_WARN, "%s is not a file", path);
		err = -EINVAL;
		goto cleanup;
	}
	*buf = malloc(st.st_size ? st.st_size : 1);
	if (!*buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, (char *)*buf + got, st.st_size - got);
		if (n <= 0) {
			err = n ? -errno : -EIO;
			slog(s, KAGG_LOG_WARN, "cannot read %s: %s", path, strerror(-err));
			goto cleanup;
		}
		got += n;
	}
	*size = got;
cleanup:
	if (fd >= 0)
		close(fd);
	return err;
}

/* A 64-bit little-endian ELF relocatable of machine BPF (247). */
static int check_elf(struct kagg_session *s, const char *name, const unsigned char *b, size_t n)
{
	if (n < 64 || memcmp(b, "\177ELF", 4)) {
		slog(s, KAGG_LOG_WARN, "%s is not an ELF file (build it with clang -target bpf)",
		     name);
		return -EINVAL;
	}
	if (b[4] != 2 || b[5] != 1 || (b[18] | b[19] << 8) != 247) {
		slog(s, KAGG_LOG_WARN,
		     "%s is not a BPF object (ELF machine %u; build it with "
		     "clang -target bpf)",
		     name, b[18] | b[19] << 8);
		return -EINVAL;
	}
	return 0;
}

/* The type id behind typedefs and qualifiers; *volatile_seen / *const_seen when met. */
static __u32 btf_skip(const struct btf *btf, __u32 id, bool *is_const, bool *is_volatile)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		if (btf_is_const(t) && is_const)
			*is_const = true;
		if (btf_is_volatile(t) && is_volatile)
			*is_volatile = true;
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	return id;
}

/* The datasec var called name: its secinfo and section; NULL when none. */
static const struct btf_var_secinfo *find_var(const struct btf *btf, const char *name,
					      const char **sec)
{
	__u32 i, n = btf__type_cnt(btf);

	for (i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const struct btf_var_secinfo *vs;
		__u16 j;

		if (!btf_is_datasec(t))
			continue;
		vs = btf_var_secinfos(t);
		for (j = 0; j < btf_vlen(t); j++, vs++) {
			const struct btf_type *v = btf__type_by_id(btf, vs->type);

			if (v && !strcmp(btf__name_by_offset(btf, v->name_off), name)) {
				*sec = btf__name_by_offset(btf, t->name_off);
				return vs;
			}
		}
	}
	return NULL;
}

/* The initial value (before load) or the mmap'd data (after) of an internal map, or NULL. */
static void *sec_data(struct bpf_object *obj, const char *sec, size_t *size)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, sec);

	return m ? bpf_map__initial_value(m, size) : NULL;
}

/* Address of global name (of size sz) in its section's data, or NULL. */
static void *var_ptr(struct pstate *t, const char *name, size_t sz)
{
	const struct btf *btf = bpf_object__btf(t->obj);
	const struct btf_var_secinfo *vs;
	const char *sec;
	size_t size = 0;
	char *d;

	vs = btf ? find_var(btf, name, &sec) : NULL;
	if (!vs || vs->size != sz)
		return NULL;
	d = sec_data(t->obj, sec, &size);
	return d && vs->offset + sz <= size ? d + vs->offset : NULL;
}

/* ------------------------------------------------------------ aggregations */

static const char *kind_name(__u32 kind)
{
	switch (kind) {
	case KAGG_SDK_LOG2:
		return "log2 histogram";
	case KAGG_SDK_LINEAR:
		return "linear histogram";
	case KAGG_SDK_COUNT:
		return "counter";
	case KAGG_SDK_STACKS:
		return "stack aggregation";
	case KAGG_SDK_PAIR:
		return "start/stop pair";
	case KAGG_SDK_DROP:
		return "drop cause";
	}
	return NULL;
}

/* Map a's key is struct NAME__key { __u32 gen; __u32 __pad; KEY k; }: KEY's type and offset. */
static int check_key(struct kagg_session *s, struct pstate *t, struct pagg *a)
{
	const struct btf *btf = bpf_object__btf(t->obj);
	const struct btf_type *kt = btf__type_by_id(btf, bpf_map__btf_key_type_id(a->map));
	const struct btf_member *m;
	char want[256];

	snprintf(want, sizeof(want), "%s__key", a->name);
	if (!kt || !btf_is_struct(kt) || strcmp(btf__name_by_offset(btf, kt->name_off), want) ||
	    btf_vlen(kt) != 3)
		goto bad;
	m = btf_members(kt);
	if (strcmp(btf__name_by_offset(btf, m[0].name_off), "gen") ||
	    btf_member_bit_offset(kt, 0) || strcmp(btf__name_by_offset(btf, m[2].name_off), "k"))
		goto bad;
	a->key_type = m[2].type;
	a->key_off = btf_member_bit_offset(kt, 2) / 8;
	a->has_pid = pkey_has_pid(btf, a->key_type);
	return 0;
bad:
	slog(s, KAGG_LOG_WARN,
	     "map %s: wrong shape for a %s: its key is not struct %s "
	     "(declare it with the kagg.bpf.h macros)",
	     a->name, kind_name(a->d.kind), want);
	return -EINVAL;
}

/* Does map a have the shape its descriptor says (type, key, value)? */
static int check_map(struct kagg_session *s, struct pstate *t, struct pagg *a)
{
	bool hist = a->d.kind == KAGG_SDK_LOG2 || a->d.kind == KAGG_SDK_LINEAR;
	size_t vsz = a->d.kind == KAGG_SDK_COUNT    ? sizeof(struct kagg_sdk_count)
		     : a->d.kind == KAGG_SDK_STACKS ? sizeof(struct kagg_sdk_stack_val)
						    : sizeof(struct kagg_sdk_hist);
	char xname[256];

	snprintf(xname, sizeof(xname), "%s__x", a->name);
	a->cells = a->d.kind == KAGG_SDK_LOG2 ? bpf_object__find_map_by_name(t->obj, xname) : NULL;
	a->map = bpf_object__find_map_by_name(t->obj, a->name);
	if (a->map)
		a->max = bpf_map__max_entries(a->map) / 2;
	if (!a->map) {
		slog(s, KAGG_LOG_WARN, "%s__kagg describes a %s, but there is no map %s", a->name,
		     kind_name(a->d.kind), a->name);
		return -EINVAL;
	}
	/* a histogram of an object built before the extremes: read without them */
	a->ext = hist && bpf_map__value_size(a->map) == vsz &&
		 (!a->cells || bpf_map__value_size(a->cells) == sizeof(struct kagg_sdk_cell));
	if (hist && bpf_map__value_size(a->map) == KAGG_SDK_HIST_V1_SIZE &&
	    (!a->cells || bpf_map__value_size(a->cells) == KAGG_SDK_CELL_V1_SIZE))
		vsz = KAGG_SDK_HIST_V1_SIZE;
	/* a KEY with no field: a per-CPU array of the two generations */
	if (a->d.kind != KAGG_SDK_STACKS && bpf_map__type(a->map) == BPF_MAP_TYPE_PERCPU_ARRAY &&
	    bpf_map__value_size(a->map) == vsz && bpf_map__key_size(a->map) == sizeof(__u32) &&
	    bpf_map__max_entries(a->map) == 2) {
		a->unkeyed = true;
		return 0;
	}
	/* one hash every CPU adds to (a per-CPU one: built with earlier headers) */
	if ((bpf_map__type(a->map) != BPF_MAP_TYPE_HASH &&
	     bpf_map__type(a->map) != BPF_MAP_TYPE_PERCPU_HASH) ||
	    bpf_map__value_size(a->map) != vsz) {
		slog(s, KAGG_LOG_WARN,
		     "map %s: wrong shape for a %s (a hash of %zu-byte "
		     "values; it is type %d of %u-byte values)",
		     a->name, kind_name(a->d.kind), vsz, bpf_map__type(a->map),
		     bpf_map__value_size(a->map));
		return -EINVAL;
	}
	if (a->d.kind == KAGG_SDK_STACKS) {
		if (bpf_map__key_size(a->map) != sizeof(struct kagg_sdk_stack_key)) {
			slog(s, KAGG_LOG_WARN,
			     "map %s: wrong shape for a stack aggregation (keys of "
			     "struct kagg_sdk_stack_key)",
			     a->name);
			return -EINVAL;
		}
		return 0;
	}
	return check_key(s, t, a);
}

/* A KAGG_DROP's description: its NAME__what, a string in .rodata. */
static int drop_what(struct kagg_session *s, struct pstate *t, struct pagg *a)
{
	const struct btf *btf = bpf_object__btf(t->obj);
	const struct btf_var_secinfo *vs;
	char name[160];
	const char *sec, *d;
	size_t size = 0;

	snprintf(name, sizeof(name), "%s__what", a->name);
	vs = find_var(btf, name, &sec);
	d = vs ? sec_data(t->obj, sec, &size) : NULL;
	if (!d || !vs->size || vs->offset + vs->size > size || d[vs->offset + vs->size - 1]) {
		slog(s, KAGG_LOG_WARN, "%s__kagg is a drop cause without its string %s", a->name,
		     name);
		return -EINVAL;
	}
	snprintf(a->what, sizeof(a->what), "%s", d + vs->offset);
	return 0;
}

/* The aggregations: every .rodata NAME__kagg of type struct kagg_sdk_desc. */
static int discover(struct kagg_session *s, struct pstate *t)
{
	const struct btf *btf = bpf_object__btf(t->obj);
	const struct btf_type *sec =
		btf__type_by_id(btf, btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC));
	const struct btf_var_secinfo *vs;
	size_t rsz = 0, i;
	char *ro = sec_data(t->obj, ".rodata", &rsz);
	int err, stacks = 0;
	__u16 j;

	for (j = 0, vs = sec && ro ? btf_var_secinfos(sec) : NULL; vs && j < btf_vlen(sec);
	     j++, vs++) {
		const char *name =
			btf__name_by_offset(btf, btf__type_by_id(btf, vs->type)->name_off);
		size_t len = strlen(name);
		const struct btf_type *dt;
		struct pagg *a, *tmp;

		if (len <= 6 || strcmp(name + len - 6, "__kagg"))
			continue;
		dt = btf__type_by_id(
			btf, btf_skip(btf, btf__type_by_id(btf, vs->type)->type, NULL, NULL));
		if (!dt || !btf_is_struct(dt) ||
		    strcmp(btf__name_by_offset(btf, dt->name_off), "kagg_sdk_desc") ||
		    vs->size != sizeof(struct kagg_sdk_desc) || vs->offset + vs->size > rsz) {
			slog(s, KAGG_LOG_WARN, "%s is not a struct kagg_sdk_desc", name);
			return -EINVAL;
		}
		tmp = realloc(t->aggs, (t->nr_aggs + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		t->aggs = tmp;
		a = &t->aggs[t->nr_aggs++];
		memset(a, 0, sizeof(*a));
		memcpy(&a->d, ro + vs->offset, sizeof(a->d));
		a->name = strndup(name, len - 6);
		if (!a->name)
			return -ENOMEM;
		if (!kind_name(a->d.kind) || a->d.drop >= KAGG_SDK_NR_CNT ||
		    a->d.drop2 >= KAGG_SDK_NR_CNT || a->d.drop3 >= KAGG_SDK_NR_CNT ||
		    (a->d.kind == KAGG_SDK_LINEAR && !a->d.lin_step)) {
			slog(s, KAGG_LOG_WARN, "%s: not a descriptor this library knows (kind %u)",
			     name, a->d.kind);
			return -EINVAL;
		}
		if (a->d.kind == KAGG_SDK_DROP) {
			err = drop_what(s, t, a);
			if (err)
				return err;
		}
		if (a->d.kind == KAGG_SDK_PAIR || a->d.kind == KAGG_SDK_DROP)
			continue;
		err = check_map(s, t, a);
		if (err)
			return err;
		stacks += a->d.kind == KAGG_SDK_STACKS;
	}
	for (i = 0; i < t->nr_aggs &&
		    (t->aggs[i].d.kind == KAGG_SDK_PAIR || t->aggs[i].d.kind == KAGG_SDK_DROP);
	     i++)
		;
	if (i == t->nr_aggs) {
		slog(s, KAGG_LOG_WARN,
		     "%s declares no aggregation (KAGG_HIST_*, KAGG_COUNT*, "
		     "KAGG_STACKS of <kagg/bpf/kagg.bpf.h>: see docs/sdk.md)",
		     t->name);
		return -EINVAL;
	}
	if (stacks > 1) {
		slog(s, KAGG_LOG_WARN, "%s declares %d stack aggregations: one at most", t->name,
		     stacks);
		return -EINVAL;
	}
	t->counters = bpf_object__find_map_by_name(t->obj, "kagg_counters");
	t->stackmap = bpf_object__find_map_by_name(t->obj, "kagg_stackmap");
	if (!t->counters || !t->stackmap || !var_ptr(t, "kagg_gen", 4) ||
	    !var_ptr(t, "kagg_armed", 4) ||
	    bpf_map__value_size(t->counters) != sizeof(struct kagg_sdk_counters)) {
		slog(s, KAGG_LOG_WARN,
		     "%s was not built with this <kagg/bpf/kagg.bpf.h> "
		     "(kagg_counters, kagg_stackmap, kagg_gen or kagg_armed missing or unlike)",
		     t->name);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ programs */

/* A program's section as attach type and target: "tp_btf", "sched_switch". */
static const char *sec_kind(const char *sec, const char **target)
{
	static const char *const kinds[] = {
		"tp_btf",    "raw_tp",	   "raw_tracepoint", "tracepoint", "tp",
		"fentry",    "fexit",	   "kprobe",	     "kretprobe",  "uprobe",
		"uretprobe", "perf_event", "usdt",
	};
	size_t i, n;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		n = strlen(kinds[i]);
		if (!strncmp(sec, kinds[i], n) && (sec[n] == '/' || !sec[n] || sec[n] == '.')) {
			*target = sec[n] == '/' ? sec + n + 1 : "";
			return kinds[i];
		}
	}
	*target = "";
	return NULL;
}

static bool is_btf_kind(const char *k)
{
	return !strcmp(k, "tp_btf") || !strcmp(k, "fentry") || !strcmp(k, "fexit");
}

/* The other flavour of a BTF section: raw_tp for tp_btf, kprobe for fentry. */
static const char *fallback_of(const char *k)
{
	return !strcmp(k, "tp_btf")   ? "raw_tp"
	       : !strcmp(k, "fentry") ? "kprobe"
	       : !strcmp(k, "fexit")  ? "kretprobe"
				      : NULL;
}

/* Program p has a flavour partner: same target, the other kind of the pair. */
static bool has_partner(struct bpf_object *obj, struct bpf_program *p)
{
	const char *tgt, *k = sec_kind(bpf_program__section_name(p), &tgt), *tgt2, *k2;
	struct bpf_program *q;

	if (!k)
		return false;
	bpf_object__for_each_program(q, obj)
	{
		if (q == p)
			continue;
		k2 = sec_kind(bpf_program__section_name(q), &tgt2);
		if (k2 && !strcmp(tgt, tgt2) &&
		    ((fallback_of(k) && !strcmp(fallback_of(k), k2)) ||
		     (fallback_of(k2) && !strcmp(fallback_of(k2), k))))
			return true;
	}
	return false;
}

/* The kernel's BTF, loaded once (NULL when unreadable). */
static struct btf *kernel_btf(struct pstate *t)
{
	if (!t->vmlinux && !t->vmlinux_tried) {
		t->vmlinux_tried = true;
		t->vmlinux = btf__load_vmlinux_btf();
		if (!t->vmlinux)
			t->vmlinux = NULL;
	}
	return t->vmlinux;
}

/* Does the kernel have what section sec attaches to?  A message in why when not. */
static bool sec_attachable(struct pstate *t, const char *sec, char *why, size_t len)
{
	const char *tgt, *k = sec_kind(sec, &tgt);
	struct btf *vb = kernel_btf(t);
	char name[256], path[512];
	const char *colon;

	if (!k) {
		snprintf(why, len, "unknown section type");
		return false;
	}
	if ((!*tgt && strcmp(k, "uprobe") && strcmp(k, "uretprobe") && strcmp(k, "tracepoint") &&
	     strcmp(k, "tp")) ||
	    !strcmp(k, "perf_event") || !strcmp(k, "usdt"))
		return true;
	if (!strcmp(k, "tp_btf") || !strcmp(k, "raw_tp") || !strcmp(k, "raw_tracepoint")) {
		snprintf(name, sizeof(name), "btf_trace_%s", tgt);
		if (!vb || btf__find_by_name_kind(vb, name, BTF_KIND_TYPEDEF) > 0)
			return true;
		snprintf(why, len, "the kernel has no tracepoint %.200s", tgt);
		return false;
	}
	if (!strcmp(k, "tracepoint") || !strcmp(k, "tp")) {
		snprintf(name, sizeof(name), "%s", tgt);
		if (!*tgt && t->tp_sys)
			snprintf(name, sizeof(name), "%s/%s", t->tp_sys, t->tp_name);
		if (!*name) {
			snprintf(why, len,
				 "no tracepoint named: give one (kagg run --tracepoint "
				 "SYSTEM:EVENT)");
			return false;
		}
		if (!strchr(name, '/'))
			return true;
		/* libbpf finds a tracepoint's id in tracefs (mounted when it is not) or debugfs */
		snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s", name);
		if (tracefs_ensure(why, len))
			return !access(path, F_OK);
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s", name);
		if (!access(path, F_OK))
			return true;
		snprintf(why, len, "the kernel has no tracepoint %.200s", name);
		return false;
	}
	if (!strcmp(k, "fentry") || !strcmp(k, "fexit") || !strcmp(k, "kprobe") ||
	    !strcmp(k, "kretprobe")) {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(tgt, "+"), tgt);
		if (!vb || btf__find_by_name_kind(vb, name, BTF_KIND_FUNC) > 0)
			return true;
		snprintf(why, len, "the kernel has no function %.200s", name);
		return false;
	}
	/* uprobe/BINARY:FUNC, BINARY empty: the binary given to the loader; no target: both */
	if (!*tgt) {
		if (t->binary && t->func && !access(t->binary, R_OK))
			return true;
		snprintf(why, len,
			 t->binary && t->func ? "no binary %.200s"
					      : "no function named: give the binary and function "
						"(kagg run --binary PATH "
						"--func NAME)",
			 t->binary);
		return false;
	}
	colon = strrchr(tgt, ':');
	if (!colon) {
		snprintf(why, len, "expected %s/BINARY:FUNCTION", k);
		return false;
	}
	snprintf(path, sizeof(path), "%.*s", (int)(colon - tgt), tgt);
	if (!path[0] && !t->binary) {
		snprintf(why, len, "no binary named: give one (kagg run --binary PATH)");
		return false;
	}
	if (path[0] == '/' && access(path, R_OK)) {
		snprintf(why, len, "no binary %.200s", path);
		return false;
	}
	if (!path[0] && access(t->binary, R_OK)) {
		snprintf(why, len, "no binary %.200s", t->binary);
		return false;
	}
	return true;
}

/*
 * Autoload each program for a load in flavour btf (true: the BTF one of each pair, the
 * other left out; false: the opposite); check what each loaded one attaches to.
 */
static int choose_progs(struct kagg_session *s, struct pstate *t, bool btf)
{
	struct bpf_program *p;
	const char *tgt, *k;
	char why[256];
	int n = 0;

	bpf_object__for_each_program(p, t->obj)
	{
		const char *sec = bpf_program__section_name(p);
		bool load = bpf_program__autoload(p);

		k = sec_kind(sec, &tgt);
		if (load && k && has_partner(t->obj, p))
			load = is_btf_kind(k) == btf;
		bpf_program__set_autoload(p, load);
		if (!load)
			continue;
		if (!sec_attachable(t, sec, why, sizeof(why))) {
			slog(s, KAGG_LOG_WARN,
			     "program %s: section %s names no attachable point: %s",
			     bpf_program__name(p), sec, why);
			return -EINVAL;
		}
		n++;
	}
	if (!n) {
		slog(s, KAGG_LOG_WARN, "%s has no program to attach", t->name);
		return -EINVAL;
	}
	if (n > SESSION_MAX_PROGS) {
		slog(s, KAGG_LOG_WARN, "%s has %d programs: %d at most", t->name, n,
		     SESSION_MAX_PROGS);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ tunables */

bool prog_lin_fits(int64_t min, uint64_t step)
{
	return (__int128)min + (__int128)KAGG_SDK_SLOTS * step <= INT64_MAX;
}

/*
 * "AGG.max=N": aggregation AGG's key limit (0: off, neither read nor shown; its map
 * the smallest there is).  A program's aggregation it does not use this time (kagg hist
 * records into one of its six) costs nothing then.
 */
static int set_max(struct kagg_session *s, struct pstate *t, struct pagg *a, const char *val)
{
	unsigned long long u;
	char *end;

	errno = 0;
	u = strtoull(val, &end, 0);
	if (errno || !*val || *end || val[strspn(val, " \t")] == '-' || u > (1U << 24) ||
	    (a->unkeyed && u > 1)) {
		slog(s, KAGG_LOG_WARN, "invalid value '%s' for %s.max: %s", val, a->name,
		     a->unkeyed ? "0 (off) or 1: it has no key" : "0 (off) to 16777216 keys");
		return -EINVAL;
	}
	a->off = !u;
	if (a->unkeyed)
		return 0;
	a->max = u ? (__u32)u : 1;
	return bpf_map__set_max_entries(a->map, 2 * a->max);
}

/*
 * "AGG.FIELD=VALUE": the bounds of linear histogram AGG (min, step), in its descriptor;
 * any aggregation's key limit (max).
 */
static int set_agg_field(struct kagg_session *s, struct pstate *t, const char *agg,
			 const char *field, const char *val)
{
	bool step = !strcmp(field, "step");
	struct kagg_sdk_desc *d = NULL;
	struct pagg *a = NULL;
	unsigned long long u;
	char var[160], *end;
	long long x;
	size_t i;

	for (i = 0; i < t->nr_aggs; i++)
		if (!strcmp(t->aggs[i].name, agg) && t->aggs[i].map)
			a = &t->aggs[i];
	if (a && !strcmp(field, "max"))
		return set_max(s, t, a, val);
	snprintf(var, sizeof(var), "%s__kagg", agg);
	if (a && a->d.kind == KAGG_SDK_LINEAR)
		d = var_ptr(t, var, sizeof(*d));
	if (!d || (!step && strcmp(field, "min"))) {
		slog(s, KAGG_LOG_WARN,
		     "unknown tunable '%s.%s': %s has %s (NAME.max; linear: NAME.min, NAME.step)",
		     agg, field, t->name,
		     a ? "no such field of an aggregation" : "no aggregation of that name");
		return -EINVAL;
	}
	errno = 0;
	if (step) {
		u = strtoull(val, &end, 0);
		if (errno || !*val || *end || val[strspn(val, " \t")] == '-' || !u) {
			slog(s, KAGG_LOG_WARN,
			     "invalid value '%s' for %s.step: a width of 1 or more", val, agg);
			return -EINVAL;
		}
		if (!prog_lin_fits(d->lin_min, u))
			goto past;
		d->lin_step = a->d.lin_step = u;
		return 0;
	}
	x = strtoll(val, &end, 0);
	if (errno || !*val || *end) {
		slog(s, KAGG_LOG_WARN, "invalid value '%s' for %s.min: not a signed 64-bit integer",
		     val, agg);
		return -EINVAL;
	}
	if (!prog_lin_fits(x, d->lin_step))
		goto past;
	d->lin_min = a->d.lin_min = x;
	return 0;
past:
	slog(s, KAGG_LOG_WARN,
	     "invalid value '%s' for %s.%s: the 64 buckets would end past 2^63 (min + 64 x step)",
	     val, agg, field);
	return -EINVAL;
}

/* "NAME=VALUE" into the global NAME of .rodata, checked against its type. */
static int set_one(struct kagg_session *s, struct pstate *t, const char *arg)
{
	const struct btf *btf = bpf_object__btf(t->obj);
	const char *eq = strchr(arg, '='), *sec, *val;
	const struct btf_var_secinfo *vs;
	const struct btf_type *ty;
	bool c = false, v = false;
	char name[128], *end;
	size_t size = 0;
	char *data;
	__u32 id;

	if (!eq || eq == arg || eq - arg >= (long)sizeof(name)) {
		slog(s, KAGG_LOG_WARN, "invalid --set '%s' (NAME=VALUE)", arg);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	val = eq + 1;
	if (strchr(name, '.')) {
		*strchr(name, '.') = '\0';
		return set_agg_field(s, t, name, name + strlen(name) + 1, val);
	}
	vs = find_var(btf, name, &sec);
	if (!vs || !strncmp(name, "kagg_", 5) ||
	    (strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "__kagg")) ||
	    (strcmp(sec, ".rodata") && strcmp(sec, ".data") && strcmp(sec, ".bss"))) {
		slog(s, KAGG_LOG_WARN, "unknown tunable '%s': %s has no such const volatile global",
		     name, t->name);
		return -EINVAL;
	}
	id = btf_skip(btf, btf__type_by_id(btf, vs->type)->type, &c, &v);
	ty = btf__type_by_id(btf, id);
	if (ty && btf_is_array(ty)) /* const volatile char a[N]: the elements are qualified */
		btf_skip(btf, btf_array(ty)->type, &c, &v);
	if (strcmp(sec, ".rodata") || !v) {
		slog(s, KAGG_LOG_WARN, "'%s' is not a tunable: %s (declare it const volatile)",
		     name,
		     strcmp(sec, ".rodata")
			     ? "a global the program writes"
			     : "const without volatile, its value compiled into the program");
		return -EINVAL;
	}
	data = sec_data(t->obj, sec, &size);
	ty = btf__type_by_id(btf, id);
	if (!data || !ty || vs->offset + vs->size > size)
		return -EINVAL;
	data += vs->offset;
	if (btf_is_int(ty) || btf_is_enum(ty) || btf_is_enum64(ty)) {
		bool sgn = btf_is_int(ty) ? btf_int_encoding(ty) & BTF_INT_SIGNED : btf_kflag(ty);
		bool is_bool = btf_is_int(ty) && btf_int_encoding(ty) & BTF_INT_BOOL;
		unsigned int bytes = ty->size, bits = bytes * 8;
		unsigned long long u = 0;
		long long x = 0;
		bool named = false;
		int i;

		if (is_bool && (!strcmp(val, "true") || !strcmp(val, "false"))) {
			u = val[0] == 't';
			named = true;
		}
		for (i = 0; btf_is_enum(ty) && i < btf_vlen(ty); i++) {
			if (!strcmp(btf__name_by_offset(btf, btf_enum(ty)[i].name_off), val)) {
				x = btf_enum(ty)[i].val;
				u = sgn ? (unsigned long long)x : (__u32)btf_enum(ty)[i].val;
				named = true;
			}
		}
		for (i = 0; btf_is_enum64(ty) && i < btf_vlen(ty); i++) {
			if (!strcmp(btf__name_by_offset(btf, btf_enum64(ty)[i].name_off), val)) {
				u = btf_enum64_value(&btf_enum64(ty)[i]);
				named = true;
			}
		}
		errno = 0;
		if (!named && sgn) {
			x = strtoll(val, &end, 0);
			u = (unsigned long long)x;
			if (errno || !*val || *end ||
			    (bits < 64 && (x < -(1LL << (bits - 1)) || x >= (1LL << (bits - 1)))))
				goto range;
		} else if (!named) {
			u = strtoull(val, &end, 0);
			if (errno || !*val || *end || val[strspn(val, " \t")] == '-' ||
			    (bits < 64 && u >> bits) || (is_bool && u > 1))
				goto range;
		}
		memcpy(data, &u, bytes); /* little endian: the low bytes */
		return 0;
	range:
		slog(s, KAGG_LOG_WARN, "invalid value '%s' for %s: %s", val, name,
		     is_bool	      ? "true, false, 1 or 0"
		     : btf_is_int(ty) ? (sgn ? "not a signed integer of that size"
					     : "not an unsigned integer of that size")
				      : "not one of the enum's names or values");
		return -EINVAL;
	}
	if (btf_is_array(ty)) {
		const struct btf_type *et =
			btf__type_by_id(btf, btf_skip(btf, btf_array(ty)->type, NULL, NULL));
		__u32 n = btf_array(ty)->nelems;

		if (et && btf_is_int(et) && et->size == 1) {
			if (strlen(val) >= n) {
				slog(s, KAGG_LOG_WARN,
				     "value '%s' for %s too long: %u characters at most", val, name,
				     n - 1);
				return -EINVAL;
			}
			memset(data, 0, n);
			memcpy(data, val, strlen(val));
			return 0;
		}
	}
	slog(s, KAGG_LOG_WARN,
	     "tunable '%s' has a type --set cannot write (integers, bool, "
	     "enums, char arrays)",
	     name);
	return -EINVAL;
}

/* ------------------------------------------------------------ loading */

/* The last lines of a verifier log (up to n), joined by " | ". */
static void log_tail(const char *log, char *out, size_t len, int n)
{
	const char *end = log + strlen(log), *p = end;
	int lines = 0;

	while (p > log && (p[-1] == '\n' || p[-1] == ' '))
		p--;
	end = p;
	while (p > log && lines < n) {
		p--;
		if (*p == '\n' && p + 1 < end)
			lines++;
	}
	if (*p == '\n')
		p++;
	snprintf(out, len, "%.*s", (int)(end - p), p);
	for (char *q = out; *q; q++)
		if (*q == '\n')
			*q = '|';
}

static int open_obj(struct kagg_session *s, struct pstate *t)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = t->name);
	int err;

	bpf_object__close(t->obj);
	t->obj = bpf_object__open_mem(t->buf, t->size, &oo);
	if (!t->obj) {
		err = -errno;
		t->obj = NULL;
		slog(s, KAGG_LOG_WARN, "%s: not a BPF object libbpf can open: %s", t->name,
		     strerror(-err));
		return err == -ENOMEM ? err : -EINVAL;
	}
	if (!bpf_object__btf(t->obj)) {
		slog(s, KAGG_LOG_WARN, "%s has no BTF: build it with clang -g", t->name);
		return -EINVAL;
	}
	return 0;
}

/* Streaming asked for: kagg_stream set, kagg_events sized (an object has them since 0.2). */
static int set_stream(struct kagg_session *s, struct pstate *t)
{
	struct bpf_map *evm = bpf_object__find_map_by_name(t->obj, "kagg_events");
	__u32 *mode = var_ptr(t, "kagg_stream", 4), *timed;
	__u64 *wake;

	if (!session_streams(s))
		return 0;
	if (!evm || !mode || !bpf_object__find_map_by_name(t->obj, "kagg_stream_cnt") ||
	    bpf_map__type(evm) != BPF_MAP_TYPE_RINGBUF) {
		slog(s, KAGG_LOG_WARN,
		     "%s cannot stream: it was built with an older "
		     "<kagg/bpf/kagg.bpf.h> (no kagg_events)",
		     t->name);
		return -EINVAL;
	}
	*mode = s->path == KAGG_MODE_BOTH ? KAGG_SDK_STREAM_BOTH : KAGG_SDK_STREAM_ONLY;
	/* both paths in one program: time the stream's part to tell their costs apart */
	timed = var_ptr(t, "kagg_time_stream", 4);
	t->stream_ns = bpf_object__find_map_by_name(t->obj, "kagg_stream_ns");
	if (timed && t->stream_ns && s->overhead && s->path == KAGG_MODE_BOTH)
		*timed = 1;
	else
		t->stream_ns = NULL;
	wake = var_ptr(t, "kagg_wake_bytes", 8);
	if (wake)
		*wake = t->stream_bytes / 4; /* the consumer's batch (pstream_init) */
	return bpf_map__set_max_entries(evm, t->stream_bytes);
}

unsigned int pexp_slots(const struct kagg_session *s)
{
	return s->exp_words - 1;
}

unsigned int pexp_slot(const struct pstate *t, bool time, uint64_t v)
{
	const struct kagg_sdk_exp_params *p = &t->exp_params[time];

	return v ? kagg_exp_slot(v, (const volatile struct kagg_exp_params *)p) + 1 : 0;
}

/*
 * Exp buckets asked for: kagg_exp and kagg_exp_params set, the cell maps sized (an
 * unkeyed histogram: every bucket of both generations; else 16 per key).
 */
static int set_exp(struct kagg_session *s, struct pstate *t)
{
	volatile __u32 *on = var_ptr(t, "kagg_exp", 4);
	void *params = var_ptr(t, "kagg_exp_params", sizeof(t->exp_params));
	size_t i;
	int err;

	if (!t->exp)
		return 0;
	for (i = 0; i < t->nr_aggs; i++) {
		const struct pagg *a = &t->aggs[i];

		if (a->d.kind != KAGG_SDK_LOG2)
			continue;
		if (!a->cells || !on || !params) {
			slog(s, KAGG_LOG_WARN,
			     "%s cannot count %s in exp buckets: it was built with "
			     "an older <kagg/bpf/kagg.bpf.h> (no %s__x)",
			     t->name, a->name, a->name);
			return -EINVAL;
		}
		err = bpf_map__set_max_entries(
			a->cells, a->unkeyed ? 2 * pexp_slots(s) : 2 * 16 * (a->max ? a->max : 1));
		if (err)
			return err;
	}
	if (on) {
		*on = s->exp_scale + 1;
		memcpy(params, t->exp_params, sizeof(t->exp_params));
	}
	return 0;
}

/*
 * No BPF task storage (5.10): the pairs keep their tasks' start times by thread id, in
 * their id tables (kagg_task_storage cleared), their task maps not created; the meta's
 * attach note says so.
 */
static int pairs_by_id(struct kagg_session *s, struct pstate *t)
{
	__u32 *on = var_ptr(t, "kagg_task_storage", 4);
	char name[160];
	size_t i, n = 0;

	for (i = 0; i < t->nr_aggs; i++)
		n += t->aggs[i].d.kind == KAGG_SDK_PAIR;
	if (!n || session_task_storage(s, true))
		return 0;
	if (!on) {
		slog(s, KAGG_LOG_WARN,
		     "%s keeps start times in BPF task storage, which this kernel lacks (5.11), "
		     "and was built with older headers that have no other way: rebuild it",
		     t->name);
		return -EINVAL;
	}
	*on = 0;
	for (i = 0; i < t->nr_aggs; i++) {
		struct bpf_map *m;

		if (t->aggs[i].d.kind != KAGG_SDK_PAIR)
			continue;
		snprintf(name, sizeof(name), "%s__task", t->aggs[i].name);
		m = bpf_object__find_map_by_name(t->obj, name);
		if (m)
			bpf_map__set_autocreate(m, false);
	}
	return 0;
}

/* Open, check and configure the object for a load in flavour btf. */
static int prepare(struct kagg_session *s, struct pstate *t, bool btf)
{
	size_t i;
	__u64 *unit_ns;
	__u32 *unit_log2;
	bool stacks = false;
	int err;

	err = open_obj(s, t);
	if (err)
		return err;
	FREE_ARRAY_OF(t->aggs, t->nr_aggs, name);
	err = discover(s, t) ?: choose_progs(s, t, btf);
	for (i = 0; !err && i < t->nr_sets; i++)
		err = set_one(s, t, t->sets[i]);
	if (err)
		return err;
	unit_ns = var_ptr(t, "kagg_unit_ns", 8);
	unit_log2 = var_ptr(t, "kagg_unit_log2", 4);
	if (unit_ns && unit_log2) {
		*unit_ns = units_ns(s->unit);
		*unit_log2 = units_log2(s->unit);
	}
	for (i = 0; i < t->nr_aggs; i++)
		stacks |= t->aggs[i].d.kind == KAGG_SDK_STACKS ||
			  (t->aggs[i].d.kind != KAGG_SDK_PAIR &&
			   pkey_has_stacks(bpf_object__btf(t->obj), t->aggs[i].key_type));
	if (!stacks)
		bpf_map__set_max_entries(t->stackmap, 1);
	err = pairs_by_id(s, t);
	if (err)
		return err;
	/* the extremes of shared aggregations: a plain store where BPF has no cmpxchg (5.10) */
	return set_stream(s, t) ?: set_exp(s, t) ?: session_atomics_fallback(s, t->obj);
}

/* Load again with a verifier log for each program: the refusal's last lines into why. */
static void verifier_why(struct kagg_session *s, struct pstate *t, bool btf, char *why, size_t len)
{
	const size_t lsz = 1 << 20;
	struct bpf_program *p;
	char *logs[SESSION_MAX_PROGS * 2] = {};
	int i = 0, n;

	why[0] = '\0';
	if (prepare(s, t, btf))
		return;
	bpf_object__for_each_program(p, t->obj)
	{
		if (!bpf_program__autoload(p) || i >= (int)(sizeof(logs) / sizeof(logs[0])))
			continue;
		logs[i] = calloc(1, lsz);
		if (logs[i]) {
			bpf_program__set_log_buf(p, logs[i], lsz);
			bpf_program__set_log_level(p, 1);
		}
		i++;
	}
	n = i;
	if (bpf_object__load(t->obj)) {
		i = 0;
		bpf_object__for_each_program(p, t->obj)
		{
			if (!bpf_program__autoload(p) || i >= n)
				continue;
			if (logs[i] && logs[i][0])
				log_tail(logs[i], why, len, 3);
			i++;
		}
	}
	for (i = 0; i < n; i++)
		free(logs[i]);
}

/*
 * Load the object in flavour btf: 0, or -errno with *final when no other flavour may help.
 * A refusal (EACCES, as the verifier says it too) is told from missing privileges by the
 * verifier's log of a second load.
 */
static int load_flavour(struct kagg_session *s, struct pstate *t, bool btf, bool *final)
{
	char why[512];
	int err;

	*final = true;
	err = prepare(s, t, btf);
	if (err)
		return err;
	err = bpf_object__load(t->obj);
	if (!err)
		return 0;
	verifier_why(s, t, btf, why, sizeof(why));
	if (session_perm_error(err) && !why[0])
		return session_load_failed(s, err, t->name);
	if (btf && t->has_pairs && t->attach == KAGG_ATTACH_AUTO) {
		*final = false;
		snprintf(s->attach_note, sizeof(s->attach_note),
			 "%.60s failed to load in its BTF "
			 "flavour: %s%s%.60s",
			 t->name, strerror(-err), why[0] ? ": " : "", why);
		slog(s, KAGG_LOG_INFO, "%s; falling back to raw_tp/kprobe", s->attach_note);
		return err;
	}
	slog(s, KAGG_LOG_WARN, "loading %s failed: %s%s%s", t->name, strerror(-err),
	     why[0] ? ": the verifier says: " : "", why);
	return -EINVAL;
}

/*
 * After load: .bss (kagg_gen, kagg_armed) shared with the programs.  libbpf before 1.5
 * maps it over its initial value only in bpf_object__load_skeleton(); this is that step
 * (done again at the same address when libbpf did it already).
 */
static int map_bss(struct kagg_session *s, struct pstate *t)
{
	struct bpf_map *m = bpf_object__find_map_by_name(t->obj, ".bss");
	long page = sysconf(_SC_PAGESIZE);
	size_t size = 0, len;
	void *p = m ? bpf_map__initial_value(m, &size) : NULL;

	if (!p || !(bpf_map__map_flags(m) & BPF_F_MMAPABLE)) {
		slog(s, KAGG_LOG_WARN, "%s: its .bss cannot be shared with the programs", t->name);
		return -EINVAL;
	}
	len = (size + page - 1) / page * page;
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, bpf_map__fd(m), 0) != p) {
		slog(s, KAGG_LOG_WARN, "%s: mapping its .bss: %s", t->name, strerror(errno));
		return -errno;
	}
	return 0;
}

/* After load: the session's programs, attach type, events; generation and armed. */
static int bind(struct kagg_session *s, struct pstate *t)
{
	char kinds[64] = "", *ev = t->events, tpname[256];
	size_t evlen = sizeof(t->events);
	struct bpf_program *p;
	const char *tgt, *k;

	s->nr_progs = 0;
	bpf_object__for_each_program(p, t->obj)
	{
		if (!bpf_program__autoload(p))
			continue;
		k = sec_kind(bpf_program__section_name(p), &tgt);
		if (!k)
			k = "?";
		if (!strcmp(k, "perf_event"))
			t->from_tracer = false;
		if (!strstr(kinds, k) && strlen(kinds) + strlen(k) + 2 < sizeof(kinds))
			snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), "%s%s",
				 kinds[0] ? "+" : "", k);
		if (!*tgt && t->func)
			tgt = t->func;
		if (!*tgt && t->tp_sys && (!strcmp(k, "tracepoint") || !strcmp(k, "tp"))) {
			snprintf(tpname, sizeof(tpname), "%s:%s", t->tp_sys, t->tp_name);
			tgt = tpname;
		}
		if (*tgt && !strstr(t->events, tgt) && strlen(t->events) + strlen(tgt) + 2 < evlen)
			snprintf(ev + strlen(ev), evlen - strlen(ev), "%s%s", ev[0] ? "," : "",
				 tgt);
		s->progs[s->nr_progs++] = p;
	}
	s->nr_agg_progs = s->nr_progs;
	s->event = t->events;
	session_bind(s, var_ptr(t, "kagg_gen", 4), var_ptr(t, "kagg_armed", 4), t->counters,
		     KAGG_SDK_NR_CNT, kinds);
	return s->gen && s->armed ? 0 : -EINVAL;
}

/* uprobe/BINARY:FUNC[+OFF] and uretprobe/... attached here; the rest by libbpf. */
struct bpf_link *prog_attach(struct kagg_session *s, int i)
{
	struct pstate *t = s->tool;
	struct bpf_program *p = s->progs[i];
	const char *tgt, *k = sec_kind(bpf_program__section_name(p), &tgt), *colon;
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	char bin[512], fn[256], *plus;
	unsigned long off = 0;

	if (k && *tgt == '\0' && (!strcmp(k, "tracepoint") || !strcmp(k, "tp")))
		return bpf_program__attach_tracepoint(p, t->tp_sys, t->tp_name);
	if (!k || (strcmp(k, "uprobe") && strcmp(k, "uretprobe")))
		return bpf_program__attach(p);
	uo.retprobe = !strcmp(k, "uretprobe");
	if (!*tgt) {
		uo.func_name = t->func;
		return bpf_program__attach_uprobe_opts(p, t->pid ? t->pid : -1, t->binary, 0, &uo);
	}
	colon = strrchr(tgt, ':');
	if (!colon) {
		errno = EINVAL;
		return NULL;
	}
	snprintf(bin, sizeof(bin), "%.*s", (int)(colon - tgt), tgt);
	snprintf(fn, sizeof(fn), "%s", colon + 1);
	plus = strchr(fn, '+');
	if (plus) {
		*plus = '\0';
		off = strtoul(plus + 1, NULL, 0);
	}
	uo.func_name = fn;
	return bpf_program__attach_uprobe_opts(p, t->pid ? t->pid : -1, bin[0] ? bin : t->binary,
					       off, &uo);
}

/* ------------------------------------------------------------ session ops */

static int prog_open(struct kagg_session *s, void *opts)
{
	struct kagg_prog_opts *o = opts;
	struct pstate *t = s->tool;
	const char *base;
	bool final;
	size_t i, n;
	int err;

	if ((unsigned int)o->unit > KAGG_UNIT_MSECS ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP || (o->nr_sets && !o->sets) ||
	    (!t->path && !o->obj_buf) || (o->obj_buf && !o->obj_size) || o->pid < 0) {
		slog(s, KAGG_LOG_WARN, "invalid prog options");
		return -EINVAL;
	}
	if (session_check_stream(s, o->mode, o->stream_bytes))
		return -EINVAL;
	session_use_path(s, o->mode, &o->stream_bytes);
	t->stream_bytes = o->stream_bytes;
	s->unit = o->unit;
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP) {
		slog(s, KAGG_LOG_WARN, "invalid buckets %d", o->buckets);
		return -EINVAL;
	}
	if (o->buckets == KAGG_BUCKETS_EXP) {
		struct kagg_exp_params p;

		/* raw values: the table of unit 1 (as kagg hist's); times: the session's unit */
		s->sum = SESSION_SUM_U64;
		err = session_exp_setup(s, o->exp_scale, NULL, &p);
		if (!err)
			memcpy(&t->exp_params[0], &p, sizeof(p));
		s->sum = SESSION_SUM_NS;
		err = err ?: session_exp_setup(s, o->exp_scale, NULL, &p);
		if (err)
			return err;
		memcpy(&t->exp_params[1], &p, sizeof(p));
		t->exp = true;
	}
	s->key = KAGG_KEY_NONE;
	t->attach = o->attach;
	t->pid = o->pid;
	t->from_tracer = true;
	if ((o->binary && !(t->binary = strdup(o->binary))) ||
	    (o->func && !(t->func = strdup(o->func))))
		return -ENOMEM;
	if (o->tracepoint) {
		const char *tp = o->tracepoint;
		size_t n = strcspn(tp, ":/");

		if (!n || !tp[n] || !tp[n + 1] || strchr(tp + n + 1, ':') ||
		    strchr(tp + n + 1, '/')) {
			slog(s, KAGG_LOG_WARN,
			     "invalid tracepoint '%s' (SYSTEM:EVENT, e.g. "
			     "sched:sched_switch)",
			     tp);
			return -EINVAL;
		}
		t->tp_sys = strndup(tp, n);
		t->tp_name = strdup(tp + n + 1);
		if (!t->tp_sys || !t->tp_name)
			return -ENOMEM;
	}
	t->sets = o->sets;
	t->nr_sets = o->nr_sets;
	base = t->path ? strrchr(t->path, '/') : NULL;
	base = base ? base + 1 : t->path ? t->path : "prog";
	n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, ".bpf.o"))
		n -= 6;
	else if (n > 2 && !strcmp(base + n - 2, ".o"))
		n -= 2;
	if (!t->name)
		t->name = strndup(base, n);
	if (!t->name)
		return -ENOMEM;
	if (o->obj_buf) {
		t->buf = malloc(o->obj_size);
		if (!t->buf)
			return -ENOMEM;
		memcpy(t->buf, o->obj_buf, o->obj_size);
		t->size = o->obj_size;
	} else {
		err = read_file(s, t->path, &t->buf, &t->size);
		if (err)
			return err == -ENOMEM ? err : -EINVAL;
	}
	err = check_elf(s, t->path ? t->path : t->name, t->buf, t->size) ?: session_need_btf(s);
	if (err)
		return err;
	/* the flavour pairs: a fallback is possible */
	err = open_obj(s, t);
	if (err)
		return err;
	{
		struct bpf_program *p;

		bpf_object__for_each_program(p, t->obj) t->has_pairs |= has_partner(t->obj, p);
	}
	err = -EINVAL;
	final = false;
	if (t->attach != KAGG_ATTACH_RAW_TP)
		err = load_flavour(s, t, true, &final);
	if (err && !final)
		err = load_flavour(s, t, false, &final);
	t->sets = NULL;
	if (err)
		return err;
	err = map_bss(s, t) ?: bind(s, t);
	if (err)
		return err;
	for (i = 0; i < t->nr_aggs; i++)
		if (t->aggs[i].d.kind == KAGG_SDK_STACKS && (t->aggs[i].d.flags & KAGG_SDK_USTACK))
			t->ustacks = true;
	return 0;
}

/* The drop "AGG_SUFFIX" of aggregation agg, what a format with agg's name for its %s. */
static void agg_drop(struct kagg_snapshot *snap, const char *agg, const char *suffix,
		     const char *what, uint64_t count, bool loss)
{
	char c[160], w[256];

	snprintf(c, sizeof(c), "%s_%s", agg, suffix);
	snprintf(w, sizeof(w), what, agg);
	snap_add_drop(snap, snap_strdup(snap, c), snap_strdup(snap, w), count, loss);
}

/* The ns all CPUs spent streaming (kagg_stream_ns, only growing); 0 when not timed. */
static uint64_t stream_ns_now(struct kagg_session *s, struct pstate *t)
{
	uint64_t *vals, sum = 0;
	__u32 zero = 0;
	int i;

	if (!t->stream_ns)
		return 0;
	vals = calloc(s->nr_cpus, sizeof(*vals));
	if (vals && !bpf_map__lookup_elem(t->stream_ns, &zero, sizeof(zero), vals,
					  sizeof(*vals) * s->nr_cpus, 0))
		for (i = 0; i < s->nr_cpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static void prog_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
		      bool reset)
{
	struct pstate *t = s->tool;
	uint64_t ns = stream_ns_now(s, t);
	size_t i;

	s->stream_part_ns = ns >= t->stream_ns0 ? ns - t->stream_ns0 : 0;
	if (reset)
		t->stream_ns0 = ns;

	snap->meta.tool = snap_strdup(snap, t->name);
	snap->meta.events_recorded = cnt[KAGG_SDK_CNT_RECORDED];
	snap->meta.events_filtered = cnt[KAGG_SDK_CNT_FILTERED];
	for (i = 0; i < t->nr_aggs; i++) {
		const struct pagg *a = &t->aggs[i];

		if (a->off)
			continue;
		if (a->d.kind == KAGG_SDK_DROP) {
			snap_add_drop(snap, snap_strdup(snap, a->name), snap_strdup(snap, a->what),
				      cnt[a->d.drop], a->d.flags & KAGG_SDK_LOSS);
			continue;
		}
		if (a->d.kind != KAGG_SDK_PAIR) {
			agg_drop(snap, a->name, "keys_full",
				 "observation not aggregated: %s's key limit reached",
				 cnt[a->d.drop], true);
			continue;
		}
		agg_drop(snap, a->name, "full", "start of %s not recorded: its table is full",
			 cnt[a->d.drop], true);
		agg_drop(snap, a->name, "unclosed",
			 "interval of %s lost: a start found the previous one open (its stop was "
			 "not seen)",
			 cnt[a->d.drop2], true);
		agg_drop(snap, a->name, "no_start",
			 "stop of %s with no start (started before the session or not selected): "
			 "not a loss",
			 cnt[a->d.drop3], false);
	}
}

int prog_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct pstate *t = s->tool;
	size_t i;
	int err;

	err = pread_hists(s, t, snap, g, reset);
	for (i = 0; !err && i < t->nr_aggs; i++) {
		if (t->aggs[i].d.kind != KAGG_SDK_STACKS || t->aggs[i].off)
			continue;
		err = session_read_stacks(s, t->aggs[i].map, t->stackmap, g, reset, t->from_tracer,
					  snap);
		if (!(t->aggs[i].d.flags & KAGG_SDK_TIME))
			snap->stack_noun = "samples";
	}
	if (reset)
		pkey_prune(&t->cache);
	return err;
}

void prog_destroy(struct kagg_session *s)
{
	struct pstate *t = s->tool;
	size_t i;

	bpf_object__close(t->obj);
	btf__free(t->vmlinux);
	for (i = 0; i < t->nr_aggs; i++)
		free(t->aggs[i].name);
	free(t->aggs);
	free(t->buf);
	free(t->name);
	free(t->binary);
	free(t->func);
	free(t->tp_sys);
	free(t->tp_name);
	free(t->path);
	pkey_cache_free(&t->cache);
	pstream_free(t->stream);
}

static int prog_stream_init(struct kagg_session *s, const void *opts)
{
	const struct kagg_prog_opts *o = opts;

	return pstream_init(s, s->tool, o->stream_bytes, o->rb_subbufs, o->rb_consume);
}

static int prog_read_stream(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct pstate *t = s->tool;
	int err = pstream_read(s, t, snap, g, reset);

	if (reset && s->path == KAGG_MODE_STREAM)
		pkey_prune(&t->cache);
	return err;
}

/* Poll: the commands of the processes the keys hold, while they live. */
static void prog_poll(struct kagg_session *s)
{
	pkey_note_maps(s, s->tool);
}

int prog_open_builtin(struct kagg_session *s, const char *name, struct kagg_prog_opts *o)
{
	struct pstate *t = s->tool;

	t->name = strdup(name);
	return t->name ? prog_open(s, o) : -ENOMEM;
}

const struct pagg *prog_agg(const struct pstate *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nr_aggs; i++)
		if (!strcmp(t->aggs[i].name, name))
			return &t->aggs[i];
	return NULL;
}

/* prog_open() with the path session_open_arg() hands over. */
static int prog_open_path(struct kagg_session *s, void *opts)
{
	struct pstate *t = s->tool;
	const char *open_path = s->open_arg;

	if (open_path && !(t->path = strdup(open_path)))
		return -ENOMEM;
	return prog_open(s, opts);
}

struct kagg_session *kagg_prog__open(const char *path, const struct kagg_prog_opts *opts)
{
	static const struct session_ops ops_path = {
		.tool = "prog",
		.opts_size = sizeof(struct kagg_prog_opts),
		.opts_known = OPTS_END(kagg_prog_opts),
		.opts_log = offsetof(struct kagg_prog_opts, log),
		.opts_log_ctx = offsetof(struct kagg_prog_opts, log_ctx),
		.opts_overhead = offsetof(struct kagg_prog_opts, overhead),
		.tool_size = sizeof(struct pstate),
		.open = prog_open_path,
		.read = prog_read,
		.meta = prog_meta,
		.read_stream = prog_read_stream,
		.poll = prog_poll,
		.stream_init = prog_stream_init,
		.attach = prog_attach,
		.destroy = prog_destroy,
	};
	return session_open_arg(&ops_path, opts, path);
}
