#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark of exponential buckets: the BPF run time per event of a tool with
# --buckets exp:3 next to the same tool with log2 buckets, both attached at the
# same time (same events), for runqlat and runqlat -P (perf bench sched pipe),
# syscount -L
# (perf bench syscall basic) and funclat on a user function (funclat_target nop).
# The figure compared is all of an instance's BPF run time over the runs of its
# busiest program (runqlat: its sched_switch program), sampled with `bpftool prog
# show` around the workload (both run with --overhead: BPF_ENABLE_STATS holds the
# statistics on whatever else resets kernel.bpf_stats_enabled).  Each round
# attaches the two in the other order.  Prints figures and ratios; asserts nothing
# on time.  Exits non-zero, naming the case, when a case could not run or
# measured nothing (a variant's programs counted no events or were unloaded
# before the workload ended).
#
# Environment: KAGG, BENCH_ROUNDS (4), BENCH_DURATION (300, the tools' safety cap), TARGET_BIN, BPFTOOL, PERF,
# BENCH_CASES (the cases to run, of: runqlat runqlat-P syscount-L funclat; default all).
set -u

here=$(cd "$(dirname "$0")" && pwd)
TARGET_BIN=$(readlink -f "${TARGET_BIN:-$here/../../build/tests/helpers/funclat_target}")
TARGET=1.10

. "$here/lib.sh"
ROUNDS=${BENCH_ROUNDS:-4}	# even: each variant attached first as often
CASES=${BENCH_CASES:-runqlat runqlat-P syscount-L funclat}
bench_init "buckets bench"
for c in $CASES; do
	case $c in runqlat | runqlat-P | syscount-L | funclat) ;; *) die "unknown case $c in BENCH_CASES" ;; esac
done
command -v "$PERF" >/dev/null || die "no perf (make bench-deps)"
[ -x "$TARGET_BIN" ] || die "no $TARGET_BIN (make)"

# attached LABEL: wait until kagg's banner (printed once attached) is on its stderr; a
# loaded host can take longer than start()'s half second between load and attach
attached() {
	for _ in $(seq 300); do
		grep -q "Hit Ctrl-C" "$tmp/$1.err" 2>/dev/null && return 0
		sleep 0.1
	done
	die "$1 did not attach within 30 s"
}

# wanted ID: is case ID in $CASES
wanted() {
	case " $CASES " in *" $1 "*) return 0 ;; esac
	return 1
}

# one_case NAME NPROGS PROG_RE WORKLOAD KAGG_ARGS...: the ratios exp:3 / log2 of the rounds
one_case() {
	local name=$1 n=$2 re=$3 wl=$4 r t order l e ratios="" sl=0 se=0
	shift 4
	bench_case=$name
	echo "== $name: kagg $*, workload: $wl"
	for r in $(seq "$ROUNDS"); do
		order=$(in_order "$r" log2 exp)
		for t in $order; do
			case $t in
			log2) start log2 "$n" "$KAGG" "$@" -d "$DUR" --overhead --buckets log2 ;;
			exp) start exp "$n" "$KAGG" "$@" -d "$DUR" --overhead --buckets exp:3 ;;
			esac
		done
		attached log2
		attached exp
		snapshot "$tmp/before"
		eval "$wl" >/dev/null 2>&1 || die "workload failed: $wl"
		snapshot "$tmp/after"
		stop_tools
		report log2 "$re" >"$tmp/log2.rep"
		report exp "$re" >"$tmp/exp.rep"
		l=$(tail -1 "$tmp/log2.rep")
		e=$(tail -1 "$tmp/exp.rep")
		echo "  round $r (attached $order): ns/event log2 $l, exp:3 $e, exp:3/log2 $(ratio "$e" "$l")"
		ratios="$ratios $(ratio "$e" "$l")"
		sl=$(awk -v a="$sl" -v b="$l" 'BEGIN { print a + b }')
		se=$(awk -v a="$se" -v b="$e" 'BEGIN { print a + b }')
	done
	# the sums over the rounds: each variant attached first as often, which cancels
	# most of the first-attached program's extra cost that a single round shows
	pooled=$(ratio "$se" "$sl")
	med=$(echo "$ratios" | median_mean)
	echo "  $name: exp:3/log2 over all rounds $pooled (target <= $TARGET: $(met "$pooled" "$TARGET")), median of the rounds $med"
	summary="$summary\n  $name: $pooled (median of the rounds $med)"
}

echo "kagg --buckets exp:3 vs log2: $ROUNDS round(s) per case"
echo "kernel $(uname -r), $(nproc) CPUs"
summary=""
wanted runqlat && one_case "runqlat" 3 switch "$PERF bench sched pipe -l 300000" runqlat
wanted runqlat-P && one_case "runqlat -P" 3 switch "$PERF bench sched pipe -l 300000" runqlat -P
wanted syscount-L && one_case "syscount -L" 2 "" "$PERF bench syscall basic -l 2000000" syscount -L
wanted funclat && one_case "funclat (uprobe)" 2 "" "$TARGET_BIN nop 300000" funclat "$TARGET_BIN:target_nop"
echo -e "== exp:3/log2, BPF ns per event summed over the rounds (target <= $TARGET):$summary"
exit 0
