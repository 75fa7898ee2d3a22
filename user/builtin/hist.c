// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hist sessions: a log2 histogram of one numeric field of any tracepoint.
 *
 * The event's tracefs format file is parsed at open (the ring buffer's
 * parser, through tracefs.c); the field's offset, size and signedness go to
 * bpf/hist.bpf.c as rodata, and its one generic program is attached as a
 * classic tracepoint program to SYSTEM/NAME.  Nothing about an event is
 * compiled in.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/field_hist.h>
#include <kagg/rb_format.h>
#include "shared/hist.h"
#include "hist.skel.h"
#include "builtin/hist_parse.h"
#include "util/json.h"
#include "util/opts.h"
#include "ftrace/rb_events_internal.h"
#include "session/session_internal.h"
#include "snapshot/snapshot_internal.h"
#include "util/tracefs.h"

#define slog session_log

struct tphist {
	struct hist_bpf *skel;
	struct kagg_rb_events *evs;
	char sys[128], name[128];
	char event[260];
	char field[64];
	enum hist_key_kind key_kind;
	bool key_signed;
	char label[32];
	int64_t lin_min;
	uint64_t lin_step;
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

/* Where the program finds f. */
static void set_field(volatile struct hist_field *hf, const struct kagg_rb_field *f, __u32 size)
{
	hf->off = f->offset;
	hf->size = size;
	hf->is_signed = f->is_signed;
	hf->src = strcmp(f->name, "common_pid") ? HIST_SRC_RECORD : HIST_SRC_TID;
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

static const char *int_label(struct kagg_session *s, uint64_t aux)
{
	struct tphist *t = s->tool;

	if (t->key_signed)
		snprintf(t->label, sizeof(t->label), "%" PRId64, (int64_t)aux);
	else
		snprintf(t->label, sizeof(t->label), "%" PRIu64, aux);
	return t->label;
}

static int hist_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct tphist *t = s->tool;
	size_t i;
	int err;

	err = session_read_hists(s, &SESSION_HIST_MAPS(t->skel), t->key_kind != HIST_KEY_NONE, g,
				 reset, snap, t->key_kind == HIST_KEY_INT ? int_label : NULL);
	if (!err && t->key_kind == HIST_KEY_NONE)
		snap->hists[0].key.label = snap_strdup(snap, t->event);
	for (i = 0; !err && i < snap->nr_hists; i++) {
		struct kagg_hist *h = &snap->hists[i];

		if (t->key_kind == HIST_KEY_STR)
			h->key.label = snap_strdup(snap, h->key.comm);
		h->value = snap_strdup(snap, t->field);
		h->lin_min = t->lin_min;
		h->lin_step = t->lin_step;
	}
	return err;
}

static void hist_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
		      bool reset)
{
	struct tphist *t = s->tool;

	snap->meta.unit = snap_strdup(snap, t->field);
	snap->meta.events_recorded = cnt[HIST_CNT_RECORDED];
	snap->meta.events_filtered = cnt[HIST_CNT_FILTERED];
	snap_add_drop(snap, "negative", "signed value below 0: no log2 bucket (not recorded)",
		      cnt[HIST_CNT_NEGATIVE], false);
	snap_add_drop(snap, "read", "field could not be read", cnt[HIST_CNT_DROP_READ], true);
	snap_add_drop(snap, "keys_full", "value not aggregated: per-key map full",
		      cnt[HIST_CNT_DROP_KEYS_FULL], true);
	if (s->exp_cells) {
		snap_add_drop(snap, "exp_cells", "value not counted: exp bucket map full",
			      cnt[HIST_CNT_DROP_EXP_CELLS], true);
		snap_add_drop(snap, "exp_key_wide",
			      "value not counted: exp buckets need a key "
			      "that fits 32 bits",
			      cnt[HIST_CNT_DROP_EXP_KEY], true);
	}
	if (t->lin_step) {
		snap_add_drop(snap, "below_range",
			      "value below the first linear bucket "
			      "(not recorded)",
			      cnt[HIST_CNT_BELOW], false);
		snap_add_drop(snap, "above_range",
			      "value past the last linear bucket "
			      "(not recorded)",
			      cnt[HIST_CNT_ABOVE], false);
	}
}

static struct bpf_link *hist_attach(struct kagg_session *s, int i)
{
	struct tphist *t = s->tool;

	return bpf_program__attach_tracepoint(s->progs[i], t->sys, t->name);
}

static void hist_destroy(struct kagg_session *s)
{
	struct tphist *t = s->tool;

	hist_bpf__destroy(t->skel);
	kagg_rb_events__free(t->evs);
}

/* ------------------------------------------------------------ open */

static int configure(struct kagg_session *s, const struct kagg_field_hist_opts *o,
		     const struct kagg_rb_format *fmt)
{
	struct tphist *t = s->tool;
	const struct kagg_rb_field *f, *kf = NULL, *ff = NULL;
	enum hist_op op = HIST_OP_NONE;
	char fname[64];
	const char *val;
	__u64 fval = 0;
	char *p = s->filters;
	int err;

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
		snprintf(p, sizeof(s->filters), "%s", o->filter);
	}
	if (o->lin_step && !f->is_signed && o->lin_min < 0) {
		slog(s, KAGG_LOG_WARN, "--min %lld is below 0 and %s is unsigned",
		     (long long)o->lin_min, f->name);
		return -EINVAL;
	}
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP ||
	    (o->buckets == KAGG_BUCKETS_EXP && o->lin_step)) {
		slog(s, KAGG_LOG_WARN, "exp buckets are not linear buckets");
		return -EINVAL;
	}
	/* the exp cells' id is 32 bits: the key's value itself */
	if (o->buckets == KAGG_BUCKETS_EXP && kf && !numeric(kf)) {
		slog(s, KAGG_LOG_WARN,
		     "exp buckets with --key need a numeric key field (%s is "
		     "a string)",
		     kf->name);
		return -EINVAL;
	}
	snprintf(t->field, sizeof(t->field), "%s", f->name);
	s->sum = f->is_signed ? SESSION_SUM_S64 : SESSION_SUM_U64;

	t->skel = hist_bpf__open();
	if (!t->skel)
		return -errno;
	set_field(&t->skel->rodata->val, f, f->size);
	if (kf)
		set_field(&t->skel->rodata->key, kf, numeric(kf) ? kf->size : KAGG_COMM_LEN);
	t->skel->rodata->key_kind = t->key_kind;
	if (ff)
		set_field(&t->skel->rodata->flt, ff, ff->size);
	t->skel->rodata->filter_op = op;
	t->skel->rodata->filter_val = fval;
	t->skel->rodata->lin_min = o->lin_min;
	t->skel->rodata->lin_step = o->lin_step;
	t->lin_min = o->lin_min;
	t->lin_step = o->lin_step;
	/* signed values' extremes compare with their sign bit flipped */
	t->skel->rodata->kagg_ext_flip = f->is_signed ? 1ULL << 63 : 0;
	err = session_hists_setup(s, &SESSION_HIST_MAPS(t->skel), kf, o->buckets, o->exp_scale, 0)
		      ?: session_atomics_fallback(s, t->skel->obj);
	if (err)
		return err;
	err = hist_bpf__load(t->skel);
	if (err)
		return session_load_failed(s, err, "the tracepoint program");
	s->progs[0] = t->skel->progs.hist_tp;
	s->nr_progs = 1;
	session_bind(s, &t->skel->bss->gen, &t->skel->bss->armed, t->skel->maps.counters,
		     HIST_CNT_MAX, "tracepoint");
	return 0;
}

/* SYSTEM:NAME (or SYSTEM/NAME) into t->sys, t->name and s->event; 0 or -EINVAL (logged). */
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
	s->event = t->event;
	return 0;
}

static int hist_open(struct kagg_session *s, void *opts)
{
	const struct kagg_field_hist_opts *o = opts;
	const struct kagg_rb_format *fmt = NULL;
	struct tphist *t = s->tool;
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
	return configure(s, o, fmt);
}

SESSION_TOOL_API(field_hist, hist, struct tphist, .attach = hist_attach);
