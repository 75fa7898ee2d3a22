#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark for `kagg funclat` (issue 7): BPF run time per function call of kagg's
# entry and return programs next to libbpf-tools funclatency's, both attached at the
# same time to one user function (uprobes: this host has no kprobes) while the test
# helper calls it in a loop (`funclat_target nop N`).  The figure compared is each
# tool's entry + return run time per call, next to a floor (tests/bench/bench_floor.c:
# a clock read into task storage at entry and the difference at return, nothing else).
# (The uprobe trap itself, the same for all and far larger, is not BPF run time.)  Prints figures
# and ratios; asserts nothing on time.  Exits non-zero, naming the round, when
# something could not run or a tool measured nothing.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_CALLS (200000), BENCH_DURATION (safety
# cap, 300), FUNCLATENCY, BPFTOOL.
set -u

. "$(dirname "$0")/lib.sh"
TARGET_BIN=${TARGET_BIN:-$here/../../build/tests/helpers/funclat_target}
CALLS=${BENCH_CALLS:-200000}

bench_init "funclat bench" floor
[ -x "$TARGET_BIN" ] || die "no $TARGET_BIN (make builds it)"
bench_peer FUNCLATENCY /usr/sbin/funclatency funclatency
TARGET_BIN=$(readlink -f "$TARGET_BIN")

echo "kagg funclat benchmark: $ROUNDS round(s), $TARGET_BIN:target_nop called $CALLS times"
echo "kernel $(uname -r), $(nproc) CPUs"
for r in $(seq "$ROUNDS"); do
	echo "== round $r/$ROUNDS"
	bench_case="round $r"
	order=$(in_order "$r" peer kagg floor)
	for t in $order; do
		case $t in
		peer) start peer 2 "$PEER" -d "$DUR" "$TARGET_BIN:target_nop" ;;
		kagg) start kagg 2 "$KAGG" funclat -d "$DUR" --overhead "$TARGET_BIN:target_nop" ;;
		# the least a function latency needs: clock into task storage, difference at return
		floor) start floor 2 "$FLOOR" "uprobe:$TARGET_BIN:target_nop" "$DUR" ;;
		esac
	done
	echo "  attached in the order $order"
	snapshot "$tmp/before"
	"$TARGET_BIN" nop "$CALLS" >/dev/null || die "funclat_target failed"
	snapshot "$tmp/after"
	stop_tools
	echo "  libbpf-tools funclatency:"
	report_to p peer
	echo "  kagg funclat ($(grep -o 'via [^,]*' "$tmp/kagg.out" | head -1)):"
	report_to k kagg
	echo "  floor (clock into task storage at entry, difference at return, no aggregation):"
	report_to f floor
	x=$(ratio "$k" "$p") fx=$(ratio "$f" "$p")
	echo "  BPF ns per call (entry + return): funclatency $p, kagg $k, kagg/funclatency $x" \
		"(target <= $PEER_TARGET); floor $f = $fx x funclatency"
	rs="${rs:-} $x" fs="${fs:-} $fx"
done
m=$(echo "$rs" | median)
met=$(met "$m" "$PEER_TARGET")
echo "== median kagg/funclatency: $m (target <= $PEER_TARGET: $met)"
echo "== median floor/funclatency: $(echo "$fs" | median)"
exit 0
