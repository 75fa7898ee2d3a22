// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A kagg_prog__open() session's histograms and counters, read from their
 * maps, their keys printed from BTF with no configuration: integers, enums
 * by name, char arrays as strings, nested structs flattened into labels
 * ("outer_inner"), and the fields typed with kagg_sdk.h's typedefs resolved
 * (pid -> comm, cgroup id -> path, addresses -> symbols, dev_t ->
 * major:minor, stack ids -> frames).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "prog/prog_internal.h"
#include "util/array.h"
#include "util/u64map.h"
#include "session/session_internal.h"
#include "snapshot/snapshot_internal.h"
#include "snapshot/stacks.h"
#include "syms/syms.h"

/* The fields kagg_sdk.h's typedefs mark. */
enum mark { M_NONE, M_PID, M_CGROUP, M_KADDR, M_UADDR, M_DEV, M_KSTACK, M_USTACK };

static enum mark mark_of(const char *typedef_name)
{
	static const char *const names[] = {
		[M_PID] = "kagg_pid_t",	      [M_CGROUP] = "kagg_cgroup_t",
		[M_KADDR] = "kagg_kaddr_t",   [M_UADDR] = "kagg_uaddr_t",
		[M_DEV] = "kagg_dev_t",	      [M_KSTACK] = "kagg_kstack_t",
		[M_USTACK] = "kagg_ustack_t",
	};
	size_t i;

	for (i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(typedef_name, names[i]))
			return (enum mark)i;
	return M_NONE;
}

/* The type behind typedefs and qualifiers, and the first kagg mark met on the way. */
static __u32 resolve(const struct btf *btf, __u32 id, enum mark *m)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	*m = M_NONE;
	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		if (btf_is_typedef(t) && *m == M_NONE)
			*m = mark_of(btf__name_by_offset(btf, t->name_off));
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	return id;
}

#define MARK_BIT(m) (1U << (m))

/* Whether type id, or a member of it at any depth (up to 8), carries one of the marks. */
static bool has_mark(const struct btf *btf, __u32 id, unsigned int marks, int depth)
{
	const struct btf_type *t;
	enum mark m;
	__u16 i;

	id = resolve(btf, id, &m);
	if (m != M_NONE && (marks & MARK_BIT(m)))
		return true;
	t = btf__type_by_id(btf, id);
	if (!t || depth > 8 || !btf_is_composite(t))
		return false;
	for (i = 0; i < btf_vlen(t); i++)
		if (has_mark(btf, btf_members(t)[i].type, marks, depth + 1))
			return true;
	return false;
}

bool pkey_has_stacks(const struct btf *btf, __u32 id)
{
	return btf && has_mark(btf, id, MARK_BIT(M_KSTACK) | MARK_BIT(M_USTACK), 0);
}

bool pkey_has_pid(const struct btf *btf, __u32 id)
{
	return btf && has_mark(btf, id, MARK_BIT(M_PID), 0);
}

/* ------------------------------------------------------------ resolvers */

void pkey_cache_free(struct pkey_cache *c)
{
	cg_paths_free(&c->cg);
	u64map_free(&c->comm_idx);
	free(c->comms);
	c->comms = NULL;
	c->nr_comms = c->cap_comms = 0;
}

/* What formats one key: its labels so far, the session for symbols, the key's pid. */
struct kctx {
	struct kagg_session *s;
	struct pstate *t;
	const struct btf *btf;
	char **names, **vals;
	size_t n, cap;
	int pid;   /* the first kagg_pid_t of the key */
	bool scan; /* first pass: find the pid only */
	bool note; /* with scan: cache the command of every kagg_pid_t */
	bool oom;
};

static void add(struct kctx *c, const char *name, const char *val)
{
	if (c->scan || c->oom)
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		char **n = realloc(c->names, cap * sizeof(*n)), **v;

		if (n)
			c->names = n;
		v = n ? realloc(c->vals, cap * sizeof(*v)) : NULL;
		if (!v) {
			c->oom = true;
			return;
		}
		c->vals = v;
		c->cap = cap;
	}
	c->names[c->n] = strdup(name);
	c->vals[c->n] = strdup(val);
	if (!c->names[c->n] || !c->vals[c->n]) {
		free(c->names[c->n]);
		free(c->vals[c->n]);
		c->oom = true;
		return;
	}
	c->n++;
}

static struct syms *syms_of(struct kagg_session *s)
{
	if (!s->syms)
		s->syms = syms__new();
	return s->syms;
}

/* Kernel address a, named into buf; false when it is a frame of the BPF machinery. */
static bool fmt_kaddr(struct kctx *c, uint64_t a, char *buf, size_t len)
{
	struct sym sym;
	struct syms *sy = syms_of(c->s);
	bool known = sy && !syms__kernel(sy, a, &sym);

	sym__format(known ? &sym : NULL, a, 0, buf, len);
	return !known || !stk_tracing_frame(&sym);
}

static void fmt_uaddr(struct kctx *c, uint64_t a, char *buf, size_t len)
{
	struct sym sym;
	struct syms *sy = syms_of(c->s);
	int err = sy && c->pid > 0 ? syms__user(sy, c->pid, a, &sym) : -ESRCH;

	sym__format(!err || (err == -ENOENT && sym.module) ? &sym : NULL, a, 0, buf, len);
}

/* Stack id's frames, outermost first, ';'-joined (a folded stack). */
static void fmt_stack(struct kctx *c, int id, bool user, char *buf, size_t len)
{
	uint64_t ips[KAGG_SDK_MAX_STACK] = {};
	char f[256];
	size_t used = 0;
	int n = 0, i, top = 0;

	buf[0] = '\0';
	if (id == KAGG_SDK_NO_STACK) {
		snprintf(buf, len, "[none]");
		return;
	}
	if (id < 0 || bpf_map__lookup_elem(c->t->stackmap, &id, sizeof(id), ips, sizeof(ips), 0)) {
		snprintf(buf, len, "[lost: %s]", strerror(id < 0 ? -id : ENOENT));
		return;
	}
	while (n < KAGG_SDK_MAX_STACK && ips[n])
		n++;
	/*
	 * a kernel stack the program captured itself starts (innermost) with the program and
	 * the glue that ran it: left out, as in stack aggregations (user/snapshot/stacks.c)
	 */
	for (top = 0; !user && c->t->from_tracer && top < n; top++)
		if (fmt_kaddr(c, ips[top], f, sizeof(f)))
			break;
	for (i = n - 1; i >= top && used + 1 < len; i--) {
		if (user)
			fmt_uaddr(c, ips[i], f, sizeof(f));
		else
			fmt_kaddr(c, ips[i], f, sizeof(f));
		used += snprintf(buf + used, len - used, "%s%s", used ? ";" : "", f);
	}
}

/* /proc/PID/comm, "" when gone. */
static void proc_comm(int pid, char *buf, size_t len)
{
	char path[32];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* pid's entry in the command cache, or NULL. */
static struct pcomm *comm_cached(struct pkey_cache *c, int pid)
{
	uint64_t *i = c->comms ? u64map_get(&c->comm_idx, (uint32_t)pid) : NULL;

	return i ? &c->comms[*i] : NULL;
}

/* Cache pid's command unless known (then it is seen in this interval). */
static void comm_note(struct pkey_cache *c, int pid)
{
	struct pcomm *e = comm_cached(c, pid);
	char buf[KAGG_SDK_COMM_LEN];

	if (e) {
		e->epoch = c->epoch;
		return;
	}
	/* a process gone before its first sighting is cached too, as "": tried once */
	proc_comm(pid, buf, sizeof(buf));
	if (!c->comms && u64map_init(&c->comm_idx, 256))
		return;
	if (c->nr_comms == c->cap_comms) {
		size_t cap = c->cap_comms ? c->cap_comms * 2 : 64;
		struct pcomm *tmp = realloc(c->comms, cap * sizeof(*tmp));

		if (!tmp)
			return;
		c->comms = tmp;
		c->cap_comms = cap;
	}
	if (u64map_put(&c->comm_idx, (uint32_t)pid, c->nr_comms))
		return;
	e = &c->comms[c->nr_comms++];
	e->pid = (uint32_t)pid;
	e->epoch = c->epoch;
	memcpy(e->comm, buf, sizeof(e->comm));
}

/*
 * After a snapshot with reset: forget the processes gone that no key has shown since the
 * one before (their keys are all printed), then start the next interval.
 */
void pkey_prune(struct pkey_cache *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->nr_comms; i++) {
		if (c->comms[i].epoch < c->epoch && kill((pid_t)c->comms[i].pid, 0) &&
		    errno == ESRCH)
			continue;
		c->comms[n++] = c->comms[i];
	}
	if (n != c->nr_comms) {
		c->nr_comms = n;
		u64map_clear(&c->comm_idx);
		for (i = 0; i < n; i++)
			u64map_put(&c->comm_idx, c->comms[i].pid, i);
	}
	c->epoch++;
}

/* The command of pid: /proc's, else the cached one of a process gone, else "". */
static void comm_of(struct pkey_cache *c, int pid, char *buf, size_t len)
{
	const struct pcomm *e;

	proc_comm(pid, buf, len);
	if (!buf[0] && (e = comm_cached(c, pid)))
		snprintf(buf, len, "%s", e->comm);
}

/* Bits [off, off + bits) of base, as little-endian, sign-extended when sgn. */
static uint64_t get_bits(const unsigned char *base, __u32 off, __u32 bits, bool sgn)
{
	unsigned char b[16] = {};
	unsigned __int128 w = 0;
	uint64_t v;
	int i;

	memcpy(b, base + off / 8, (off % 8 + bits + 7) / 8);
	for (i = 15; i >= 0; i--)
		w = w << 8 | b[i];
	v = (uint64_t)(w >> (off % 8));
	if (bits < 64) {
		v &= (1ULL << bits) - 1;
		if (sgn && (v >> (bits - 1)))
			v |= ~0ULL << bits;
	}
	return v;
}

/* Printable bytes of a char array, up to its NUL; others as '?'. */
static void fmt_str(const unsigned char *p, size_t n, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < n && i + 1 < len && p[i]; i++)
		buf[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	buf[i] = '\0';
}

static void walk(struct kctx *c, __u32 id, const unsigned char *base, __u32 off, __u32 bits,
		 const char *name, int depth);

static void walk_marked(struct kctx *c, enum mark m, uint64_t v, const char *name)
{
	char buf[4096], n2[256];
	const char *p;

	switch (m) {
	case M_PID:
		if (c->scan && !c->pid)
			c->pid = (int)v;
		if (c->note)
			comm_note(&c->t->cache, (int)v);
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		add(c, name, buf);
		if (!c->scan) {
			comm_of(&c->t->cache, (int)v, buf, sizeof(buf));
			snprintf(n2, sizeof(n2), "%s_comm", name);
			add(c, n2, buf);
		}
		return;
	case M_CGROUP:
		p = c->scan ? NULL : cg_paths_find(&c->t->cache.cg, v);
		if (p)
			add(c, name, p);
		else
			snprintf(buf, sizeof(buf), "%" PRIu64, v), add(c, name, buf);
		return;
	case M_DEV:
		snprintf(buf, sizeof(buf), "%u:%u", (unsigned int)(v >> 20),
			 (unsigned int)(v & 0xfffff));
		add(c, name, buf);
		return;
	default:
		break;
	}
	if (c->scan)
		return;
	if (m == M_KADDR)
		fmt_kaddr(c, v, buf, sizeof(buf));
	else if (m == M_UADDR)
		fmt_uaddr(c, v, buf, sizeof(buf));
	else
		fmt_stack(c, (int)(int32_t)v, m == M_USTACK, buf, sizeof(buf));
	add(c, name, buf);
}

static void walk(struct kctx *c, __u32 id, const unsigned char *base, __u32 off, __u32 bits,
		 const char *name, int depth)
{
	const struct btf_type *t;
	char buf[512], child[256];
	enum mark m;
	uint64_t v;
	__u16 i;

	id = resolve(c->btf, id, &m);
	t = btf__type_by_id(c->btf, id);
	if (!t || depth > 8)
		return;
	if (btf_is_composite(t)) {
		for (i = 0; i < btf_vlen(t); i++) {
			const struct btf_member *mb = btf_members(t) + i;
			const char *mn = btf__name_by_offset(c->btf, mb->name_off);

			if (!strncmp(mn, "__", 2))
				continue;
			if (!mn[0])
				snprintf(child, sizeof(child), "%s", name);
			else
				snprintf(child, sizeof(child), "%s%s%s", name, name[0] ? "_" : "",
					 mn);
			walk(c, mb->type, base, off + btf_member_bit_offset(t, i),
			     btf_member_bitfield_size(t, i), child[0] ? child : "key", depth + 1);
		}
		return;
	}
	if (btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t)) {
		bool sgn = btf_is_int(t) ? btf_int_encoding(t) & BTF_INT_SIGNED : btf_kflag(t);

		v = get_bits(base, off, bits ? bits : t->size * 8, sgn);
		if (m != M_NONE) {
			walk_marked(c, m, v, name);
			return;
		}
		if (btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_BOOL))
			snprintf(buf, sizeof(buf), "%s", v ? "true" : "false");
		else if (sgn)
			snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v);
		else
			snprintf(buf, sizeof(buf), "%" PRIu64, v);
		for (i = 0; btf_is_enum(t) && i < btf_vlen(t); i++)
			if ((uint32_t)btf_enum(t)[i].val == (uint32_t)v)
				snprintf(buf, sizeof(buf), "%s",
					 btf__name_by_offset(c->btf, btf_enum(t)[i].name_off));
		for (i = 0; btf_is_enum64(t) && i < btf_vlen(t); i++)
			if (btf_enum64_value(&btf_enum64(t)[i]) == v)
				snprintf(buf, sizeof(buf), "%s",
					 btf__name_by_offset(c->btf, btf_enum64(t)[i].name_off));
		add(c, name, buf);
		return;
	}
	if (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		__u32 et = resolve(c->btf, a->type, &m);
		const struct btf_type *e = btf__type_by_id(c->btf, et);
		__s64 esz = btf__resolve_size(c->btf, et);

		if (e && btf_is_int(e) && e->size == 1 && m == M_NONE) {
			fmt_str(base + off / 8, a->nelems, buf, sizeof(buf));
			add(c, name, buf);
			return;
		}
		for (i = 0; esz > 0 && i < a->nelems && i < 64; i++) {
			snprintf(child, sizeof(child), "%s_%u", name, i);
			walk(c, a->type, base, off + (__u32)(i * esz * 8), 0, child, depth + 1);
		}
		return;
	}
	if (btf_is_ptr(t)) {
		v = get_bits(base, off, 64, false);
		snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
		add(c, name, buf);
	}
}

void pkey_note(struct kagg_session *s, struct pstate *t, const struct pagg *a,
	       const unsigned char *k)
{
	struct kctx c = {
		.s = s, .t = t, .btf = bpf_object__btf(t->obj), .scan = true, .note = true
	};

	if (a->has_pid)
		walk(&c, a->key_type, k, 0, 0, "", 0);
}

void pkey_note_maps(struct kagg_session *s, struct pstate *t)
{
	unsigned char key[4096], prev[4096];
	size_t i, ks;
	bool first;

	for (i = 0; i < t->nr_aggs; i++) {
		const struct pagg *a = &t->aggs[i];
		struct bpf_map *maps[2] = { a->map, a->cells };
		int j;

		if (!a->has_pid || a->unkeyed)
			continue;
		for (j = 0; j < 2; j++) {
			if (!maps[j] || (ks = bpf_map__key_size(maps[j])) > sizeof(key))
				continue;
			for (first = true;
			     !bpf_map__get_next_key(maps[j], first ? NULL : prev, key, ks);
			     first = false) {
				memcpy(prev, key, ks);
				pkey_note(s, t, a, key + a->key_off);
			}
		}
	}
}

/* ------------------------------------------------------------ reading */

void pentry_free(struct pentry *e)
{
	free_strv(e->names, e->nr_labels);
	free_strv(e->vals, e->nr_labels);
	free(e->label);
	free(e->key);
	free(e->xslots);
}

struct pentry *pentry_add(struct pentry **es, size_t *n, size_t *cap)
{
	struct pentry *e;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct pentry *tmp = realloc(*es, nc * sizeof(*tmp));

		if (!tmp)
			return NULL;
		*es = tmp;
		*cap = nc;
	}
	e = &(*es)[*n];
	memset(e, 0, sizeof(*e));
	return e;
}

/* Add the per-CPU values vals (nr_cpus of vs bytes) of aggregation a to e. */
static void entry_sum(struct pentry *e, const struct pagg *a, const unsigned char *vals, size_t vs,
		      int nr_cpus)
{
	int cpu, k;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		const unsigned char *v = vals + (size_t)cpu * vs;

		if (a->d.kind == KAGG_SDK_COUNT) {
			const struct kagg_sdk_count *cv = (const void *)v;

			e->count += cv->count;
			e->sum += cv->sum;
			continue;
		}
		for (k = 0; k < KAGG_SDK_SLOTS; k++) {
			e->slots[k] += ((const struct kagg_sdk_hist *)v)->slots[k];
			e->count += ((const struct kagg_sdk_hist *)v)->slots[k];
		}
		e->sum += ((const struct kagg_sdk_hist *)v)->sum;
		if (a->ext)
			kagg_ext_merge(&e->nmin, &e->max, ((const struct kagg_sdk_hist *)v)->nmin,
				       ((const struct kagg_sdk_hist *)v)->max);
	}
	e->has_ext = a->ext;
}

/*
 * An aggregation with no key: entry g of its per-CPU array, one histogram (empty
 * too, as a built-in tool's), zeroed when reset.
 */
static int read_unkeyed(struct kagg_session *s, struct pstate *t, size_t ai, __u32 g, bool reset,
			struct pentry **es, size_t *n, size_t *cap)
{
	const struct pagg *a = &t->aggs[ai];
	size_t vs = bpf_map__value_size(a->map), len = vs * s->nr_cpus;
	unsigned char *vals = calloc(s->nr_cpus, vs);
	struct pentry *e = vals ? pentry_add(es, n, cap) : NULL;
	int err = 0;

	if (!e) {
		free(vals);
		return -ENOMEM;
	}
	e->agg = ai;
	e->key = malloc(sizeof(g));
	if (!e->key) {
		free(vals);
		return -ENOMEM;
	}
	memcpy(e->key, &g, sizeof(g));
	(*n)++;
	if (bpf_map__lookup_elem(a->map, &g, sizeof(g), vals, len, 0))
		err = -errno;
	else
		entry_sum(e, a, vals, vs, s->nr_cpus);
	/* generation g is written no more */
	if (!err && reset) {
		memset(vals, 0, len);
		if (bpf_map__update_elem(a->map, &g, sizeof(g), vals, len, 0))
			err = -errno;
	}
	free(vals);
	return err;
}

/* The entries of generation g of aggregation a into *es (grown), deleted when reset. */
static int read_agg(struct kagg_session *s, struct pstate *t, size_t ai, __u32 g, bool reset,
		    struct pentry **es, size_t *n, size_t *cap)
{
	const struct pagg *a = &t->aggs[ai];
	size_t ks = bpf_map__key_size(a->map), vs = bpf_map__value_size(a->map), nr = 0, i;
	int nc = session_map_copies(s, a->map), err;
	unsigned char *keys = NULL, *vals = NULL;

	if (a->unkeyed)
		return read_unkeyed(s, t, ai, g, reset, es, n, cap);
	err = session_gen_entries(a->map, g, ks, vs * nc, (void **)&keys, (void **)&vals, &nr);
	for (i = 0; !err && i < nr; i++) {
		struct pentry *e = pentry_add(es, n, cap);

		if (!e || !(e->key = malloc(ks))) {
			err = -ENOMEM;
			break;
		}
		e->agg = ai;
		memcpy(e->key, keys + i * ks, ks);
		(*n)++;
		entry_sum(e, a, vals + i * vs * nc, vs, nc);
	}
	/* generation g is written no more: its entries go, which frees them */
	if (!err && reset)
		session_gen_delete(a->map, keys, ks, nr);
	free(keys);
	free(vals);
	return err;
}

/* FNV-1a of n bytes. */
static uint64_t key_hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * The exp bucket cells of generation g of log2 histogram a into *es (grown), one entry
 * per key (every unkeyed histogram has one), deleted when reset.
 */
static int read_cells(struct kagg_session *s, struct pstate *t, size_t ai, __u32 g, bool reset,
		      struct pentry **es, size_t *n, size_t *cap)
{
	const struct pagg *a = &t->aggs[ai];
	size_t ks = bpf_map__key_size(a->cells), eks = a->unkeyed ? 4 : ks, nr = 0, i;
	unsigned int nslots = pexp_slots(s);
	size_t cs = bpf_map__value_size(a->cells); /* a kagg_sdk_cell, or _V1 */
	int nc = session_map_copies(s, a->cells), err, cpu;
	unsigned char *ek = calloc(1, ks), *keys = NULL, *vals = NULL;
	struct u64map idx = {};
	uint64_t cnt, sum, *at;
	__u64 nmin, max;
	__u32 slot;
	struct pentry *e;
	uint64_t h;

	if (!ek || u64map_init(&idx, 64)) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = session_gen_entries(a->cells, g, ks, cs * nc, (void **)&keys, (void **)&vals, &nr);
	for (i = 0; !err && i < nr; i++) {
		const unsigned char *key = keys + i * ks;

		for (cnt = sum = nmin = max = 0, cpu = 0; cpu < nc; cpu++) {
			const struct kagg_sdk_cell *c = (const void *)(vals + (i * nc + cpu) * cs);

			cnt += c->count;
			sum += c->sum;
			if (a->ext)
				kagg_ext_merge(&nmin, &max, c->nmin, c->max);
		}
		memcpy(&slot, key + 4, 4);
		/* the entry's key: the cell's without its slot, NAME__key's layout */
		memcpy(ek, key, ks);
		memset(ek + 4, 0, 4);
		for (h = key_hash(ek, eks);; h++) {
			at = u64map_get(&idx, h);
			if (!at || !memcmp((*es)[*at].key, ek, eks))
				break;
		}
		if (at) {
			e = &(*es)[*at];
		} else {
			e = pentry_add(es, n, cap);
			if (!e || !(e->key = malloc(eks)) ||
			    !(e->xslots = calloc(nslots, sizeof(uint64_t)))) {
				if (e)
					pentry_free(e);
				err = -ENOMEM;
				goto cleanup;
			}
			e->agg = ai;
			memcpy(e->key, ek, eks);
			if (u64map_put(&idx, h, *n)) {
				pentry_free(e);
				err = -ENOMEM;
				goto cleanup;
			}
			(*n)++;
		}
		if (slot < nslots)
			e->xslots[slot] += cnt;
		e->count += cnt;
		e->sum += sum;
		kagg_ext_merge(&e->nmin, &e->max, nmin, max);
		e->has_ext = a->ext;
	}
	if (err)
		goto cleanup;
	if (a->unkeyed && !u64map_get(&idx, key_hash((unsigned char *)&g, 4))) {
		e = pentry_add(es, n, cap);
		if (!e || !(e->key = malloc(4))) {
			err = -ENOMEM;
			goto cleanup;
		}
		e->agg = ai;
		memcpy(e->key, &g, 4);
		(*n)++;
	}
	/* generation g is written no more: its cells go */
	if (reset)
		session_gen_delete(a->cells, keys, ks, nr);
cleanup:
	u64map_free(&idx);
	free(keys);
	free(ek);
	free(vals);
	return err;
}

/* Entry e's labels from its key's BTF, and the "name=value ..." label. */
static int label_entry(struct kagg_session *s, struct pstate *t, struct pentry *e)
{
	const struct pagg *a = &t->aggs[e->agg];
	struct kctx c = { .s = s, .t = t, .btf = bpf_object__btf(t->obj), .scan = true };
	const unsigned char *k = e->key + a->key_off;
	size_t i, len = 0;

	if (a->unkeyed)
		return 0;
	walk(&c, a->key_type, k, 0, 0, "", 0);
	c.scan = false;
	walk(&c, a->key_type, k, 0, 0, "", 0);
	e->names = c.names;
	e->vals = c.vals;
	e->nr_labels = c.n;
	if (c.oom)
		return -ENOMEM;
	for (i = 0; i < c.n; i++)
		len += strlen(c.names[i]) + strlen(c.vals[i]) + 2;
	if (!c.n)
		return 0;
	e->label = malloc(len + 1);
	if (!e->label)
		return -ENOMEM;
	for (i = 0, len = 0; i < c.n; i++)
		len += sprintf(e->label + len, "%s%s=%s", i ? " " : "", c.names[i], c.vals[i]);
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct pentry *a = x, *b = y;

	if (a->agg != b->agg)
		return a->agg < b->agg ? -1 : 1;
	return strverscmp(a->label ? a->label : "", b->label ? b->label : "");
}

/* Copy n strings into snap; the pointer array too.  NULL on ENOMEM. */
static const char *const *snap_strs(struct kagg_snapshot *snap, char **v, size_t n)
{
	const char **arr = snap_own(snap, calloc(n ? n : 1, sizeof(*arr)));
	size_t i;

	for (i = 0; arr && i < n; i++)
		if (!(arr[i] = snap_strdup(snap, v[i])))
			return NULL;
	return arr;
}

int pread_hists(struct kagg_session *s, struct pstate *t, struct kagg_snapshot *snap, __u32 g,
		bool reset)
{
	struct pentry *es = NULL;
	size_t n = 0, cap = 0, i;
	int err = 0;

	for (i = 0; !err && i < t->nr_aggs; i++) {
		__u32 kind = t->aggs[i].d.kind;

		if (t->aggs[i].off)
			continue;
		if (kind == KAGG_SDK_LOG2 && t->exp)
			err = read_cells(s, t, i, g, reset, &es, &n, &cap);
		else if (kind == KAGG_SDK_LOG2 || kind == KAGG_SDK_LINEAR || kind == KAGG_SDK_COUNT)
			err = read_agg(s, t, i, g, reset, &es, &n, &cap);
	}
	return pentries_snap(s, t, snap, es, n, err);
}

/* An extreme o of aggregation a (kagg_sdk_ext_ord() of a value) as kagg_hist shows it. */
static double pext_value(const struct kagg_session *s, const struct pagg *a, __u64 o)
{
	__u64 v = kagg_sdk_ext_ord(a->d.kind, o);

	if (a->d.flags & KAGG_SDK_TIME)
		return (double)v / (double)units_ns(s->unit);
	return a->d.kind == KAGG_SDK_LINEAR ? (double)(int64_t)v : (double)v;
}

int pentries_snap(struct kagg_session *s, struct pstate *t, struct kagg_snapshot *snap,
		  struct pentry *es, size_t n, int err)
{
	size_t i, nh = 0;
	unsigned int nslots;

	if (err)
		goto cleanup;
	t->cache.cg.read = false;
	/* a built-in tool names its histograms itself (relabel): no labels from BTF then */
	for (i = 0; !err && !t->relabel && i < n; i++)
		err = label_entry(s, t, &es[i]);
	if (err)
		goto cleanup;
	if (n)
		qsort(es, n, sizeof(*es), cmp_entry);
	nslots = t->exp && pexp_slots(s) > KAGG_SDK_SLOTS ? pexp_slots(s) : KAGG_SDK_SLOTS;
	err = session_alloc_hists(s, snap, n, nslots);
	for (i = 0; !err && i < n; i++, nh++) {
		const struct pagg *a = &t->aggs[es[i].agg];
		struct kagg_hist *h = &snap->hists[i];
		bool time = a->d.flags & KAGG_SDK_TIME;

		h->agg = snap_strdup(snap, a->name);
		h->key.label = es[i].label ? snap_strdup(snap, es[i].label) : NULL;
		h->nr_labels = es[i].nr_labels;
		h->label_names = snap_strs(snap, es[i].names, es[i].nr_labels);
		h->label_values = snap_strs(snap, es[i].vals, es[i].nr_labels);
		if (!h->agg || (es[i].label && !h->key.label) || !h->label_names ||
		    !h->label_values) {
			err = -ENOMEM;
			break;
		}
		if (!time)
			h->value = h->agg;
		h->has_sum = true;
		/* modulo 2^64: a linear histogram's values (and so their sum) are signed */
		h->sum = time ? (double)es[i].sum / (double)units_ns(s->unit)
			 : a->d.kind == KAGG_SDK_LINEAR ? (double)(int64_t)es[i].sum
							: (double)es[i].sum;
		h->total = es[i].count;
		if (es[i].has_ext && es[i].count) {
			h->has_minmax = true;
			h->min = pext_value(s, a, ~es[i].nmin);
			h->max = pext_value(s, a, es[i].max);
		}
		if (a->d.kind == KAGG_SDK_COUNT) {
			h->nr_slots = 0;
			continue;
		}
		if (t->exp && a->d.kind == KAGG_SDK_LOG2) {
			h->nr_slots = pexp_slots(s);
			h->has_exp = true;
			h->exp_scale = s->exp_scale;
			h->exp_base_index = t->exp_params[time].base_index;
			if (es[i].xslots)
				memcpy((uint64_t *)h->slots, es[i].xslots,
				       pexp_slots(s) * sizeof(uint64_t));
			continue;
		}
		h->nr_slots = KAGG_SDK_SLOTS;
		memcpy((uint64_t *)h->slots, es[i].slots, sizeof(es[i].slots));
		if (a->d.kind == KAGG_SDK_LINEAR) {
			h->lin_min = a->d.lin_min;
			h->lin_step = a->d.lin_step;
		}
	}
	for (i = 0; !err && t->relabel && i < nh; i++) {
		const struct pagg *a = &t->aggs[es[i].agg];

		err = t->relabel(s, a, a->unkeyed ? NULL : es[i].key + a->key_off, &snap->hists[i],
				 snap);
	}
cleanup:
	for (i = 0; i < n; i++)
		pentry_free(&es[i]);
	free(es);
	return err;
}
