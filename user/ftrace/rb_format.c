// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Trace event format files: parsing tracefs `format` text (and whole
 * events/ directories) into the registry, defining formats in code with the
 * kernel's field layout, and writing formats, header_page and header_event
 * back out as tracefs does.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftrace/rb_events_internal.h"

/* --------------------------------------------------------------- parsing */

/* A field lies in the first 2^30 - 1 bytes of a record: a sub-buffer's commit holds 30 bits. */
#define RB_FMT_MAX_BYTES ((int)KAGG_RB_COMMIT_MASK)
#define RB_FMT_MAX_FIELDS 1024	   /* the kernel's events have fewer than 64 */
#define RB_FMT_MAX_FILE (1u << 20) /* the kernel's largest format file is ~6 KiB */

static char *xstrndup(const char *s, size_t n)
{
	char *r = malloc(n + 1);

	if (r) {
		memcpy(r, s, n);
		r[n] = 0;
	}
	return r;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Split a declaration "TYPE NAME[LEN]" into f->type, f->name, kind. */
static int parse_decl(struct kagg_rb_field *f, const char *decl)
{
	char *d = strdup(decl), *s, *name, *br;
	int err = -EINVAL;

	if (!d)
		return -ENOMEM;
	s = trim(d);
	f->kind = KAGG_RB_FIELD_PLAIN;
	if (!strncmp(s, "__data_loc ", 11))
		f->kind = KAGG_RB_FIELD_DATA_LOC;
	else if (!strncmp(s, "__rel_loc ", 10))
		f->kind = KAGG_RB_FIELD_REL_LOC;
	/* name: last identifier, optionally followed by [LEN] */
	br = s + strlen(s);
	if (br > s && br[-1] == ']') {
		char *ob = strrchr(s, '[');

		if (!ob)
			goto out;
		br = ob;
		if (f->kind == KAGG_RB_FIELD_PLAIN) {
			f->kind = KAGG_RB_FIELD_ARRAY;
			/*
			 * a number, or a sum of them (5.10's ftrace/branch: "func[30+1]");
			 * old kernels wrote the macro ("comm[TASK_COMM_LEN]"): 0
			 */
			if (isdigit((unsigned char)ob[1])) {
				char *e = ob;
				long n = 0;

				do {
					if (!isdigit((unsigned char)e[1]))
						goto out;
					errno = 0;
					n += strtol(e + 1, &e, 0);
					if (errno || n > RB_FMT_MAX_BYTES)
						goto out;
				} while (*e == '+');
				if (*e != ']')
					goto out;
				f->array_len = (int)n;
			}
		}
	}
	name = br;
	while (name > s && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	if (name == br || name == s)
		goto out;
	f->name = xstrndup(name, (size_t)(br - name));
	/* type: everything but the name (array brackets of data_loc kept: "char[]") */
	{
		size_t tl = (size_t)(name - s);
		char *t = xstrndup(s, tl), *tt;

		if (!t)
			goto out;
		tt = trim(t);
		f->type = strdup(tt); /* "__data_loc char[]" keeps its [] */
		free(t);
	}
	if (!f->name || !f->type)
		goto out;
	f->is_string = strstr(f->type, "char") && !strstr(f->type, "*") &&
		       (f->kind != KAGG_RB_FIELD_PLAIN);
	err = 0;
out:
	free(d);
	return err;
}

/*
 * What the printer relies on, checked once here: the field lies inside the
 * first RB_FMT_MAX_BYTES bytes of a record (so offset + size never overflows
 * an int), a plain field has at least one byte (1, 2, 4 or 8 for an integer;
 * other sizes are opaque types such as uuid_t, printed as bytes), a
 * __data_loc/__rel_loc word 4, and an array of N > 0 elements splits into N
 * elements of at least one byte.
 */
static bool field_ok(const struct kagg_rb_field *f)
{
	if (f->offset < 0 || f->size < 0 || (int64_t)f->offset + f->size > RB_FMT_MAX_BYTES)
		return false;
	switch (f->kind) {
	case KAGG_RB_FIELD_PLAIN:
		return f->size > 0;
	case KAGG_RB_FIELD_DATA_LOC:
	case KAGG_RB_FIELD_REL_LOC:
		return f->size == 4;
	case KAGG_RB_FIELD_ARRAY:
		return f->array_len >= 0 &&
		       (!f->array_len || (f->size >= f->array_len && f->size % f->array_len == 0));
	}
	return false;
}

static int add_field(struct kagg_rb_format *fmt, struct kagg_rb_field *fl)
{
	struct kagg_rb_field *v;

	if (fmt->nr_fields >= RB_FMT_MAX_FIELDS)
		return -EINVAL;
	v = realloc(fmt->fields, (fmt->nr_fields + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	fmt->fields = v;
	v[fmt->nr_fields] = *fl;
	v[fmt->nr_fields++].sz = sizeof(*v);
	return 0;
}

/*
 * The number after "key:" at p: optional blanks, an optional '-', decimal
 * digits, optional blanks, then ';' or the end of the line.  -EINVAL when it
 * is anything else or lies outside [min, max].
 */
static int parse_num(const char *p, long min, long max, int *out)
{
	char *e;
	long v;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '-' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	errno = 0;
	v = strtol(p, &e, 10);
	while (*e == ' ' || *e == '\t')
		e++;
	if (errno || (*e && *e != ';') || v < min || v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* Set *dst to a copy of the trimmed text at s: -EINVAL when already set (a repeated line). */
static int set_once(char **dst, char *s)
{
	if (*dst)
		return -EINVAL;
	*dst = strdup(trim(s));
	return *dst ? 0 : -ENOMEM;
}

/* A parser's last step: hand f to *out on success, free it on error; free the text. */
static int rb_fmt_done(struct kagg_rb_format *f, char *buf, int err,
		       const struct kagg_rb_format **out)
{
	free(buf);
	if (err) {
		rb_fmt_free(f);
		return err;
	}
	if (out)
		*out = f;
	return 0;
}

int kagg_rb_events__parse(struct kagg_rb_events *evs, const char *system, const char *text,
			  size_t len, const struct kagg_rb_format **out)
{
	struct kagg_rb_format *f = NULL;
	char *buf = NULL, *line, *save = NULL;
	bool have_id = false, common = true;
	int err = -EINVAL;

	if (!evs || (!text && len))
		goto fail;
	err = -ENOMEM;
	f = calloc(1, sizeof(*f));
	buf = xstrndup(text ? text : "", len);
	if (!f || !buf)
		goto fail;
	f->system = strdup(system ? system : "");
	if (!f->system)
		goto fail;
	err = -EINVAL;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *l = line;

		err = -EINVAL;
		while (*l == ' ' || *l == '\t')
			l++;
		if (!strncmp(l, "name:", 5)) {
			err = set_once(&f->name, l + 5);
			if (err)
				goto fail;
		} else if (!strncmp(l, "ID:", 3)) {
			/* common_type is 16 bits: a larger ID could never match a record */
			if (have_id || parse_num(l + 3, 0, UINT16_MAX, &f->id))
				goto fail;
			have_id = true;
		} else if (!strncmp(l, "field:", 6)) {
			struct kagg_rb_field fl = { 0 };
			char *semi = strchr(l + 6, ';'), *p;

			if (!semi)
				goto fail;
			*semi = 0;
			err = parse_decl(&fl, l + 6);
			if (err)
				goto fail_fl;
			err = -EINVAL;
			p = strstr(semi + 1, "offset:");
			if (!p || parse_num(p + 7, INT_MIN, INT_MAX, &fl.offset))
				goto fail_fl;
			p = strstr(semi + 1, "size:");
			if (!p || parse_num(p + 5, INT_MIN, INT_MAX, &fl.size))
				goto fail_fl;
			p = strstr(semi + 1, "signed:");
			fl.is_signed = p && p[7] == '1';
			if (!field_ok(&fl))
				goto fail_fl;
			if (common && strncmp(fl.name, "common_", 7))
				common = false;
			err = add_field(f, &fl);
			if (err) {
			fail_fl:
				free(fl.name);
				free(fl.type);
				goto fail;
			}
			if (common)
				f->nr_common++;
		} else if (!strncmp(l, "print fmt:", 10)) {
			err = set_once(&f->print_fmt, l + 10);
			if (err)
				goto fail;
		}
	}
	err = -EINVAL;
	if (!f->name || !have_id || !f->nr_fields)
		goto fail;
	err = rb_events_add(evs, f);
fail:
	return rb_fmt_done(f, buf, err, out);
}

/* A format file: a regular file (never a FIFO to block on) of at most RB_FMT_MAX_FILE bytes. */
static int read_all(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;
	char *b = NULL;
	size_t n = 0;
	struct stat st;
	ssize_t r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	b = malloc(RB_FMT_MAX_FILE + 1);
	if (!b) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (n <= RB_FMT_MAX_FILE) {
		r = read(fd, b + n, RB_FMT_MAX_FILE + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto cleanup;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (n > RB_FMT_MAX_FILE) {
		err = -EFBIG;
		goto cleanup;
	}
	*out = b;
	*len = n;
	b = NULL;
cleanup:
	free(b);
	close(fd);
	return err;
}

int kagg_rb_events__load_dir(struct kagg_rb_events *evs, const char *dir, int *failed)
{
	DIR *d = opendir(dir), *d2;
	struct dirent *s, *e;
	int n = 0, bad = 0, err;

	if (!d)
		return -errno;
	while ((s = readdir(d))) {
		char path[4096];

		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, s->d_name);
		d2 = opendir(path);
		if (!d2)
			continue;
		while ((e = readdir(d2))) {
			char fp[4096], *txt = NULL;
			size_t len = 0;

			if (e->d_name[0] == '.')
				continue;
			snprintf(fp, sizeof(fp), "%s/%s/%s/format", dir, s->d_name, e->d_name);
			err = read_all(fp, &txt, &len);
			if (err == -EFBIG || err == -EINVAL) /* too large, not a regular file */
				bad++;
			if (err)
				continue;
			if (kagg_rb_events__parse(evs, s->d_name, txt, len, NULL))
				bad++;
			else
				n++;
			free(txt);
		}
		closedir(d2);
	}
	closedir(d);
	if (failed)
		*failed = bad;
	return n;
}

/* --------------------------------------------------------------- defining */

struct ctype {
	const char *name;
	int size;
	bool is_signed;
};

static const struct ctype ctypes[] = {
	{ "char", 1, true },
	{ "unsigned char", 1, false },
	{ "signed char", 1, true },
	{ "short", 2, true },
	{ "unsigned short", 2, false },
	{ "int", 4, true },
	{ "unsigned int", 4, false },
	{ "unsigned", 4, false },
	{ "long", 8, true },
	{ "unsigned long", 8, false },
	{ "long long", 8, true },
	{ "unsigned long long", 8, false },
	{ "pid_t", 4, true },
	{ "u8", 1, false },
	{ "s8", 1, true },
	{ "u16", 2, false },
	{ "s16", 2, true },
	{ "u32", 4, false },
	{ "s32", 4, true },
	{ "u64", 8, false },
	{ "s64", 8, true },
	{ "bool", 1, false },
	{ "size_t", 8, false },
	{ "void *", 8, false },
	{ "unsigned long *", 8, false },
};

/* sz: set by add_field() */
static const struct kagg_rb_field common_fields[] = {
	{ 0, "unsigned short", "common_type", 0, 2, false, KAGG_RB_FIELD_PLAIN, 0, false },
	{ 0, "unsigned char", "common_flags", 2, 1, false, KAGG_RB_FIELD_PLAIN, 0, false },
	{ 0, "unsigned char", "common_preempt_count", 3, 1, false, KAGG_RB_FIELD_PLAIN, 0, false },
	{ 0, "int", "common_pid", 4, 4, true, KAGG_RB_FIELD_PLAIN, 0, false },
};

int kagg_rb_events__define(struct kagg_rb_events *evs, const char *system, const char *name,
			   const char *fields, const char *print_fmt,
			   const struct kagg_rb_format **out)
{
	struct kagg_rb_format *f = calloc(1, sizeof(*f));
	char *buf = strdup(fields ? fields : ""), *decl, *save = NULL;
	int off = 8, err = -ENOMEM;
	size_t i;

	if (!f || !buf)
		goto fail;
	f->system = strdup(system);
	f->name = strdup(name);
	f->print_fmt = print_fmt ? strdup(print_fmt) : NULL;
	f->id = evs->next_id;
	if (!f->system || !f->name)
		goto fail;
	for (i = 0; i < 4; i++) {
		struct kagg_rb_field c = common_fields[i];

		c.type = strdup(c.type);
		c.name = strdup(c.name);
		if (!c.type || !c.name || add_field(f, &c))
			goto fail;
	}
	f->nr_common = 4;
	err = -EINVAL;
	for (decl = strtok_r(buf, ";", &save); decl; decl = strtok_r(NULL, ";", &save)) {
		struct kagg_rb_field fl = { 0 };
		const struct ctype *ct = NULL;
		char *t;
		int align;

		if (!*trim(decl))
			continue;
		if (parse_decl(&fl, decl))
			goto fail;
		t = fl.type;
		if (fl.kind == KAGG_RB_FIELD_DATA_LOC || fl.kind == KAGG_RB_FIELD_REL_LOC) {
			fl.size = 4;
			fl.is_signed = false;
			align = 4;
		} else {
			for (i = 0; i < sizeof(ctypes) / sizeof(ctypes[0]); i++)
				if (!strcmp(ctypes[i].name, t))
					ct = &ctypes[i];
			if (!ct) {
				free(fl.type);
				free(fl.name);
				goto fail;
			}
			if ((int64_t)ct->size * fl.array_len > RB_FMT_MAX_BYTES) {
				free(fl.type);
				free(fl.name);
				goto fail;
			}
			fl.size = ct->size * (fl.kind == KAGG_RB_FIELD_ARRAY ? fl.array_len : 1);
			fl.is_signed = ct->is_signed;
			if (fl.kind == KAGG_RB_FIELD_ARRAY && !strcmp(t, "char"))
				fl.is_signed = false; /* as the kernel prints char arrays */
			align = ct->size;
		}
		off = (off + align - 1) & ~(align - 1);
		fl.offset = off;
		if (!field_ok(&fl)) {
			free(fl.type);
			free(fl.name);
			goto fail;
		}
		off += fl.size;
		err = add_field(f, &fl);
		if (err) {
			free(fl.type);
			free(fl.name);
			goto fail;
		}
		err = -EINVAL;
	}
	err = rb_events_add(evs, f);
fail:
	return rb_fmt_done(f, buf, err, out);
}

#define SCHED_STATES                                                                      \
	"(0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | " \
	"0x00000020 | 0x00000040)"

#define SCHED_WAKEUP_FIELDS "char comm[16]; pid_t pid; int prio; int target_cpu"
#define SCHED_WAKEUP_FMT                                                               \
	"\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, " \
	"REC->target_cpu"

int kagg_rb_events__define_sched(struct kagg_rb_events *evs)
{
	int err;

	err = kagg_rb_events__define(
		evs, "sched", "sched_switch",
		"char prev_comm[16]; pid_t prev_pid; int prev_prio; long prev_state; "
		"char next_comm[16]; pid_t next_pid; int next_prio",
		"\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
		"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
		"(REC->prev_state & (((" SCHED_STATES " + 1) << 1) - 1)) ? "
		"__print_flags(REC->prev_state & (((" SCHED_STATES " + 1) << 1) - 1), \"|\", "
		"{ 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, "
		"{ 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, "
		"{ 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", "
		"REC->prev_state & ((" SCHED_STATES " + 1) << 1) ? \"+\" : \"\", "
		"REC->next_comm, REC->next_pid, REC->next_prio",
		NULL);
	if (err)
		return err;
	err = kagg_rb_events__define(evs, "sched", "sched_wakeup", SCHED_WAKEUP_FIELDS,
				     SCHED_WAKEUP_FMT, NULL);
	if (err)
		return err;
	return kagg_rb_events__define(evs, "sched", "sched_wakeup_new", SCHED_WAKEUP_FIELDS,
				      SCHED_WAKEUP_FMT, NULL);
}

void kagg_rb_format__fprint(const struct kagg_rb_format *fmt, FILE *f)
{
	size_t i;

	fprintf(f, "name: %s\nID: %d\nformat:\n", fmt->name, fmt->id);
	for (i = 0; i < fmt->nr_fields; i++) {
		const struct kagg_rb_field *fl = &fmt->fields[i];

		if (i == fmt->nr_common && i)
			fputc('\n', f);
		if (fl->kind == KAGG_RB_FIELD_ARRAY)
			fprintf(f, "\tfield:%s %s[%d];", fl->type, fl->name, fl->array_len);
		else
			fprintf(f, "\tfield:%s %s;", fl->type, fl->name);
		fprintf(f, "\toffset:%d;\tsize:%d;\tsigned:%d;\n", fl->offset, fl->size,
			fl->is_signed);
	}
	fprintf(f, "\nprint fmt: %s\n", fmt->print_fmt ? fmt->print_fmt : "\"\"");
}

void kagg_rb__fprint_header_page(size_t subbuf_size, FILE *f)
{
	fprintf(f,
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:%zu;\tsigned:0;\n",
		subbuf_size - 16);
}

void kagg_rb__fprint_header_event(FILE *f)
{
	fprintf(f, "# compressed entry header\n"
		   "\ttype_len    :    5 bits\n"
		   "\ttime_delta  :   27 bits\n"
		   "\tarray       :   32 bits\n\n"
		   "\tpadding     : type == 29\n"
		   "\ttime_extend : type == 30\n"
		   "\ttime_stamp : type == 31\n"
		   "\tdata max type_len  == 28\n");
}
