// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One program per attach path, all on the getpgid(2) syscall, so that
 * tests/bpf/test_attach.c can load exactly one of them (autoload), trigger
 * getpgid N times and expect exactly N hits from its own tgid.
 *
 * The function probed is the syscall wrapper of the architecture,
 * __x64_sys_getpgid or __arm64_sys_getpgid: it exists under that name on every
 * kernel since 4.17 (x86-64) and 4.19 (arm64) and is traceable by kprobes and by
 * fentry (it is in BTF).  The tracepoint programs use the
 * raw sys_enter tracepoint filtered by syscall number.
 *
 * Only counts are guaranteed; nothing here is on a hot path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "attach_probe.h"

#if defined(__TARGET_ARCH_arm64)
#define AP_NR_GETPGID 155
#define AP_GETPGID "__arm64_sys_getpgid"
#else
#define AP_NR_GETPGID 121 /* x86-64 */
#define AP_GETPGID "__x64_sys_getpgid"
#endif

const volatile __u32 target_tgid = 0;

struct attach_probe_counts counts = {};

static __always_inline bool ap_mine(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

static __always_inline void ap_hit(enum attach_probe_kind kind)
{
	if (kind < AP_KIND_MAX && ap_mine())
		__sync_fetch_and_add(&counts.hits[kind], 1);
}

static __always_inline void ap_ret(enum attach_probe_kind kind, long ret)
{
	if (kind < AP_KIND_MAX && ap_mine()) {
		counts.last_ret[kind] = ret;
		__sync_fetch_and_add(&counts.hits[kind], 1);
	}
}

/*
 * The kprobe and kretprobe programs of one attach path: SEC "kprobe" SEC_SFX, named
 * ap_kprobe##SFX and ap_kretprobe##SFX, counting as AP_KPROBE##KIND_SFX and
 * AP_KRETPROBE##KIND_SFX.
 */
#define AP_KPROBES(SEC_SFX, SFX, KIND_SFX)             \
	SEC("kprobe" SEC_SFX "/" AP_GETPGID)           \
	int BPF_KPROBE(ap_kprobe##SFX)                 \
	{                                              \
		ap_hit(AP_KPROBE##KIND_SFX);           \
		return 0;                              \
	}                                              \
                                                       \
	SEC("kretprobe" SEC_SFX "/" AP_GETPGID)        \
	int BPF_KRETPROBE(ap_kretprobe##SFX, long ret) \
	{                                              \
		ap_ret(AP_KRETPROBE##KIND_SFX, ret);   \
		return 0;                              \
	}

AP_KPROBES("", , )

SEC("fentry/" AP_GETPGID)
int BPF_PROG(ap_fentry, const struct pt_regs *regs)
{
	ap_hit(AP_FENTRY);
	return 0;
}

SEC("fexit/" AP_GETPGID)
int BPF_PROG(ap_fexit, const struct pt_regs *regs, long ret)
{
	ap_ret(AP_FEXIT, ret);
	return 0;
}

AP_KPROBES(".multi", _multi, _MULTI)

SEC("tp_btf/sys_enter")
int BPF_PROG(ap_tp_btf, struct pt_regs *regs, long id)
{
	if (id == AP_NR_GETPGID)
		ap_hit(AP_TP_BTF);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(ap_raw_tp, struct pt_regs *regs, long id)
{
	if (id == AP_NR_GETPGID)
		ap_hit(AP_RAW_TP);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
