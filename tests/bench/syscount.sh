#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark for `kagg syscount` (issue 7): BPF run time per system call of kagg's
# programs next to libbpf-tools syscount, both attached at the same time while
# `perf bench syscall basic` (getppid in a loop) runs.  Two phases:
#   count    `syscount`      vs `kagg syscount`     (kagg: sys_enter only)
#   latency  `syscount -L`   vs `kagg syscount -L`  (both: sys_enter + sys_exit)
# The figure compared is all of a tool's BPF run time divided by the syscalls it saw
# (its busiest program's runs), next to each program's own ns/run.  (libbpf-tools
# syscount counts at sys_exit without -L, kagg at sys_enter.)  Empty programs on the
# same tracepoints (tests/bench/bench_floor.c) run alongside: their cost is in both
# figures and no tool attached there can go below it.  Programs are found through
# the process that owns them and sampled with `bpftool prog show` just before and
# after the workload (kernel.bpf_stats_enabled=1 for the run, restored after).
# Prints figures and ratios; asserts nothing on time.  Exits non-zero, naming the
# round and phase, when something could not run or a tool measured nothing.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_LOOPS (perf bench ops, 2000000),
# BENCH_DURATION (safety cap, 300), SYSCOUNT, BPFTOOL, PERF.
set -u

. "$(dirname "$0")/lib.sh"
LOOPS=${BENCH_LOOPS:-2000000}

bench_init "syscount bench" floor perf
bench_peer SYSCOUNT /usr/sbin/syscount syscount
"$PERF" bench syscall basic -l 1000 >/dev/null 2>&1 || die "perf bench syscall not supported by $PERF"

# phase NAME PEER_ARGS KAGG_ARGS KAGG_PROGS FLOOR_KIND FLOOR_PROGS FLOOR_WHAT
phase() {
	local name=$1 p k x f fx
	bench_case="round $r, $name"
	order=$(in_order "$r" peer kagg floor)
	for t in $order; do
		case $t in
		peer) start peer 2 "$PEER" -d "$DUR" $2 ;;
		kagg) start kagg "$4" "$KAGG" syscount -d "$DUR" --overhead --format json $3 ;;
		floor) start floor "$6" "$FLOOR" "$5" "$DUR" ;;
		esac
	done
	echo "  [$name] attached in the order $order"
	snapshot "$tmp/before"
	"$PERF" bench syscall basic -l "$LOOPS" >/dev/null 2>&1 || die "perf bench syscall failed"
	snapshot "$tmp/after"
	stop_tools
	echo "  [$name] libbpf-tools syscount $2:"
	report_to p peer
	echo "  [$name] kagg syscount $3:"
	report_to k kagg
	echo "  [$name] floor ($5: $7):"
	report_to f floor
	x=$(ratio "$k" "$p") fx=$(ratio "$f" "$p")
	echo "  [$name] BPF ns per syscall: syscount $p, kagg $k, kagg/syscount $x (target <= $PEER_TARGET);" \
		"floor $f = $fx x syscount"
	eval "r_$name=\"\${r_$name:-} $x\""
	eval "f_$name=\"\${f_$name:-} $fx\""
}

echo "kagg syscount benchmark: $ROUNDS round(s), perf bench syscall basic -l $LOOPS"
echo "kernel $(uname -r), $(nproc) CPUs"
for r in $(seq "$ROUNDS"); do
	echo "== round $r/$ROUNDS"
	phase count "" "" 1 sys_enter 1 "an empty program, the least any tool attached there pays"
	phase latency "-L" "-L" 2 sys_lat 2 "a clock read into task storage at entry, the difference at exit, no aggregation"
done
echo "== median kagg/syscount: count $(echo "$r_count" | median), latency $(echo "$r_latency" | median) (target <= $PEER_TARGET)"
echo "== median floor/syscount: count $(echo "$f_count" | median) (empty program)," \
	"latency $(echo "$f_latency" | median) (clock + task storage, no aggregation)"
exit 0
