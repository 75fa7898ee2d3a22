// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unprivileged tests of the stacks a snapshot shows, built from hand-made symbol tables:
 * frames named by function (symbol versions dropped, C++ and Rust demangled), stacks that
 * differ only in offsets merged with their counts summed, the tracing machinery's frames
 * dropped from the top of kernel stacks, unknown frames counted by cause, --addrs, folded
 * lines free of ';' inside names, and --folded refusing -i in both tools.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kagg/kagg.h>
#include "snapshot/snapshot_internal.h"
#include "snapshot/stacks.h"
#include "syms/demangle.h"
#include "syms/syms.h"
#include "testutil.h"
#include "unit_util.h"

struct tsym {
	uint64_t addr;
	uint64_t size;
	const char *name;
	const char *module;
};

/* Kernel: what a sched_switch stack captured by a tp_btf program looks like on 6.18. */
static const struct tsym ktab[] = {
	{ 0x1000, 0x400, "bpf_prog_e26b924638ee5714_offcpu_tp_btf", "bpf" },
	{ 0x2000, 0x200, "bpf_trace_run4", "[kernel]" },
	{ 0x3000, 0x800, "__schedule", "[kernel]" },
	{ 0x4000, 0x100, "schedule", "[kernel]" },
	{ 0x5000, 0x100, "do_nanosleep", "[kernel]" },
	{ 0x6000, 0x100, "do_syscall_64", "[kernel]" },
	{ 0xc000, 0x100, "bpf_prog_load", "[kernel]" },
};

/* User, pid 7: a libc with versioned names, a C++ program, a Rust function. */
static const struct tsym utab[] = {
	{ 0x7000, 0x100, "clock_nanosleep@@GLIBC_2.17", "/usr/lib/x86_64-linux-gnu/libc.so.6" },
	{ 0x8000, 0x100, "_ZN9kagg_test7Sleeper3napEjj", "/opt/app/bin/app" },
	{ 0x9000, 0x100, "main", "/opt/app/bin/app" },
	{ 0xa000, 0x100, "_RNvXs_NtCs1_4core5arrayAhj20_NtNtB4_3fmt5Debug3fmt",
	  "/opt/app/lib/librs.so" },
	/* 0xb000..0xc000: a stripped library, no symbol covers it */
};

/* The readable names, made once per symbol as kagg_syms does (freed at exit). */
static char *kfuncs[sizeof(ktab) / sizeof(ktab[0])];
static char *ufuncs[sizeof(utab) / sizeof(utab[0])];

static int tab_find(const struct tsym *t, char **funcs, size_t n, uint64_t addr, struct sym *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (addr >= t[i].addr && addr < t[i].addr + t[i].size) {
			out->name = t[i].name;
			out->offset = addr - t[i].addr;
			out->module = t[i].module;
			if (!funcs[i])
				funcs[i] = syms_func_name(t[i].name);
			out->func = funcs[i] ? funcs[i] : t[i].name;
			return 0;
		}
	}
	return -ENOENT;
}

static int t_kernel(void *ctx, uint64_t addr, struct sym *out)
{
	return tab_find(ktab, kfuncs, sizeof(ktab) / sizeof(ktab[0]), addr, out);
}

static int t_user(void *ctx, int pid, uint64_t addr, struct sym *out)
{
	int err;

	if (pid != 7) {
		memset(out, 0, sizeof(*out));
		return -ESRCH; /* exited before its maps were read */
	}
	err = tab_find(utab, ufuncs, sizeof(utab) / sizeof(utab[0]), addr, out);
	if (err && addr >= 0xb000 && addr < 0xc000) {
		out->module = "/usr/lib/libstripped.so.1";
		out->offset = addr - 0xb000;
	}
	return err;
}

static const struct stk_resolver res = { .kernel = t_kernel, .user = t_user };

/* Innermost first, tracing frames on top as the program captured them. */
static const uint64_t k1[] = { 0x1010, 0x2010, 0x3628, 0x4023, 0x505e, 0x6071 };
static const uint64_t k2[] = { 0x11fe, 0x210d, 0x3630, 0x4023, 0x5060, 0x6071 };
static const uint64_t u1[] = { 0x7023, 0x8010, 0x902d };
static const uint64_t u2[] = { 0x7023, 0x8044, 0x9031 };

static struct stk_raw raw(int pid, uint64_t count, const uint64_t *k, unsigned int nk,
			  const uint64_t *u, unsigned int nu)
{
	struct stk_raw r = { .pid = pid,
			     .tid = pid,
			     .comm = "app",
			     .total_ns = count * 1000,
			     .count = count,
			     .kips = k,
			     .nr_kips = nk,
			     .uips = u,
			     .nr_uips = nu };

	return r;
}

static struct kagg_snapshot *build_from(bool addrs, bool from_tracer, const struct stk_raw *r,
					size_t n)
{
	struct kagg_snapshot *snap = snap_new();
	struct stk b;
	size_t i;

	assert_non_null(snap);
	snap->meta.unit = "usecs";
	assert_int_equal(stk_init(&b, snap, &res, addrs, from_tracer), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(stk_add(&b, &r[i]), 0);
	assert_int_equal(stk_finish(&b), 0);
	return snap;
}

/* Kernel stacks as a tracepoint program captures them. */
static struct kagg_snapshot *build(bool addrs, const struct stk_raw *r, size_t n)
{
	return build_from(addrs, true, r, n);
}

static void assert_frames(const struct kagg_frame *const *fr, unsigned int n,
			  const char *const *want, unsigned int nwant)
{
	unsigned int i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++)
		assert_string_equal(fr[i]->sym, want[i]);
}

/* Two captures that differ only in offsets: one stack, by function, counts summed. */
static void test_merged_by_function(void **state)
{
	static const char *const kwant[] = { "__schedule", "schedule", "do_nanosleep",
					     "do_syscall_64" };
	static const char *const uwant[] = { "clock_nanosleep",
					     "kagg_test::Sleeper::nap(unsigned int, unsigned int)",
					     "main" };
	struct stk_raw r[] = { raw(7, 3, k1, 6, u1, 3), raw(7, 5, k2, 6, u2, 3) };
	struct kagg_snapshot *snap = build(false, r, 2);
	const struct kagg_stack *st;

	assert_int_equal(kagg_snapshot__stack_cnt(snap), 1);
	st = kagg_snapshot__stack(snap, 0);
	assert_int_equal(st->count, 8);
	assert_int_equal(st->total_ns, 8000);
	assert_frames(st->kframes, st->nr_kframes, kwant, 4);
	assert_frames(st->uframes, st->nr_uframes, uwant, 3);
	assert_int_equal(st->kframes[0]->ip, 0x3628); /* the first capture's address */
	/* tracing frames are not frames of the workload: not counted either */
	assert_true(kagg_snapshot__meta(snap)->has_frames);
	assert_int_equal(kagg_snapshot__meta(snap)->frames, 2 * (4 + 3));
	assert_int_equal(kagg_snapshot__meta(snap)->frames_no_maps, 0);
	assert_int_equal(kagg_snapshot__meta(snap)->frames_no_symbols, 0);
	kagg_snapshot__free(snap);
}

/* KAGG_SNAP_ADDRS: offsets shown, so only identical captures merge; tracing frames still go. */
static void test_addrs_keeps_offsets(void **state)
{
	static const char *const kwant[] = { "__schedule+0x628", "schedule+0x23",
					     "do_nanosleep+0x5e", "do_syscall_64+0x71" };
	static const char *const uwant[] = {
		"clock_nanosleep+0x23", "kagg_test::Sleeper::nap(unsigned int, unsigned int)+0x10",
		"main+0x2d"
	};
	struct stk_raw r[] = { raw(7, 3, k1, 6, u1, 3), raw(7, 5, k2, 6, u2, 3),
			       raw(7, 2, k1, 6, u1, 3) };
	struct kagg_snapshot *snap = build(true, r, 3);
	const struct kagg_stack *st;

	assert_int_equal(kagg_snapshot__stack_cnt(snap), 2);
	/* 3 + 2 against 5: a tie, broken by the frames' names (+0x628 before +0x630) */
	st = kagg_snapshot__stack(snap, 0);
	assert_int_equal(st->count, 5);
	assert_int_equal(kagg_snapshot__stack(snap, 1)->count, 5);
	assert_string_equal(kagg_snapshot__stack(snap, 1)->kframes[0]->sym, "__schedule+0x630");
	assert_frames(st->kframes, st->nr_kframes, kwant, 4);
	assert_frames(st->uframes, st->nr_uframes, uwant, 3);
	kagg_snapshot__free(snap);
}

/* Who and what was lost keep stacks apart; the order is by time, then count. */
static void test_not_merged_across_pids_or_errors(void **state)
{
	struct stk_raw r[] = { raw(7, 1, k1, 6, u1, 3), raw(8, 4, k1, 6, u1, 3),
			       raw(7, 2, k1, 6, NULL, 0), raw(7, 3, k2, 6, u2, 3) };
	struct kagg_snapshot *snap;

	r[2].ustack_err = -EFAULT;
	r[2].ulost = true;
	snap = build(false, r, 4);
	assert_int_equal(kagg_snapshot__stack_cnt(snap), 3);
	assert_int_equal(kagg_snapshot__stack(snap, 0)->pid, 7); /* 1 + 3 */
	assert_int_equal(kagg_snapshot__stack(snap, 0)->count, 4);
	assert_int_equal(kagg_snapshot__stack(snap, 0)->total_ns, 4000);
	assert_int_equal(kagg_snapshot__stack(snap, 1)->pid, 8);
	assert_int_equal(kagg_snapshot__stack(snap, 2)->ustack_err, -EFAULT);
	assert_int_equal(kagg_snapshot__stack(snap, 2)->nr_uframes, 0);
	assert_int_equal(kagg_snapshot__meta(snap)->stacks_lost, 1);
	kagg_snapshot__free(snap);
}

/* Unknown frames: a pid whose maps are gone, a stripped file, garbage; each by its cause. */
static void test_unknown_frames_by_cause(void **state)
{
	static const uint64_t ustripped[] = { 0xb123, 0x8010, 0x123456 };
	static const char *const swant[] = { "[libstripped.so.1]",
					     "kagg_test::Sleeper::nap(unsigned int, unsigned int)",
					     "[unknown]" };
	static const char *const gwant[] = { "[unknown]", "[unknown]", "[unknown]" };
	struct stk_raw r[] = { raw(7, 1, k1, 1, ustripped, 3), raw(9, 1, NULL, 0, u1, 3) };
	struct kagg_snapshot *snap = build(false, r, 2);
	const struct kagg_meta *m = kagg_snapshot__meta(snap);
	const struct kagg_stack *st;
	size_t i;

	assert_int_equal(kagg_snapshot__stack_cnt(snap), 2);
	for (i = 0; i < 2; i++) {
		st = kagg_snapshot__stack(snap, i);
		if (st->pid == 7) {
			assert_int_equal(st->nr_kframes, 0); /* all of it was the BPF program */
			assert_frames(st->uframes, st->nr_uframes, swant, 3);
		} else {
			assert_frames(st->uframes, st->nr_uframes, gwant, 3);
		}
	}
	assert_int_equal(m->frames, 6);
	assert_int_equal(m->frames_no_maps, 1 + 3); /* garbage address, and pid 9's */
	assert_int_equal(m->frames_no_symbols, 1);  /* inside libstripped */
	assert_int_equal(m->stacks_lost, 0);
	kagg_snapshot__free(snap);
}

/*
 * A kernel frame that is not at the top is the workload's, whatever its name; so are all the
 * frames of a stack taken from sampled registers (perf_event), top included, and a kernel
 * function whose name merely starts like a program's.
 */
static void test_only_leading_tracing_frames_dropped(void **state)
{
	static const uint64_t k[] = { 0x3628, 0x2010, 0x4023 };
	static const uint64_t load[] = { 0xc010, 0x6071 };
	static const char *const kwant[] = { "__schedule", "bpf_trace_run4", "schedule" };
	static const char *const pwant[] = { "bpf_prog_e26b924638ee5714_offcpu_tp_btf",
					     "bpf_trace_run4", "__schedule" };
	static const char *const lwant[] = { "bpf_prog_load", "do_syscall_64" };
	struct stk_raw r[] = { raw(7, 1, k, 3, NULL, 0) };
	struct stk_raw p[] = { raw(7, 1, k1, 3, NULL, 0) };
	struct stk_raw l[] = { raw(7, 1, load, 2, NULL, 0) };
	struct kagg_snapshot *snap = build(false, r, 1);
	const struct kagg_stack *st = kagg_snapshot__stack(snap, 0);

	assert_frames(st->kframes, st->nr_kframes, kwant, 3);
	kagg_snapshot__free(snap);
	snap = build_from(false, false, p, 1);
	st = kagg_snapshot__stack(snap, 0);
	assert_frames(st->kframes, st->nr_kframes, pwant, 3);
	kagg_snapshot__free(snap);
	snap = build(false, l, 1);
	st = kagg_snapshot__stack(snap, 0);
	assert_frames(st->kframes, st->nr_kframes, lwant, 2);
	kagg_snapshot__free(snap);
}

/* Folded lines: ';' inside a name (Rust's "[u8; 32]") would split the frame. */
static void test_folded_names_have_no_separator(void **state)
{
	static const uint64_t u[] = { 0xa010, 0x902d };
	struct stk_raw r[] = { raw(7, 2, k1, 6, u, 2) };
	struct kagg_snapshot *snap;
	KAGG_OPTS(kagg_print_opts, po, .folded = true);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	memcpy(r[0].comm, "a;b c", 6);
	snap = build(false, r, 1);
	assert_string_equal(kagg_snapshot__stack(snap, 0)->uframes[0]->sym,
			    "<[u8; 32] as core::array::fmt::Debug>::fmt");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(kagg_snapshot__print(snap, f, &po), 0);
	assert_int_equal(kagg_profile__print_folded(snap, f), 0);
	fclose(f);
	/* kagg_snapshot__print (time in usecs) and kagg_profile__print_folded (samples) */
	assert_string_equal(buf, "a:b c;main;<[u8: 32] as core::array::fmt::Debug>::fmt;--;"
				 "do_syscall_64;do_nanosleep;schedule;__schedule 2\n"
				 "a:b c;main;<[u8: 32] as core::array::fmt::Debug>::fmt;--;"
				 "do_syscall_64;do_nanosleep;schedule;__schedule 2\n");
	free(buf);
	/* no_delimiter (the command line without --delimiter): no ";--" in either printer */
	po.no_delimiter = true;
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(kagg_snapshot__print(snap, f, &po), 0);
	assert_int_equal(kagg_profile__print_folded_opts(snap, f, &po), 0);
	fclose(f);
	assert_string_equal(buf, "a:b c;main;<[u8: 32] as core::array::fmt::Debug>::fmt;"
				 "do_syscall_64;do_nanosleep;schedule;__schedule 2\n"
				 "a:b c;main;<[u8: 32] as core::array::fmt::Debug>::fmt;"
				 "do_syscall_64;do_nanosleep;schedule;__schedule 2\n");
	free(buf);
	kagg_snapshot__free(snap);
}

/* The meta says how many frames are unknown, in text and JSON. */
static void test_meta_frames_printed(void **state)
{
	struct stk_raw r[] = { raw(9, 1, NULL, 0, u1, 3) };
	struct kagg_snapshot *snap = build(false, r, 1);
	KAGG_OPTS(kagg_print_opts, json, .format = KAGG_FORMAT_JSON);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	snap->meta.tool = "profile";
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(kagg_snapshot__print(snap, f, NULL), 0);
	assert_int_equal(kagg_snapshot__print(snap, f, &json), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# frames: 3, unknown 3 (100.0%): no maps 3, no symbols 0; "
				    "stacks lost 0; process notes lost 0\n"));
	assert_non_null(strstr(buf, "\"frames\": {\n      \"total\": 3,\n      \"no_maps\": 3,\n"
				    "      \"no_symbols\": 0,\n      \"stacks_lost\": 0,\n"
				    "      \"notes_lost\": 0\n    }"));
	free(buf);
	kagg_snapshot__free(snap);
}

/* Names as a flame graph wants them: no symbol version, demangled C++ and Rust. */
static void test_func_names(void **state)
{
	static const struct {
		const char *name, *want;
	} cases[] = {
		{ "clock_nanosleep@@GLIBC_2.17", "clock_nanosleep" },
		{ "memcpy@GLIBC_2.2.5", "memcpy" },
		{ "_ZN9kagg_test7Spinner4spinEj", "kagg_test::Spinner::spin(unsigned int)" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "_ZN2ns5Klass4spinEi.isra.0", "ns::Klass::spin(int) [clone .isra.0]" },
		/* Rust v0, and legacy (its hash dropped) */
		{ "_RNvNtCs1234_3std2rt19lang_start_internal", "std::rt::lang_start_internal" },
		{ "_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start" },
		{ "_RINvNtC3std3mem8align_ofjE", "std::mem::align_of::<usize>" },
	};
	static const char *const same[] = { "main", "__schedule", "_Zfoo",
					    "_R",   "_start",	  "emit.isra.0" };
	char buf[16], *f;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = syms_func_name(cases[i].name);
		assert_non_null(f);
		assert_string_equal(f, cases[i].want);
		free(f);
	}
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		assert_null(syms_func_name(same[i])); /* the name is already readable */
	assert_int_equal(demangle_name("_ZN9kagg_test7Spinner4spinEj", buf, sizeof(buf)),
			 -ENAMETOOLONG);
	assert_string_equal(buf, "kagg_test::Spin");
	assert_int_equal(demangle_name("printf", buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "");
	assert_int_equal(demangle_name(NULL, buf, sizeof(buf)), -EINVAL);
}

/* One answer for both tools: folded output is one flame graph, printed once. */
static void test_cli_folded_refuses_interval(void **state)
{
	static const char *const tools[] = { "offcpu", "profile" };
	size_t i;

	for (i = 0; i < 2; i++) {
		char *argv[] = { (char *)tools[i], "--folded", "-i", "1", NULL };
		char *err = NULL;

		assert_int_equal(tu_run_kagg(argv, NULL, &err, 0, 0), 2);
		assert_int_equal(tu_lines(err), 1);
		assert_non_null(strstr(err, "--folded prints once: drop -i"));
		free(err);
	}
}

static int free_funcs(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		free(kfuncs[i]);
	for (i = 0; i < sizeof(ufuncs) / sizeof(ufuncs[0]); i++)
		free(ufuncs[i]);
	return 0;
}

UU_MAIN_GROUP(NULL, free_funcs, cmocka_unit_test(test_merged_by_function),
	      cmocka_unit_test(test_addrs_keeps_offsets),
	      cmocka_unit_test(test_not_merged_across_pids_or_errors),
	      cmocka_unit_test(test_unknown_frames_by_cause),
	      cmocka_unit_test(test_only_leading_tracing_frames_dropped),
	      cmocka_unit_test(test_folded_names_have_no_separator),
	      cmocka_unit_test(test_meta_frames_printed), cmocka_unit_test(test_func_names),
	      cmocka_unit_test(test_cli_folded_refuses_interval))
