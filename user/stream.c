// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The shared half of the streaming consumers (see stream.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapshot.h"
#include "stream.h"
#include "tracefs.h"

static uint64_t record_clock(void *ctx)
{
	return ((struct scons *)ctx)->cur_ts;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int scons_init(struct scons *c, const struct scons_cfg *cfg, char *err, size_t err_len)
{
	struct kagg_rb_opts ro = { .sz = sizeof(ro) };
	struct kagg_rb_events_opts eo = { .sz = sizeof(eo) };
	int ret;

	memset(c, 0, sizeof(*c));
	c->nr_cpus = cfg->nr_cpus;
	c->events_dir = cfg->events_dir;
	c->last_seq = calloc(cfg->nr_cpus, sizeof(uint64_t));
	c->evs = kagg_rb_events__new(&eo);
	if (!c->last_seq || !c->evs) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	c->brb = bpfrb__new(cfg->map_fd, cfg->map_bytes);
	if (!c->brb) {
		ret = -errno;
		snprintf(err, err_len, "mapping the BPF ring buffer: %s", strerror(errno));
		return ret;
	}
	ro.nr_cpus = cfg->nr_cpus;
	ro.nr_subbufs = cfg->rb_subbufs ? cfg->rb_subbufs : 128;
	ro.mode = cfg->rb_consume ? KAGG_RB_CONSUME : KAGG_RB_OVERWRITE;
	ro.clock = record_clock;
	ro.clock_ctx = c;
	c->rb = kagg_rb__new(&ro);
	if (!c->rb) {
		ret = -errno;
		snprintf(err, err_len, "creating the reference ring buffer: %s", strerror(errno));
		return ret;
	}
	return 0;
}

void scons_fini(struct scons *c)
{
	bpfrb__free(c->brb);
	kagg_rb__free(c->rb);
	kagg_rb_events__free(c->evs);
	free(c->last_seq);
	memset(c, 0, sizeof(*c));
}

long scons_drain(struct scons *c, bpfrb_fn fn, void *ctx)
{
	uint64_t t0 = thread_cpu_ns();
	long n = bpfrb__drain(c->brb, fn, ctx, &c->bytes);

	c->delivered += n;
	c->cpu_ns += thread_cpu_ns() - t0;
	return n;
}

int scons_poll(struct scons *c, bpfrb_fn fn, void *ctx, int timeout_ms)
{
	int err;

	if (!bpfrb__pending(c->brb)) {
		err = bpfrb__wait(c->brb, timeout_ms);
		if (err < 0)
			return err;
	}
	return (int)scons_drain(c, fn, ctx);
}

uint32_t scons_seq(struct scons *c, uint32_t cpu, uint64_t seq)
{
	cpu %= (uint32_t)c->nr_cpus;
	if (c->last_seq[cpu] && seq > c->last_seq[cpu] + 1)
		c->seq_gaps += seq - c->last_seq[cpu] - 1;
	c->last_seq[cpu] = seq;
	return cpu;
}

static size_t fmt_payload(const struct kagg_rb_format *fmt)
{
	size_t i, end, payload = 0;

	for (i = 0; i < fmt->nr_fields; i++) {
		end = fmt->fields[i].offset + fmt->fields[i].size;
		if (end > payload)
			payload = end;
	}
	return payload;
}

int scons_format(struct scons *c, const char *sys, const char *name,
		 const struct kagg_rb_format **fmt, size_t *payload, char *err, size_t err_len)
{
	const char *base = c->events_dir ? c->events_dir : TRACEFS_DIR "/events";
	char path[512], *text = NULL;
	size_t len = 0;

	*fmt = NULL;
	snprintf(path, sizeof(path), "%s/%s/%s/format", base, sys, name);
	if (!tracefs_read(path, &text, &len) && !kagg_rb_events__parse(c->evs, sys, text, len, fmt)) {
		if (!c->format_src[0])
			snprintf(c->format_src, sizeof(c->format_src), "kernel (%s/%s)", base, sys);
	} else {
		*fmt = kagg_rb_events__find_by_name(c->evs, sys, name);
		if (!*fmt && !kagg_rb_events__define_sched(c->evs))
			*fmt = kagg_rb_events__find_by_name(c->evs, sys, name);
		snprintf(c->format_src, sizeof(c->format_src),
			 "built-in copy of the kernel layout (%s not readable)", path);
	}
	free(text);
	if (!*fmt) {
		snprintf(err, err_len, "no %s:%s format", sys, name);
		return -EINVAL;
	}
	*payload = fmt_payload(*fmt);
	return 0;
}

int scons_field(const struct kagg_rb_format *fmt, const char *name, int *off, int *size,
		char *err, size_t err_len)
{
	const struct kagg_rb_field *f = kagg_rb_format__field(fmt, name);

	if (!f) {
		snprintf(err, err_len, "the %s format lacks %s", fmt->name, name);
		return -ENOENT;
	}
	*off = (int)f->offset;
	if (size)
		*size = (int)f->size;
	return 0;
}

uint8_t *scons_begin(struct scons *c, uint32_t cpu, uint64_t ts, const struct kagg_rb_format *fmt,
		     size_t payload, uint8_t flags, int pid, struct kagg_rb_rsv *rsv)
{
	uint8_t *p;

	c->cur_ts = ts;
	p = kagg_rb__reserve_cpu(c->rb, (int)(cpu % (uint32_t)c->nr_cpus), payload, rsv);
	if (!p) {
		c->rb_errors++;
		return NULL;
	}
	memset(p, 0, payload);
	kagg_rb_entry__init(p, fmt->id, flags, 0, pid);
	return p;
}

void scons_meta(struct scons *c, struct kagg_snapshot *snap, uint64_t seen, uint64_t sent,
		uint64_t dropped, bool reset)
{
	struct kagg_meta *m = &snap->meta;
	struct kagg_rb_stats rs = {};

	kagg_rb__stats(c->rb, -1, &rs);
	m->has_stream = true;
	m->stream_seen = seen;
	m->stream_sent = sent;
	m->stream_dropped = dropped;
	m->stream_delivered = c->delivered - c->delivered0;
	m->stream_bytes = c->bytes - c->bytes0;
	m->consumer_cpu_s = (c->cpu_ns - c->cpu_ns0) / 1e9;
	m->stream_format = snap_strdup(snap, c->format_src);
	m->rb_overrun = rs.overrun - c->rb_overrun0;
	m->rb_dropped = rs.dropped_events + rs.commit_overrun - c->rb_dropped0;
	snap_add_drop(snap, "stream_ringbuf_full", "record not streamed: BPF ring buffer full",
		      dropped, true);
	if (reset) {
		c->delivered0 = c->delivered;
		c->bytes0 = c->bytes;
		c->cpu_ns0 = c->cpu_ns;
		c->rb_overrun0 = rs.overrun;
		c->rb_dropped0 = rs.dropped_events + rs.commit_overrun;
	}
}
