// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The trace event registry: formats by id and by name.  Formats come in
 * through the parser (rb_format.c: tracefs format files) or are defined in
 * code; the printer (rb_printfmt.c) looks them up to render records.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/opts.h"
#include "ftrace/rb_events_internal.h"

struct kagg_rb_events *kagg_rb_events__new(const struct kagg_rb_events_opts *opts)
{
	struct kagg_rb_events *e;
	int fc = OPTS_GET(opts, kagg_rb_events_opts, flag_cols, 0);

	if (!opts_valid(opts, OPTS_END(kagg_rb_events_opts)) || (fc && fc != 4 && fc != 5)) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (u64map_init(&e->by_id, 64)) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	e->next_id = OPTS_GET(opts, kagg_rb_events_opts, first_id, 0);
	if (e->next_id <= 0)
		e->next_id = 1000;
	e->old_flags = OPTS_GET(opts, kagg_rb_events_opts, old_flags, false);
	e->flag_cols = fc == 4 ? 4 : 5;
	return e;
}

void rb_fmt_free(struct kagg_rb_format *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr_fields; i++) {
		free(f->fields[i].type);
		free(f->fields[i].name);
	}
	free(f->fields);
	free(f->system);
	free(f->name);
	free(f->print_fmt);
	free(f);
}

void kagg_rb_events__free(struct kagg_rb_events *evs)
{
	size_t i;

	if (!evs)
		return;
	for (i = 0; i < evs->n; i++)
		rb_fmt_free(evs->v[i]);
	free(evs->v);
	u64map_free(&evs->by_id);
	free(evs);
}

/* The registry's key for an id (never U64MAP_EMPTY). */
static uint64_t id_key(int id)
{
	return (uint32_t)id;
}

const struct kagg_rb_format *kagg_rb_events__find(const struct kagg_rb_events *evs, int id)
{
	const uint64_t *i;

	if (!evs) {
		errno = EINVAL;
		return NULL;
	}
	i = u64map_get(&evs->by_id, id_key(id));
	return i ? evs->v[*i] : NULL;
}

const struct kagg_rb_format *kagg_rb_events__find_by_name(const struct kagg_rb_events *evs,
							  const char *system, const char *name)
{
	size_t i;

	if (!evs || !name) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < evs->n; i++)
		if ((!system || !strcmp(evs->v[i]->system, system)) &&
		    !strcmp(evs->v[i]->name, name))
			return evs->v[i];
	return NULL;
}

size_t kagg_rb_events__count(const struct kagg_rb_events *evs)
{
	return evs ? evs->n : 0;
}

const struct kagg_rb_format *kagg_rb_events__at(const struct kagg_rb_events *evs, size_t i)
{
	return evs && i < evs->n ? evs->v[i] : NULL;
}

const struct kagg_rb_field *kagg_rb_format__field(const struct kagg_rb_format *fmt,
						  const char *name)
{
	size_t i;

	if (!fmt || !name) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}

const struct kagg_rb_field *kagg_rb_format__field_at(const struct kagg_rb_format *fmt, size_t i)
{
	return ARRAY_AT(fmt, nr_fields, fields, i);
}

size_t kagg_rb_format__nr_fields(const struct kagg_rb_format *fmt)
{
	return fmt ? fmt->nr_fields : 0;
}

size_t kagg_rb_format__nr_common(const struct kagg_rb_format *fmt)
{
	return fmt ? fmt->nr_common : 0;
}

int kagg_rb_format__id(const struct kagg_rb_format *fmt)
{
	return fmt ? fmt->id : -EINVAL;
}

const char *kagg_rb_format__system(const struct kagg_rb_format *fmt)
{
	return fmt ? fmt->system : NULL;
}

const char *kagg_rb_format__name(const struct kagg_rb_format *fmt)
{
	return fmt ? fmt->name : NULL;
}

const char *kagg_rb_format__print_fmt(const struct kagg_rb_format *fmt)
{
	return fmt ? fmt->print_fmt : NULL;
}

int rb_events_add(struct kagg_rb_events *evs, struct kagg_rb_format *f)
{
	if (kagg_rb_events__find(evs, f->id))
		return -EEXIST;
	if (GROW_ARRAY(evs->v, evs->cap, evs->n, 16))
		return -ENOMEM;
	if (u64map_put(&evs->by_id, id_key(f->id), evs->n))
		return -ENOMEM;
	evs->v[evs->n++] = f;
	if (f->id >= evs->next_id) /* INT_MAX taken: the next define finds it taken (-EEXIST) */
		evs->next_id = f->id < INT_MAX ? f->id + 1 : INT_MAX;
	return 0;
}
