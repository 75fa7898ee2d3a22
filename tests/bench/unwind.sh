#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark of the table walk (docs/stacks.md): CPU per sample of `kagg profile --unwind
# table` next to `perf record --call-graph dwarf` + `perf report`, each profiling the same
# workload at the same rate: tests/helpers/unwind_target (no frame pointers) spinning a
# fixed amount of CPU time in main -> unw_a -> unw_b -> unw_c.
#
# A side's CPU: the tool's own user+system time (kagg; perf record plus perf report), and
# for kagg its BPF program's run time (kernel.bpf_stats_enabled, restored after): the walk
# runs in the workload's context.  perf's own work there (copying 8 KiB of stack per sample)
# is not counted, so the ratio leans towards perf.  Divided by the side's samples.  Prints
# figures and the kagg/perf ratio (target <= 0.25); asserts nothing.
#
# Environment: KAGG, PERF, BENCH_ROUNDS (3), BENCH_HZ (999), BENCH_WORK_MS (2000).
set -u

. "$(dirname "$0")/lib.sh"
HZ=${BENCH_HZ:-999}
WORK_MS=${BENCH_WORK_MS:-2000}
TARGET=${UNWIND_TARGET:-$bench_dir/../../build/tests/helpers/unwind_target}
bench_name="unwind bench"

[ "$(id -u)" = 0 ] || die "needs root; run: sudo make bench"
[ -x "$KAGG" ] || die "no kagg at $KAGG: run make"
[ -x "$TARGET" ] || die "no $TARGET: run make"
command -v "$PERF" >/dev/null 2>&1 || die "no perf (make bench-deps installs linux-perf)"
case "$ROUNDS$HZ$WORK_MS" in *[!0-9]*) die "BENCH_ROUNDS/HZ/WORK_MS must be integers" ;; esac
[ -x "$BPFTOOL" ] || die "bpftool missing"
tmp=$(mktemp -d)
stats0=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats0"; rm -rf "$tmp"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
tick=$(getconf CLK_TCK)

# cpu_ms PID: its user+system time so far, in ms
cpu_ms() { awk -v t="$tick" '{ sub(/.*\) /, ""); print ($12 + $13) * 1000 / t }' "/proc/$1/stat"; }

# target_start: the workload, waiting on its stdin ($tpid)
target_start() {
	coproc TGT { exec "$TARGET" spin "$WORK_MS"; }
	tpid=$TGT_PID
	read -r _ <&"${TGT[0]}" # ready
}

# target_run: let it spin its CPU time; work_ms: the CPU time it took, in ms
target_run() {
	echo g >&"${TGT[1]}"
	read -r _ <&"${TGT[0]}" # done
	work_ms=$(cpu_ms "$tpid")
	exec {TGT[1]}>&-
	wait "$tpid" 2>/dev/null
}

# timed_start NAME CMD...: CMD in the background, its user+system time to $tmp/NAME.t at
# its end; tool: its pid (a child of the timing subshell $sub)
timed_start() {
	local name=$1
	shift
	( TIMEFORMAT="%U %S"; { time "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; } 2>"$tmp/$name.t" ) &
	sub=$!
	for _ in $(seq 100); do
		tool=$(pgrep -P "$sub") && return 0
		sleep 0.05
	done
	die "$* did not start"
}

# timed_stop: SIGINT to the tool, wait for it; tool_ms: its CPU time in ms
timed_stop() {
	kill -INT "$tool" 2>/dev/null
	wait "$sub"
	tool_ms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$tmp/$1.t")
}

echo "unwind bench: unwind_target spin ${WORK_MS} ms of CPU, -F $HZ, $ROUNDS rounds"
printf '  %-6s %-38s %8s %10s %10s %10s\n' round side samples cpu_ms bpf_ms us/sample
ratios=""
for r in $(seq "$ROUNDS"); do
	bench_case="round $r"
	target_start
	timed_start kagg "$KAGG" profile -p "$tpid" -U -F "$HZ" --unwind table -d 600 --folded
	sleep 1.5 # loaded and attached
	target_run
	bpf_ms=0
	for id in $(prog_ids_of "$tool"); do
		bpf_ms=$("$BPFTOOL" prog show id "$id" | awk -v m="$bpf_ms" \
			'NR == 1 { for (i = 1; i < NF; i++) if ($i == "run_time_ns") m += $(i + 1) / 1e6 }
			 END { printf "%d", m }')
	done
	timed_stop kagg
	kcpu=$((tool_ms + bpf_ms))
	ks=$(awk '/^# events:/ { print $5 }' "$tmp/kagg.err")
	[ -n "$ks" ] && [ "$ks" -gt 0 ] || not_measured "kagg took no sample"

	target_start
	timed_start rec "$PERF" record -q -F "$HZ" --call-graph dwarf -p "$tpid" \
		-o "$tmp/perf.data"
	sleep 1.5
	target_run
	timed_stop rec
	pcpu=$tool_ms
	timed_start rep "$PERF" report -i "$tmp/perf.data" --stdio
	wait "$sub"
	pcpu=$((pcpu + $(awk '{ printf "%d", ($1 + $2) * 1000 }' "$tmp/rep.t")))
	ps=$("$PERF" script -i "$tmp/perf.data" -G -F pid 2>/dev/null | wc -l)
	[ "$ps" -gt 0 ] || not_measured "perf took no sample"

	kus=$(awk -v t="$kcpu" -v n="$ks" 'BEGIN { printf "%.1f", t * 1000 / n }')
	pus=$(awk -v t="$pcpu" -v n="$ps" 'BEGIN { printf "%.1f", t * 1000 / n }')
	rt=$(ratio "$kus" "$pus")
	ratios="$ratios $rt"
	printf '  %-6s %-38s %8s %10s %10s %10s\n' "$r" "kagg profile --unwind table" "$ks" \
		"$kcpu" "$bpf_ms" "$kus"
	printf '  %-6s %-38s %8s %10s %10s %10s   kagg/perf %s\n' "$r" \
		"perf record --call-graph dwarf + report" "$ps" "$pcpu" "-" "$pus" "$rt"
done
med=$(echo "$ratios" | median_mean)
echo "median kagg/perf CPU per sample: $med (target <= 0.25: $(met "$med" 0.25))"
