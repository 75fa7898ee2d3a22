// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Symbol sources, against ground truth: build/tests/helpers/libsymsrc.so has two static
 * functions that only its .symtab names.  Each test strips a copy of it (binutils), puts the
 * symbols back in one other place, dlopen()s the copy and looks up the functions' addresses
 * (which the library's one export hands out):
 *   - MiniDebugInfo: a symbols-only ELF, xz-compressed, in .gnu_debugdata;
 *   - a debug file found by .gnu_debuglink next to the library;
 *   - a debuginfod server (Debian's debuginfod, started here on 127.0.0.1 over a directory of
 *     objcopy --only-keep-debug files), then the same server gone (errors counted, fast),
 *     then a server that accepts and never answers (given up after the per-file timeout);
 *   - a JIT's perf map for code in anonymous memory, and one owned by someone else refused.
 * Each lookup states where its name came from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syms/syms.h"
#include "syms/debuginfo.h"
#include "testutil.h"

static char tmpdir[] = "/tmp/kagg-symsrc-XXXXXX";
static char lib[512];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* dlopen path, and the addresses of its hidden functions. */
static void *open_copy(const char *path, void **leaf, void **mid)
{
	void (*addrs)(void **, void **);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		fail_msg("dlopen %s: %s", path, dlerror());
	addrs = (void (*)(void **, void **))dlsym(h, "symsrc_addrs");
	assert_non_null(addrs);
	addrs(leaf, mid);
	return h;
}

/* Both hidden functions named from src through a fresh symbolizer. */
static void expect_named(const char *path, int src)
{
	struct syms *s = syms__new();
	void *leaf, *mid, *h = open_copy(path, &leaf, &mid);
	struct sym out;

	assert_non_null(s);
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)leaf + 1, &out), 0);
	assert_string_equal(out.name, "symsrc_hidden_leaf");
	assert_int_equal(out.offset, 1);
	assert_int_equal(out.src, src);
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)mid, &out), 0);
	assert_string_equal(out.name, "symsrc_hidden_mid");
	assert_int_equal(out.src, src);
	/* the export is in .dynsym as well: the stripped copy names it from there */
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)dlsym(h, "symsrc_addrs"), &out), 0);
	assert_string_equal(out.name, "symsrc_addrs");
	syms__free(s);
	dlclose(h);
}

static int group_setup(void **state)
{
	char helpers[512];

	if (!mkdtemp(tmpdir))
		return -1;
	tu_helper("libsymsrc.so", helpers, sizeof(helpers));
	if (!realpath(helpers, lib))
		return -1;
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

/* The original, as built: its own .symtab. */
static void test_symtab(void **state)
{
	expect_named(lib, SYM_SRC_SYMTAB);
}

/* Stripped, nothing else: the hidden functions are unknown, the file named. */
static void test_stripped_unknown(void **state)
{
	struct syms *s = syms__new();
	char path[600];
	void *leaf, *mid, *h;
	struct sym out;

	snprintf(path, sizeof(path), "%s/libbare.so", tmpdir);
	tu_sh_ok("strip --strip-all -o %s %s", path, lib);
	h = open_copy(path, &leaf, &mid);
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)leaf, &out), -ENOENT);
	assert_null(out.name);
	assert_string_equal(out.module, path);
	assert_int_equal(out.src, SYM_SRC_NONE);
	assert_int_equal(out.dbg_why, 0); /* debuginfod not in use */
	syms__free(s);
	dlclose(h);
}

/* Fedora's MiniDebugInfo: the function symbols, xz-compressed into .gnu_debugdata. */
static void test_minidebuginfo(void **state)
{
	char path[600], d[600];

	snprintf(path, sizeof(path), "%s/libmini.so", tmpdir);
	snprintf(d, sizeof(d), "%s/mini", tmpdir);
	/* as Fedora builds it: the function symbols of the debug file only, compressed */
	tu_sh_ok("objcopy --only-keep-debug %s %s.full && "
		 "nm %s.full --format=posix --defined-only | awk '$2 ~ /[Tt]/ {print $1}' > "
		 "%s.funcs && "
		 "objcopy -S --remove-section .gdb_index --remove-section .comment "
		 "--keep-symbols=%s.funcs %s.full %s.debug && "
		 "xz -f %s.debug && strip --strip-all -o %s %s && "
		 "objcopy --add-section .gnu_debugdata=%s.debug.xz %s",
		 lib, d, d, d, d, d, d, d, path, lib, d, path);
	expect_named(path, SYM_SRC_MINIDEBUG);
}

/* A debug file next to the library, named by .gnu_debuglink (its CRC checked). */
static void test_debuglink(void **state)
{
	char path[600], dbg[600], bad[600];
	struct syms *s;
	void *leaf, *mid, *h;
	struct sym out;

	snprintf(path, sizeof(path), "%s/liblink.so", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/liblink.so.dbg", tmpdir);
	tu_sh_ok("objcopy --only-keep-debug %s %s && strip --strip-all -o %s %s && "
		 "cd %s && objcopy --add-gnu-debuglink=liblink.so.dbg liblink.so",
		 lib, dbg, path, lib, tmpdir);
	expect_named(path, SYM_SRC_DEBUGFILE);

	/* a debug file of the right name whose CRC differs (a byte appended): not taken */
	snprintf(bad, sizeof(bad), "%s/liblink2.so", tmpdir);
	tu_sh_ok("objcopy --only-keep-debug %s %s.dbg && strip --strip-all -o %s %s && "
		 "cd %s && objcopy --add-gnu-debuglink=liblink2.so.dbg liblink2.so && "
		 "printf x >> liblink2.so.dbg",
		 lib, bad, bad, lib, tmpdir);
	s = syms__new();
	h = open_copy(bad, &leaf, &mid);
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)leaf, &out), -ENOENT);
	assert_null(out.name);
	syms__free(s);
	dlclose(h);
}

/* Does the server at port answer 200 for the debug file of build id hex yet? */
static bool served(int port, const char *hex)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char req[256], resp[32] = "";
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok = false;
	ssize_t n;

	if (fd < 0)
		return false;
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		n = snprintf(req, sizeof(req), "GET /buildid/%s/debuginfo HTTP/1.0\r\n\r\n", hex);
		if (write(fd, req, n) == n && (n = read(fd, resp, sizeof(resp) - 1)) > 0) {
			resp[n] = '\0';
			ok = !strncmp(resp, "HTTP/1.1 200", 12) ||
			     !strncmp(resp, "HTTP/1.0 200", 12);
		}
	}
	close(fd);
	return ok;
}

/*
 * debuginfod: a stripped copy with no local debug file, its debug file served by a real
 * server; then the server gone; then one that never answers.
 */
static void test_debuginfod(void **state)
{
	char path[600], srv[600], cache[600], url[64], hex[130], log[600];
	struct sym out;
	struct syms *s;
	void *leaf, *mid, *h;
	int port = tu_free_port(), i, lfd, rc;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct dbg_stats st;
	pid_t pid;
	double t0;

	if (system("command -v debuginfod >/dev/null")) {
		print_message("skip: debuginfod not installed\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/libdi.so", tmpdir);
	snprintf(srv, sizeof(srv), "%s/srv", tmpdir);
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	snprintf(log, sizeof(log), "%s/debuginfod.log", tmpdir);
	tu_sh_ok("mkdir -p %s %s && objcopy --only-keep-debug %s %s/libdi.debug && "
		 "strip --strip-all -o %s %s",
		 srv, cache, lib, srv, path, lib);
	assert_int_equal(syms_elf_build_id(path, hex, sizeof(hex)), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char p[16], db[640];

		snprintf(p, sizeof(p), "%d", port);
		snprintf(db, sizeof(db), "%s/db.sqlite", tmpdir);
		freopen(log, "w", stderr);
		execlp("debuginfod", "debuginfod", "-p", p, "-d", db, "-F", "-t", "1", srv,
		       (char *)NULL);
		_exit(127);
	}
	/* ready when it serves the file: it scans the directory once started */
	t0 = now_s();
	while (!served(port, hex) && now_s() - t0 < 60)
		usleep(100000);
	assert_true(served(port, hex));

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("KAGG_DEBUGINFOD_TIMEOUT", "2", 1);
	expect_named(path, SYM_SRC_DEBUGINFOD);

	/* the server gone, the cache emptied: unknown, counted, and quick */
	kill(pid, SIGTERM);
	waitpid(pid, &rc, 0);
	tu_sh_ok("rm -rf %s && mkdir -p %s", cache, cache);
	s = syms__new();
	h = open_copy(path, &leaf, &mid);
	t0 = now_s();
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)leaf, &out), -ENOENT);
	assert_true(now_s() - t0 < 2.5);
	assert_int_equal(out.dbg_why, DBG_WHY_ERROR);
	syms__dbg_stats(s, &st);
	assert_int_equal(st.queries, 1);
	assert_int_equal(st.failed[DBG_WHY_ERROR], 1);
	syms__free(s);

	/* a server that takes the connection and never answers: given up after the timeout */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	a.sin_port = htons(port);
	i = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &i, sizeof(i));
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 16), 0);
	s = syms__new();
	t0 = now_s();
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)mid, &out), -ENOENT);
	print_message("debuginfod silent: gave up after %.2f s (timeout 2 s)\n", now_s() - t0);
	assert_true(now_s() - t0 < 2 + 1.5);
	assert_int_equal(out.dbg_why, DBG_WHY_TIMEOUT);
	syms__dbg_stats(s, &st);
	assert_int_equal(st.failed[DBG_WHY_TIMEOUT], 1);
	syms__free(s);
	close(lfd);
	dlclose(h);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("KAGG_DEBUGINFOD_TIMEOUT");
}

/* JIT code: anonymous executable memory named by /tmp/perf-PID.map. */
static void test_perf_map(void **state)
{
	struct syms *s = syms__new();
	char path[64];
	struct sym out;
	uint8_t *code;
	FILE *f;

	code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	assert_true(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%lx 100 jit::first\n", (unsigned long)(uintptr_t)code);
	fprintf(f, "%lx 80 LazyCompile:*second script.js:10\n",
		(unsigned long)(uintptr_t)(code + 0x100));
	fprintf(f, "garbage line\n");
	fclose(f);

	assert_int_equal(syms__user(s, getpid(), (uintptr_t)code + 0x10, &out), 0);
	assert_string_equal(out.name, "jit::first");
	assert_int_equal(out.offset, 0x10);
	assert_int_equal(out.src, SYM_SRC_PERFMAP);
	assert_null(out.module);
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)code + 0x17f, &out), 0);
	assert_string_equal(out.name, "LazyCompile:*second script.js:10");
	/* past the last entry: unknown, no module */
	assert_int_equal(syms__user(s, getpid(), (uintptr_t)code + 0x180, &out), -ENOENT);
	assert_null(out.module);
	syms__free(s);

	/* owned by someone else (root only can make one): refused */
	if (!geteuid()) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		s = syms__new();
		assert_int_equal(syms__user(s, getpid(), (uintptr_t)code + 0x10, &out), -ENOENT);
		syms__free(s);
	}
	unlink(path);
	munmap(code, 8192);
}

KT_MAIN_GROUP(group_setup, group_teardown, cmocka_unit_test(test_symtab),
	      cmocka_unit_test(test_stripped_unknown), cmocka_unit_test(test_minidebuginfo),
	      cmocka_unit_test(test_debuglink), cmocka_unit_test(test_debuginfod),
	      cmocka_unit_test(test_perf_map))
