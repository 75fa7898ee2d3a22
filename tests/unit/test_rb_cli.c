// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * `kagg rb` end to end: bench's JSON counters satisfy the identity, the raw
 * pages it leaves decode in kbuffer with its own format files through
 * libtraceevent, `decode` of the committed kernel pages prints exactly the
 * kernel's `trace` text, and usage errors exit 2 with one line.  Damaged
 * input (crafted pages and trace.dat files) prints what came before the
 * damage, then one line naming the file and the offset, and exits 1.
 *
 * Runs build/bin/kagg (or $KAGG); skips when it is not built.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event-parse.h>
#include <kbuffer.h>

#include "testutil.h"
#include "unit_util.h"

static const char *kagg(void)
{
	const char *k = getenv("KAGG");

	return k ? k : "build/bin/kagg";
}

static char *run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, n;
	char tmp[4096];
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(p);
	while ((n = fread(tmp, 1, sizeof(tmp), p)) > 0)
		fwrite(tmp, 1, n, out);
	*status = pclose(p);
	fclose(out);
	return buf;
}

static unsigned long long json_u64(const char *j, const char *key)
{
	const char *p = strstr(j, key);

	assert_non_null(p);
	p = strchr(p, ':'); /* "key": N */
	assert_non_null(p);
	return strtoull(p + 1, NULL, 10);
}

#define NEED_KAGG()                                               \
	do {                                                      \
		if (access(kagg(), X_OK)) {                       \
			printf("# skip: %s not built\n", kagg()); \
			skip();                                   \
		}                                                 \
	} while (0)

static void test_bench_json_identity_and_raw_pages_decode_in_kbuffer(void **s)
{
	char cmd[512], dir[] = "/tmp/kagg-rb-cli-XXXXXX", path[600], *out, *total, *hp, *fmt;
	struct tep_handle *tep = tep_alloc();
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	unsigned long long written, read, overrun, dropped, events = 0;
	int st, cpu, ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	size_t hl, fl;

	NEED_KAGG();
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "%s rb bench --writers 2 --payload 40 --seconds 0.3 "
		 "--raw-dir %s --format json",
		 kagg(), dir);
	out = run(cmd, &st);
	assert_int_equal(WEXITSTATUS(st), 0);
	total = strstr(out, "\"total\"");
	assert_non_null(total);
	written = json_u64(total, "\"written\"");
	read = json_u64(total, "\"read\"");
	overrun = json_u64(total, "\"overrun\"");
	dropped = json_u64(total, "\"dropped\"");
	assert_true(written > 1000);
	assert_int_equal(written, read + overrun + dropped); /* drained at the end */
	/* each CPU says how its writers changed the write state */
	assert_true(strstr(out, "\"write_path\": \"rseq\"") ||
#if defined(__aarch64__)
		    strstr(out, "\"write_path\": \"locked-casp\"") ||
		    strstr(out, "\"write_path\": \"locked-llsc\""));
#else
		    strstr(out, "\"write_path\": \"locked\""));
#endif

	snprintf(path, sizeof(path), "%s/header_page", dir);
	hp = tu_slurp(path, &hl);
	assert_non_null(hp);
	assert_int_equal(tep_parse_header_page(tep, hp, hl, 8), 0);
	snprintf(path, sizeof(path), "%s/kagg/bench/format", dir);
	fmt = tu_slurp(path, &fl);
	assert_non_null(fmt);
	assert_int_equal(tep_parse_event(tep, fmt, fl, "kagg"), 0);
	for (cpu = 0; cpu < ncpu; cpu++) {
		size_t len, off;
		char *raw;

		snprintf(path, sizeof(path), "%s/cpu%d.raw", dir, cpu);
		raw = tu_slurp(path, &len);
		assert_non_null(raw);
		assert_int_equal(len % 4096, 0);
		for (off = 0; off < len; off += 4096) {
			unsigned long long ts;
			void *d;

			assert_int_equal(kbuffer_load_subbuffer(kb, raw + off), 0);
			for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
				struct tep_record rec;

				uu_kb_event(tep, kb, d, ts, cpu, "bench", &rec);
				assert_int_equal(rec.size, 40);
				events++;
			}
		}
		free(raw);
	}
	assert_int_equal(events, read);
	snprintf(cmd, sizeof(cmd), "%s rb decode --events-dir %s %s/cpu*.raw | grep -vc LOST",
		 kagg(), dir, dir);
	free(out);
	out = run(cmd, &st);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(strtoull(out, NULL, 10), read);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(out);
	free(hp);
	free(fmt);
	kbuffer_free(kb);
	tep_free(tep);
}

static void test_decode_of_kernel_pages_prints_the_kernel_trace_text(void **s)
{
	char cmd[512], *out, *want;
	int st;

	NEED_KAGG();
	snprintf(cmd, sizeof(cmd),
		 "%s rb decode --events-dir tests/data/kernel-sched_switch "
		 "tests/data/kernel-sched_switch/cpu1.raw",
		 kagg());
	out = run(cmd, &st);
	assert_int_equal(WEXITSTATUS(st), 0);
	want = tu_slurp("tests/data/kernel-sched_switch/cpu1.trace", NULL);
	assert_non_null(want);
	assert_string_equal(out, want);
	free(out);
	free(want);
}

/* Event e (ID 7, 12-byte records: the common fields and int x). */
static const char fmt_e[] =
	"name: e\nID: 7\n" TU_FORMAT_COMMON "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"x=%d\", REC->x\n";

/* dir/NAME/format holds text. */
static void put_format(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s/format", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* An events dir with e as sys/e, to rm_rf(). */
static char *events_dir(void)
{
	char *dir = strdup("/tmp/kagg-rb-cli-XXXXXX"), path[600];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sys", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	put_format(path, "e", fmt_e);
	return dir;
}

static void test_decode_of_a_damaged_page_prints_what_came_before_and_the_offset(void **s)
{
	/* page 0: x=1, x=2; page 1: x=3, then a record whose length runs past the commit */
	uint32_t p0[] = { TU_RB_HDR(3, 10), 7, 0, 1, TU_RB_HDR(3, 10), 7, 0, 2 };
	uint32_t p1[] = { TU_RB_HDR(3, 10), 7, 0, 3, TU_RB_HDR(0, 1), 0xfffffffcu, 7, 0 };
	char *dir = events_dir(), *file = tu_tmp_path(), *out = NULL, *err = NULL, want[600];
	char *argv[] = { "rb", "decode", "--events-dir", dir, file, NULL }, *empty = tu_tmp_path();
	char *argv2[] = { "rb", "decode", "--events-dir", dir, NULL, NULL, NULL };
	FILE *f;

	NEED_KAGG();
	f = fopen(file, "w");
	tu_put_page(f, 100, p0, TU_NR(p0));
	tu_put_page(f, 200, p1, TU_NR(p1));
	fclose(f);
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 1);
	assert_non_null(strstr(out, "e: x=1\n"));
	assert_non_null(strstr(out, "e: x=2\n"));
	assert_non_null(strstr(out, "e: x=3\n"));
	assert_int_equal(tu_lines(out), 3);
	/* the bad record: page 1, after its header and the first 16-byte record */
	snprintf(want, sizeof(want), "kagg rb: %s: malformed record at offset %d\n", file,
		 TU_PAGE + KAGG_RB_PAGE_HDR + 16);
	assert_string_equal(err, want);
	free(out);
	free(err);

	/* a commit size larger than the page: the commit word of page 1 */
	f = fopen(file, "r+");
	fseek(f, TU_PAGE + 8, SEEK_SET);
	tu_put(f, TU_PAGE, 8);
	fclose(f);
	out = err = NULL;
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 1);
	assert_int_equal(tu_lines(out), 2);
	assert_non_null(strstr(out, "e: x=2\n"));
	snprintf(want, sizeof(want), "kagg rb: %s: malformed sub-buffer commit size at offset %d\n",
		 file, TU_PAGE + 8);
	assert_string_equal(err, want);
	free(out);
	free(err);

	/* an empty file beside it: a CPU that recorded nothing */
	out = err = NULL;
	argv2[4] = file;
	argv2[5] = empty;
	assert_int_equal(tu_run_kagg(argv2, &out, &err, 0, 0), 1);
	assert_int_equal(tu_lines(out), 2);
	assert_int_equal(tu_lines(err), 1);
	free(out);
	free(err);

	/* a file ending inside its second page */
	assert_int_equal(truncate(file, TU_PAGE + 100), 0);
	out = err = NULL;
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 1);
	assert_int_equal(tu_lines(out), 2);
	assert_non_null(
		strstr(err, ": malformed sub-buffer (the file ends inside it) at offset 4096"));
	assert_int_equal(tu_lines(err), 1);
	free(out);
	free(err);
	unlink(file);
	free(file);
	unlink(empty);
	free(empty);
	rm_rf(dir);
	free(dir);
}

static void test_decode_of_files_that_hold_no_page_fails_with_one_line(void **s)
{
	char *dir = events_dir(), *file = tu_tmp_path(), *big = events_dir(), hp[600];
	struct tu_error_case c[] = {
		{ 1,
		  "0 bytes, shorter than one 4096-byte sub-buffer",
		  { "rb", "decode", "--events-dir", dir, file } },
		{ 1, "cannot read", { "rb", "decode", "--events-dir", dir, dir } },
		{ 1,
		  "0 bytes, shorter than one 4096-byte sub-buffer",
		  { "rb", "decode", "--events-dir", dir, file, file } },
		{ 1, "cannot read", { "rb", "decode", "--events-dir", dir, "/nonexistent/f" } },
		{ 1, "sub-buffer size outside", { "rb", "decode", "--events-dir", big, file } },
	};
	FILE *f;

	NEED_KAGG();
	/* header_page announcing a sub-buffer of 2^64 - 1 bytes of data */
	snprintf(hp, sizeof(hp), "%s/header_page", big);
	f = fopen(hp, "w");
	fputs("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	      "\tfield: char data;\toffset:16;\tsize:18446744073709551615;\tsigned:0;\n",
	      f);
	fclose(f);
	tu_expect_errors(c, TU_NR(c));
	/* shorter than a page */
	assert_int_equal(truncate(file, 100), 0);
	c[0].needle = "100 bytes, shorter than one 4096-byte sub-buffer";
	tu_expect_errors(c, 1);
	/* a size that wraps to a small one once the header is added */
	f = fopen(hp, "w");
	fputs("\tfield: char data;\toffset:16;\tsize:18446744073709551608;\tsigned:0;\n", f);
	fclose(f);
	tu_expect_errors(&c[4], 1);
	unlink(file);
	free(file);
	rm_rf(dir);
	free(dir);
	rm_rf(big);
	free(big);
}

/* sched_switch with next_comm placed past the end of its 64-byte records */
static const char fmt_switch[] =
	"name: sched_switch\nID: 8\n" TU_FORMAT_COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:80;\tsize:16;\tsigned:0;\n\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";

static void test_decode_learns_no_comm_from_outside_the_record(void **s)
{
	char *dir = events_dir(), *file = tu_tmp_path(), *out = NULL, *err = NULL, path[600];
	char *argv[] = { "rb", "decode", "--events-dir", dir, file, NULL };
	uint32_t w[22] = { TU_RB_HDR(16, 10), 8, 1, 0x76657270 /* "prev" */ };
	uint8_t *p;
	FILE *f;

	NEED_KAGG();
	snprintf(path, sizeof(path), "%s/sched", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	put_format(path, "sched_switch", fmt_switch);
	w[7] = 5;		  /* prev_pid */
	w[8] = 42;		  /* next_pid */
	w[17] = TU_RB_HDR(3, 10); /* then e from pid 42 */
	w[18] = 7;
	w[19] = 42;
	w[20] = 1;
	p = tu_page_of(0, w, 21);
	/* just past the commit: where next_comm says it is, 80 bytes into the switch's data */
	memcpy(p + KAGG_RB_PAGE_HDR + 4 + 80, "stolen", 7);
	f = fopen(file, "w");
	fwrite(p, 1, TU_PAGE, f);
	fclose(f);
	free(p);
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 0);
	assert_null(strstr(out, "stolen"));
	assert_non_null(strstr(out, "<...>-42 "));
	assert_non_null(strstr(out, "prev_pid=5 next_pid=42\n"));
	free(out);
	free(err);
	unlink(file);
	free(file);
	rm_rf(dir);
	free(dir);
}

/* A trace.dat with e on two CPUs: cpu0 x=1,2,3 at 10,20,30; cpu1 x=100 at 15, then damage. */
static uint64_t damaged_tracedat(const char *path)
{
	char *fm[1] = { (char *)fmt_e };
	uint32_t c0[] = { TU_RB_HDR(3, 10), 7, 0, 1, TU_RB_HDR(3, 10), 7, 0, 2,
			  TU_RB_HDR(3, 10), 7, 0, 3 };
	uint32_t c1[] = { TU_RB_HDR(3, 15), 7, 0, 100, TU_RB_HDR(0, 1), 0xfffffffcu, 7, 0 };
	static const uint64_t sizes[2] = { TU_PAGE, TU_PAGE };
	uint64_t data;
	FILE *f = fopen(path, "w");

	tu_tracedat_header(f, fm, 1, "", 2);
	data = tu_tracedat_cpus(f, sizes, 2);
	tu_put_page(f, 0, c0, TU_NR(c0));
	tu_put_page(f, 0, c1, TU_NR(c1));
	fclose(f);
	return data + TU_PAGE; /* cpu1's page */
}

static void test_report_of_a_damaged_trace_dat_prints_what_came_before_and_the_offset(void **s)
{
	char *file = tu_tmp_path(), *out = NULL, *err = NULL, want[600];
	char *argv[] = { "report", file, NULL };
	uint64_t page1;
	FILE *f;

	NEED_KAGG();
	page1 = damaged_tracedat(file);
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 1);
	/* x=1 (10) and x=100 (15) came before the damage; x=2 (20) after it */
	assert_non_null(strstr(out, "e: x=1\n"));
	assert_non_null(strstr(out, "e: x=100\n"));
	assert_int_equal(tu_lines(out), 2);
	snprintf(want, sizeof(want), "kagg report: %s: malformed page or record at offset %llu\n",
		 file, (unsigned long long)(page1 + KAGG_RB_PAGE_HDR + 16));
	assert_string_equal(err, want);
	free(out);
	free(err);

	/* a header_page length beyond the end of the file: its length field */
	f = fopen(file, "w");
	tu_tracedat_magic(f);
	tu_put(f, 1ULL << 62, 8);
	fwrite("some text", 1, 9, f);
	fclose(f);
	out = err = NULL;
	assert_int_equal(tu_run_kagg(argv, &out, &err, 0, 0), 1);
	assert_string_equal(out ? out : "", "");
	snprintf(want, sizeof(want),
		 "kagg report: %s: not a valid trace.dat: malformed at offset 30\n", file);
	assert_string_equal(err, want);
	free(out);
	free(err);
	unlink(file);
	free(file);
}

static void test_usage_errors_exit_2_with_one_line(void **s)
{
	static const char *const bad[] = { "rb",
					   "rb frob",
					   "rb bench --writers 0",
					   "rb bench --mode both",
					   "rb bench --payload 4",
					   "rb bench --format xml",
					   "rb decode" };
	size_t i;

	NEED_KAGG();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char cmd[256], *out;
		int st;

		snprintf(cmd, sizeof(cmd), "%s %s 2>&1", kagg(), bad[i]);
		out = run(cmd, &st);
		assert_int_equal(WEXITSTATUS(st), 2);
		assert_non_null(strchr(out, '\n'));
		assert_int_equal(strchr(out, '\n')[1], 0); /* one line */
		free(out);
	}
}

/*
 * A 10 GiB sparse file (tmpfs where there is one: holes read fast there) with one event in
 * its first page and one in its last decodes whole in bounded memory: under ulimit -v 300000
 * (300 MB of address space), both events printed, nothing else.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RB_CLI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RB_CLI_ASAN 1
#endif
#endif

static void test_decode_of_10_gib_in_bounded_memory(void **s)
{
	uint32_t w1[] = { TU_RB_HDR(3, 10), 7, 0, 1 }, w2[] = { TU_RB_HDR(3, 10), 7, 0, 2 };
	char *dir, path[64], cmd[1024], *out;
	const uint64_t size = 10ull << 30;
	uint8_t *p;
	int fd, st;

#ifdef RB_CLI_ASAN
	/* the sanitized kagg's shadow memory alone is more address space than the limit */
	printf("  skip: ASan cannot run under ulimit -v (the plain build runs this test)\n");
	skip();
#endif
	NEED_KAGG();
	dir = events_dir();
	snprintf(path, sizeof(path), "%s/kagg-rb-big-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	p = tu_page_of(100, w1, TU_NR(w1));
	assert_int_equal(pwrite(fd, p, TU_PAGE, 0), TU_PAGE);
	free(p);
	p = tu_page_of(200, w2, TU_NR(w2));
	assert_int_equal(pwrite(fd, p, TU_PAGE, (off_t)(size - TU_PAGE)), TU_PAGE);
	free(p);
	close(fd);
	snprintf(cmd, sizeof(cmd), "ulimit -v 300000 && %s rb decode --events-dir %s %s 2>&1",
		 kagg(), dir, path);
	out = run(cmd, &st);
	unlink(path);
	printf("  10 GiB under ulimit -v 300000: exit %d, %s", WEXITSTATUS(st), out);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tu_lines(out), 2);
	assert_non_null(strstr(out, "e: x=1\n"));
	assert_non_null(strstr(out, "e: x=2\n"));
	free(out);
	rm_rf(dir);
	free(dir);
}

/* What can be no page file nor trace.dat is refused with the reason, before any output. */
static void test_decode_and_report_refuse_what_is_no_file(void **s)
{
	char *dir = events_dir(), fdir[] = "/tmp/kagg-rb-fifo-XXXXXX", fifo[64];
	struct tu_error_case c[] = {
		{ 1,
		  "cannot read /dev/zero: not a regular file (a character device)",
		  { "rb", "decode", "--events-dir", dir, "/dev/zero" } },
		{ 1, "not a regular file (a FIFO", { "rb", "decode", "--events-dir", dir, fifo } },
		{ 1,
		  "cannot read /tmp: Is a directory",
		  { "rb", "decode", "--events-dir", dir, "/tmp" } },
		{ 1, "cannot read /tmp: Is a directory", { "report", "/tmp" } },
		{ 1, "not a regular file", { "report", fifo } },
		{ 1, "cannot read /dev/zero: not a regular file", { "report", "/dev/zero" } },
	};

	NEED_KAGG();
	/* a FIFO nobody writes: waiting on it would hang the test */
	assert_non_null(mkdtemp(fdir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", fdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	tu_expect_errors(c, TU_NR(c));
	unlink(fifo);
	rmdir(fdir);
	rm_rf(dir);
	free(dir);
}

UU_MAIN(cmocka_unit_test(test_bench_json_identity_and_raw_pages_decode_in_kbuffer),
	cmocka_unit_test(test_decode_of_kernel_pages_prints_the_kernel_trace_text),
	cmocka_unit_test(test_usage_errors_exit_2_with_one_line),
	cmocka_unit_test(test_decode_of_a_damaged_page_prints_what_came_before_and_the_offset),
	cmocka_unit_test(test_decode_of_files_that_hold_no_page_fails_with_one_line),
	cmocka_unit_test(test_decode_learns_no_comm_from_outside_the_record),
	cmocka_unit_test(test_report_of_a_damaged_trace_dat_prints_what_came_before_and_the_offset),
	cmocka_unit_test(test_decode_of_10_gib_in_bounded_memory),
	cmocka_unit_test(test_decode_and_report_refuse_what_is_no_file))
