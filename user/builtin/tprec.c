// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * tprec sessions: the raw records of any tracepoints, streamed into the
 * reference ftrace ring buffer (kagg record -e SYS:NAME).
 *
 * Each event's tracefs format is parsed at open: the size of its fixed part
 * and the offsets of its dynamic fields go to bpf/tprec.bpf.c as rodata, and
 * the generic program of its index is attached as a classic tracepoint
 * program to SYS/NAME.  The consumer lands each record under the event's id
 * as the kernel laid it out, its common fields written from the record's
 * thread (BPF sees a pt_regs pointer there).  Nothing about an event is
 * compiled in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/tprec.h>
#include <kagg/rb_format.h>
#include "shared/tprec.h"
#include "tprec.skel.h"
#include "util/opts.h"
#include "util/tracefs.h"
#include "stream/stream.h"
#include "snapshot/snapshot_internal.h"
#include "session/session_internal.h"

#define slog session_log

_Static_assert(KAGG_TPREC_MAX_EVENTS == TPREC_MAX_EVENTS, "one program per event");
_Static_assert(TPREC_CNT_MAX <= SESSION_MAX_COUNTERS, "tprec counters fit the session's");

struct tprec {
	struct tprec_bpf *skel;
	struct kagg_rb_events *evs; /* the formats read at open (the BPF side's layout) */
	size_t nr;
	char sys[TPREC_MAX_EVENTS][128], name[TPREC_MAX_EVENTS][128];
	char what[1200]; /* "sys:name, ..." for the meta */
	struct scons core;
	const struct kagg_rb_format *fmt[TPREC_MAX_EVENTS]; /* the consumer's, landed under */
	bool streaming;
};

/* ------------------------------------------------------------ stream */

/* A record: its bytes as the kernel laid them out, the common fields written here. */
static void tprec_on_record(void *ctx, const void *data, uint32_t len)
{
	const struct tprec_rec *r = data;
	struct tprec *t = ctx;
	struct kagg_rb_rsv rsv;
	uint32_t cpu;
	uint8_t *p;

	if (len < sizeof(*r) || r->event >= t->nr || len - sizeof(*r) < r->len)
		return;
	cpu = scons_seq(&t->core, (const struct kagg_rec_hdr *)r);
	if (r->len < 8) /* not even the common fields: nothing to land */
		return;
	p = scons_begin(&t->core, cpu, r->ts, t->fmt[r->event], r->len, 0, (int)r->tid, &rsv);
	if (!p)
		return;
	memcpy(p + 8, (const uint8_t *)(r + 1) + 8, r->len - 8u);
	kagg_rb__commit(&rsv);
}

/* No built-in copy of any format: tracefs' alone. */
static int no_builtin(struct kagg_rb_events *evs)
{
	(void)evs;
	return -ENOENT;
}

static int tprec_stream_init(struct kagg_session *s, const void *opts)
{
	const struct kagg_tprec_opts *o = opts;
	struct tprec *t = s->tool;
	struct scons_cfg cfg = {
		.map_fd = bpf_map__fd(t->skel->maps.events),
		.cnt_fd = bpf_map__fd(t->skel->maps.stream_cnt),
		.map_bytes = o->stream_bytes,
		.nr_cpus = s->nr_cpus,
		.rb_subbufs = o->rb_subbufs,
		.rb_consume = o->rb_consume,
		.batch_bytes = o->stream_bytes / 4,
	};
	char msg[256] = "";
	size_t i, payload;
	int err;

	err = scons_init(&t->core, &cfg, msg, sizeof(msg));
	t->streaming = true;
	for (i = 0; !err && i < t->nr; i++)
		err = scons_format(&t->core, t->sys[i], t->name[i], no_builtin, &t->fmt[i],
				   &payload, msg, sizeof(msg));
	return session_stream_started(s, err, msg, &t->core, tprec_on_record, t);
}

/* ------------------------------------------------------------ session */

static int tprec_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	(void)s;
	(void)snap;
	(void)g;
	(void)reset;
	return 0;
}

static void tprec_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
		       bool reset)
{
	(void)s;
	(void)reset;
	snap->meta.events_recorded = cnt[TPREC_CNT_EVENTS];
	snap_add_drop(snap, "truncated",
		      "record longer than 4096 bytes: its dynamic data cut (recorded)",
		      cnt[TPREC_CNT_TRUNCATED], false);
	snap_add_drop(snap, "read", "the trace entry could not be read", cnt[TPREC_CNT_DROP_READ],
		      true);
}

static struct bpf_link *tprec_attach(struct kagg_session *s, int i)
{
	struct tprec *t = s->tool;

	return bpf_program__attach_tracepoint(s->progs[i], t->sys[i], t->name[i]);
}

static void tprec_destroy(struct kagg_session *s)
{
	struct tprec *t = s->tool;

	if (t->streaming)
		scons_fini(&t->core);
	tprec_bpf__destroy(t->skel);
	kagg_rb_events__free(t->evs);
}

/* ------------------------------------------------------------ open */

/* Event i, "SYS:NAME" (or SYS/NAME), into t->sys[i], t->name[i].  0 or -EINVAL (logged). */
static int split_event(struct kagg_session *s, struct tprec *t, size_t i, const char *ev)
{
	size_t n = ev ? strcspn(ev, ":/") : 0;

	if (!ev || !n || !ev[n] || !ev[n + 1] || n >= sizeof(t->sys[i]) ||
	    strlen(ev + n + 1) >= sizeof(t->name[i]) || strpbrk(ev + n + 1, ":/") ||
	    strstr(ev, "..")) {
		slog(s, KAGG_LOG_WARN, "invalid event '%s' (SYS:NAME, e.g. signal:signal_generate)",
		     ev ? ev : "");
		return -EINVAL;
	}
	memcpy(t->sys[i], ev, n);
	t->sys[i][n] = '\0';
	snprintf(t->name[i], sizeof(t->name[i]), "%s", ev + n + 1);
	return 0;
}

/* What program i copies of event fmt: its fixed part and its dynamic fields' offsets. */
static int layout(struct kagg_session *s, struct tprec *t, size_t i,
		  const struct kagg_rb_format *fmt)
{
	size_t f, nd = 0;
	__u32 fixed = 0;

	for (f = 0; f < kagg_rb_format__nr_fields(fmt); f++) {
		const struct kagg_rb_field *fl = kagg_rb_format__field_at(fmt, f);
		__u32 end = (__u32)fl->offset + (__u32)fl->size;

		if (fl->offset < 0 || fl->size < 0 || end > TPREC_MAX_DATA) {
			slog(s, KAGG_LOG_WARN, "%s:%s: field %s lies past %d bytes", t->sys[i],
			     t->name[i], fl->name, TPREC_MAX_DATA);
			return -EINVAL;
		}
		fixed = end > fixed ? end : fixed;
		if (fl->kind != KAGG_RB_FIELD_DATA_LOC && fl->kind != KAGG_RB_FIELD_REL_LOC)
			continue;
		if (nd == TPREC_MAX_DYN) {
			slog(s, KAGG_LOG_WARN, "%s:%s has more than %d dynamic fields", t->sys[i],
			     t->name[i], TPREC_MAX_DYN);
			return -EINVAL;
		}
		t->skel->rodata->rec_dyn[i][nd++] =
			(__u32)fl->offset | (fl->kind == KAGG_RB_FIELD_REL_LOC ? TPREC_DYN_REL : 0);
	}
	t->skel->rodata->rec_fixed[i] = fixed;
	return 0;
}

static int tprec_open(struct kagg_session *s, void *opts)
{
	struct kagg_tprec_opts *o = opts;
	struct tprec *t = s->tool;
	const struct kagg_rb_format *fmt;
	struct bpf_program *progs[TPREC_MAX_EVENTS];
	char msg[256];
	size_t i, len = 0;
	int err;

	session_open_stream(s, KAGG_UNIT_USECS, KAGG_KEY_NONE, t->what, KAGG_MODE_STREAM,
			    &o->stream_bytes);
	if (!o->events || !o->nr_events || o->nr_events > TPREC_MAX_EVENTS ||
	    o->stream_bytes < 4096 || (o->stream_bytes & (o->stream_bytes - 1))) {
		slog(s, KAGG_LOG_WARN,
		     "invalid tprec options: 1 to %d events; stream_bytes a power of two "
		     ">= 4096",
		     TPREC_MAX_EVENTS);
		return -EINVAL;
	}
	t->nr = o->nr_events;
	for (i = 0; i < t->nr; i++) {
		err = split_event(s, t, i, o->events[i]);
		if (err)
			return err;
		len += snprintf(t->what + len, len < sizeof(t->what) ? sizeof(t->what) - len : 0,
				"%s%s:%s", i ? "," : "", t->sys[i], t->name[i]);
	}
	err = tracefs_ensure(msg, sizeof(msg));
	if (err) {
		slog(s, KAGG_LOG_WARN, "%s", msg);
		return err;
	}
	t->evs = kagg_rb_events__new(NULL);
	t->skel = t->evs ? tprec_bpf__open() : NULL;
	if (!t->skel)
		return -errno;
	progs[0] = t->skel->progs.tprec_0;
	progs[1] = t->skel->progs.tprec_1;
	progs[2] = t->skel->progs.tprec_2;
	progs[3] = t->skel->progs.tprec_3;
	progs[4] = t->skel->progs.tprec_4;
	progs[5] = t->skel->progs.tprec_5;
	progs[6] = t->skel->progs.tprec_6;
	progs[7] = t->skel->progs.tprec_7;
	for (i = 0; i < t->nr; i++) {
		err = tracefs_event_format(t->evs, t->sys[i], t->name[i], &fmt);
		if (err == -ENOENT)
			slog(s, KAGG_LOG_WARN, "no tracepoint %s:%s (kagg list -t lists them)",
			     t->sys[i], t->name[i]);
		else if (err)
			slog(s, KAGG_LOG_WARN, "reading the format of %s:%s: %s", t->sys[i],
			     t->name[i], strerror(-err));
		err = err ?: layout(s, t, i, fmt);
		if (err)
			return err;
	}
	for (i = t->nr; i < TPREC_MAX_EVENTS; i++)
		bpf_program__set_autoload(progs[i], false);
	t->skel->rodata->wake_mode = KAGG_BPF_WAKE_WATERMARK;
	t->skel->rodata->wake_bytes = o->stream_bytes / 4;
	bpf_map__set_max_entries(t->skel->maps.events, o->stream_bytes);
	err = tprec_bpf__load(t->skel);
	if (err)
		return session_load_failed(s, err, "the tracepoint programs");
	for (i = 0; i < t->nr; i++)
		s->progs[i] = progs[i];
	s->nr_progs = (int)t->nr;
	s->nr_agg_progs = 0;
	session_bind(s, &t->skel->bss->gen, &t->skel->bss->armed, t->skel->maps.counters,
		     TPREC_CNT_MAX, "tracepoint");
	return 0;
}

SESSION_TOOL(tprec, struct tprec, .attach = tprec_attach, .read_stream = tprec_read,
	     .stream_init = tprec_stream_init);
