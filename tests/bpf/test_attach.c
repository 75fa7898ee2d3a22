// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Attach paths, tested for real: kprobe, kretprobe, fentry, fexit,
 * kprobe.multi, kretprobe.multi, tp_btf and raw_tp, each loaded alone
 * (bpf_program__set_autoload) from tests/progs/attach_probe.bpf.c, attached, fired
 * exactly N times with getpgid(2) from this process, checked, detached, and
 * checked again to be silent after detach.
 *
 * A kernel that lacks a path makes its test skip with a line naming the
 * feature.  The kernel matrix (tests/vm/) knows what each guest kernel must
 * support and says so in KAGG_REQUIRE_ATTACH="kprobe,fentry,..." (or "all");
 * a required path that is missing fails instead of skipping.
 *
 * Each test prints one machine-readable line the matrix collects:
 *   KAGG-ATTACH path=<name> result=ok|unsupported|FAILED [detail]
 *
 * Each test loads its own skeleton instance: a program the kernel refuses
 * (fentry on a kernel that forbids it) must not take the others down at load.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/types.h>
#include <cmocka.h>

#include <bpf/libbpf.h>
#include "progs/attach_probe.h"
#include "attach_probe.skel.h"

#define AT_CALLS 64

struct at_path {
	const char *name;
	enum attach_probe_kind kind;
	bool sees_ret;
	size_t prog_off; /* offsetof the program in skel->progs */
};

#define AT_PROG(p) offsetof(struct attach_probe_bpf, progs.p)

static const struct at_path at_paths[] = {
	{ "kprobe", AP_KPROBE, false, AT_PROG(ap_kprobe) },
	{ "kretprobe", AP_KRETPROBE, true, AT_PROG(ap_kretprobe) },
	{ "fentry", AP_FENTRY, false, AT_PROG(ap_fentry) },
	{ "fexit", AP_FEXIT, true, AT_PROG(ap_fexit) },
	{ "kprobe.multi", AP_KPROBE_MULTI, false, AT_PROG(ap_kprobe_multi) },
	{ "kretprobe.multi", AP_KRETPROBE_MULTI, true, AT_PROG(ap_kretprobe_multi) },
	{ "tp_btf", AP_TP_BTF, false, AT_PROG(ap_tp_btf) },
	{ "raw_tp", AP_RAW_TP, false, AT_PROG(ap_raw_tp) },
};

static struct bpf_program *at_prog(struct attach_probe_bpf *skel, const struct at_path *p)
{
	return *(struct bpf_program **)((char *)skel + p->prog_off);
}

static const struct at_path *at_find(const char *name)
{
	for (size_t i = 0; i < sizeof(at_paths) / sizeof(at_paths[0]); i++)
		if (!strcmp(at_paths[i].name, name))
			return &at_paths[i];
	return NULL;
}

/* Is @name listed in KAGG_REQUIRE_ATTACH (comma separated, or "all")? */
static bool at_required(const char *name)
{
	const char *req = getenv("KAGG_REQUIRE_ATTACH");
	size_t n = strlen(name);

	if (!req)
		return false;
	if (!strcmp(req, "all"))
		return true;
	for (const char *p = req; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

/* What the kernel says about the feature, for the skip line. */
static const char *at_hint(const char *name)
{
	if (!strncmp(name, "kprobe", 6) || !strncmp(name, "kretprobe", 9)) {
		if (access("/sys/bus/event_source/devices/kprobe", F_OK))
			return "no kprobe PMU (/sys/bus/event_source/devices/kprobe): "
			       "CONFIG_KPROBES off?";
		if (strstr(name, ".multi"))
			return "kprobe_multi link refused: CONFIG_FPROBE off or kernel < 5.18?";
	}
	if (!strcmp(name, "fentry") || !strcmp(name, "fexit"))
		return "BPF trampoline refused (BPF_TRACE_FENTRY/FEXIT)";
	return "kernel refused this attach type";
}

static void at_trigger(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getpgid, 0);
}

enum at_result { AT_OK, AT_UNSUPPORTED, AT_FAILED };

/*
 * Load @p alone, attach, fire AT_CALLS times, check, detach, check silence.
 * Returns AT_UNSUPPORTED (with *err and *phase set) when the kernel refused
 * the load or the attach; asserts on everything else.
 */
static enum at_result at_run(const struct at_path *p, int *err, const char **phase)
{
	struct attach_probe_bpf *skel;
	struct bpf_program *prog;
	struct bpf_link *link;
	long expect_ret;
	__u64 hits;

	skel = attach_probe_bpf__open();
	assert_non_null(skel);
	bpf_object__for_each_program(prog, skel->obj) bpf_program__set_autoload(prog, false);
	prog = at_prog(skel, p);
	bpf_program__set_autoload(prog, true);
	skel->rodata->target_tgid = getpid();

	*err = attach_probe_bpf__load(skel);
	if (*err) {
		*phase = "load";
		attach_probe_bpf__destroy(skel);
		return AT_UNSUPPORTED;
	}
	link = bpf_program__attach(prog);
	if (!link) {
		*err = -errno;
		*phase = "attach";
		attach_probe_bpf__destroy(skel);
		return AT_UNSUPPORTED;
	}

	expect_ret = syscall(SYS_getpgid, 0);
	skel->bss->counts.hits[p->kind] = 0;
	skel->bss->counts.last_ret[p->kind] = -1;
	at_trigger(AT_CALLS);
	hits = skel->bss->counts.hits[p->kind];
	if (hits != AT_CALLS)
		print_error("%s: %llu hits for %d calls\n", p->name, (unsigned long long)hits,
			    AT_CALLS);
	assert_int_equal(hits, AT_CALLS);
	if (p->sees_ret)
		assert_int_equal(skel->bss->counts.last_ret[p->kind], expect_ret);

	assert_int_equal(bpf_link__destroy(link), 0);
	at_trigger(8);
	assert_int_equal(skel->bss->counts.hits[p->kind], AT_CALLS);

	attach_probe_bpf__destroy(skel);
	return AT_OK;
}

/* Run one path; skip (or fail, when required) if the kernel lacks it. */
static void at_test(const char *name)
{
	const struct at_path *p = at_find(name);
	const char *phase = "";
	int err = 0;

	assert_non_null(p);
	if (at_run(p, &err, &phase) == AT_OK) {
		printf("KAGG-ATTACH path=%s result=ok\n", name);
		return;
	}
	if (at_required(name)) {
		printf("KAGG-ATTACH path=%s result=FAILED reason=%s:%s\n", name, phase,
		       strerrorname_np(-err) ?: "?");
		print_error("%s is required on this kernel but %s failed: %s (%s)\n", name, phase,
			    strerror(-err), at_hint(name));
		fail();
	}
	printf("KAGG-ATTACH path=%s result=unsupported reason=%s:%s\n", name, phase,
	       strerrorname_np(-err) ?: "?");
	printf("skip: %s not available on this kernel: %s failed with %s (%s)\n", name, phase,
	       strerror(-err), at_hint(name));
	fflush(stdout);
	skip();
}

/*
 * What a tool does: kprobe.multi when the kernel has it, otherwise one
 * single kprobe per function.  Passes when either path counts exactly.
 */
static void test_kprobe_multi_fallback(void **state)
{
	const char *phase = "";
	int err = 0, err2 = 0;

	if (at_run(at_find("kprobe.multi"), &err, &phase) == AT_OK) {
		printf("KAGG-ATTACH path=kprobe.multi|kprobe result=ok chose=kprobe.multi\n");
		return;
	}
	printf("kprobe.multi unavailable (%s: %s): falling back to single kprobes\n", phase,
	       strerror(-err));
	if (at_run(at_find("kprobe"), &err2, &phase) == AT_OK) {
		printf("KAGG-ATTACH path=kprobe.multi|kprobe result=ok chose=kprobe\n");
		return;
	}
	if (at_required("kprobe")) {
		printf("KAGG-ATTACH path=kprobe.multi|kprobe result=FAILED\n");
		print_error("neither kprobe.multi nor single kprobes attach: %s, %s\n",
			    strerror(-err), strerror(-err2));
		fail();
	}
	printf("KAGG-ATTACH path=kprobe.multi|kprobe result=unsupported\n");
	printf("skip: neither kprobe.multi (%s) nor single kprobes (%s) available: %s\n",
	       strerror(-err), strerror(-err2), at_hint("kprobe"));
	fflush(stdout);
	skip();
}

/* One test per attach path; the path's name is the test's state. */
static void test_path(void **state)
{
	at_test(*state);
}

#define AT_TEST(path) { .name = "test_" path, .test_func = test_path, .initial_state = path }

static int at_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("KAGG_TEST_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		AT_TEST("kprobe"),
		AT_TEST("kretprobe"),
		AT_TEST("fentry"),
		AT_TEST("fexit"),
		AT_TEST("kprobe.multi"),
		AT_TEST("kretprobe.multi"),
		cmocka_unit_test(test_kprobe_multi_fallback),
		AT_TEST("tp_btf"),
		AT_TEST("raw_tp"),
	};

	if (geteuid() != 0)
		printf("note: not root: every path will skip with load:EPERM\n");
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(at_quiet);
	return cmocka_run_group_tests_name("attach", tests, NULL, NULL);
}
