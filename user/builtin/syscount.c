// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * syscount sessions: load bpf/syscount.bpf.c, attach it to
 * raw_syscalls:sys_enter/sys_exit (tp_btf, else raw_tp), read its
 * aggregates as one kagg_hist per key, labelled with syscall names.
 *
 * Syscall names: the running kernel does not export its number -> name
 * table on every configuration (sys_call_table is a data symbol, absent
 * from /proc/kallsyms without CONFIG_KALLSYMS_ALL, and since 6.9 x86_64
 * dispatches through a switch, x64_sys_call, not the table; the tracefs
 * syscall events do not carry the number either).  The table is therefore
 * built in, generated at build time from the target's UAPI <asm/unistd.h>
 * (linux-libc-dev, x86_64 or arm64 through multiarch), and the installed
 * header, when there is one at run time, or a names file given, overrides
 * it: syscall numbers are ABI and never reassigned, so an older table can
 * only lack syscalls added since, which are labelled "syscall_<nr>" --
 * unnamed, never misnamed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/syscount.h>
#include "shared/syscount.h"
#include "syscount.skel.h"
#include "builtin/syscount_stream.h"
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"
#include "util/text.h"
#include "session/session_internal.h"

#include <asm/unistd.h>

/* The build's table (Makefile: $(OUT)/include/syscall_names.h). */
static const char *const sc_builtin[] = {
#include "syscall_names.h"
};

/* Run-time overrides: the installed header of this architecture. */
static const char *const sc_default_headers[] = {
#if defined(__aarch64__)
	"/usr/include/aarch64-linux-gnu/asm/unistd.h",
	"/usr/include/asm-generic/unistd.h",
#else
	"/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
	"/usr/include/asm/unistd_64.h",
#endif
};

struct syscount {
	struct syscount_bpf *skel;
	enum kagg_syscount_mode mode;
	char *names[SC_NR_MAX];
	int nr_names;
	char label[96];
	struct scstream st;
	uint64_t recorded0;	    /* stream mode: baseline of st.recorded */
	unsigned int exp_dense_max; /* exp: dense histograms (exp_hist), 0: cells alone */
};

/* Parse "#define __NR_<name> <nr>" lines; number of names read or -errno. */
static int sc_load_names(struct syscount *t, const char *path)
{
	char line[256], name[64];
	unsigned int nr;
	FILE *f;
	int n = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "#define __NR_%63s %u", name, &nr) != 2 || nr >= SC_NR_MAX)
			continue;
		if (!t->names[nr])
			t->nr_names++;
		free(t->names[nr]);
		t->names[nr] = strdup(name);
		if (!t->names[nr]) {
			fclose(f);
			return -ENOMEM;
		}
		n++;
	}
	fclose(f);
	return n ? n : -ENOENT;
}

/* Load the name table; only a names file asked for explicitly can fail (-errno). */
static int sc_names(struct kagg_session *s, const char *file)
{
	struct syscount *t = s->tool;
	size_t i;
	int n;

	/* a names file is the whole table: numbers it lacks stay unnamed (syscall_<nr>) */
	if (file) {
		n = sc_load_names(t, file);
		if (n < 0) {
			session_log(s, KAGG_LOG_WARN, "cannot read syscall names from %s: %s", file,
				    n == -ENOENT
					    ? "no '#define __NR_<name> <nr>' lines or no such file"
					    : strerror(-n));
			return n;
		}
		session_log(s, KAGG_LOG_DEBUG, "%d syscall names from %s", n, file);
		return 0;
	}
	for (i = 0; i < sizeof(sc_builtin) / sizeof(sc_builtin[0]) && i < SC_NR_MAX; i++) {
		if (!sc_builtin[i])
			continue;
		t->names[i] = strdup(sc_builtin[i]);
		if (!t->names[i])
			return -ENOMEM;
		t->nr_names++;
	}
	for (i = 0; i < sizeof(sc_default_headers) / sizeof(sc_default_headers[0]); i++) {
		n = sc_load_names(t, sc_default_headers[i]);
		if (n > 0) {
			session_log(s, KAGG_LOG_DEBUG, "%d syscall names from %s", n,
				    sc_default_headers[i]);
			return 0;
		}
	}
	session_log(s, KAGG_LOG_DEBUG, "%d syscall names built in", t->nr_names);
	return 0;
}

const char *kagg_syscount__name(struct kagg_session *s, unsigned int nr)
{
	struct syscount *t;

	if (!s || !s->ops || strcmp(s->ops->tool, "syscount") || nr >= SC_NR_MAX) {
		errno = EINVAL;
		return NULL;
	}
	t = s->tool;
	if (!t->names[nr])
		errno = ENOENT;
	return t->names[nr];
}

/* Label of an aux id: "name" or, in errors mode, "name:ERRNO". */
static const char *sc_label(struct kagg_session *s, uint64_t aux)
{
	struct syscount *t = s->tool;
	unsigned int nr = (uint32_t)aux, err = aux >> 32;
	char nbuf[32];
	const char *name = nr < SC_NR_MAX ? t->names[nr] : NULL, *en;

	if (!name) {
		snprintf(nbuf, sizeof(nbuf), "syscall_%u", nr);
		name = nbuf;
	}
	if (t->mode != KAGG_SYSCOUNT_ERRORS) {
		snprintf(t->label, sizeof(t->label), "%s", name);
		return t->label;
	}
	en = strerrorname_np(err);
	if (en)
		snprintf(t->label, sizeof(t->label), "%s:%s", name, en);
	else
		snprintf(t->label, sizeof(t->label), "%s:E%u", name, err);
	return t->label;
}

static int sc_load(struct kagg_session *s, const void *opts, bool btf)
{
	const struct kagg_syscount_opts *o = opts;
	struct syscount *t = s->tool;
	bool lat = o->mode == KAGG_SYSCOUNT_LATENCY, errs = o->mode == KAGG_SYSCOUNT_ERRORS;
	bool keyed = s->key != KAGG_KEY_NONE;
	struct syscount_bpf *skel;
	int err;

	skel = syscount_bpf__open();
	if (!skel)
		return -errno;
	/* the agg path's programs first (session_tp_bind), sys_enter first in each */
	const struct session_tp_prog progs[] = {
		{ skel->progs.syscount_enter_tp_btf, skel->progs.syscount_enter_raw_tp, false,
		  !errs },
		{ skel->progs.syscount_exit_tp_btf, skel->progs.syscount_exit_raw_tp, false,
		  lat || errs },
		{ skel->progs.syscount_stream_enter_tp_btf,
		  skel->progs.syscount_stream_enter_raw_tp, true, !errs },
		{ skel->progs.syscount_stream_exit_tp_btf, skel->progs.syscount_stream_exit_raw_tp,
		  true, lat || errs },
	};

	err = session_atomics_fallback(s, skel->obj);
	if (err) {
		syscount_bpf__destroy(skel);
		return err;
	}
	skel->rodata->mode = o->mode;
	skel->rodata->key_mode = s->key;
	skel->rodata->filter_tgid = o->nr_pids > 0;
	skel->rodata->unit_ns = units_ns(s->unit);
	skel->rodata->unit_log2 = units_log2(s->unit);
	skel->rodata->share_event = s->path == KAGG_MODE_BOTH;
	skel->rodata->wake_mode = KAGG_BPF_WAKE_WATERMARK;
	skel->rodata->wake_bytes = o->stream_bytes / 4;

	session_tp_autoload(s, progs, 4, btf);
	bpf_map__set_max_entries(skel->maps.events, session_streams(s) ? o->stream_bytes : 4096);
	/* Size what this configuration does not use down to nothing. */
	if (!lat || session_task_storage(s, btf))
		bpf_map__set_max_entries(skel->maps.start_hash, 1);
	if (!lat || !session_task_storage(s, btf))
		bpf_map__set_autocreate(skel->maps.start_store, false);
	if (lat || keyed || errs)
		bpf_map__set_max_entries(skel->maps.counts, 1);
	if (!((keyed && !lat) || errs))
		bpf_map__set_max_entries(skel->maps.key_counts, 1);
	if (!lat || keyed || o->buckets == KAGG_BUCKETS_EXP) /* exp: sums in exp_cells */
		bpf_map__set_max_entries(skel->maps.lat, 1);
	if (!lat || !keyed)
		bpf_map__set_max_entries(skel->maps.key_hist, 1);
	if (!o->nr_pids)
		bpf_map__set_max_entries(skel->maps.tgids, 1);
	err = session_exp_cells_setup(s, o->buckets, o->exp_scale, o->exp_cells,
				      skel->maps.exp_cells, &skel->rodata->exp_params,
				      &skel->rodata->exp_words);
	/* exp: dense histograms for frequent syscalls, unless the caller caps the cells */
	if (!err)
		err = session_exp_hot_setup(s, skel->maps.exp_hist, o->exp_cells,
					    &skel->rodata->exp_dense_max);
	t->exp_dense_max = skel->rodata->exp_dense_max;
	if (!err)
		err = syscount_bpf__load(skel);
	if (err) {
		syscount_bpf__destroy(skel);
		return err;
	}
	t->skel = skel;
	session_tp_bind(s, progs, 4, btf, &skel->bss->gen, &skel->bss->armed, skel->maps.counters,
			SC_CNT_MAX);
	return 0;
}

/* One count "histogram" (no buckets) per entry of the arrays. */
static int sc_counts_to_hists(struct kagg_session *s, struct kagg_snapshot *snap,
			      const struct kagg_key *keys, const struct sc_count *vals, size_t n)
{
	size_t i;
	int err;

	err = session_alloc_hists(s, snap, n, 0);
	if (err)
		return err;
	s->cg.read = false; /* a cgroup unknown to the last read: scan once more */
	for (i = 0; i < n; i++) {
		session_hist_key(s, snap, &snap->hists[i], &keys[i], vals[i].comm, sc_label);
		snap->hists[i].total = vals[i].count;
	}
	snap_sort_hists(snap);
	return 0;
}

/* Count mode, system-wide: the per-CPU array slice of generation g. */
static int sc_read_counts(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct syscount *t = s->tool;
	struct kagg_key keys[SC_NR_MAX] = {};
	struct sc_count *vals;
	uint64_t *pc;
	size_t n = 0;
	__u32 nr, idx;
	int err = 0, cpu;

	vals = calloc(SC_NR_MAX, sizeof(*vals));
	pc = calloc(s->nr_cpus, sizeof(uint64_t));
	if (!vals || !pc) {
		err = -ENOMEM;
		goto out;
	}
	for (nr = 0; nr < SC_NR_MAX; nr++) {
		uint64_t sum = 0;

		idx = g * SC_NR_MAX + nr;
		err = bpf_map__lookup_elem(t->skel->maps.counts, &idx, sizeof(idx), pc,
					   sizeof(uint64_t) * s->nr_cpus, 0);
		if (err)
			goto out;
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			sum += pc[cpu];
		if (!sum)
			continue;
		keys[n].aux = nr;
		vals[n++].count = sum;
		if (reset) {
			err = session_percpu_zero(t->skel->maps.counts, idx, pc,
						  sizeof(uint64_t) * s->nr_cpus);
			if (err)
				goto out;
		}
	}
	err = sc_counts_to_hists(s, snap, keys, vals, n);
out:
	free(vals);
	free(pc);
	return err;
}

/* Count / errors modes keyed in the hash: entries of generation g. */
static int sc_read_key_counts(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g,
			      bool reset)
{
	struct syscount *t = s->tool;
	struct bpf_map *m = t->skel->maps.key_counts;
	struct kagg_key k, *keys = NULL, *tk;
	struct sc_count *vals = NULL, *pc = NULL, *tv;
	size_t n = 0, cap = 0;
	int err = 0, cpu, nc = session_map_copies(s, m);
	const void *prev;

	pc = calloc(nc, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	session_map_for_each_key(m, k, prev)
	{
		if (k.gen != g)
			continue;
		if (bpf_map__lookup_elem(m, &k, sizeof(k), pc, sizeof(*pc) * nc, 0))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			tk = realloc(keys, cap * sizeof(*keys));
			tv = tk ? realloc(vals, cap * sizeof(*vals)) : NULL;
			if (tk)
				keys = tk;
			if (tv)
				vals = tv;
			if (!tk || !tv) {
				err = -ENOMEM;
				goto out;
			}
		}
		keys[n] = k;
		memset(&vals[n], 0, sizeof(vals[n]));
		for (cpu = 0; cpu < nc; cpu++) {
			if (!vals[n].comm[0] && pc[cpu].comm[0])
				memcpy(vals[n].comm, pc[cpu].comm, sizeof(vals[n].comm));
			vals[n].count += pc[cpu].count;
		}
		n++;
	}
	/* Delete after the walk: deleting during get_next_key would restart it. */
	for (size_t i = 0; reset && i < n; i++)
		bpf_map__delete_elem(m, &keys[i], sizeof(keys[i]), 0);
	err = sc_counts_to_hists(s, snap, keys, vals, n);
out:
	free(keys);
	free(vals);
	free(pc);
	return err;
}

/*
 * Latency mode, exp buckets: one histogram per syscall with calls, from its dense
 * histogram, its cells or both (the cells of the calls before it got the dense one).
 */
static int sc_read_lat_exp(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	unsigned int nr_slots = s->exp_words - 1, nr, nd = 0, max, k;
	struct syscount *t = s->tool;
	struct kagg_snapshot cells = {};
	__u32 dnr[SC_NR_MAX], did[SC_NR_MAX];
	size_t i, n = 0;
	__u64 d;
	int err;

	max = t->exp_dense_max;
	for (nr = 0; max && nr < SC_NR_MAX; nr++) {
		d = __atomic_load_n(&t->skel->bss->exp_dense_id[nr], __ATOMIC_RELAXED);
		if (d && d <= max) {
			dnr[nd] = nr;
			did[nd++] = d - 1;
		}
	}
	err = session_read_exp_cells(s, t->skel->maps.exp_cells, g, reset, 0, &cells)
		      ?: session_alloc_hists(s, snap, nd + cells.nr_hists, nr_slots);
	for (i = 0; !err && i < nd; i++) {
		struct kagg_hist *h = &snap->hists[n];

		err = session_exp_hist_get(s, t->skel->maps.exp_hist, g * max + did[i], reset, h);
		h->key.id = dnr[i];
		n += h->total > 0; /* else the next one takes h: its slots are all 0 */
	}
	for (i = 0; !err && i < cells.nr_hists; i++) {
		struct kagg_hist *h = &snap->hists[n++];
		const uint64_t *slots = h->slots;

		*h = cells.hists[i];
		h->slots = slots;
		memcpy((uint64_t *)slots, cells.hists[i].slots, nr_slots * sizeof(*slots));
	}
	if (!err) {
		snap->nr_hists = n;
		snap_sort_hists(snap);
	}
	/* a syscall in both: its cells' histogram goes into its dense one */
	for (i = 1, n = !!snap->nr_hists; !err && i < snap->nr_hists; i++) {
		struct kagg_hist *h = &snap->hists[n - 1], *o = &snap->hists[i];

		if (o->key.id != h->key.id) {
			snap->hists[n++] = *o;
			continue;
		}
		for (k = 0; k < nr_slots; k++)
			((uint64_t *)h->slots)[k] += o->slots[k];
		h->total += o->total;
		h->sum += o->sum;
		if (o->has_minmax)
			session_minmax_add(h, o->min, o->max);
	}
	if (!err)
		snap->nr_hists = n;
	for (i = 0; !err && i < snap->nr_hists; i++)
		snap->hists[i].key.label = snap_strdup(snap, sc_label(s, snap->hists[i].key.id));
	free(cells.hists);
	free(cells.slots);
	return err;
}

/* Latency mode, system-wide: one histogram per syscall with calls. */
static int sc_read_lat(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct syscount *t = s->tool;
	size_t vsz = sizeof(struct kagg_hist_val), n = 0, i;
	struct kagg_hist_val *pc, *sums;
	int err = 0, cpu, j, nc = session_map_copies(s, t->skel->maps.lat);
	__u32 nrs[SC_NR_MAX], nr, idx;

	pc = calloc(nc, vsz);
	sums = calloc(SC_NR_MAX, vsz);
	if (!pc || !sums) {
		err = -ENOMEM;
		goto out;
	}
	for (nr = 0; nr < SC_NR_MAX; nr++) {
		uint64_t tot = 0;

		idx = g * SC_NR_MAX + nr;
		err = bpf_map__lookup_elem(t->skel->maps.lat, &idx, sizeof(idx), pc, vsz * nc, 0);
		if (err)
			goto out;
		for (cpu = 0; cpu < nc; cpu++) {
			for (j = 0; j < KAGG_SLOTS; j++) {
				sums[n].slots[j] += pc[cpu].slots[j];
				tot += pc[cpu].slots[j];
			}
			sums[n].sum += pc[cpu].sum;
			kagg_ext_merge(&sums[n].nmin, &sums[n].max, pc[cpu].nmin, pc[cpu].max);
		}
		if (!tot) {
			memset(&sums[n], 0, vsz);
			continue;
		}
		nrs[n++] = nr;
		if (reset) {
			err = session_percpu_zero(t->skel->maps.lat, idx, pc, vsz * nc);
			if (err)
				goto out;
		}
	}
	err = session_alloc_hists(s, snap, n, KAGG_SLOTS);
	if (err)
		goto out;
	for (i = 0; i < n; i++) {
		struct kagg_hist *h = &snap->hists[i];

		h->key.id = nrs[i];
		h->key.label = snap_strdup(snap, sc_label(s, nrs[i]));
		for (j = 0; j < KAGG_SLOTS; j++) {
			((uint64_t *)h->slots)[j] = sums[i].slots[j];
			h->total += sums[i].slots[j];
		}
		h->has_sum = true;
		h->sum = session_sum(s, sums[i].sum);
		session_ext_fold(s, h, sums[i].nmin, sums[i].max); /* it counted: total > 0 */
	}
out:
	free(pc);
	free(sums);
	return err;
}

/* The streamed path's entries of generation g, in the kernel path's shapes. */
static int sc_read_stream(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct syscount *t = s->tool;
	struct scs_entry *e;
	struct kagg_key *keys = NULL;
	struct sc_count *vals = NULL;
	size_t n, i;
	int err, j;

	err = scstream_entries(&t->st, g, &e, &n);
	if (err)
		return err;
	if (t->mode != KAGG_SYSCOUNT_LATENCY) {
		keys = calloc(n ? n : 1, sizeof(*keys));
		vals = calloc(n ? n : 1, sizeof(*vals));
		err = keys && vals ? 0 : -ENOMEM;
		for (i = 0; !err && i < n; i++) {
			keys[i].tgid = e[i].tgid;
			keys[i].pid = e[i].pid;
			keys[i].aux = e[i].aux;
			memcpy(vals[i].comm, e[i].comm, sizeof(vals[i].comm));
			vals[i].count = e[i].count;
		}
		if (!err)
			err = sc_counts_to_hists(s, snap, keys, vals, n);
		free(keys);
		free(vals);
	} else {
		err = session_alloc_hists(s, snap, n, t->st.exp.nr_slots ?: KAGG_SLOTS);
		for (i = 0; !err && i < n; i++) {
			struct kagg_hist *h = &snap->hists[i];

			h->key.mode = s->key;
			h->key.pid = (int)e[i].tgid;
			h->key.tid = (int)e[i].pid;
			h->key.id = e[i].aux;
			h->key.label = snap_strdup(snap, sc_label(s, e[i].aux));
			if (s->key != KAGG_KEY_NONE)
				memcpy(h->key.comm, e[i].comm, sizeof(h->key.comm) - 1);
			for (j = 0; !t->st.exp.nr_slots && j < KAGG_SLOTS; j++) {
				((uint64_t *)h->slots)[j] = e[i].slots[j];
				h->total += e[i].slots[j];
			}
			if (t->st.exp.nr_slots)
				sexp_hist(&t->st.exp, e[i].xslots, h);
			h->has_sum = true;
			h->sum = session_sum(s, e[i].sum);
			if (h->total)
				session_ext_fold(s, h, e[i].nmin, e[i].max);
			err = svals_read(&e[i].vals, snap, h, units_ns(s->unit));
		}
		if (!err)
			snap_sort_hists(snap); /* by syscall when not keyed, as sc_read_lat() */
	}
	if (!err && reset)
		scstream_reset(&t->st, g);
	return err;
}

static int syscount_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct syscount *t = s->tool;

	if (t->mode == KAGG_SYSCOUNT_LATENCY && s->exp_words)
		return sc_read_lat_exp(s, snap, g, reset);
	if (t->mode == KAGG_SYSCOUNT_LATENCY)
		return s->key == KAGG_KEY_NONE ? sc_read_lat(s, snap, g, reset)
					       : session_read_key_hists(s, t->skel->maps.key_hist,
									g, reset, snap, sc_label);
	if (t->mode == KAGG_SYSCOUNT_COUNT && s->key == KAGG_KEY_NONE)
		return sc_read_counts(s, snap, g, reset);
	return sc_read_key_counts(s, snap, g, reset);
}

static void syscount_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			  bool reset)
{
	struct syscount *t = s->tool;

	if (s->path == KAGG_MODE_STREAM) {
		snap->meta.events_recorded = t->st.recorded - t->recorded0;
		if (reset)
			t->recorded0 = t->st.recorded;
		snap_add_drop(snap, "compat", "ia32/x32 or invalid syscall numbers, not counted",
			      cnt[SC_CNT_SKIP_COMPAT], false);
		return;
	}
	snap->meta.events_recorded = cnt[SC_CNT_RECORDED];
	snap_add_drop(snap, "compat", "ia32/x32 or invalid syscall numbers, not counted",
		      cnt[SC_CNT_SKIP_COMPAT], false);
	if (t->mode == KAGG_SYSCOUNT_LATENCY)
		snap_add_drop(snap, "task_storage", "entry time not stored: storage busy or full",
			      cnt[SC_CNT_DROP_STORAGE], true);
	snap_add_drop(snap, "keys_full", "call not aggregated: per-key map full",
		      cnt[SC_CNT_DROP_KEYS_FULL], true);
	if (s->exp_words)
		snap_add_drop(snap, "exp_cells", "latency not counted: exp bucket map full",
			      cnt[SC_CNT_DROP_EXP_CELLS], true);
}

static void syscount_destroy(struct kagg_session *s)
{
	struct syscount *t = s->tool;
	int i;

	if (session_streams(s))
		scstream_fini(&t->st);
	syscount_bpf__destroy(t->skel);
	for (i = 0; i < SC_NR_MAX; i++)
		free(t->names[i]);
}

static int sc_validate(const struct kagg_syscount_opts *o, struct kagg_session *s)
{
	if ((unsigned int)o->unit > KAGG_UNIT_MSECS || (unsigned int)o->key > KAGG_KEY_CGROUP ||
	    (unsigned int)o->attach > KAGG_ATTACH_RAW_TP ||
	    (unsigned int)o->mode > KAGG_SYSCOUNT_LATENCY || (o->nr_pids && !o->pids) ||
	    o->nr_pids > 1024 || !o->stream_bytes ||
	    !session_stream_opts_ok(o->stream_mode, o->stream_bytes)) {
		session_log(s, KAGG_LOG_WARN, "invalid syscount options");
		return -EINVAL;
	}
	if (session_key_check(s, o->key, o->stream_mode, o->buckets))
		return -EINVAL;
	if ((unsigned int)o->buckets > KAGG_BUCKETS_EXP ||
	    (o->buckets == KAGG_BUCKETS_EXP &&
	     (o->mode != KAGG_SYSCOUNT_LATENCY || o->key != KAGG_KEY_NONE))) {
		session_log(s, KAGG_LOG_WARN,
			    "exp buckets are for the latency mode, per syscall "
			    "(no -P/--per-thread/-N/--per-cgroup) for now");
		return -EINVAL;
	}
	return 0;
}

/* Streaming: the consumer of the records, once the programs are loaded. */
static int sc_stream_init(struct kagg_session *s, const void *opts)
{
	const struct kagg_syscount_opts *o = opts;
	struct syscount *t = s->tool;
	struct scstream_cfg cfg = {
		.core = SESSION_SCONS_CFG(s, t->skel, o),
		.mode = o->mode,
		.key = s->key,
		.unit_ns = units_ns(s->unit),
		.exp = s->exp_words ? &t->skel->rodata->exp_params : NULL,
	};

	return SESSION_STREAM_START(s, scstream_init, &t->st, &cfg, scstream_on_record);
}

static int syscount_open(struct kagg_session *s, void *opts)
{
	struct kagg_syscount_opts *o = opts;
	struct syscount *t = s->tool;
	int err;

	session_open_stream(s, o->unit, o->key,
			    o->mode == KAGG_SYSCOUNT_COUNT    ? "raw_syscalls:sys_enter"
			    : o->mode == KAGG_SYSCOUNT_ERRORS ? "raw_syscalls:sys_exit"
							      : "raw_syscalls:sys_enter,sys_exit",
			    o->stream_mode, &o->stream_bytes);
	t->mode = o->mode;
	err = sc_validate(o, s) ?: session_tasks_open(s, &SESSION_PIDS(o));
	if (err)
		return err;
	if (o->mode == KAGG_SYSCOUNT_ERRORS)
		session_filters_add(s, "failed calls only");
	session_filters_end(s);
	return sc_names(s, o->names_file) ?:
	       session_load_tp(s, o->attach, "the sys_enter/sys_exit programs", sc_load, o) ?:
	       session_tasks_fill(s, &SESSION_PIDS(o), t->skel->maps.tgids, NULL, NULL);
}

SESSION_TOOL(syscount, struct syscount, .read_stream = sc_read_stream,
	     .stream_init = sc_stream_init);

/* ------------------------------------------------------------ printing */

static int sc_cmp_count(const void *a, const void *b)
{
	const struct kagg_hist *x = *(const struct kagg_hist *const *)a;
	const struct kagg_hist *y = *(const struct kagg_hist *const *)b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->key.id < y->key.id ? -1 : x->key.id > y->key.id;
}

/* The histogram of snap with h's key (pid, tid, syscall id), or NULL. */
static const struct kagg_hist *sc_find(const struct kagg_snapshot *snap, const struct kagg_hist *h)
{
	size_t i;

	for (i = 0; i < snap->nr_hists; i++)
		if (snap->hists[i].key.pid == h->key.pid && snap->hists[i].key.tid == h->key.tid &&
		    snap->hists[i].key.id == h->key.id)
			return &snap->hists[i];
	return NULL;
}

/* The row's key columns: pid (tid) comm, the comm, or the cgroup; then the syscall; escaped. */
static void sc_print_key(const struct kagg_hist *h, FILE *f)
{
	struct text_esc e = {};
	const char *comm = text_esc(&e, h->key.comm, sizeof(h->key.comm));
	char id[24];

	if (h->key.mode == KAGG_KEY_TID)
		fprintf(f, "%-8d %-8d %-16s ", h->key.pid, h->key.tid, comm);
	else if (h->key.mode == KAGG_KEY_PID)
		fprintf(f, "%-8d %-16s ", h->key.pid, comm);
	else if (h->key.mode == KAGG_KEY_COMM)
		fprintf(f, "%-16s ", comm);
	snprintf(id, sizeof(id), "%" PRIu64, h->cgroup_id); /* a cgroup gone: its id */
	if (h->key.mode == KAGG_KEY_CGROUP)
		fprintf(f, "%-32s ", h->cgroup ? text_esc(&e, h->cgroup, SIZE_MAX) : id);
	fprintf(f, "%-28s ", h->key.label ? text_esc(&e, h->key.label, SIZE_MAX) : "?");
	text_esc_free(&e);
}

int kagg_syscount__print(const struct kagg_snapshot *snap, FILE *f,
			 const struct kagg_print_opts *opts)
{
	struct kagg_print_opts po = {};
	struct kagg_snapshot head;
	const struct kagg_hist **order;
	size_t i, n;
	int err;

	if (!snap || !f || !opts_valid(opts, OPTS_END(kagg_print_opts)))
		return -EINVAL;
	if (opts)
		memcpy(&po, opts, opts->sz < sizeof(po) ? opts->sz : sizeof(po));
	po.sz = sizeof(po);
	if (po.format != KAGG_FORMAT_TEXT || (snap->nr_hists && snap->hists[0].nr_slots))
		return kagg_snapshot__print(snap, f, &po);
	/* The meta header alone, then the table. */
	head = *snap;
	head.nr_hists = 0;
	head.nr_stacks = 0;
	head.stream = NULL;
	if (!po.no_meta) {
		err = kagg_snapshot__print(&head, f, &po);
		if (err)
			return err;
	} else if (po.timestamp) {
		snap_print_timestamp(snap, f);
	}
	order = calloc(snap->nr_hists ? snap->nr_hists : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < snap->nr_hists; i++)
		order[i] = &snap->hists[i];
	qsort(order, snap->nr_hists, sizeof(*order), sc_cmp_count);
	fputc('\n', f);
	if (snap->nr_hists && order[0]->key.mode == KAGG_KEY_TID)
		fprintf(f, "%-8s %-8s %-16s ", "PID", "TID", "COMM");
	else if (snap->nr_hists && order[0]->key.mode == KAGG_KEY_PID)
		fprintf(f, "%-8s %-16s ", "PID", "COMM");
	else if (snap->nr_hists && order[0]->key.mode == KAGG_KEY_COMM)
		fprintf(f, "%-16s ", "COMM");
	else if (snap->nr_hists && order[0]->key.mode == KAGG_KEY_CGROUP)
		fprintf(f, "%-32s ", "CGROUP");
	fprintf(f, "%-28s %12s", "SYSCALL", "COUNT");
	if (snap->stream)
		fprintf(f, " %12s %8s", "STREAMED", "DIFF");
	fputc('\n', f);
	n = po.top && po.top < snap->nr_hists ? po.top : snap->nr_hists;
	for (i = 0; i < n; i++) {
		const struct kagg_hist *h = order[i];

		sc_print_key(h, f);
		fprintf(f, "%12" PRIu64, h->total);
		if (snap->stream) {
			const struct kagg_hist *o = sc_find(snap->stream, h);
			uint64_t n = o ? o->total : 0;

			fprintf(f, " %12" PRIu64 " %8" PRId64, n, (int64_t)(n - h->total));
		}
		fputc('\n', f);
	}
	/* --mode both: what only the stream counted (its histograms are sorted like ours) */
	for (i = 0; snap->stream && i < snap->stream->nr_hists; i++) {
		const struct kagg_hist *h = &snap->stream->hists[i];

		if (sc_find(snap, h))
			continue;
		sc_print_key(h, f);
		fprintf(f, "%12d %12" PRIu64 " %8" PRId64 "\n", 0, h->total, (int64_t)h->total);
	}
	if (!snap->nr_hists && (!snap->stream || !snap->stream->nr_hists))
		fprintf(f, "(no calls)\n");
	if (n < snap->nr_hists)
		fprintf(f, "(%zu more rows, fewer calls: --top %zu shows the most)\n",
			snap->nr_hists - n, po.top);
	free(order);
	return ferror(f) ? -EIO : 0;
}
