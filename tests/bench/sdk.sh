#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark of programs written with <kagg/bpf/kagg.bpf.h> (docs/sdk.md), each
# next to a peer attached to the same events in the same run:
#
#   offcpu    examples/bpf/offcpu.bpf.o under `kagg run` beside the built-in
#             `kagg offcpu`, while `perf bench sched pipe` runs pinned to CPU 0
#             (target: SDK / built-in <= 1.05)
#   readsize  examples/bpf/readsize.bpf.o under `kagg run` beside bpftrace's
#             `@[comm] = hist(args->ret)` on sys_exit_read, while dd reads
#             /dev/zero in small blocks (target: SDK / bpftrace <= 0.5); and
#             bpftrace's same filter with an empty action beside them: what
#             any program there pays (the hook, the run-time stats); and the
#             same object with --mode stream (each read a ring buffer record):
#             the streaming path's BPF cost against the aggregating one's
#
# ns/event: delta run_time_ns over delta run_cnt of each tool's programs
# (kernel.bpf_stats_enabled=1), sampled just before and after the workload.
# The attach order turns every round (the first program on a hook pays for
# warming what they all touch).  Prints figures and ratios; asserts nothing
# on time.  Exits non-zero only when something could not run.
#
# Environment: KAGG, BENCH_ROUNDS (4), BENCH_LOOPS (perf bench ops, 300000),
# BENCH_READS (dd blocks, 2000000), BENCH_DURATION (30), BPFTRACE (bpftrace),
# SDK_OBJS (the examples' folder, build/examples/bpf).
set -u

. "$(dirname "$0")/lib.sh"
ROUNDS=${BENCH_ROUNDS:-4}
LOOPS=${BENCH_LOOPS:-300000}
READS=${BENCH_READS:-2000000}
BPFTRACE=${BPFTRACE:-bpftrace}
SDK_OBJS=${SDK_OBJS:-$bench_dir/../../build/examples/bpf}
TARGET_BUILTIN=1.05
BT_PROG='tracepoint:syscalls:sys_exit_read /args->ret > 0/ { @[comm] = hist(args->ret); }'
BT_FLOOR='tracepoint:syscalls:sys_exit_read /args->ret > 0/ { }'

bench_init "sdk bench" perf
command -v "$BPFTRACE" >/dev/null || die "no bpftrace (apt-get install bpftrace)"
command -v taskset >/dev/null || die "no taskset (util-linux)"
for o in offcpu readsize; do
	[ -f "$SDK_OBJS/$o.bpf.o" ] || die "no $SDK_OBJS/$o.bpf.o (make examples)"
done
"$PERF" bench sched pipe -l 10 >/dev/null 2>&1 || die "'perf bench sched pipe' does not run"
case "$ROUNDS$LOOPS$READS$DUR" in *[!0-9]*) die "BENCH_* must be integers" ;; esac

# take: the tools are attached; sample around CMD, stop them.
take() {
	snapshot "$tmp/before"
	"$@" >/dev/null 2>&1 || die "workload '$*' failed"
	snapshot "$tmp/after"
	stop_tools
}

echo "kagg SDK benchmark: $ROUNDS round(s); kernel $(uname -r), $(nproc) CPUs"
r_off="" r_rs="" r_fl="" r_st=""
for r in $(seq "$ROUNDS"); do
	echo "== round $r/$ROUNDS"
	for t in $(in_order "$r" builtin sdk); do
		case $t in
		builtin) start builtin 1 "$KAGG" offcpu -d "$DUR" ;;
		sdk) start sdk 1 "$KAGG" run "$SDK_OBJS/offcpu.bpf.o" -d "$DUR" ;;
		esac
	done
	all_ids="$all_ids $(cat "$tmp/builtin.ids" "$tmp/sdk.ids" | tr '\n' ' ')"
	take taskset -c 0 "$PERF" bench sched pipe -l "$LOOPS"
	echo "  [offcpu] kagg offcpu:"
	report_to b builtin
	echo "  [offcpu] kagg run offcpu.bpf.o:"
	report_to s sdk
	x=$(ratio "$s" "$b")
	echo "  [offcpu] BPF ns per sched_switch: built-in $b, SDK $s, SDK/built-in $x" \
		"(target <= $TARGET_BUILTIN: $(met "$x" "$TARGET_BUILTIN"))"
	r_off="$r_off $x"

	for t in $(in_order "$r" bpftrace sdk floor stream); do
		case $t in
		bpftrace) start bpftrace 1 "$BPFTRACE" -e "$BT_PROG" ;;
		floor) start floor 1 "$BPFTRACE" -e "$BT_FLOOR" ;;
		sdk) start sdk 1 "$KAGG" run "$SDK_OBJS/readsize.bpf.o" -d "$DUR" ;;
		stream) start stream 1 "$KAGG" run "$SDK_OBJS/readsize.bpf.o" --mode stream \
			-d "$DUR" ;;
		esac
	done
	all_ids="$all_ids $(cat "$tmp/bpftrace.ids" "$tmp/sdk.ids" "$tmp/floor.ids" \
		"$tmp/stream.ids" | tr '\n' ' ')"
	take dd if=/dev/zero of=/dev/null bs=64 count="$READS"
	echo "  [readsize] bpftrace hist(args->ret):"
	report_to p bpftrace
	echo "  [readsize] kagg run readsize.bpf.o:"
	report_to s sdk
	echo "  [readsize] floor, bpftrace's filter and nothing else:"
	report_to f floor
	echo "  [readsize] kagg run readsize.bpf.o --mode stream:"
	report_to t stream
	sx=$(ratio "$t" "$s")
	echo "  [readsize] BPF ns per read: aggregated $s, streamed $t, stream/agg $sx"
	r_st="$r_st $sx"
	x=$(ratio "$s" "$p") fx=$(ratio "$f" "$p")
	echo "  [readsize] BPF ns per read: bpftrace $p, SDK $s, SDK/bpftrace $x" \
		"(target <= $PEER_TARGET: $(met "$x" "$PEER_TARGET")); floor $f = $fx x bpftrace"
	r_rs="$r_rs $x" r_fl="$r_fl $fx"
done
echo "== median SDK offcpu / built-in offcpu: $(echo "$r_off" | median_mean) (target <= $TARGET_BUILTIN)"
echo "== median SDK readsize / bpftrace: $(echo "$r_rs" | median_mean) (target <= $PEER_TARGET);" \
	"floor / bpftrace $(echo "$r_fl" | median_mean)"
echo "== median SDK readsize --mode stream / agg: $(echo "$r_st" | median_mean)"
exit 0
