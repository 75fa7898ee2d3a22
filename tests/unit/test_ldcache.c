// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ld.so.cache lookup (user/syms/ldcache.c), unprivileged: crafted caches in both
 * layouts (new table alone, and after the old one), this machine's ABI
 * preferred, and every malformed cache refused or skipped without reading
 * outside the file; then the system's cache against `ldconfig -p`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syms/ldcache.h"
#include "unit_util.h"

#if defined(__aarch64__)
#define NATIVE 0x0a03 /* FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64 */
#else
#define NATIVE 0x0303 /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
#endif
#define FOREIGN 0x0003 /* FLAG_ELF_LIBC6, no 64-bit ABI: an i386 library */

struct ent {
	int32_t flags;
	const char *key, *path;
};

struct img {
	uint8_t b[8192];
	size_t len;
	size_t new_off; /* where the new table starts */
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* A cache holding e[0..n): with old, an old table of one entry comes first. */
static void build(struct img *m, const struct ent *e, size_t n, bool old)
{
	size_t base = 0, str, i;

	memset(m, 0, sizeof(*m));
	if (old) {
		memcpy(m->b, "ld.so-1.7.0", 11);
		put32(m->b + 12, 1);
		put32(m->b + 16, 1); /* one old entry, never looked at */
		base = (16 + 12 + 7) & ~(size_t)7;
	}
	m->new_off = base;
	memcpy(m->b + base, "glibc-ld.so.cache1.1", 20);
	put32(m->b + base + 20, (uint32_t)n);
	m->b[base + 28] = 2; /* little-endian */
	str = 48 + n * 24;
	for (i = 0; i < n; i++) {
		uint8_t *p = m->b + base + 48 + i * 24;
		size_t kl = strlen(e[i].key) + 1, pl = strlen(e[i].path) + 1;

		put32(p, (uint32_t)e[i].flags);
		put32(p + 4, (uint32_t)str);
		memcpy(m->b + base + str, e[i].key, kl);
		str += kl;
		put32(p + 8, (uint32_t)str);
		memcpy(m->b + base + str, e[i].path, pl);
		str += pl;
	}
	put32(m->b + base + 24, (uint32_t)(str - 48 - n * 24));
	m->len = base + str;
}

static char cache_path[] = "/tmp/kagg-test-ldcache-XXXXXX";

static void save(const void *buf, size_t len)
{
	FILE *f = fopen(cache_path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* ldcache_find on the saved cache: the return, and the path on success. */
static int find(const char *lib, char *out, size_t sz)
{
	out[0] = 0;
	return ldcache_find(cache_path, lib, out, sz);
}

static const struct ent libs[] = {
	{ FOREIGN, "libfoo.so.1", "/usr/lib32/libfoo.so.1" },
	{ NATIVE, "libfoo.so.1", "/usr/lib/native/libfoo.so.1" },
	{ FOREIGN, "libonly32.so.2", "/usr/lib32/libonly32.so.2" },
	{ NATIVE, "libc.so.6", "/usr/lib/native/libc.so.6" },
};

static void lookups(bool old)
{
	struct img m;
	char out[PATH_MAX];

	build(&m, libs, 4, old);
	save(m.b, m.len);
	/* this machine's ABI first, wherever it is listed */
	assert_int_equal(find("foo", out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/lib/native/libfoo.so.1");
	assert_int_equal(find("libfoo", out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/lib/native/libfoo.so.1");
	assert_int_equal(find("libfoo.so.1", out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/lib/native/libfoo.so.1");
	/* another ABI when it is all there is */
	assert_int_equal(find("only32", out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/lib32/libonly32.so.2");
	assert_int_equal(find("c", out, sizeof(out)), 0);
	assert_string_equal(out, "/usr/lib/native/libc.so.6");
	assert_int_equal(find("fo", out, sizeof(out)), -ENOENT);
	assert_int_equal(find("nosuch", out, sizeof(out)), -ENOENT);
	/* a path that does not fit out is not cut */
	assert_int_equal(find("c", out, 10), -ENOENT);
}

static void test_new_table(void **state)
{
	lookups(false);
}

static void test_old_then_new_table(void **state)
{
	lookups(true);
}

/* Every cut of a valid cache: refused or answered from what is whole, never past the end. */
static void test_truncated(void **state)
{
	struct img m;
	char out[PATH_MAX];
	size_t cut;

	build(&m, libs, 4, true);
	for (cut = 0; cut < m.len; cut++) {
		int r;

		save(m.b, cut);
		r = find("foo", out, sizeof(out));
		if (r == 0 && strcmp(out, "/usr/lib/native/libfoo.so.1") &&
		    strcmp(out, "/usr/lib32/libfoo.so.1"))
			fail_msg("cut at %zu: '%s'", cut, out);
		if (r && r != -EINVAL && r != -ENOENT)
			fail_msg("cut at %zu: %d", cut, r);
		/* the table itself cut: refused */
		if (cut < m.new_off + 48 + 4 * 24)
			assert_int_equal(r, -EINVAL);
	}
}

static void test_malformed(void **state)
{
	static const struct ent rel[] = { { NATIVE, "libfoo.so.1", "libfoo.so.1" } };
	struct img m;
	char out[PATH_MAX];

	/* not a cache */
	save("hello, not a cache at all, just some text here........................", 70);
	assert_int_equal(find("foo", out, sizeof(out)), -EINVAL);
	save("", 0);
	assert_int_equal(find("foo", out, sizeof(out)), -EINVAL);
	/* a count of entries the file cannot hold */
	build(&m, libs, 4, false);
	put32(m.b + 20, 0xffffffffu);
	save(m.b, m.len);
	assert_int_equal(find("foo", out, sizeof(out)), -EINVAL);
	/* the old table's count likewise */
	build(&m, libs, 4, true);
	put32(m.b + 12, 0x7fffffffu);
	save(m.b, m.len);
	assert_int_equal(find("foo", out, sizeof(out)), -EINVAL);
	/* the other byte order */
	build(&m, libs, 4, false);
	m.b[28] = 3;
	save(m.b, m.len);
	assert_int_equal(find("foo", out, sizeof(out)), -EINVAL);
	/* string offsets past the end: those entries are skipped */
	build(&m, libs, 4, false);
	put32(m.b + 48 + 1 * 24 + 4, 0xfffffff0u);     /* native libfoo's key */
	put32(m.b + 48 + 0 * 24 + 8, (uint32_t)m.len); /* foreign libfoo's path */
	save(m.b, m.len);
	assert_int_equal(find("foo", out, sizeof(out)), -ENOENT);
	assert_int_equal(find("c", out, sizeof(out)), 0);
	/* the last string without its NUL */
	build(&m, libs, 4, false);
	save(m.b, m.len - 1);
	assert_int_equal(find("c", out, sizeof(out)), -ENOENT);
	assert_int_equal(find("foo", out, sizeof(out)), 0);
	/* a relative path is never an answer */
	build(&m, rel, 1, false);
	save(m.b, m.len);
	assert_int_equal(find("foo", out, sizeof(out)), -ENOENT);
	/* not a file */
	assert_int_equal(ldcache_find("/tmp", "foo", out, sizeof(out)), -EINVAL);
	assert_int_equal(ldcache_find("/nonexistent/ld.so.cache", "foo", out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(ldcache_find(cache_path, "", out, sizeof(out)), -EINVAL);
}

/* The system's cache says what `ldconfig -p` says about libc (when both are there). */
static void test_system_cache_agrees_with_ldconfig(void **state)
{
	char line[PATH_MAX + 256], want[PATH_MAX] = "", out[PATH_MAX];
	FILE *f;

	if (access(LDCACHE_PATH, R_OK)) {
		printf("SKIP: no %s\n", LDCACHE_PATH);
		return;
	}
	f = popen("PATH=/usr/sbin:/sbin:/usr/bin:/bin ldconfig -p 2>/dev/null", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *arrow = strstr(line, "=> ");
		bool native = strstr(line, "x86-64") || strstr(line, "AArch64");

		if (!arrow || strncmp(line, "\tlibc.so.6 ", 11) || (want[0] && !native))
			continue;
		arrow[strcspn(arrow, "\n")] = 0;
		snprintf(want, sizeof(want), "%s", arrow + 3);
		if (native)
			break;
	}
	if (f)
		pclose(f);
	if (!want[0]) {
		printf("SKIP: ldconfig -p lists no libc.so.6\n");
		return;
	}
	assert_int_equal(ldcache_find(LDCACHE_PATH, "c", out, sizeof(out)), 0);
	printf("  libc: %s (ldconfig -p: %s)\n", out, want);
	assert_string_equal(out, want);
	assert_int_equal(ldcache_find_system("c", out, sizeof(out)), 0);
	assert_string_equal(out, want);
}

static int setup(void **state)
{
	int fd = mkstemp(cache_path);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(cache_path);
	return 0;
}

UU_MAIN_GROUP(setup, teardown, cmocka_unit_test(test_new_table),
	      cmocka_unit_test(test_old_then_new_table), cmocka_unit_test(test_truncated),
	      cmocka_unit_test(test_malformed),
	      cmocka_unit_test(test_system_cache_agrees_with_ldconfig))
