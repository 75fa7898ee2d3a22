// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hist sessions: a histogram of one numeric field of any tracepoint.
 *
 * bpf/hist.bpf.c is a program written with the SDK (bpf/sdk/kagg.bpf.h), and
 * this file opens it with libkagg's generic loader (user/prog/), as
 * `kagg run hist.bpf.o --tracepoint SYSTEM:EVENT --set ...` would: the
 * loader loads, attaches, reads, resets and accounts.  What is left here is
 * hist's own: the event's tracefs format file parsed at open (the ring
 * buffer's parser, through tracefs.c), the field's offset, size and
 * signedness (and the key's, the filter's) handed over as tunables, and the
 * histograms named as kagg hist names them (the key's value, the field's
 * name).  Nothing about an event is compiled in.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include <kagg/field_hist.h>
#include <kagg/prog.h>
#include <kagg/rb_format.h>
#include "shared/hist.h"
#include "shared/kagg_sdk.h" /* the types of the skeleton's rodata */
#include "hist.skel.h"
#include "builtin/hist_parse.h"
#include "util/opts.h"
#include "ftrace/rb_events_internal.h"
#include "prog/prog_internal.h"
#include "session/session_internal.h"
#include "snapshot/snapshot_internal.h"
#include "util/tracefs.h"

#define slog session_log

/* The aggregations of bpf/hist.bpf.c: [key kind][linear]. */
static const char *const hist_aggs[3][2] = {
	[HIST_KEY_NONE] = { "unkeyed", "unkeyed_lin" },
	[HIST_KEY_INT] = { "by_num", "by_num_lin" },
	[HIST_KEY_STR] = { "by_str", "by_str_lin" },
};

#define HIST_MAX_SETS 32

struct tphist {
	struct pstate p; /* first: the generic loader's state (user/prog/) */
	struct kagg_rb_events *evs;
	char sys[128], name[128];
	char event[260];
	char field[64];
	enum hist_key_kind key_kind;
	bool key_signed;
	bool linear;
	char sets[HIST_MAX_SETS][96];
	const char *set_ptrs[HIST_MAX_SETS];
	size_t nr_sets;
};

/* ------------------------------------------------------------ fields */

/*
 * A numeric field a BPF program can read: 1, 2, 4 or 8 bytes, and not one
 * of the common fields perf leaves unset in the record BPF sees (syscall
 * events even put a pt_regs pointer there), except common_pid, which the
 * program takes from the current thread instead.
 */
static bool numeric(const struct kagg_rb_field *f)
{
	return f->kind == KAGG_RB_FIELD_PLAIN &&
	       (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) &&
	       (strncmp(f->name, "common_", 7) || !strcmp(f->name, "common_pid"));
}

/* A tunable of bpf/hist.bpf.c, "NAME=VALUE", for the loader. */
static void add_set(struct tphist *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_set(struct tphist *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nr_sets >= HIST_MAX_SETS)
		return;
	va_start(ap, fmt);
	vsnprintf(t->sets[t->nr_sets], sizeof(t->sets[0]), fmt, ap);
	va_end(ap);
	t->set_ptrs[t->nr_sets] = t->sets[t->nr_sets];
	t->nr_sets++;
}

/* Where the program finds f, the field of role PFX (val, key, flt): PFX_src, _off, ... */
static void set_field(struct tphist *t, const char *pfx, const struct kagg_rb_field *f, __u32 size)
{
	add_set(t, "%s_src=%d", pfx,
		strcmp(f->name, "common_pid") ? HIST_SRC_RECORD : HIST_SRC_TID);
	add_set(t, "%s_off=%u", pfx, (unsigned int)f->offset);
	add_set(t, "%s_size=%u", pfx, size);
	add_set(t, "%s_signed=%s", pfx, f->is_signed ? "true" : "false");
}

/* Edit distance of a and b (their first 63 bytes), for "did you mean". */
static size_t hist_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 63), lb = strnlen(b, 63), row[64], i, j;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], up, best;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			best = diag + (a[i - 1] != b[j - 1]);
			best = up + 1 < best ? up + 1 : best;
			best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* Keep cand in best when it is nearer want than what best holds (and near at all). */
static void hist_near(const char *want, const char *cand, char *best, size_t sz, size_t *dist)
{
	size_t d = hist_distance(want, cand), len = strlen(want);

	if (!*dist)
		*dist = (len / 3 > 1 ? len / 3 : 1) + 1;
	if (d < *dist) {
		*dist = d;
		snprintf(best, sz, "%s", cand);
	}
}

/* "no field X in SYS:NAME; numeric fields: a b c" */
static void no_field(struct kagg_session *s, const struct kagg_rb_format *fmt, const char *name,
		     const char *role)
{
	char list[400] = "", near[64] = "";
	size_t i, len = 0, dist = 0;

	for (i = 0; i < fmt->nr_fields && len < sizeof(list) - 1; i++) {
		if (!numeric(&fmt->fields[i]))
			continue;
		hist_near(name, fmt->fields[i].name, near, sizeof(near), &dist);
		len += snprintf(list + len, sizeof(list) - len, "%s%s", len ? " " : "",
				fmt->fields[i].name);
	}
	slog(s, KAGG_LOG_WARN, "%s '%s' is not a numeric field of %s:%s%s%s%s; numeric fields: %s",
	     role, name, fmt->system, fmt->name, near[0] ? "; did you mean " : "", near,
	     near[0] ? "?" : "", list[0] ? list : "none");
}

static const struct kagg_rb_field *num_field(struct kagg_session *s,
					     const struct kagg_rb_format *fmt, const char *name,
					     const char *role)
{
	const struct kagg_rb_field *f = kagg_rb_format__field(fmt, name);

	if (f && numeric(f))
		return f;
	no_field(s, fmt, name, role);
	return NULL;
}

/* "no such event SYS:NAME" plus what exists. */
static void no_event(struct kagg_session *s, const char *sys, const char *name)
{
	char path[300], list[300] = "", near[64] = "";
	struct dirent *de;
	size_t len = 0, dist = 0;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), TRACEFS_DIR "/events/%s", sys);
	d = opendir(path);
	if (!d) {
		slog(s, KAGG_LOG_WARN,
		     "no such event %s:%s: no system '%s' (the systems are the "
		     "directories of " TRACEFS_DIR "/events; all events: available_events)",
		     sys, name, sys);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		n++;
		hist_near(name, de->d_name, near, sizeof(near), &dist);
		if (len < sizeof(list) - 40)
			len += snprintf(list + len, sizeof(list) - len, "%s%s", len ? " " : "",
					de->d_name);
		else if (!strstr(list, "..."))
			len += snprintf(list + len, sizeof(list) - len, " ...");
	}
	closedir(d);
	slog(s, KAGG_LOG_WARN, "no such event %s:%s%s%s%s%s%s; %d events of %s: %s", sys, name,
	     near[0] ? "; did you mean " : "", near[0] ? sys : "", near[0] ? ":" : "", near,
	     near[0] ? "?" : "", n, sys, list);
}

int hist_parse_filter(const char *str, char *field, size_t fsz, enum hist_op *op, const char **val)
{
	static const struct {
		const char *s;
		enum hist_op op;
	} ops[] = {
		{ "==", HIST_OP_EQ }, { "!=", HIST_OP_NE }, { "<=", HIST_OP_LE },
		{ ">=", HIST_OP_GE }, { "<", HIST_OP_LT },  { ">", HIST_OP_GT },
	};
	const char *p = str;
	size_t n = 0, i;

	while (isspace((unsigned char)*p))
		p++;
	while (isalnum((unsigned char)p[n]) || p[n] == '_')
		n++;
	if (!n || n >= fsz)
		return -EINVAL;
	memcpy(field, p, n);
	field[n] = '\0';
	p += n;
	while (isspace((unsigned char)*p))
		p++;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strncmp(p, ops[i].s, strlen(ops[i].s))) {
			*op = ops[i].op;
			p += strlen(ops[i].s);
			break;
		}
	}
	while (isspace((unsigned char)*p))
		p++;
	if (i == sizeof(ops) / sizeof(ops[0]) || !*p)
		return -EINVAL;
	*val = p;
	return 0;
}

int hist_parse_value(const char *str, bool is_signed, __u64 *out)
{
	char *end;

	errno = 0;
	if (is_signed)
		*out = (__u64)strtoll(str, &end, 0);
	else if (*str == '-')
		return -EINVAL;
	else
		*out = strtoull(str, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	return errno || *end || end == str ? -EINVAL : 0;
}

bool hist_value_fits(__u64 v, bool is_signed, unsigned int size)
{
	unsigned int bits = size * 8;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	if (bits == 64)
		return true;
	if (!is_signed)
		return v >> bits == 0;
	return (int64_t)v >= -((int64_t)1 << (bits - 1)) && (int64_t)v < ((int64_t)1 << (bits - 1));
}

/* ------------------------------------------------------------ session ops */

/* The FNV-1a hash of a string key, its first 16 bytes up to the NUL (kagg_hist.key.id). */
static uint64_t str_hash(const char *str, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n && str[i]; i++)
		h = (h ^ (unsigned char)str[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * A histogram as kagg hist names it: by the key's value (a number, signed as the
 * field is, or the string), or by the event without a key; its value the field's.
 */
static int hist_relabel(struct kagg_session *s, const struct pagg *a, const unsigned char *key,
			struct kagg_hist *h, struct kagg_snapshot *snap)
{
	struct tphist *t = s->tool;
	char label[32];
	uint64_t v;

	h->agg = NULL;
	h->nr_labels = 0;
	h->label_names = h->label_values = NULL;
	h->value = snap_strdup(snap, t->field);
	if (!key) {
		h->key.label = snap_strdup(snap, t->event);
	} else if (t->key_kind == HIST_KEY_STR) {
		memcpy(h->key.comm, key, sizeof(h->key.comm) - 1);
		h->key.id = str_hash((const char *)key, sizeof(h->key.comm) - 1);
		h->key.label = snap_strdup(snap, h->key.comm);
	} else {
		memcpy(&v, key, sizeof(v));
		h->key.id = v;
		if (t->key_signed)
			snprintf(label, sizeof(label), "%" PRId64, (int64_t)v);
		else
			snprintf(label, sizeof(label), "%" PRIu64, v);
		h->key.label = snap_strdup(snap, label);
	}
	(void)a;
	return h->value && h->key.label ? 0 : -ENOMEM;
}

static int hist_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	int err = prog_read(s, snap, g, reset);

	/* in key order, as every built-in tool's */
	if (!err)
		snap_sort_hists(snap);
	return err;
}

/* Counter of the program's aggregation or drop name. */
static uint64_t hist_cnt(struct tphist *t, const uint64_t *cnt, const char *name)
{
	const struct pagg *a = prog_agg(&t->p, name);

	return a ? cnt[a->d.drop] : 0;
}

static void hist_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
		      bool reset)
{
	struct tphist *t = s->tool;

	snap->meta.unit = snap_strdup(snap, t->field);
	snap->meta.events_recorded = cnt[KAGG_SDK_CNT_RECORDED];
	snap->meta.events_filtered = cnt[KAGG_SDK_CNT_FILTERED];
	snap_add_drop(snap, "negative", "signed value below 0: no log2 bucket (not recorded)",
		      hist_cnt(t, cnt, "negative"), false);
	snap_add_drop(snap, "read", "field could not be read", hist_cnt(t, cnt, "read"), true);
	snap_add_drop(snap, "keys_full",
		      s->exp_words ? "value not aggregated: per-key map or exp bucket map full"
				   : "value not aggregated: per-key map full",
		      hist_cnt(t, cnt, hist_aggs[t->key_kind][t->linear]), true);
	if (t->linear) {
		snap_add_drop(snap, "below_range",
			      "value below the first linear bucket "
			      "(not recorded)",
			      hist_cnt(t, cnt, "below_range"), false);
		snap_add_drop(snap, "above_range",
			      "value past the last linear bucket "
			      "(not recorded)",
			      hist_cnt(t, cnt, "above_range"), false);
	}
	(void)reset;
}

static void hist_destroy(struct kagg_session *s)
{
	struct tphist *t = s->tool;

	prog_destroy(s);
	kagg_rb_events__free(t->evs);
}

/* ------------------------------------------------------------ open */

/* The tunables of bpf/hist.bpf.c for o, the event's format fmt: into t->sets. */
static int configure(struct kagg_session *s, const struct kagg_field_hist_opts *o,
		     const struct kagg_rb_format *fmt)
{
	struct tphist *t = s->tool;
	const struct kagg_rb_field *f, *kf = NULL, *ff = NULL;
	enum hist_op op = HIST_OP_NONE;
	char fname[64];
	const char *val;
	__u64 fval = 0;
	int err, k, l;

	f = num_field(s, fmt, o->field, "field");
	if (!f)
		return -ENOENT;
	if (o->key_field) {
		kf = kagg_rb_format__field(fmt, o->key_field);
		if (!kf || (!numeric(kf) && !(kf->kind == KAGG_RB_FIELD_ARRAY && kf->is_string))) {
			no_field(s, fmt, o->key_field, "key");
			return -ENOENT;
		}
		t->key_kind = numeric(kf) ? HIST_KEY_INT : HIST_KEY_STR;
		t->key_signed = kf->is_signed;
	}
	if (o->filter) {
		err = hist_parse_filter(o->filter, fname, sizeof(fname), &op, &val);
		if (err) {
			slog(s, KAGG_LOG_WARN,
			     "invalid filter '%s' (FIELD OP VALUE, OP one of == != "
			     "< <= > >=)",
			     o->filter);
			return err;
		}
		ff = num_field(s, fmt, fname, "filter field");
		if (!ff)
			return -ENOENT;
		if (hist_parse_value(val, ff->is_signed, &fval)) {
			slog(s, KAGG_LOG_WARN, "invalid filter value '%s' for %s field %s", val,
			     ff->is_signed ? "signed" : "unsigned", fname);
			return -EINVAL;
		}
		if (!hist_value_fits(fval, ff->is_signed, (unsigned int)ff->size)) {
			slog(s, KAGG_LOG_WARN,
			     "filter value '%s' does not fit %s, a %d-byte %s "
			     "field",
			     val, fname, ff->size, ff->is_signed ? "signed" : "unsigned");
			return -EINVAL;
		}
		snprintf(s->filters, sizeof(s->filters), "%s", o->filter);
	}
	if (o->lin_step && !f->is_signed && o->lin_min < 0) {
		slog(s, KAGG_LOG_WARN, "--min %lld is below 0 and %s is unsigned",
		     (long long)o->lin_min, f->name);
		return -EINVAL;
	}
	if (o->lin_step && !prog_lin_fits(o->lin_min, o->lin_step)) {
		slog(s, KAGG_LOG_WARN,
		     "--step %llu from --min %lld: the 64 linear buckets would end past 2^63",
		     (unsigned long long)o->lin_step, (long long)o->lin_min);
		return -EINVAL;
	}
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP ||
	    (o->buckets == KAGG_BUCKETS_EXP && o->lin_step)) {
		slog(s, KAGG_LOG_WARN, "exp buckets are not linear buckets");
		return -EINVAL;
	}
	if (o->buckets == KAGG_BUCKETS_EXP && kf && !numeric(kf)) {
		slog(s, KAGG_LOG_WARN,
		     "exp buckets with --key need a numeric key field (%s is "
		     "a string)",
		     kf->name);
		return -EINVAL;
	}
	snprintf(t->field, sizeof(t->field), "%s", f->name);
	t->linear = o->lin_step > 0;

	set_field(t, "val", f, f->size);
	if (kf)
		set_field(t, "key", kf,
			  numeric(kf) || kf->size < KAGG_COMM_LEN ? kf->size : KAGG_COMM_LEN);
	add_set(t, "key_kind=%d", t->key_kind);
	if (ff) {
		set_field(t, "flt", ff, ff->size);
		add_set(t, "filter_op=%d", op);
		add_set(t, "filter_val=%llu", (unsigned long long)fval);
	}
	add_set(t, "linear=%s", t->linear ? "true" : "false");
	/* one aggregation is recorded into, with its bounds; the others take no memory */
	for (k = 0; k < 3; k++)
		for (l = 0; l < 2; l++) {
			if (k != (int)t->key_kind || l != t->linear) {
				add_set(t, "%s.max=0", hist_aggs[k][l]);
			} else if (l) {
				add_set(t, "%s.min=%lld", hist_aggs[k][l], (long long)o->lin_min);
				add_set(t, "%s.step=%llu", hist_aggs[k][l],
					(unsigned long long)o->lin_step);
			}
		}
	/* the range check reads the unkeyed histogram's bounds */
	if (t->linear && t->key_kind != HIST_KEY_NONE) {
		add_set(t, "%s.min=%lld", hist_aggs[HIST_KEY_NONE][1], (long long)o->lin_min);
		add_set(t, "%s.step=%llu", hist_aggs[HIST_KEY_NONE][1],
			(unsigned long long)o->lin_step);
	}
	return t->nr_sets < HIST_MAX_SETS ? 0 : -E2BIG;
}

/* SYSTEM:NAME (or SYSTEM/NAME) into t->sys, t->name and t->event; 0 or -EINVAL (logged). */
static int split_event(struct kagg_session *s, const struct kagg_field_hist_opts *o)
{
	struct tphist *t = s->tool;
	size_t n = o->event ? strcspn(o->event, ":/") : 0;

	if (!o->event || !o->field || !n || !o->event[n] || !o->event[n + 1] ||
	    n >= sizeof(t->sys) || strlen(o->event + n + 1) >= sizeof(t->name)) {
		slog(s, KAGG_LOG_WARN, "invalid event '%s' (SYSTEM:NAME, e.g. sched:sched_switch)",
		     o->event ? o->event : "");
		return -EINVAL;
	}
	memcpy(t->sys, o->event, n);
	snprintf(t->name, sizeof(t->name), "%s", o->event + n + 1);
	snprintf(t->event, sizeof(t->event), "%s:%s", t->sys, t->name);
	return 0;
}

static int hist_open(struct kagg_session *s, void *opts)
{
	const struct kagg_field_hist_opts *o = opts;
	const struct kagg_rb_format *fmt = NULL;
	struct tphist *t = s->tool;
	size_t size = 0;
	char msg[256];
	int err;

	err = split_event(s, o);
	if (err)
		return err;
	err = tracefs_ensure(msg, sizeof(msg));
	if (err) {
		slog(s, KAGG_LOG_WARN, "%s", msg);
		return err;
	}
	t->evs = kagg_rb_events__new(NULL);
	if (!t->evs)
		return -errno;
	err = tracefs_event_format(t->evs, t->sys, t->name, &fmt);
	if (err == -ENOENT) {
		no_event(s, t->sys, t->name);
		return err;
	}
	if (err) {
		slog(s, KAGG_LOG_WARN, "reading the format of %s: %s", t->event, strerror(-err));
		return err;
	}
	err = configure(s, o, fmt);
	if (err)
		return err;
	{
		KAGG_OPTS(kagg_prog_opts, po, .sets = t->set_ptrs, .nr_sets = t->nr_sets,
			  .obj_buf = hist_bpf__elf_bytes(&size), .tracepoint = t->event,
			  .buckets = o->buckets, .exp_scale = o->exp_scale);

		po.obj_size = size;
		t->p.relabel = hist_relabel;
		err = prog_open_builtin(s, "hist", &po);
	}
	if (err)
		return err;
	s->event = t->event;
	return 0;
}

SESSION_TOOL_API(field_hist, hist, struct tphist, .attach = prog_attach);
