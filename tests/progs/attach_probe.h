/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Types shared by tests/progs/attach_probe.bpf.c and tests/bpf/test_attach.c: one
 * counter slot per attach path, so a test can load any single program and
 * read back how often it fired for the test's own process.
 */
#ifndef KAGG_ATTACH_PROBE_H
#define KAGG_ATTACH_PROBE_H

enum attach_probe_kind {
	AP_KPROBE = 0,
	AP_KRETPROBE,
	AP_FENTRY,
	AP_FEXIT,
	AP_KPROBE_MULTI,
	AP_KRETPROBE_MULTI,
	AP_TP_BTF,
	AP_RAW_TP,
	AP_KIND_MAX,
};

/* Living in .bss: hits per kind, and the last return value seen by the kinds that see one. */
struct attach_probe_counts {
	__u64 hits[AP_KIND_MAX];
	__s64 last_ret[AP_KIND_MAX];
};

_Static_assert(sizeof(struct attach_probe_counts) == 16 * AP_KIND_MAX,
	       "attach_probe_counts layout changed");

#endif /* KAGG_ATTACH_PROBE_H */
