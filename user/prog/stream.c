// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Streaming a program's observations (kagg_prog_opts.mode stream or both).
 *
 * The record call of a histogram or counter also reserves {struct
 * kagg_sdk_rec, KEY, __u64 value} in kagg_events (bpf/sdk/kagg.bpf.h).  Each
 * aggregation is an ftrace event SYSTEM:NAME (SYSTEM the object's name) whose
 * format is generated from the key's BTF: integers, bools, enums and char
 * arrays by name (nested structs flattened, outer_inner), then `value`.  A
 * record lands in the reference ring buffer as that event (common_pid the
 * thread that recorded), and is aggregated as the kernel aggregates it: the
 * same slot, the same generation, keyed by the same bytes.  The snapshot
 * labels the keys with the kernel path's code (pentries_snap).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "prog/prog_internal.h"
#include "session/session_internal.h"
#include "snapshot/snapshot_internal.h"
#include "stream/stream.h"

_Static_assert(offsetof(struct kagg_sdk_rec, ts) == offsetof(struct kagg_rec_hdr, ts) &&
		       offsetof(struct kagg_sdk_rec, seq) == offsetof(struct kagg_rec_hdr, seq) &&
		       offsetof(struct kagg_sdk_rec, cpu) == offsetof(struct kagg_rec_hdr, cpu) &&
		       offsetof(struct kagg_sdk_rec, gen) == offsetof(struct kagg_rec_hdr, gen),
	       "an SDK record starts as the stream's records do");

#define PS_MAX_FIELDS 64

/* A field of an event: where it is in the record and in the landed event. */
struct pfield {
	char name[64];
	__u32 rec_off; /* in the record */
	__u32 size;
	int ev_off; /* in the event */
};

struct pevent {
	const struct kagg_rb_format *fmt;
	size_t payload;
	struct pfield f[PS_MAX_FIELDS + 1]; /* the key's, then value */
	size_t nr;
	__u32 key_size, v_off, rec_size;
};

/* The stream's aggregation of one generation: entries found by key bytes. */
struct pgen {
	struct u64map index; /* hash of (agg, key) -> entry index + 1 */
	struct pentry *es;
	size_t n, cap;
};

struct pstream {
	struct scons core;
	struct kagg_session *s;
	struct pstate *t;
	struct pevent *ev;	      /* per aggregation */
	int by_drop[KAGG_SDK_NR_CNT]; /* descriptor's drop counter -> aggregation + 1 */
	uint64_t unit_ns;
	struct pgen gen[2];
	int oom;
};

/* ------------------------------------------------------------ formats from BTF */

struct fctx {
	const struct btf *btf;
	struct pevent *e;
	char *decl, *fmt, *args;
	size_t dlen, flen, alen;
	bool over;
};

static void fadd(struct fctx *c, const char *name, __u32 off, __u32 size, const char *type,
		 const char *arr, const char *conv, const char *arg)
{
	struct pfield *f;

	if (c->e->nr >= PS_MAX_FIELDS || strlen(name) >= sizeof(f->name)) {
		c->over = true;
		return;
	}
	f = &c->e->f[c->e->nr++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->rec_off = off;
	f->size = size;
	c->dlen += snprintf(c->decl + c->dlen, 4096 - c->dlen, "%s%s %s%s", c->dlen ? "; " : "",
			    type, name, arr);
	c->flen += snprintf(c->fmt + c->flen, 2048 - c->flen, "%s%s=%s", c->flen ? " " : "", name,
			    conv);
	if (arg)
		c->alen += snprintf(c->args + c->alen, 2048 - c->alen, ", %s", arg);
	else
		c->alen += snprintf(c->args + c->alen, 2048 - c->alen, ", REC->%s", name);
	if (c->dlen >= 4096 || c->flen >= 2048 || c->alen >= 2048)
		c->over = true;
}

/*
 * __print_symbolic(REC->name, {value, "NAME"}, ...) of enum t into buf: its values by
 * name in trace text; false when it does not fit (the field is then printed as a number).
 */
static bool enum_symbolic(const struct fctx *c, const struct btf_type *t, const char *name,
			  char *buf, size_t len)
{
	const struct btf_enum *e = btf_enum(t);
	size_t n;
	__u16 i;

	n = (size_t)snprintf(buf, len, "__print_symbolic(REC->%s", name);
	for (i = 0; i < btf_vlen(t) && n < len; i++, e++)
		n += (size_t)snprintf(buf + n, len - n, ", { %lld, \"%s\" }",
				      btf_kflag(t) ? (long long)e->val : (long long)(__u32)e->val,
				      btf__name_by_offset(c->btf, e->name_off));
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, ")");
	return btf_vlen(t) && n < len && c->alen + n + 4 < 2048;
}

/* The fields of type id at byte offset off of the record, named prefix_member. */
static void fwalk(struct fctx *c, __u32 id, __u32 off, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(c->btf, id);
	char child[128], arr[24], sym[1024];

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		id = t->type;
		t = btf__type_by_id(c->btf, id);
	}
	if (!t || depth > 8)
		return;
	if (btf_is_struct(t) || btf_is_union(t)) {
		const struct btf_member *m = btf_members(t);
		__u16 i;

		for (i = 0; i < btf_vlen(t); i++, m++) {
			const char *mn = btf__name_by_offset(c->btf, m->name_off);

			if (!mn || !*mn || !strncmp(mn, "__", 2) ||
			    btf_member_bitfield_size(t, i) || btf_member_bit_offset(t, i) % 8)
				continue;
			snprintf(child, sizeof(child), "%s%s%s", name, *name ? "_" : "", mn);
			fwalk(c, m->type, off + btf_member_bit_offset(t, i) / 8, child, depth + 1);
		}
		return;
	}
	if (btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t)) {
		bool sgn = btf_is_int(t) ? btf_int_encoding(t) & BTF_INT_SIGNED : btf_kflag(t);
		static const char *const u[] = { "u8", "u16", "", "u32", "", "", "", "u64" };
		static const char *const sg[] = { "s8", "s16", "", "s32", "", "", "", "s64" };

		if (t->size < 1 || t->size > 8 || !*u[t->size - 1])
			return;
		if (btf_is_int(t) && btf_int_encoding(t) & BTF_INT_BOOL)
			fadd(c, name, off, 1, "bool", "", "%u", NULL);
		else if (btf_is_enum(t) && enum_symbolic(c, t, name, sym, sizeof(sym)))
			fadd(c, name, off, t->size, sgn ? sg[t->size - 1] : u[t->size - 1], "",
			     "%s", sym);
		else
			fadd(c, name, off, t->size, sgn ? sg[t->size - 1] : u[t->size - 1], "",
			     t->size == 8 ? (sgn ? "%lld" : "%llu") : (sgn ? "%d" : "%u"), NULL);
		return;
	}
	if (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		const struct btf_type *et = btf__type_by_id(c->btf, a->type);

		while (et && (btf_is_typedef(et) || btf_is_mod(et)))
			et = btf__type_by_id(c->btf, et->type);
		if (et && btf_is_int(et) && et->size == 1 && a->nelems) {
			snprintf(arr, sizeof(arr), "[%u]", a->nelems);
			fadd(c, name, off, a->nelems, "char", arr, "%s", NULL);
		}
	}
}

/* "a_b_c" of the object's name: an event system name. */
static void sys_name(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = (in[i] >= 'a' && in[i] <= 'z') || (in[i] >= 'A' && in[i] <= 'Z') ||
					 (in[i] >= '0' && in[i] <= '9')
				 ? in[i]
				 : '_';
	out[i] = '\0';
}

/* Aggregation a's event: its fields from its key's BTF, then value. */
static int define_event(struct pstream *st, const struct pagg *a, struct pevent *e, char *err,
			size_t err_len)
{
	const struct btf *btf = bpf_object__btf(st->t->obj);
	char decl[4096], fmt[2048], args[2048], pf[4800], sys[64];
	struct fctx c = { .btf = btf, .e = e, .decl = decl, .fmt = fmt, .args = args };
	const char *vname = "value";
	long ksz = a->unkeyed ? 0 : btf__resolve_size(btf, a->key_type);
	size_t i;
	int ret;

	decl[0] = fmt[0] = args[0] = '\0';
	if (ksz < 0) {
		snprintf(err, err_len, "%s: the key's size is unknown", a->name);
		return -EINVAL;
	}
	e->key_size = (__u32)ksz;
	e->v_off = (sizeof(struct kagg_sdk_rec) + e->key_size + 7) & ~7u;
	e->rec_size = e->v_off + 8;
	if (!a->unkeyed)
		fwalk(&c, a->key_type, sizeof(struct kagg_sdk_rec), "", 0);
	for (i = 0; i < e->nr; i++)
		if (!strcmp(e->f[i].name, "value"))
			vname = "value_";
	fadd(&c, vname, e->v_off, 8, "u64", "", "%llu", NULL);
	if (c.over) {
		snprintf(err, err_len, "%s: its key has too many fields to stream", a->name);
		return -EINVAL;
	}
	snprintf(pf, sizeof(pf), "\"%s\"%s", fmt, args);
	sys_name(st->t->name, sys, sizeof(sys));
	ret = kagg_rb_events__define(st->core.evs, sys, a->name, decl, pf, &e->fmt);
	if (ret) {
		snprintf(err, err_len, "event %s:%s: %s", sys, a->name, strerror(-ret));
		return ret;
	}
	e->payload = 0;
	for (i = 0; i < kagg_rb_format__nr_fields(e->fmt); i++) {
		const struct kagg_rb_field *f = kagg_rb_format__field_at(e->fmt, i);

		if ((size_t)(f->offset + f->size) > e->payload)
			e->payload = f->offset + f->size;
	}
	for (i = 0; i < e->nr; i++) {
		const struct kagg_rb_field *f = kagg_rb_format__field(e->fmt, e->f[i].name);

		if (!f || (__u32)f->size != e->f[i].size) {
			snprintf(err, err_len, "event %s:%s: field %s laid out unlike its record",
				 sys, a->name, e->f[i].name);
			return -EINVAL;
		}
		e->f[i].ev_off = f->offset;
	}
	return 0;
}

/* ------------------------------------------------------------ records */

static uint64_t hash_bytes(uint64_t h, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* The entry of (agg ai, map key mk of ks bytes) in generation g, created; NULL on ENOMEM. */
static struct pentry *gen_entry(struct pgen *gg, size_t ai, const unsigned char *mk, size_t ks)
{
	uint64_t h = hash_bytes(0xcbf29ce484222325ULL ^ ai, mk, ks), *idx;
	struct pentry *e;

	for (;; h++) {
		idx = u64map_get(&gg->index, h);
		if (!idx)
			break;
		e = &gg->es[*idx - 1];
		if (e->agg == ai && !memcmp(e->key, mk, ks))
			return e;
	}
	e = pentry_add(&gg->es, &gg->n, &gg->cap);
	if (!e)
		return NULL;
	e->agg = ai;
	e->key = malloc(ks ? ks : 1);
	if (!e->key)
		return NULL;
	memcpy(e->key, mk, ks);
	if (u64map_put(&gg->index, h, ++gg->n)) {
		free(e->key);
		gg->n--;
		return NULL;
	}
	return e;
}

/* Aggregate record r of aggregation ai as the kernel does (__KAGG_HIST, __KAGG_COUNT). */
static void account(struct pstream *st, size_t ai, const struct pevent *e, const unsigned char *r)
{
	const struct pagg *a = &st->t->aggs[ai];
	const struct kagg_sdk_rec *h = (const void *)r;
	__u32 g = h->gen & 1, slot = 0;
	unsigned char mk[8 + 4096];
	size_t ks;
	uint64_t v;
	struct pentry *en;

	memcpy(&v, r + e->v_off, 8);
	if (a->d.kind == KAGG_SDK_LINEAR) {
		if ((int64_t)v < a->d.lin_min ||
		    (v - (uint64_t)a->d.lin_min) / a->d.lin_step >= KAGG_SDK_SLOTS)
			return;
		slot = (__u32)((v - (uint64_t)a->d.lin_min) / a->d.lin_step);
	} else if (a->d.kind == KAGG_SDK_LOG2) {
		slot = a->d.flags & KAGG_SDK_TIME ? scons_slot(v, st->unit_ns)
		       : v > 1			  ? (__u32)(63 - __builtin_clzll(v))
						  : 0;
	}
	if (a->unkeyed) {
		memcpy(mk, &g, 4);
		ks = 4;
	} else {
		ks = a->key_off + e->key_size;
		if (ks > sizeof(mk))
			return;
		memset(mk, 0, a->key_off);
		memcpy(mk, &g, 4);
		memcpy(mk + a->key_off, r + sizeof(struct kagg_sdk_rec), e->key_size);
	}
	en = gen_entry(&st->gen[g], ai, mk, ks);
	if (!en) {
		st->oom = -ENOMEM;
		return;
	}
	if (!en->count && !a->unkeyed) /* a new key: its processes' commands while they live */
		pkey_note(st->s, st->t, a, r + sizeof(struct kagg_sdk_rec));
	en->count++;
	en->sum += v;
	if (a->d.kind != KAGG_SDK_COUNT) {
		kagg_ext_put(&en->nmin, &en->max, kagg_sdk_ext_ord(a->d.kind, v));
		en->has_ext = true;
	}
	if (a->d.kind == KAGG_SDK_LOG2 && st->t->exp) {
		slot = pexp_slot(st->t, a->d.flags & KAGG_SDK_TIME, v);
		if (!en->xslots && !(en->xslots = calloc(pexp_slots(st->s), sizeof(uint64_t)))) {
			st->oom = -ENOMEM;
			return;
		}
		if (slot < pexp_slots(st->s))
			en->xslots[slot]++;
	} else if (a->d.kind != KAGG_SDK_COUNT) {
		en->slots[slot]++;
	}
}

/* Land record r as its aggregation's event. */
static void land(struct pstream *st, const struct pevent *e, const unsigned char *r)
{
	const struct kagg_sdk_rec *h = (const void *)r;
	struct kagg_rb_rsv rsv;
	uint8_t *p;
	size_t i;

	p = scons_begin(&st->core, h->cpu, h->ts, e->fmt, e->payload, 0, (int)h->pid, &rsv);
	if (!p)
		return;
	for (i = 0; i < e->nr; i++)
		memcpy(p + e->f[i].ev_off, r + e->f[i].rec_off, e->f[i].size);
	kagg_rb__commit(&rsv);
}

static void on_record(void *ctx, const void *data, uint32_t len)
{
	struct pstream *st = ctx;
	const struct kagg_sdk_rec *h = data;
	const struct pevent *e;
	int ai;

	if (len < sizeof(*h) || h->agg >= KAGG_SDK_NR_CNT || !st->by_drop[h->agg])
		return;
	ai = st->by_drop[h->agg] - 1;
	e = &st->ev[ai];
	if (len < e->rec_size)
		return;
	scons_seq(&st->core, (const struct kagg_rec_hdr *)data);
	account(st, (size_t)ai, e, data);
	land(st, e, data);
}

/* ------------------------------------------------------------ the session's */

static void gen_clear(struct pgen *gg)
{
	size_t i;

	for (i = 0; i < gg->n; i++)
		pentry_free(&gg->es[i]);
	free(gg->es);
	gg->es = NULL;
	gg->n = gg->cap = 0;
	u64map_clear(&gg->index);
}

void pstream_free(struct pstream *st)
{
	if (!st)
		return;
	scons_fini(&st->core);
	gen_clear(&st->gen[0]);
	gen_clear(&st->gen[1]);
	u64map_free(&st->gen[0].index);
	u64map_free(&st->gen[1].index);
	free(st->ev);
	free(st);
}

int pstream_init(struct kagg_session *s, struct pstate *t, size_t map_bytes, size_t rb_subbufs,
		 bool rb_consume)
{
	struct bpf_map *evm = bpf_object__find_map_by_name(t->obj, "kagg_events");
	struct bpf_map *cnt = bpf_object__find_map_by_name(t->obj, "kagg_stream_cnt");
	struct scons_cfg cfg = {
		.map_fd = evm ? bpf_map__fd(evm) : -1,
		.cnt_fd = cnt ? bpf_map__fd(cnt) : -1,
		.map_bytes = map_bytes,
		.nr_cpus = s->nr_cpus,
		.rb_subbufs = rb_subbufs,
		.rb_consume = rb_consume,
		.batch_bytes = map_bytes / 4,
	};
	struct pstream *st = calloc(1, sizeof(*st));
	char msg[320] = "";
	size_t i;
	int err;

	if (!st)
		return -ENOMEM;
	t->stream = st;
	st->s = s;
	st->t = t;
	st->unit_ns = units_ns(s->unit);
	st->ev = calloc(t->nr_aggs ? t->nr_aggs : 1, sizeof(*st->ev));
	if (!st->ev || u64map_init(&st->gen[0].index, 64) || u64map_init(&st->gen[1].index, 64))
		return -ENOMEM;
	err = scons_init(&st->core, &cfg, msg, sizeof(msg));
	if (!err)
		snprintf(st->core.format_src, sizeof(st->core.format_src),
			 "generated from %s's BTF", t->name);
	for (i = 0; !err && i < t->nr_aggs; i++) {
		const struct pagg *a = &t->aggs[i];

		if (a->d.kind != KAGG_SDK_LOG2 && a->d.kind != KAGG_SDK_LINEAR &&
		    a->d.kind != KAGG_SDK_COUNT)
			continue;
		err = define_event(st, a, &st->ev[i], msg, sizeof(msg));
		st->by_drop[a->d.drop] = (int)i + 1;
	}
	return session_stream_started(s, err, msg, &st->core, on_record, st);
}

int pstream_read(struct kagg_session *s, struct pstate *t, struct kagg_snapshot *snap, __u32 g,
		 bool reset)
{
	struct pstream *st = t->stream;
	struct pgen *gg = &st->gen[g & 1];
	struct pentry *es = NULL, *e;
	size_t n = 0, cap = 0, i, k;
	int err = st->oom;

	/* every histogram of the generation, and one (empty too) of each unkeyed aggregation */
	for (i = 0; !err && i < t->nr_aggs; i++) {
		const struct pagg *a = &t->aggs[i];
		bool any = false;

		for (k = 0; !err && k < gg->n; k++) {
			if (gg->es[k].agg != i)
				continue;
			any = true;
			e = pentry_add(&es, &n, &cap);
			if (!e) {
				err = -ENOMEM;
				break;
			}
			*e = gg->es[k];
			e->xslots = NULL;
			e->key = malloc(a->unkeyed ? 4 : a->key_off + st->ev[i].key_size);
			if (e->key && gg->es[k].xslots) {
				e->xslots = malloc(pexp_slots(s) * sizeof(uint64_t));
				if (e->xslots)
					memcpy(e->xslots, gg->es[k].xslots,
					       pexp_slots(s) * sizeof(uint64_t));
			}
			if (!e->key || (gg->es[k].xslots && !e->xslots)) {
				n++;
				err = -ENOMEM;
				break;
			}
			memcpy(e->key, gg->es[k].key,
			       a->unkeyed ? 4 : a->key_off + st->ev[i].key_size);
			n++;
		}
		if (!err && !any && a->unkeyed && st->ev[i].fmt) {
			e = pentry_add(&es, &n, &cap);
			if (!e || !(e->key = calloc(1, 4))) {
				err = -ENOMEM;
				break;
			}
			e->agg = i;
			n++;
		}
	}
	if (reset)
		gen_clear(gg);
	return pentries_snap(s, t, snap, es, n, err);
}
