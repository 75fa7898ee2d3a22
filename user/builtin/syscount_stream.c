// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * syscount's streaming consumer (see syscount_stream.h).
 *
 * What bpf/syscount.bpf.c does with its maps, on userspace maps: count mode
 * counts selected entries per syscall (and key); errors mode counts failed
 * selected exits per (syscall, errno); latency mode keeps a selected entry's
 * time and number by thread id and closes it at the thread's next exit.
 * Records of one thread reach userspace in order (one ring buffer, reserved
 * in the order the thread ran them).  A lost record (ring buffer full) can
 * miss a call or, in latency mode, stretch one; losses are counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "shared/syscount.h"
#include "builtin/syscount_stream.h"

#define MAX_ERRNO 4095

/* raw_syscalls replicas, for when tracefs cannot be read. */
static int define_raw_syscalls(struct kagg_rb_events *evs)
{
	return kagg_rb_events__define(evs, "raw_syscalls", "sys_enter",
				      "long id; unsigned long args[6]",
				      "\"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, "
				      "REC->args[0], REC->args[1], REC->args[2], REC->args[3], "
				      "REC->args[4], REC->args[5]",
				      NULL)
		       ?: kagg_rb_events__define(evs, "raw_syscalls", "sys_exit",
						 "long id; long ret",
						 "\"NR %ld = %ld\", REC->id, REC->ret", NULL);
}

int scstream_init(struct scstream *st, const struct scstream_cfg *cfg, char *err, size_t err_len)
{
	int ret;

	memset(st, 0, sizeof(*st));
	st->mode = cfg->mode;
	st->key = cfg->key;
	st->unit_ns = cfg->unit_ns;
	sexp_init(&st->exp, cfg->exp);
	if (u64map_init(&st->start_ts, 4096) || u64map_init(&st->start_nr, 4096) ||
	    u64map_init(&st->gen[0].index, 512) || u64map_init(&st->gen[1].index, 512)) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	ret = scons_init(&st->core, &cfg->core, err, err_len) ?:
	      scons_format(&st->core, "raw_syscalls", "sys_enter", define_raw_syscalls,
			   &st->enter_fmt, &st->enter_payload, err, err_len) ?:
	      scons_format(&st->core, "raw_syscalls", "sys_exit", define_raw_syscalls,
			   &st->exit_fmt, &st->exit_payload, err, err_len);
	if (ret)
		return ret;
	return scons_field(st->enter_fmt, "id", &st->off_enter_id, NULL, err, err_len) ?:
	       scons_field(st->enter_fmt, "args", &st->off_args, NULL, err, err_len) ?:
	       scons_field(st->exit_fmt, "id", &st->off_exit_id, NULL, err, err_len) ?:
	       scons_field(st->exit_fmt, "ret", &st->off_ret, NULL, err, err_len);
}

/* Give back the latencies generation gen keeps. */
static void gen_clear_vals(struct scs_gen *gen)
{
	size_t i;

	for (i = 0; i < gen->n; i++)
		svals_clear_xslots(&gen->e[i].vals, &gen->e[i].xslots);
	gen->kept = 0;
}

void scstream_fini(struct scstream *st)
{
	int i;

	for (i = 0; i < 2; i++)
		gen_clear_vals(&st->gen[i]);
	scons_fini(&st->core);
	u64map_free(&st->start_ts);
	u64map_free(&st->start_nr);
	for (i = 0; i < 2; i++) {
		u64map_free(&st->gen[i].index);
		free(st->gen[i].e);
	}
	memset(st, 0, sizeof(*st));
}

/* The entry of (key of r, aux) in generation g, created empty. */
static struct scs_entry *entry_get(struct scstream *st, const struct sc_rec *r, uint64_t aux)
{
	struct scs_gen *gen = &st->gen[r->gen & 1];
	uint32_t id = st->key == KAGG_KEY_TID	? (uint32_t)r->pid
		      : st->key == KAGG_KEY_PID ? (uint32_t)r->tgid
						: 0;
	/* nr < 1024, errno < 4096, ids < 2^22 (PID_MAX_LIMIT): 44 bits */
	uint64_t k = (uint64_t)id << 22 | (aux >> 32) << 10 | (aux & (SC_NR_MAX - 1));
	void *arr = gen->e;
	struct scs_entry *e;
	bool created;

	e = u64map_elem(&gen->index, k, &arr, &gen->n, &gen->cap, sizeof(*e), &created);
	gen->e = arr;
	if (!e || !created)
		return e;
	e->tgid = st->key != KAGG_KEY_NONE ? (uint32_t)r->tgid : 0;
	e->pid = st->key == KAGG_KEY_TID ? (uint32_t)r->pid : 0;
	e->aux = aux;
	memcpy(e->comm, r->comm, sizeof(e->comm) - 1);
	return e;
}

static void add(struct scstream *st, const struct sc_rec *r, uint64_t aux, int slot, uint64_t ns)
{
	struct scs_entry *e = entry_get(st, r, aux);

	if (!e) {
		st->oom = -ENOMEM;
		return;
	}
	if (slot < 0) {
		e->count++;
	} else {
		if (!st->exp.nr_slots)
			e->slots[slot]++;
		else if (sexp_add(&st->exp, &e->xslots, ns))
			st->oom = -ENOMEM;
		svals_add(&e->vals, ns, &st->gen[r->gen & 1].kept);
		kagg_ext_put(&e->nmin, &e->max, ns);
	}
	e->sum += ns;
	st->recorded++;
}

/* What on_enter() and on_exit() do, on userspace maps. */
static void account(struct scstream *st, const struct sc_rec *r)
{
	uint64_t start, nr;

	if (r->type == SC_REC_ENTER) {
		if (!r->sel)
			return;
		if (st->mode == SC_MODE_LATENCY) {
			u64map_put(&st->start_ts, (uint32_t)r->pid, r->ts);
			u64map_put(&st->start_nr, (uint32_t)r->pid, (uint64_t)r->nr);
		} else if (st->mode == SC_MODE_COUNT) {
			add(st, r, (uint64_t)r->nr, -1, 0);
		}
		return;
	}
	if (st->mode == SC_MODE_ERRORS) {
		if (r->sel && r->ret < 0 && r->ret >= -MAX_ERRNO)
			add(st, r, SC_AUX(r->nr, -r->ret), -1, 0);
		return;
	}
	if (st->mode != SC_MODE_LATENCY || !u64map_del(&st->start_ts, (uint32_t)r->pid, &start) ||
	    !u64map_del(&st->start_nr, (uint32_t)r->pid, &nr))
		return;
	add(st, r, nr & (SC_NR_MAX - 1), (int)scons_slot(r->ts - start, st->unit_ns),
	    r->ts - start);
}

/* Land the record as the kernel's raw_syscalls:sys_enter or sys_exit event. */
static void land(struct scstream *st, const struct sc_rec *r)
{
	bool enter = r->type == SC_REC_ENTER;
	struct kagg_rb_rsv rsv;
	uint8_t *p;

	p = scons_begin(&st->core, r->cpu, r->ts, enter ? st->enter_fmt : st->exit_fmt,
			enter ? st->enter_payload : st->exit_payload, 0, r->pid, &rsv);
	if (!p)
		return;
	if (enter) {
		memcpy(p + st->off_enter_id, &r->nr, 8);
		memcpy(p + st->off_args, r->args, sizeof(r->args));
	} else {
		memcpy(p + st->off_exit_id, &r->nr, 8);
		memcpy(p + st->off_ret, &r->ret, 8);
	}
	kagg_rb__commit(&rsv);
}

SCONS_DEFINE_ON_RECORD(scstream_on_record, struct scstream, struct sc_rec)

int scstream_entries(struct scstream *st, uint32_t g, struct scs_entry **e, size_t *n)
{
	if (st->oom)
		return st->oom;
	*e = st->gen[g & 1].e;
	*n = st->gen[g & 1].n;
	return 0;
}

void scstream_reset(struct scstream *st, uint32_t g)
{
	struct scs_gen *gen = &st->gen[g & 1];

	gen_clear_vals(gen);
	u64map_clear(&gen->index);
	gen->n = 0;
}
