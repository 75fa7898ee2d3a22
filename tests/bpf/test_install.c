// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * `make install` into a scratch DESTDIR, as a packager would, and use what
 * was installed the way an embedding program does: build each example with
 * `cc $(pkg-config --cflags --libs kagg)` against the installed headers and
 * library only (PKG_CONFIG_SYSROOT_DIR points pkg-config at the scratch
 * tree), run them (they attach for real: root), render the man page, build
 * a BPF program with the installed SDK headers from a directory of its own
 * (clang and pkg-config, no kagg source) and run it with the installed kagg,
 * then `make uninstall` and check nothing is left.
 *
 * Runs from the repository root (tests/run.sh does); $KAGG_SRCDIR overrides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "testutil.h"

static char root[64] = "/tmp/kagg-install-XXXXXX";
static const char *src = ".";

/* Run a shell command, output (stdout + stderr) into *out when non-NULL; its exit status. */
static int sh(char **out, const char *fmt, ...)
{
	char cmd[4096], *buf;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	buf = tu_read_all(fileno(p));
	st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Environment for pkg-config against the scratch tree (system .pc files still found). */
#define PKGENV "PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_PATH=%s/usr/lib/pkgconfig "

static int group_setup(void **state)
{
	char *out = NULL;
	int rc;

	if (getenv("KAGG_SRCDIR"))
		src = getenv("KAGG_SRCDIR");
	if (!mkdtemp(root))
		return -1;
	/* A make started from this test must not talk to the outer make's jobserver. */
	unsetenv("MAKEFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("MFLAGS");
	rc = sh(&out, "make -C %s --no-print-directory install DESTDIR=%s PREFIX=/usr", src, root);
	printf("  make install DESTDIR=%s PREFIX=/usr: exit %d\n", root, rc);
	if (rc)
		printf("%s\n", out ? out : "");
	free(out);
	return rc ? -1 : 0;
}

static int group_teardown(void **state)
{
	sh(NULL, "rm -rf %s", root);
	return 0;
}

static bool exists(const char *rel, mode_t type)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	if (lstat(path, &st)) {
		printf("  missing: %s\n", rel);
		return false;
	}
	if ((st.st_mode & S_IFMT) != type) {
		printf("  wrong type: %s\n", rel);
		return false;
	}
	return true;
}

static void test_installed_tree(void **state)
{
	static const char *const files[] = {
		"/usr/lib/libkagg.so.0.2.0",
		"/usr/lib/libkagg.a",
		"/usr/lib/pkgconfig/kagg.pc",
		"/usr/include/kagg/kagg.h",
		"/usr/include/kagg/session.h",
		"/usr/include/kagg/common.h",
		"/usr/include/kagg/bpf/kagg.bpf.h",
		"/usr/include/kagg/bpf/kagg_sdk.h",
		"/usr/include/kagg/bpf/bucket_math.h",
		"/usr/include/kagg/bpf/vmlinux.h",
		"/usr/bin/kagg",
		"/usr/share/man/man1/kagg.1",
		"/usr/share/bash-completion/completions/kagg",
		"/usr/lib/systemd/system/kagg-serve.service",
	};
	static const char *const links[] = { "/usr/lib/libkagg.so.0", "/usr/lib/libkagg.so" };
	char link[256], path[512], *out = NULL;
	ssize_t n;
	size_t i;

	for (i = 0; i < TU_NR(files); i++)
		assert_true(exists(files[i], S_IFREG));
	for (i = 0; i < TU_NR(links); i++)
		assert_true(exists(links[i], S_IFLNK));

	/* Relative symlinks: dev link -> soname -> real file. */
	snprintf(path, sizeof(path), "%s/usr/lib/libkagg.so", root);
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "libkagg.so.0");
	snprintf(path, sizeof(path), "%s/usr/lib/libkagg.so.0", root);
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "libkagg.so.0.2.0");

	/* The soname, and only kagg_* exported. */
	assert_int_equal(sh(&out, "readelf -d %s/usr/lib/libkagg.so.0.2.0 | grep SONAME", root), 0);
	assert_non_null(strstr(out, "[libkagg.so.0]"));
	free(out);
	assert_int_equal(sh(&out,
			    "nm -D --defined-only %s/usr/lib/libkagg.so.0.2.0 | "
			    "awk '$2 != \"A\" && $3 !~ /^kagg_/'",
			    root),
			 0);
	assert_string_equal(out, "");
	free(out);

	/* pkg-config sees the scratch tree and the private requirements. */
	assert_int_equal(sh(&out, PKGENV "pkg-config --modversion kagg", root, root), 0);
	assert_string_equal(out, "0.2.0\n");
	free(out);
	assert_int_equal(sh(&out, PKGENV "pkg-config --cflags --libs kagg", root, root), 0);
	printf("  pkg-config --cflags --libs kagg: %s", out);
	assert_non_null(strstr(out, root));
	assert_non_null(strstr(out, "-lkagg"));
	assert_null(strstr(out, "-lbpf")); /* shared: libbpf is private */
	free(out);
	assert_int_equal(sh(&out, PKGENV "pkg-config --static --libs kagg", root, root), 0);
	TU_ASSERT_HAS(out, "-lbpf", "-lelf", "-lz");
	free(out);
}

/* Build examples/NAME.c against the installed tree; the binary in the scratch dir. */
static void build_example(const char *name)
{
	char *out = NULL;
	int rc;

	rc = sh(&out,
		PKGENV "cc -Wall -Wextra -Werror -o %s/%s %s/examples/%s.c "
		       "$(" PKGENV "pkg-config --cflags --libs kagg)",
		root, root, root, name, src, name, root, root);
	if (rc)
		printf("%s\n", out);
	assert_int_equal(rc, 0);
	free(out);
	/* It links the installed library, not build/lib's. */
	rc = sh(&out, "LD_LIBRARY_PATH=%s/usr/lib ldd %s/%s | grep libkagg", root, root, name);
	assert_int_equal(rc, 0);
	printf("  %s: %s", name, out);
	assert_non_null(strstr(out, root));
	free(out);
}

static void test_examples_build(void **state)
{
	build_example("offcpu_hist");
	build_example("stream_callback");
}

/* Example name's output when run with arg against the installed library (built if missing). */
static char *run_example(const char *name, const char *arg)
{
	char *out = NULL;
	int rc;

	if (sh(NULL, "test -x %s/%s", root, name))
		build_example(name);
	rc = sh(&out, "LD_LIBRARY_PATH=%s/usr/lib %s/%s %s", root, root, name, arg);
	if (rc)
		printf("%s\n", out);
	assert_int_equal(rc, 0);
	return out;
}

static void test_offcpu_hist_runs(void **state)
{
	char *out, *p;
	int headers = 0;

	TU_SKIP_UNLESS_ROOT();
	out = run_example("offcpu_hist", "2");
	/* One snapshot per second: two meta headers, two histograms. */
	for (p = out; (p = strstr(p, "# kagg offcpu: sched:sched_switch")); p++)
		headers++;
	printf("  offcpu_hist 2: %d snapshots, %d lines\n", headers, tu_lines(out));
	assert_int_equal(headers, 2);
	assert_non_null(strstr(out, "usecs               : count    distribution"));
	assert_non_null(strstr(out, "filters: none"));
	free(out);
}

static void test_stream_callback_runs(void **state)
{
	unsigned long long total = 0, seen = 0, delivered = 0, dropped = ~0ULL;
	char *out, *p;

	TU_SKIP_UNLESS_ROOT();
	out = run_example("stream_callback", "1");
	assert_non_null(strstr(out, "CPU        records\n"));
	p = strstr(out, "callback total ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "callback total %llu", &total), 1);
	p = strstr(out, "meta: mode stream, ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "meta: mode stream, seen %llu, delivered %llu, dropped %llu",
				&seen, &delivered, &dropped),
			 3);
	printf("  stream_callback 1: %llu records in the callback; seen %llu delivered %llu "
	       "dropped %llu\n",
	       total, seen, delivered, dropped);
	assert_true(total > 0); /* a second of a live system has context switches */
	assert_true(total == delivered);
	assert_true(seen == delivered + dropped);
	free(out);
}

/*
 * A tool written with the installed <kagg/bpf/kagg.bpf.h>: readsize.bpf.c alone in a
 * directory outside the repository, built with clang and `pkg-config --cflags kagg`, run
 * by the installed kagg while `head` reads 4096 bytes of /dev/zero in one read.
 */
static void test_sdk_out_of_tree(void **state)
{
	char dir[] = "/tmp/kagg-sdk-XXXXXX", *out = NULL;
	int rc;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(mkdtemp(dir));
	rc = sh(&out,
		"cp %s/examples/bpf/readsize.bpf.c %s/ && cd %s && " PKGENV
		"clang -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86 "
		"$(" PKGENV "pkg-config --cflags kagg) -c readsize.bpf.c -o readsize.bpf.o",
		src, dir, dir, root, root, root, root);
	if (rc)
		printf("%s\n", out);
	assert_int_equal(rc, 0);
	free(out);
	/* attached once the banner is out; then one read of 4096 bytes by `head`, then stop */
	rc = sh(&out,
		"d=%s; LD_LIBRARY_PATH=%s/usr/lib %s/usr/bin/kagg run $d/readsize.bpf.o "
		"--set comm=head -d 60 >$d/out 2>$d/err & k=$!; "
		"for i in $(seq 300); do grep -q Hit $d/err && break; sleep 0.1; done; "
		"head -c 4096 /dev/zero >/dev/null; kill -INT $k; wait $k; r=$?; "
		"cat $d/out $d/err; exit $r",
		dir, root, root);
	printf("%s", out);
	assert_int_equal(rc, 0);
	/* head's read of /dev/zero, and those of the loader (libc's ELF header...) */
	TU_ASSERT_HAS(out, "Hit Ctrl-C", "bytes: comm=head", "4096 -> 8191");
	free(out);
	assert_int_equal(sh(NULL, "rm -rf %s", dir), 0);
}

/* libkagg.a with the private requirements from `pkg-config --static`: no libkagg.so needed. */
static void test_static_link(void **state)
{
	char *out = NULL;
	int rc;

	rc = sh(&out,
		PKGENV "cc -o %s/offcpu_hist_static %s/examples/offcpu_hist.c "
		       "$(" PKGENV "pkg-config --static --cflags --libs kagg | "
		       "sed 's/-lkagg/-l:libkagg.a/')",
		root, root, root, src, root, root);
	if (rc)
		printf("%s\n", out);
	assert_int_equal(rc, 0);
	free(out);
	assert_int_equal(sh(&out, "ldd %s/offcpu_hist_static | grep -c libkagg", root), 1);
	assert_string_equal(out, "0\n");
	free(out);
	if (geteuid() != 0) {
		printf("SKIP running it: needs root\n");
		skip();
	}
	rc = sh(&out, "CLI_EXIT_AFTER_ATTACH=1 %s/offcpu_hist_static", root);
	assert_int_equal(rc, 0);
	assert_true(!strncmp(out, "attached ", 9));
	free(out);
}

static void test_man_page_renders(void **state)
{
	char *out = NULL;

	/* groff with all warnings: nothing on stderr, the sections there. */
	assert_int_equal(sh(&out, "groff -man -Tutf8 -ww -z %s/usr/share/man/man1/kagg.1", root),
			 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(
		sh(&out, "MANWIDTH=80 MANPAGER=cat man -l %s/usr/share/man/man1/kagg.1", root), 0);
	TU_ASSERT_HAS(out, "SYNOPSIS", "EXIT STATUS", "EXAMPLES", "kagg offcpu 5");
	free(out);
}

/* The installed bash completion, with the installed kagg: commands, options, values. */
static void test_bash_completion(void **state)
{
#define COMPLETE                                                          \
	"bash -c 'PATH=%s/usr/bin:$PATH; "                                \
	". %s/usr/share/bash-completion/completions/kagg; "               \
	"COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _kagg; " \
	"echo \"${COMPREPLY[*]}\"'"
	static const struct {
		const char *words, *want;
	} cases[] = {
		{ "kagg run", "run runqlat\n" },
		{ "kagg help sys", "syscount\n" },
		{ "kagg runqlat --qu", "--quiet\n" },
		{ "kagg offcpu --format \"\"", "text json ndjson svg html heatmap pprof\n" },
		{ "kagg syscount --format \"\"", "text json ndjson\n" },
		{ "kagg stat -", "--all-cpus --cpu --duration --event --field-separator --format "
				 "--help --interval-print --output --pid --repeat --verbose -I -a "
				 "-d -e -h -o -p -r -v -x\n" },
	};
	size_t i;

	if (sh(NULL, "command -v bash >/dev/null")) {
		printf("  no bash\n");
		skip();
	}
	for (i = 0; i < TU_NR(cases); i++) {
		char *out = NULL;

		assert_int_equal(sh(&out, COMPLETE, root, root, cases[i].words), 0);
		if (strcmp(out, cases[i].want))
			printf("  %s: '%s'\n", cases[i].words, out);
		assert_string_equal(out, cases[i].want);
		free(out);
	}
#undef COMPLETE
}

/* Last: uninstall leaves no file behind (directories may stay). */
static void test_uninstall_removes_everything(void **state)
{
	char *out = NULL;

	sh(NULL, "rm -f %s/offcpu_hist %s/stream_callback %s/offcpu_hist_static", root, root, root);
	assert_int_equal(sh(NULL,
			    "make -C %s --no-print-directory uninstall DESTDIR=%s PREFIX=/usr", src,
			    root),
			 0);
	assert_int_equal(sh(&out, "find %s ! -type d", root), 0);
	if (*out)
		printf("  left behind:\n%s", out);
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_installed_tree),
		cmocka_unit_test(test_examples_build),
		cmocka_unit_test(test_offcpu_hist_runs),
		cmocka_unit_test(test_stream_callback_runs),
		cmocka_unit_test(test_sdk_out_of_tree),
		cmocka_unit_test(test_static_link),
		cmocka_unit_test(test_man_page_renders),
		cmocka_unit_test(test_bash_completion),
		cmocka_unit_test(test_uninstall_removes_everything),
	};

	return cmocka_run_group_tests_name("install", tests, group_setup, group_teardown);
}
