// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pprof.c - a snapshot's stacks as a pprof profile: the tables of profile.proto (strings,
 * mappings, functions, locations, samples) filled from the stacks, encoded with protobuf-c
 * (user/proto/profile.proto) and gzip-compressed with zlib, as pprof reads it.
 *
 * Every frame is symbolized already, so each distinct frame name in each file is one
 * function and one location (at the address of its first appearance), in the mapping of
 * that file; the mappings say has_functions, so readers do not symbolize again.  Each sample
 * carries its process's pid, tid and comm as labels (`pprof -tags`).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <kagg/pprof.h>
#include "util/array.h"
#include "profile.pb-c.h"
#include "render/render_internal.h"
#include "syms/syms.h"
#include "util/u64map.h"
#include "util/utf8.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Label Label;

/* String -> its index in the string table (open addressing; strings borrowed). */
struct strtab {
	char **strs; /* the table: strs[0] = "" */
	size_t nr, cap;
	size_t *slots; /* index + 1, 0: empty */
	size_t nslots;
};

/* The index of s, added when new (a copy); -1 on ENOMEM. */
static int64_t str_add(struct strtab *t, const char *s)
{
	size_t i;

	if ((t->nr + 1) * 2 > t->nslots) {
		size_t n = t->nslots ? t->nslots * 2 : 256, k, j;
		size_t *slots = calloc(n, sizeof(*slots));

		if (!slots)
			return -1;
		for (k = 0; k < t->nr; k++) {
			for (j = render_hash(t->strs[k]) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
				;
			slots[j] = k + 1;
		}
		free(t->slots);
		t->slots = slots;
		t->nslots = n;
	}
	for (i = render_hash(s) & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		if (!strcmp(t->strs[t->slots[i] - 1], s))
			return t->slots[i] - 1;
	if (GROW_ARRAY(t->strs, t->cap, t->nr, 256))
		return -1;
	t->strs[t->nr] = strdup(s);
	if (!t->strs[t->nr])
		return -1;
	t->slots[i] = ++t->nr;
	return t->nr - 1;
}

/*
 * The index of s made valid for pprof (utf8.h): UTF-8 without controls, since protobuf strings
 * are UTF-8 and pprof prints them on terminals.  -1 on ENOMEM.
 */
static int64_t str_index(struct strtab *t, const char *s)
{
	int64_t i;
	char *c;

	if (utf8_is_clean(s, 0))
		return str_add(t, s);
	c = malloc(utf8_clean(NULL, s, 0) + 1);
	if (!c)
		return -1;
	utf8_clean(c, s, 0);
	i = str_add(t, c);
	free(c);
	return i;
}

struct pp {
	struct strtab st;
	Mapping *maps; /* id = index + 1 */
	size_t nr_maps;
	int64_t *map_file; /* string index of each mapping's file */
	Function *funcs;   /* id = index + 1; location i + 1 is function i + 1 */
	Location *locs;
	Line *lines;
	size_t nr_funcs, cap_funcs;
	struct u64map func_of; /* string index << 24 | mapping id -> function id */
};

#define PP_ENOMEM(x)                    \
	do {                            \
		if (!(x))               \
			return -ENOMEM; \
	} while (0)

/* The running kernel's GNU build-id from /sys/kernel/notes, as hex.  0 or -ENOENT. */
static int kernel_build_id(char *hex, size_t len)
{
	unsigned char buf[4096];
	size_t n, off = 0;
	FILE *f = fopen("/sys/kernel/notes", "re");

	if (!f)
		return -ENOENT;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 12 <= n) {
		uint32_t namesz, descsz, type, i;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		if (namesz > n || descsz > n)
			break;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && off + 4 + descsz <= n &&
		    !memcmp(buf + off, "GNU", 4) && descsz && descsz * 2 < len) {
			for (i = 0; i < descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", buf[off + 4 + i]);
			return 0;
		}
		off += ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	}
	return -ENOENT;
}

/* The mapping id of file (a path, "[kernel]" or a module's name); 0 for none. */
static int pp_mapping(struct pp *p, const char *file, bool kernel)
{
	char name[512], hex[129];
	int64_t fi;
	size_t i;
	Mapping *m;

	if (!file)
		return 0;
	if (kernel)
		snprintf(name, sizeof(name), "%s",
			 !strcmp(file, "[kernel]") ? "[kernel.kallsyms]" : file);
	else
		snprintf(name, sizeof(name), "%s", file);
	fi = str_index(&p->st, name);
	PP_ENOMEM(fi >= 0);
	for (i = 0; i < p->nr_maps; i++)
		if (p->map_file[i] == fi)
			return i + 1;
	m = realloc(p->maps, (p->nr_maps + 1) * sizeof(*m));
	PP_ENOMEM(m);
	p->maps = m;
	m = &p->maps[p->nr_maps];
	{
		int64_t *mf = realloc(p->map_file, (p->nr_maps + 1) * sizeof(*mf));

		PP_ENOMEM(mf);
		p->map_file = mf;
	}
	perftools__profiles__mapping__init(m);
	m->id = p->nr_maps + 1;
	m->filename = fi;
	m->has_functions = true;
	if ((!kernel && name[0] == '/' && !syms_elf_build_id(name, hex, sizeof(hex))) ||
	    (kernel && !strcmp(name, "[kernel.kallsyms]") && !kernel_build_id(hex, sizeof(hex)))) {
		m->build_id = str_index(&p->st, hex);
		PP_ENOMEM(m->build_id >= 0);
	}
	p->map_file[p->nr_maps] = fi;
	return ++p->nr_maps;
}

/* The location id of the frame named name (function and location made when new). */
static int64_t pp_location(struct pp *p, const char *name, uint64_t ip, const char *module,
			   bool kernel)
{
	int64_t ni = str_index(&p->st, name);
	uint64_t key, *have;
	size_t k;
	int mid;

	if (ni < 0)
		return -ENOMEM;
	mid = pp_mapping(p, module, kernel);
	if (mid < 0)
		return mid;
	key = (uint64_t)ni << 24 | (uint64_t)mid;
	have = u64map_get(&p->func_of, key);
	if (have)
		return *have;
	if (p->nr_funcs == p->cap_funcs) {
		size_t cap = p->cap_funcs ? p->cap_funcs * 2 : 256;
		Function *f = realloc(p->funcs, cap * sizeof(*f));

		PP_ENOMEM(f);
		p->funcs = f;
		{
			Location *l = realloc(p->locs, cap * sizeof(*l));

			PP_ENOMEM(l);
			p->locs = l;
		}
		{
			Line *ln = realloc(p->lines, cap * sizeof(*ln));

			PP_ENOMEM(ln);
			p->lines = ln;
		}
		p->cap_funcs = cap;
	}
	k = p->nr_funcs++;
	perftools__profiles__function__init(&p->funcs[k]);
	p->funcs[k].id = k + 1;
	p->funcs[k].name = ni;
	p->funcs[k].system_name = ni;
	p->funcs[k].filename = mid ? p->map_file[mid - 1] : 0;
	perftools__profiles__location__init(&p->locs[k]);
	p->locs[k].id = k + 1;
	p->locs[k].mapping_id = mid;
	p->locs[k].address = ip;
	perftools__profiles__line__init(&p->lines[k]);
	p->lines[k].function_id = k + 1;
	PP_ENOMEM(!u64map_put(&p->func_of, key, k + 1));
	return k + 1;
}

static void pp_free(struct pp *p)
{
	size_t i;

	for (i = 0; i < p->st.nr; i++)
		free(p->st.strs[i]);
	free(p->st.strs);
	free(p->st.slots);
	free(p->maps);
	free(p->map_file);
	free(p->funcs);
	free(p->locs);
	free(p->lines);
	u64map_free(&p->func_of);
}

/* buf gzip-compressed into f.  0 or -EIO. */
static int gzip_write(const uint8_t *buf, size_t len, FILE *f)
{
	unsigned char out[16384];
	z_stream z = {};
	int zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)buf;
	z.avail_in = len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR ||
		    fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return -EIO;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return ferror(f) ? -EIO : 0;
}

/* The locations of n frames (innermost first) into ids at *at, then a lost stack's marker. */
static int pp_frames(struct pp *p, const struct kagg_frame *const *fr, unsigned int n, int err,
		     bool kernel, uint64_t *ids, size_t *at)
{
	unsigned int k;
	int64_t id;

	for (k = 0; k < n; k++) {
		const char *mod = KAGG_HAS_FIELD(fr[k], kagg_frame, module) ? fr[k]->module : NULL;

		id = pp_location(p, fr[k]->sym, fr[k]->ip,
				 mod	  ? mod
				 : kernel ? "[kernel]"
					  : NULL,
				 kernel);
		if (id < 0)
			return id;
		ids[(*at)++] = id;
	}
	if (err && err != -ENOENT) {
		id = pp_location(p, kernel ? "[kernel stack lost]" : "[user stack lost]", 0, NULL,
				 kernel);
		if (id < 0)
			return id;
		ids[(*at)++] = id;
	}
	return 0;
}

/* Fill the tables and the samples (in samples/sp/ids/vals, nr stacks), into prof. */
static int pp_fill(struct pp *p, const struct kagg_snapshot *snap, bool off_cpu, Profile *prof,
		   Sample *samples, Sample **sp, uint64_t *ids, int64_t *vals, Label *lab,
		   Label **lp)
{
	size_t i, nr = kagg_snapshot__stack_cnt(snap), at = 0;
	int64_t nv = off_cpu ? 1 : 2;
	int64_t kpid = str_index(&p->st, "pid"), ktid = str_index(&p->st, "tid");
	int64_t kcomm = str_index(&p->st, "comm");

	if (kpid < 0 || ktid < 0 || kcomm < 0)
		return -ENOMEM;

	for (i = 0; i < nr; i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);
		Sample *s = &samples[i];
		char comm[sizeof(st->comm) + 1];
		int64_t id;

		perftools__profiles__sample__init(s);
		sp[i] = s;
		s->location_id = ids + at;
		if ((id = pp_frames(p, st->kframes, st->nr_kframes, st->kstack_err, true, ids,
				    &at)) ||
		    (id = pp_frames(p, st->uframes, st->nr_uframes, st->ustack_err, false, ids,
				    &at)))
			return id;
		memcpy(comm, st->comm, sizeof(st->comm));
		comm[sizeof(st->comm)] = 0;
		if ((id = pp_location(p, comm[0] ? comm : "[unknown]", 0, NULL, false)) < 0)
			return id;
		ids[at++] = id;
		for (id = 0; id < 3; id++) {
			perftools__profiles__label__init(&lab[3 * i + id]);
			lp[3 * i + id] = &lab[3 * i + id];
		}
		lab[3 * i].key = kpid;
		lab[3 * i].num = st->pid;
		lab[3 * i + 1].key = ktid;
		lab[3 * i + 1].num = st->tid;
		lab[3 * i + 2].key = kcomm;
		lab[3 * i + 2].str = str_index(&p->st, comm[0] ? comm : "[unknown]");
		if (lab[3 * i + 2].str < 0)
			return -ENOMEM;
		s->label = &lp[3 * i];
		s->n_label = 3;
		s->n_location_id = ids + at - s->location_id;
		s->value = vals + i * nv;
		s->n_value = nv;
		if (off_cpu) {
			s->value[0] = st->total_ns;
		} else {
			s->value[0] = st->count;
			s->value[1] = st->total_ns;
		}
	}
	prof->sample = sp;
	prof->n_sample = nr;
	return 0;
}

int kagg_pprof__write(const struct kagg_snapshot *snap, FILE *f, const struct kagg_pprof_opts *opts)
{
	struct kagg_pprof_opts o = {};
	const struct kagg_meta *m;
	size_t i, nr, nids = 0;
	Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	ValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
			    PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	ValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	ValueType *vtp[2] = { &vt[0], &vt[1] };
	Mapping **mp = NULL;
	Location **lp = NULL;
	Function **fp = NULL;
	Line **lnp = NULL;
	Sample *samples = NULL, **sp = NULL;
	Label *lab = NULL, **labp = NULL;
	uint64_t *ids = NULL;
	int64_t *vals = NULL;
	uint8_t *buf = NULL;
	struct pp p = {};
	int err = -ENOMEM;

	if (!snap || !f || (opts && opts->sz > sizeof(o)))
		return -EINVAL;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	m = kagg_snapshot__meta(snap);
	nr = kagg_snapshot__stack_cnt(snap);
	for (i = 0; i < nr; i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		nids += st->nr_kframes + st->nr_uframes + 3;
	}
	if (str_index(&p.st, "") < 0)
		goto out;
	samples = calloc(nr ? nr : 1, sizeof(*samples));
	sp = calloc(nr ? nr : 1, sizeof(*sp));
	ids = calloc(nids ? nids : 1, sizeof(*ids));
	vals = calloc(nr ? nr * 2 : 1, sizeof(*vals));
	lab = calloc(nr ? nr * 3 : 1, sizeof(*lab));
	labp = calloc(nr ? nr * 3 : 1, sizeof(*labp));
	if (!samples || !sp || !ids || !vals || !lab || !labp || u64map_init(&p.func_of, 256))
		goto out;
	if (o.off_cpu) {
		vt[0].type = str_index(&p.st, "offcpu");
		vt[0].unit = str_index(&p.st, "nanoseconds");
		prof.n_sample_type = 1;
	} else {
		vt[0].type = str_index(&p.st, "samples");
		vt[0].unit = str_index(&p.st, "count");
		vt[1].type = str_index(&p.st, "cpu");
		vt[1].unit = str_index(&p.st, "nanoseconds");
		prof.n_sample_type = 2;
		period.type = vt[1].type;
		period.unit = vt[1].unit;
		prof.period_type = &period;
		for (i = 0; i < nr; i++) {
			const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

			if (st->count) {
				prof.period = st->total_ns / st->count;
				break;
			}
		}
	}
	if (vt[0].unit < 0 || vt[1].unit < 0)
		goto out;
	prof.sample_type = vtp;
	err = pp_fill(&p, snap, o.off_cpu, &prof, samples, sp, ids, vals, lab, labp);
	if (err)
		goto out;
	err = -ENOMEM;
	mp = calloc(p.nr_maps + 1, sizeof(*mp));
	fp = calloc(p.nr_funcs + 1, sizeof(*fp));
	lp = calloc(p.nr_funcs + 1, sizeof(*lp));
	lnp = calloc(p.nr_funcs + 1, sizeof(*lnp));
	if (!mp || !fp || !lp || !lnp)
		goto out;
	for (i = 0; i < p.nr_maps; i++)
		mp[i] = &p.maps[i];
	for (i = 0; i < p.nr_funcs; i++) {
		fp[i] = &p.funcs[i];
		lp[i] = &p.locs[i];
		lnp[i] = &p.lines[i];
		p.locs[i].line = &lnp[i];
		p.locs[i].n_line = 1;
	}
	prof.mapping = mp;
	prof.n_mapping = p.nr_maps;
	prof.function = fp;
	prof.n_function = p.nr_funcs;
	prof.location = lp;
	prof.n_location = p.nr_funcs;
	prof.string_table = p.st.strs;
	prof.n_string_table = p.st.nr;
	if (m) {
		prof.time_nanos = (int64_t)m->start.tv_sec * 1000000000 + m->start.tv_nsec;
		prof.duration_nanos = m->duration_s * 1e9;
	}
	buf = malloc(perftools__profiles__profile__get_packed_size(&prof) + 1);
	if (!buf)
		goto out;
	err = gzip_write(buf, perftools__profiles__profile__pack(&prof, buf), f);
out:
	free(buf);
	free(mp);
	free(fp);
	free(lp);
	free(lnp);
	free(samples);
	free(sp);
	free(ids);
	free(vals);
	free(lab);
	free(labp);
	pp_free(&p);
	return err;
}
