// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Library lookup without a shell (see ldcache.h).  glibc's ld.so.cache,
 * read from its documented layout (the comment in glibc's dl-cache.h):
 *
 *   ["ld.so-1.7.0" u32 nlibs, nlibs x {i32 flags, u32 key, u32 value}, pad to 8]
 *   "glibc-ld.so.cache" "1.1" u32 nlibs u32 len_strings u8 flags u8 pad[3]
 *   u32 extension_offset u32 unused[3]                          (48 bytes)
 *   nlibs x {i32 flags, u32 key, u32 value, u32 osversion, u64 hwcap} (24 each)
 *   strings: key (soname) and value (path), NUL-terminated
 *
 * The new table's string offsets count from its magic.  Integers are in the
 * byte order of the machine that wrote it; `flags` says which (0 unknown,
 * 2 little, 3 big) and a file of the other order is refused.  The file is
 * untrusted input as far as this code goes: every offset is checked
 * against its size and every string must end inside it.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syms/ldcache.h"

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HDR 16 /* magic[11], pad, u32 nlibs */
#define OLD_ENTRY 12
#define NEW_HDR 48
#define NEW_ENTRY 24
#define MAX_CACHE (64u << 20)

#define FLAG_REQUIRED_MASK 0xff00
#if defined(__x86_64__)
#define FLAG_NATIVE 0x0300 /* FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
#define FLAG_NATIVE 0x0a00 /* FLAG_AARCH64_LIB64 */
#else
#define FLAG_NATIVE -1 /* no preference */
#endif

/* Debian's multiarch library directories of this architecture (/lib/<triplet>). */
#if defined(__x86_64__)
#define MULTIARCH_DIRS "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
#define MULTIARCH_DIRS "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#else
#define MULTIARCH_DIRS
#endif

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define ENDIAN_HOST 2
#else
#define ENDIAN_HOST 3
#endif

bool lib_name_matches(const char *base, const char *lib)
{
	size_t l = strlen(lib);

	if (!strcmp(base, lib))
		return true;
	if (!strncmp(base, "lib", 3) && !strncmp(base + 3, lib, l) &&
	    (!strncmp(base + 3 + l, ".so", 3) || base[3 + l] == '-'))
		return true;
	return !strncmp(lib, "lib", 3) && !strncmp(base, lib, l) &&
	       (!strncmp(base + l, ".so", 3) || base[l] == '-');
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The string at offset off of the table at base, or NULL when it does not end in the file. */
static const char *cache_str(const uint8_t *buf, size_t len, size_t base, uint32_t off)
{
	if (off >= len - base)
		return NULL;
	if (!memchr(buf + base + off, 0, len - base - off))
		return NULL;
	return (const char *)buf + base + off;
}

/* Where the new table starts: 0, after the old table, or (size_t)-1 when there is none. */
static size_t new_table(const uint8_t *buf, size_t len)
{
	size_t n, off;

	if (len >= NEW_HDR && !memcmp(buf, NEW_MAGIC, sizeof(NEW_MAGIC) - 1))
		return 0;
	if (len < OLD_HDR || memcmp(buf, OLD_MAGIC, sizeof(OLD_MAGIC) - 1))
		return (size_t)-1;
	n = get_u32(buf + 12);
	if (n > (len - OLD_HDR) / OLD_ENTRY)
		return (size_t)-1;
	off = (OLD_HDR + n * OLD_ENTRY + 7) & ~(size_t)7;
	if (off > len || len - off < NEW_HDR || memcmp(buf + off, NEW_MAGIC, sizeof(NEW_MAGIC) - 1))
		return (size_t)-1;
	return off;
}

/* The entry for lib in the cache image buf: 0, -ENOENT or -EINVAL. */
static int cache_lookup(const uint8_t *buf, size_t len, const char *lib, char *out, size_t out_sz)
{
	const char *best = NULL;
	size_t base = new_table(buf, len), nlibs, i;
	uint8_t endian;

	if (base == (size_t)-1)
		return -EINVAL;
	nlibs = get_u32(buf + base + 20);
	endian = buf[base + 28] & 3;
	if (endian != 0 && endian != ENDIAN_HOST)
		return -EINVAL;
	if (nlibs > (len - base - NEW_HDR) / NEW_ENTRY)
		return -EINVAL;
	for (i = 0; i < nlibs; i++) {
		const uint8_t *e = buf + base + NEW_HDR + i * NEW_ENTRY;
		const char *key = cache_str(buf, len, base, get_u32(e + 4));
		const char *path = cache_str(buf, len, base, get_u32(e + 8));
		int32_t flags = (int32_t)get_u32(e);

		if (!key || !path || path[0] != '/' || strlen(path) >= out_sz ||
		    !lib_name_matches(key, lib))
			continue;
		if (!best)
			best = path;
		if ((flags & FLAG_REQUIRED_MASK) == FLAG_NATIVE) {
			best = path;
			break;
		}
	}
	if (!best)
		return -ENOENT;
	strcpy(out, best);
	return 0;
}

int ldcache_find(const char *cache_path, const char *lib, char *out, size_t out_sz)
{
	uint8_t *buf = NULL;
	struct stat st;
	size_t len, got = 0;
	ssize_t n;
	int fd, err;

	if (!cache_path || !lib || !*lib || !out || !out_sz)
		return -EINVAL;
	fd = open(cache_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	if ((uint64_t)st.st_size > MAX_CACHE) {
		err = -EFBIG;
		goto cleanup;
	}
	len = (size_t)st.st_size;
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (got < len && (n = read(fd, buf + got, len - got)) > 0)
		got += (size_t)n;
	/* a file that shrank while read is read as far as it goes */
	err = cache_lookup(buf, got, lib, out, out_sz);
cleanup:
	free(buf);
	close(fd);
	return err;
}

int ldcache_find_system(const char *lib, char *out, size_t out_sz)
{
	static const char *const dirs[] = { MULTIARCH_DIRS "/lib64", "/usr/lib64", "/lib",
					    "/usr/lib", "/usr/local/lib" };
	static const char *const suffixes[] = { ".so", ".so.6" };
	char path[4096];
	size_t i, j;

	if (!ldcache_find(LDCACHE_PATH, lib, out, out_sz))
		return 0;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		for (j = 0; j < sizeof(suffixes) / sizeof(suffixes[0]); j++) {
			int n = snprintf(path, sizeof(path), "%s/lib%s%s", dirs[i], lib,
					 suffixes[j]);

			if (n < 0 || (size_t)n >= sizeof(path) || (size_t)n >= out_sz ||
			    access(path, R_OK))
				continue;
			strcpy(out, path);
			return 0;
		}
	}
	return -ENOENT;
}
