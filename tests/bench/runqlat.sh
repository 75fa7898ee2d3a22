#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark for `kagg runqlat` (issue 7): BPF run time of kagg's programs next to
# libbpf-tools runqlat, both attached at the same time (same events) while
# `perf bench sched pipe` runs.  Each tool has three programs (sched_wakeup,
# sched_wakeup_new, sched_switch); the figure compared is all of a tool's BPF run time
# divided by its sched_switch runs (ns per context switch, wakeups included), next to
# each program's own ns/run.  Programs are found through the process that owns them
# (prog_id in /proc/PID/fdinfo) and sampled with `bpftool prog show` just before and
# after the workload (kernel.bpf_stats_enabled=1 for the run, restored after).
# Prints figures and ratios; asserts nothing on time.  Exits non-zero, naming the
# round, when something could not run or a tool measured nothing.
#
# Environment: KAGG, BENCH_ROUNDS (4), BENCH_LOOPS (perf bench ops, 300000),
# BENCH_DURATION (safety cap given to both tools, 300), RUNQLAT, BPFTOOL, PERF.
set -u

. "$(dirname "$0")/lib.sh"
ROUNDS=${BENCH_ROUNDS:-4}	# even: each tool attached first as often
LOOPS=${BENCH_LOOPS:-300000}

bench_init "runqlat bench" perf
bench_peer RUNQLAT /usr/sbin/runqlat runqlat

echo "kagg runqlat benchmark: $ROUNDS round(s), perf bench sched pipe -l $LOOPS"
echo "kernel $(uname -r), $(nproc) CPUs"
ratios=""
for r in $(seq "$ROUNDS"); do
	echo "== round $r/$ROUNDS"
	bench_case="round $r"
	order=$(in_order "$r" peer kagg)
	for t in $order; do
		case $t in
		peer) start peer 3 "$PEER" "$DUR" 1 ;;
		kagg) start kagg 3 "$KAGG" runqlat -d "$DUR" --overhead --format json ;;
		esac
	done
	echo "  attached in the order $order"
	snapshot "$tmp/before"
	"$PERF" bench sched pipe -l "$LOOPS" >/dev/null 2>&1 || die "perf bench sched pipe failed"
	snapshot "$tmp/after"
	stop_tools
	echo "  libbpf-tools runqlat:"
	report_to p peer switch
	echo "  kagg runqlat:"
	report_to k kagg switch
	x=$(ratio "$k" "$p")
	echo "  BPF ns per context switch (all programs): runqlat $p, kagg $k, kagg/runqlat $x (target <= $PEER_TARGET)"
	ratios="$ratios $x"
done
med=$(echo "$ratios" | median)
echo "== median kagg/runqlat: $med (target <= $PEER_TARGET)"
exit 0
