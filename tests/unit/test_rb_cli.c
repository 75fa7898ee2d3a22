// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * `kagg rb` end to end: bench's JSON counters satisfy the identity, the raw
 * pages it leaves decode in kbuffer with its own format files through
 * libtraceevent, `decode` of the committed kernel pages prints exactly the
 * kernel's `trace` text, and usage errors exit 2 with one line.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event-parse.h>
#include <kbuffer.h>

#include "testutil.h"

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

#define NEED_KAGG()                                                                                \
	do {                                                                                       \
		if (access(kagg(), X_OK)) {                                                        \
			printf("# skip: %s not built\n", kagg());                                  \
			skip();                                                                    \
		}                                                                                  \
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
	snprintf(cmd, sizeof(cmd), "%s rb bench --writers 2 --payload 40 --seconds 0.3 "
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
		    strstr(out, "\"write_path\": \"locked\""));

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
				struct tep_record rec = { .ts = ts, .data = d, .cpu = cpu,
							  .size = kbuffer_event_size(kb) };
				struct tep_event *ev = tep_find_event_by_record(tep, &rec);

				assert_non_null(ev);
				assert_string_equal(ev->name, "bench");
				assert_int_equal(rec.size, 40);
				events++;
			}
		}
		free(raw);
	}
	assert_int_equal(events, read);
	snprintf(cmd, sizeof(cmd), "%s rb decode --events-dir %s %s/cpu*.raw | grep -vc LOST", kagg(), dir,
		 dir);
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

static void test_usage_errors_exit_2_with_one_line(void **s)
{
	static const char *const bad[] = { "rb", "rb frob", "rb bench --writers 0",
					   "rb bench --mode both", "rb bench --payload 4",
					   "rb bench --format xml", "rb decode" };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_json_identity_and_raw_pages_decode_in_kbuffer),
		cmocka_unit_test(test_decode_of_kernel_pages_prints_the_kernel_trace_text),
		cmocka_unit_test(test_usage_errors_exit_2_with_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
