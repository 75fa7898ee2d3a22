// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * perfmap.c - /tmp/perf-PID.map, the symbols of JIT code (perfmap.h).
 *
 * The whole file is read at once and parsed in place: each line's name is cut at its end
 * and points into the buffer, which the table keeps.  Lines that do not parse are skipped.
 * A JIT may write a new line for code at an address reused, so among overlapping entries
 * the later line wins (perf does the same).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syms/perfmap.h"
#include "util/array.h"

#define PMAP_MAX_BYTES (256 << 20)

struct pmap_line {
	struct pmap_sym s;
	size_t line; /* position in the file: later wins */
};

static int line_cmp(const void *a, const void *b)
{
	const struct pmap_line *x = a, *y = b;

	if (x->s.start != y->s.start)
		return x->s.start < y->s.start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

void pmap_free(struct pmap *m)
{
	free(m->syms);
	free(m->strs);
	memset(m, 0, sizeof(*m));
}

/* Parse buf (NUL-terminated, modified) into m. */
static int pmap_parse(struct pmap *m, char *buf)
{
	struct pmap_line *l = NULL;
	size_t n = 0, cap = 0, i, k;
	char *p, *end, *eol;
	unsigned long long start, size;
	int err = 0;

	for (p = buf; *p; p = eol) {
		eol = strchr(p, '\n');
		if (eol)
			*eol++ = '\0';
		else
			eol = p + strlen(p);
		start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || !size || start + size < start)
			continue;
		p = end + 1;
		if (!*p)
			continue;
		err = GROW_ARRAY(l, cap, n, 256);
		if (err)
			goto cleanup;
		l[n].s.start = start;
		l[n].s.end = start + size;
		l[n].s.name = p;
		l[n].line = n;
		n++;
	}
	if (n)
		qsort(l, n, sizeof(*l), line_cmp);
	m->syms = calloc(n ? n : 1, sizeof(*m->syms));
	if (!m->syms) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* keep, of entries starting at one address, the last line; cut earlier ones short */
	for (i = 0, k = 0; i < n; i++) {
		if (i + 1 < n && l[i + 1].s.start == l[i].s.start)
			continue;
		if (k && m->syms[k - 1].end > l[i].s.start)
			m->syms[k - 1].end = l[i].s.start;
		m->syms[k++] = l[i].s;
	}
	m->cnt = k;
cleanup:
	free(l);
	return err;
}

int pmap_load(struct pmap *m, const char *dir, int pid, unsigned int uid)
{
	char path[4096], *buf = NULL;
	struct stat st;
	ssize_t r;
	size_t len = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != uid)) {
		err = -EPERM;
		goto cleanup;
	}
	if (st.st_size > PMAP_MAX_BYTES) {
		err = -EFBIG;
		goto cleanup;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (len < (size_t)st.st_size) {
		r = read(fd, buf + len, st.st_size - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	pmap_free(m);
	err = pmap_parse(m, buf);
	if (err) {
		pmap_free(m);
		goto cleanup;
	}
	m->strs = buf;
	m->size = st.st_size;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

const struct pmap_sym *pmap_find(const struct pmap *m, uint64_t addr)
{
	size_t lo = ARRAY_UPPER(m->syms, m->cnt, start, addr);

	if (!lo || addr >= m->syms[lo - 1].end)
		return NULL;
	return &m->syms[lo - 1];
}
