// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Records to `trace` text: field values, the event's print fmt and the
 * line prefix the kernel's `trace` file prints.
 *
 * The print fmt interpreter evaluates the argument list with a small
 * recursive-descent evaluator over the record (C integer operators, ?:,
 * string literals, REC->field, REC->array[N], __get_str, __print_flags,
 * __print_symbolic)
 * and applies the printf conversions itself.  Anything it does not know
 * makes it give up for that record, and the caller prints "field=value"
 * pairs instead: it never prints a guess.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/opts.h"
#include "ftrace/rb_events_internal.h"
#include "util/text.h"

/* --------------------------------------------------------------- values */

int64_t kagg_rb_field__int(const struct kagg_rb_field *f, const void *rec)
{
	const uint8_t *p = (const uint8_t *)rec + f->offset;

	/* never more than f->size bytes (the first 8 of a larger opaque field) */
	switch (f->size) {
	case 1:
		return f->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
	case 2: {
		uint16_t v;

		memcpy(&v, p, 2);
		return f->is_signed ? (int64_t)(int16_t)v : (int64_t)v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, p, 4);
		return f->is_signed ? (int64_t)(int32_t)v : (int64_t)v;
	}
	default: {
		uint64_t v = 0;

		if (f->size <= 0)
			return 0;
		memcpy(&v, p, f->size < 8 ? (size_t)f->size : 8); /* little-endian */
		return (int64_t)v;
	}
	}
}

/* Does [off, off + size) lie inside a record of rlen bytes?  (64-bit: no int overflow.) */
static bool in_rec(int64_t off, int64_t size, uint32_t rlen)
{
	return off >= 0 && size >= 0 && off + size <= (int64_t)rlen;
}

/* A string field's bytes (not NUL-terminated past *n). */
static const char *field_str(const struct kagg_rb_field *f, const uint8_t *rec, uint32_t rlen,
			     size_t *n)
{
	uint32_t v, off, len;

	if (f->kind == KAGG_RB_FIELD_ARRAY) {
		if (!in_rec(f->offset, f->size, rlen))
			return NULL;
		*n = strnlen((const char *)rec + f->offset, (size_t)f->size);
		return (const char *)rec + f->offset;
	}
	if (f->kind != KAGG_RB_FIELD_DATA_LOC && f->kind != KAGG_RB_FIELD_REL_LOC)
		return NULL;
	if (!in_rec(f->offset, 4, rlen))
		return NULL;
	memcpy(&v, rec + f->offset, 4);
	off = v & 0xffff;
	len = v >> 16;
	if (f->kind == KAGG_RB_FIELD_REL_LOC)
		off += (uint32_t)f->offset + 4; /* < rlen + 2^16: no wrap */
	if (!in_rec(off, len, rlen))
		return NULL;
	*n = strnlen((const char *)rec + off, len);
	return (const char *)rec + off;
}

/* --------------------------------------------------------------- print fmt */

struct out {
	char *buf;
	size_t sz, len;
};

static void out_add(struct out *o, const char *s, size_t n)
{
	size_t room = o->sz > o->len ? o->sz - o->len - 1 : 0;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

static void out_printf(struct out *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_add(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

struct val {
	bool is_str;
	int64_t i;
	char s[256];
};

/*
 * Nesting the interpreter follows before it gives up: each level of
 * parentheses costs two (expr and unary), each unary operator or cast one.
 * The kernel's print fmts nest 13 parentheses deep at most (depth ~30); each
 * level of parentheses takes ~4.4 KiB of stack (x86_64, -O2), so 48 stay
 * within ~120 KiB.
 */
#define RB_PF_MAX_DEPTH 48
/* Largest printf width or precision interpreted (the output field holds 300 bytes). */
#define RB_PF_MAX_WIDTH 256

struct ev_ctx {
	const struct kagg_rb_format *fmt;
	const uint8_t *rec;
	uint32_t rlen;
	const char *p; /* parse position */
	bool bad;
	int depth; /* expr() and unary() frames open */
};

static void skip_ws(struct ev_ctx *c)
{
	while (isspace((unsigned char)*c->p))
		c->p++;
}

static bool accept(struct ev_ctx *c, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(c);
	if (strncmp(c->p, tok, n))
		return false;
	/* don't take "<" from "<<", "|" from "||", "&" from "&&" etc. */
	if (n == 1 && strchr("<>|&=!", tok[0]) && (c->p[1] == tok[0] || c->p[1] == '=') &&
	    !(tok[0] == '!' && c->p[1] == tok[0]))
		return false;
	c->p += n;
	return true;
}

static void expr(struct ev_ctx *c, struct val *v);

static bool parse_strlit(struct ev_ctx *c, struct val *v)
{
	size_t n = 0;

	skip_ws(c);
	if (*c->p != '"')
		return false;
	c->p++;
	while (*c->p && *c->p != '"') {
		char ch = *c->p++;

		if (ch == '\\' && *c->p) {
			ch = *c->p++;
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
		}
		if (n + 1 < sizeof(v->s))
			v->s[n++] = ch;
	}
	if (*c->p != '"') {
		c->bad = true;
		return true;
	}
	c->p++;
	v->s[n] = 0;
	v->is_str = true;
	return true;
}

static const struct kagg_rb_field *ident_field(struct ev_ctx *c)
{
	const char *s;
	char name[128];
	size_t n;
	const struct kagg_rb_field *f;

	skip_ws(c);
	s = c->p;
	while (isalnum((unsigned char)*c->p) || *c->p == '_')
		c->p++;
	n = (size_t)(c->p - s);
	if (!n || n >= sizeof(name)) {
		c->bad = true;
		return NULL;
	}
	memcpy(name, s, n);
	name[n] = 0;
	f = kagg_rb_format__field(c->fmt, name);
	if (!f)
		c->bad = true;
	return f;
}

static void field_val(struct ev_ctx *c, const struct kagg_rb_field *f, struct val *v)
{
	size_t n;
	const char *s;

	if (!f)
		return;
	if (f->is_string) {
		s = field_str(f, c->rec, c->rlen, &n);
		if (!s) {
			c->bad = true;
			return;
		}
		if (n >= sizeof(v->s))
			n = sizeof(v->s) - 1;
		memcpy(v->s, s, n);
		v->s[n] = 0;
		v->is_str = true;
		return;
	}
	if (f->kind != KAGG_RB_FIELD_PLAIN || !in_rec(f->offset, f->size, c->rlen) ||
	    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)) {
		c->bad = true; /* not an integer (uuid_t, a struct): no guess */
		return;
	}
	v->i = kagg_rb_field__int(f, c->rec);
}

/* __print_flags(val, "delim", {v, "s"}, ...) / __print_symbolic(val, {v, "s"}, ...) */
static void print_table(struct ev_ctx *c, struct val *v, bool flags)
{
	struct val x = { 0 }, d = { 0 };
	uint64_t rest;
	size_t n = 0;
	bool found = false;

	expr(c, &x);
	if (!accept(c, ",")) {
		c->bad = true;
		return;
	}
	if (flags && (!parse_strlit(c, &d) || !accept(c, ","))) {
		c->bad = true;
		return;
	}
	rest = (uint64_t)x.i;
	v->s[0] = 0;
	for (;;) {
		struct val k = { 0 }, s = { 0 };

		if (!accept(c, "{")) {
			c->bad = true;
			return;
		}
		expr(c, &k);
		if (!accept(c, ",") || !parse_strlit(c, &s) || !accept(c, "}")) {
			c->bad = true;
			return;
		}
		if (flags ? (k.i && (rest & (uint64_t)k.i) == (uint64_t)k.i)
			  : (!found && (uint64_t)k.i == (uint64_t)x.i)) {
			n += (size_t)snprintf(v->s + n, sizeof(v->s) - n, "%s%s",
					      n && flags ? d.s : "", s.s);
			if (n >= sizeof(v->s))
				n = sizeof(v->s) - 1;
			rest &= ~(uint64_t)k.i;
			found = true;
		}
		if (!accept(c, ","))
			break;
	}
	if (!accept(c, ")")) {
		c->bad = true;
		return;
	}
	if (flags && rest && x.i)
		snprintf(v->s + n, sizeof(v->s) - n, "%.8s0x%" PRIx64, n ? d.s : "", rest);
	else if (!flags && !found)
		snprintf(v->s, sizeof(v->s), "0x%" PRIx64, (uint64_t)x.i);
	v->is_str = true;
}

static bool is_type_word(const char *p)
{
	static const char *const w[] = { "unsigned", "signed", "int",  "long",	"char",
					 "short",    "u8",     "u16",  "u32",	"u64",
					 "s8",	     "s16",    "s32",  "s64",	"bool",
					 "size_t",   "pid_t",  "void", "const", NULL };
	int i;

	for (i = 0; w[i]; i++) {
		size_t n = strlen(w[i]);

		if (!strncmp(p, w[i], n) && !isalnum((unsigned char)p[n]) && p[n] != '_')
			return true;
	}
	return false;
}

static void unary(struct ev_ctx *c, struct val *v);

static void primary(struct ev_ctx *c, struct val *v)
{
	skip_ws(c);
	if (c->bad)
		return;
	if (parse_strlit(c, v))
		return;
	if (isdigit((unsigned char)*c->p)) {
		char *end;

		v->i = (int64_t)strtoull(c->p, &end, 0);
		c->p = end;
		while (*c->p == 'U' || *c->p == 'L' || *c->p == 'u' || *c->p == 'l')
			c->p++;
		return;
	}
	if (*c->p == '(') {
		const char *q = c->p + 1;

		while (isspace((unsigned char)*q))
			q++;
		if (is_type_word(q)) { /* a cast: skip it */
			const char *e = strchr(q, ')');
			int size = 0;

			if (!e) {
				c->bad = true;
				return;
			}
			if (!strncmp(q, "u8", 2) || !strncmp(q, "unsigned char", 13))
				size = 1;
			else if (!strncmp(q, "u16", 3) || !strncmp(q, "unsigned short", 14))
				size = 2;
			else if (!strncmp(q, "u32", 3) || !strncmp(q, "unsigned int", 12))
				size = 4;
			c->p = e + 1;
			unary(c, v);
			if (!v->is_str && size)
				v->i = (int64_t)((uint64_t)v->i & ((1ULL << (size * 8)) - 1));
			return;
		}
		c->p++;
		expr(c, v);
		if (!accept(c, ")"))
			c->bad = true;
		return;
	}
	if (!strncmp(c->p, "REC->", 5)) {
		const struct kagg_rb_field *f;

		c->p += 5;
		f = ident_field(c);
		skip_ws(c);
		if (f && *c->p == '[') { /* REC->args[N]: one element of an integer array */
			struct val ix = { 0 };
			struct kagg_rb_field el;

			c->p++;
			expr(c, &ix);
			if (!accept(c, "]") || f->kind != KAGG_RB_FIELD_ARRAY ||
			    f->array_len <= 0 || ix.is_str || ix.i < 0 || ix.i >= f->array_len) {
				c->bad = true;
				return;
			}
			el = *f;
			el.kind = KAGG_RB_FIELD_PLAIN;
			el.is_string = false;
			el.size = f->size / f->array_len;
			if (f->size % f->array_len ||
			    (el.size != 1 && el.size != 2 && el.size != 4 && el.size != 8)) {
				c->bad = true; /* not an array of integers */
				return;
			}
			/* ix < array_len, so this stays inside the field */
			el.offset = f->offset + (int)ix.i * el.size;
			field_val(c, &el, v);
			return;
		}
		field_val(c, f, v);
		return;
	}
	if (!strncmp(c->p, "__get_str(", 10)) {
		c->p += 10;
		field_val(c, ident_field(c), v);
		if (!accept(c, ")"))
			c->bad = true;
		return;
	}
	if (!strncmp(c->p, "__print_flags(", 14)) {
		c->p += 14;
		print_table(c, v, true);
		return;
	}
	if (!strncmp(c->p, "__print_symbolic(", 17)) {
		c->p += 17;
		print_table(c, v, false);
		return;
	}
	c->bad = true;
}

static void unary(struct ev_ctx *c, struct val *v)
{
	if (c->bad || ++c->depth > RB_PF_MAX_DEPTH) {
		c->bad = true;
		return;
	}
	if (accept(c, "-")) {
		unary(c, v);
		v->i = (int64_t)(0 - (uint64_t)v->i);
	} else if (accept(c, "~")) {
		unary(c, v);
		v->i = ~v->i;
	} else if (accept(c, "!")) {
		unary(c, v);
		v->i = v->is_str ? 0 : !v->i;
		v->is_str = false;
	} else {
		primary(c, v);
	}
	c->depth--;
}

/* binary operators by precedence level, lowest first */
static const char *const ops[][4] = {
	{ "||" },
	{ "&&" },
	{ "|" },
	{ "^" },
	{ "&" },
	{ "==", "!=" },
	{ "<=", ">=", "<", ">" },
	{ "<<", ">>" },
	{ "+", "-" },
	{ "*", "/", "%" },
};
#define NLEVELS ((int)(sizeof(ops) / sizeof(ops[0])))

/* C's operators on int64_t, with +, -, * and / wrapping as two's complement instead of overflowing.
 */
static int64_t apply(const char *op, int64_t a, int64_t b, bool *bad)
{
	switch (op[0]) {
	case '|':
		return op[1] ? (a || b) : (a | b);
	case '&':
		return op[1] ? (a && b) : (a & b);
	case '^':
		return a ^ b;
	case '=':
		return a == b;
	case '!':
		return a != b;
	case '<':
		return op[1] == '='   ? a <= b
		       : op[1] == '<' ? (int64_t)((uint64_t)a << (b & 63))
				      : a < b;
	case '>':
		return op[1] == '='   ? a >= b
		       : op[1] == '>' ? (int64_t)((uint64_t)a >> (b & 63))
				      : a > b;
	case '+':
		return (int64_t)((uint64_t)a + (uint64_t)b);
	case '-':
		return (int64_t)((uint64_t)a - (uint64_t)b);
	case '*':
		return (int64_t)((uint64_t)a * (uint64_t)b);
	case '/':
	case '%':
		if (!b) {
			*bad = true;
			return 0;
		}
		if (b == -1) /* INT64_MIN / -1 overflows (and traps on x86) */
			return op[0] == '/' ? (int64_t)(0 - (uint64_t)a) : 0;
		return op[0] == '/' ? a / b : a % b;
	}
	*bad = true;
	return 0;
}

static void binary(struct ev_ctx *c, struct val *v, int lvl)
{
	if (lvl == NLEVELS) {
		unary(c, v);
		return;
	}
	binary(c, v, lvl + 1);
	for (;;) {
		const char *op = NULL;
		struct val r = { 0 };
		int i;

		if (c->bad)
			return;
		for (i = 0; i < 4 && ops[lvl][i]; i++)
			if (accept(c, ops[lvl][i])) {
				op = ops[lvl][i];
				break;
			}
		if (!op)
			return;
		binary(c, &r, lvl + 1);
		if (v->is_str || r.is_str) {
			c->bad = true;
			return;
		}
		v->i = apply(op, v->i, r.i, &c->bad);
	}
}

static void expr(struct ev_ctx *c, struct val *v)
{
	struct val a = { 0 }, b = { 0 };

	memset(v, 0, sizeof(*v));
	if (c->bad || ++c->depth > RB_PF_MAX_DEPTH) {
		c->bad = true;
		return;
	}
	binary(c, v, 0);
	if (c->bad || !accept(c, "?"))
		goto out;
	expr(c, &a);
	if (!accept(c, ":")) {
		c->bad = true;
		goto out;
	}
	expr(c, &b);
	*v = (v->is_str ? v->s[0] != 0 : v->i != 0) ? a : b;
out:
	c->depth--;
}

/* Apply printf conversions of fmt to the args at c->p. */
static bool run_print_fmt(struct ev_ctx *c, const char *fmt, size_t flen, struct out *o)
{
	size_t i = 0;

	while (i < flen) {
		char spec[32], conv, buf[300];
		size_t sn = 0;
		struct val v;
		int lmod = 0, num = 0;

		if (fmt[i] != '%') {
			size_t j = i;

			while (j < flen && fmt[j] != '%')
				j++;
			out_add(o, fmt + i, j - i);
			i = j;
			continue;
		}
		if (i + 1 < flen && fmt[i + 1] == '%') {
			out_add(o, "%", 1);
			i += 2;
			continue;
		}
		spec[sn++] = fmt[i++];
		while (i < flen && fmt[i] && strchr("-+ #0123456789.", fmt[i]) && sn < 20) {
			/* width and precision: a larger one would only pad the truncated field */
			num = isdigit((unsigned char)fmt[i]) ? num * 10 + (fmt[i] - '0') : 0;
			if (num > RB_PF_MAX_WIDTH)
				return false;
			spec[sn++] = fmt[i++];
		}
		while (i < flen && fmt[i] && strchr("hlzjt", fmt[i])) {
			if (fmt[i] == 'l' || fmt[i] == 'z' || fmt[i] == 'j' || fmt[i] == 't')
				lmod++;
			i++;
		}
		if (i >= flen)
			return false;
		conv = fmt[i++];
		if (!accept(c, ","))
			return false;
		expr(c, &v);
		if (c->bad)
			return false;
		switch (conv) {
		case 's':
			if (!v.is_str)
				return false;
			spec[sn++] = 's';
			spec[sn] = 0;
			snprintf(buf, sizeof(buf), spec, v.s);
			break;
		case 'd':
		case 'i':
			if (v.is_str)
				return false;
			memcpy(spec + sn, "lld", 4);
			snprintf(buf, sizeof(buf), spec,
				 lmod ? (long long)v.i : (long long)(int)v.i);
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			if (v.is_str)
				return false;
			spec[sn++] = 'l';
			spec[sn++] = 'l';
			spec[sn++] = conv;
			spec[sn] = 0;
			snprintf(buf, sizeof(buf), spec,
				 lmod ? (unsigned long long)v.i
				      : (unsigned long long)(uint32_t)v.i);
			break;
		case 'c':
			if (v.is_str)
				return false;
			spec[sn++] = 'c';
			spec[sn] = 0;
			snprintf(buf, sizeof(buf), spec, (int)v.i);
			break;
		case 'p':
			if (v.is_str)
				return false;
			while (i < flen && isalnum((unsigned char)fmt[i]))
				i++; /* %pS, %pI4...: no symbolization, print the value */
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v.i);
			break;
		default:
			return false;
		}
		out_add(o, buf, strlen(buf));
	}
	skip_ws(c);
	return *c->p == 0;
}

static void print_fields(const struct kagg_rb_format *fmt, const uint8_t *rec, uint32_t rlen,
			 struct out *o)
{
	size_t i;

	for (i = fmt->nr_common; i < fmt->nr_fields; i++) {
		const struct kagg_rb_field *f = &fmt->fields[i];
		size_t n;
		const char *s;

		if (i > fmt->nr_common)
			out_add(o, " ", 1);
		out_printf(o, "%s=", f->name);
		if (f->is_string) {
			s = field_str(f, rec, rlen, &n);
			if (s)
				out_add(o, s, n);
			continue;
		}
		if (!in_rec(f->offset, f->size, rlen))
			continue;
		if (f->kind == KAGG_RB_FIELD_PLAIN && f->size <= 8) {
			int64_t v = kagg_rb_field__int(f, rec);

			if (f->is_signed)
				out_printf(o, "%lld", (long long)v);
			else
				out_printf(o, "%llu", (unsigned long long)v);
		} else {
			int k;

			out_add(o, "ARRAY[", 6);
			for (k = 0; k < f->size && k < 64; k++)
				out_printf(o, "%s%02x", k ? ", " : "", rec[f->offset + k]);
			out_add(o, "]", 1);
		}
	}
}

int kagg_rb_events__format_info(const struct kagg_rb_events *evs, const struct kagg_rb_format *fmt,
				const void *rec, uint32_t len, char *buf, size_t buf_sz)
{
	struct out o = { buf, buf_sz, 0 };
	struct ev_ctx c = { fmt, rec, len, NULL, false, 0 };

	if (!buf_sz)
		return 0;
	buf[0] = 0;
	if (fmt->print_fmt && fmt->print_fmt[0] == '"') {
		const char *e = fmt->print_fmt + 1;

		while (*e && *e != '"')
			e += (*e == '\\' && e[1]) ? 2 : 1;
		if (*e == '"') {
			/* the format string with escapes resolved */
			char f[1024];
			size_t n = 0;
			const char *p;

			for (p = fmt->print_fmt + 1; p < e && n + 1 < sizeof(f); p++) {
				if (*p == '\\' && p + 1 < e) {
					p++;
					f[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
				} else {
					f[n++] = *p;
				}
			}
			c.p = e + 1;
			if (run_print_fmt(&c, f, n, &o))
				return (int)o.len;
		}
	}
	o.len = 0;
	buf[0] = 0;
	print_fields(fmt, rec, len, &o);
	return (int)o.len;
}

/*
 * The reschedule column of the latency flags, from TRACE_FLAG_NEED_RESCHED
 * (0x04), _NEED_RESCHED_LAZY (0x02) and _PREEMPT_RESCHED (0x20). In the old
 * layout (old_flags) 0x02 is IRQS_NOSUPPORT, shown in column 0, not here.
 */
static char resched_flag(uint8_t flags, bool old_flags)
{
	/* index: bit 0 NEED_RESCHED, bit 1 LAZY, bit 2 PREEMPT_RESCHED */
	static const char col[8] = { '.', 'n', 'l', 'b', 'p', 'N', 'L', 'B' };
	unsigned int i = (flags >> 2 & 1) | (flags >> 1 & 1) << 1 | (flags >> 5 & 1) << 2;

	if (old_flags)
		i &= ~2u;
	return col[i];
}

int kagg_rb_events__fprint_event(const struct kagg_rb_events *evs, FILE *f,
				 const struct kagg_rb_event *ev, kagg_rb_comm_fn comm,
				 void *comm_ctx)
{
	const uint8_t *r;
	const struct kagg_rb_format *fmt;
	struct text_esc e = {};
	const char *name = NULL;
	char info[4096], fl[6];
	uint16_t type;
	uint8_t flags, pc;
	int32_t pid;
	uint64_t us;
	bool nmi, hard, soft, bh, irqoff;

	if (!sz_in_valid(ev, FT_EVENT_MIN_SZ, sizeof(*ev)) || ev->len < 8)
		return -EINVAL;
	r = ev->data;
	memcpy(&type, r, 2);
	flags = r[2];
	pc = r[3];
	memcpy(&pid, r + 4, 4);
	if (pid == 0)
		name = "<idle>";
	else if (comm)
		name = comm(comm_ctx, pid);
	if (!name)
		name = "<...>";
	irqoff = flags & 0x01;
	bh = flags & 0x80;
	nmi = flags & 0x40;
	hard = flags & 0x08;
	soft = flags & 0x10;
	fl[0] = irqoff && bh			     ? 'D'
		: irqoff			     ? 'd'
		: bh				     ? 'b'
		: (evs->old_flags && (flags & 0x02)) ? 'X'
						     : '.';
	fl[1] = resched_flag(flags, evs->old_flags);
	fl[2] = nmi && hard ? 'Z' : nmi ? 'z' : hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
	if (evs->flag_cols == 4) {
		/* before the migrate-disable column: the whole count, "%x" */
		if (pc)
			snprintf(fl + 3, 3, "%x", pc);
		else
			strcpy(fl + 3, ".");
	} else {
		fl[3] = (pc & 0xf) ? "0123456789abcdef"[pc & 0xf] : '.';
		fl[4] = (pc >> 4) ? "0123456789abcdef"[pc >> 4] : '.';
		fl[5] = 0;
	}
	us = (ev->ts + 500) / 1000;
	/* comms and strings come from the record or a file: escaped (text.h) */
	fprintf(f, "%16s-%-7d [%03d] %s %5llu.%06llu: ", text_esc(&e, name, SIZE_MAX), pid, ev->cpu,
		fl, (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000));
	text_esc_free(&e);
	fmt = kagg_rb_events__find(evs, type);
	if (!fmt) {
		fprintf(f, "<unknown event id %u>\n", type);
		return -ENOENT;
	}
	kagg_rb_events__format_info(evs, fmt, r, ev->len, info, sizeof(info));
	text_fputs(f, fmt->name);
	fputs(": ", f);
	text_fputs(f, info);
	fputc('\n', f);
	return 0;
}
