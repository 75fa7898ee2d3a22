#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Stream vs aggregate, per tool: each tool that streams (offcpu, runqlat,
# syscount) runs with --mode both --overhead under `perf bench sched pipe`
# (pinned to CPU 0), and the cost line the tool prints itself is collected:
# each path's BPF run time per event, the consumer's CPU per event, and the
# stream/agg ratio, all from the same events in the same run.  Also the
# records each stream lost (a loss makes the ratio an underestimate of the
# stream's cost).  Figures only; nothing is asserted.  Exits non-zero, naming the
# tool, when a run printed no cost line or no stream loss count.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_LOOPS (200000).
set -u
. "$(dirname "$0")/lib.sh"
LOOPS=${BENCH_LOOPS:-200000}

bench_require "modes bench" perf taskset

tmp=$(mktemp -d /tmp/kagg-bench-modes.XXXXXX) || die mktemp
trap 'rm -rf "$tmp"' EXIT

echo "stream vs aggregate per tool (--mode both --overhead, perf bench sched pipe -l $LOOPS" \
	"pinned to CPU 0, $ROUNDS round(s)):"
for tool in offcpu runqlat syscount; do
	for r in $(seq "$ROUNDS"); do
		"$KAGG" "$tool" --mode both --overhead >"$tmp/out" 2>"$tmp/err" &
		k=$!
		sleep 1.5
		taskset -c 0 perf bench sched pipe -l "$LOOPS" >/dev/null 2>&1
		kill -INT "$k"
		wait "$k" || die "kagg $tool failed: $(tail -1 "$tmp/err")"
		cost=$(grep '^# cost per event' "$tmp/out" | sed 's/^# cost per event: //')
		lost=$(grep '^# stream (mode both)' "$tmp/out" |
			sed -E 's/.* ([0-9]+) dropped \(BPF ring buffer full\).*/\1/')
		bench_case="$tool, round $r"
		[ -n "$cost" ] || not_measured "kagg $tool printed no cost line"
		case $lost in '' | *[!0-9]*) not_measured "kagg $tool printed no stream loss count" ;; esac
		printf '  %-9s round %d: %s; stream lost %s records\n' "$tool" "$r" "$cost" "$lost"
	done
done
