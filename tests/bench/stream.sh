#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Added cost per `perf bench sched pipe` operation (pinned to CPU 0) of each way of
# consuming sched_switch (issue 4): kagg offcpu in agg, stream and both modes,
# libbpf-tools runqlat, `perf record -e sched:sched_switch`, and a bpftrace off-CPU
# histogram one-liner.  Each tracer is started, given time to attach, then perf bench
# runs.  The figure is CPU time per op: perf bench's and its children's (getrusage,
# where the BPF programs' run time is charged) plus the tracer's own over the same
# window (its threads' schedstat: a consumer's, perf record's), compared with an
# untraced run of the same round; CPU rather than wall time, which other work on
# the machine stretches.  Printed as ratios to the untraced baseline and to kagg agg
# (medians over BENCH_ROUNDS rounds); wall usecs/op beside them for reference.
# Asserts nothing on time; exits non-zero, naming it, when a tracer could not run
# (libbpf-tools runqlat and bpftrace included: make bench-deps installs them) or
# exited before its workload ended.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_LOOPS (200000).
set -u
. "$(dirname "$0")/lib.sh"
LOOPS=${BENCH_LOOPS:-200000}

bench_require "stream bench" perf taskset bpftrace
[ -x /usr/sbin/runqlat ] || die "no libbpf-tools runqlat at /usr/sbin/runqlat; run: sudo make bench-deps"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing ||
	die "tracefs not mountable (perf record -e sched:sched_switch needs it)"

tmp=$(mktemp -d /tmp/kagg-bench-stream.XXXXXX) || die mktemp
tracer=""
cleanup() {
	[ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null && wait "$tracer" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

BT_PROG='tracepoint:sched:sched_switch { @s[args->prev_pid] = nsecs;
  if (@s[args->next_pid]) { @usecs = hist((nsecs - @s[args->next_pid]) / 1000);
  delete(@s[args->next_pid]); } }'

configs=(baseline agg stream both runqlat perf-record bpftrace)

start_tracer() {
	local name=$1 err=$tmp/$1.err
	case $name in
	baseline) return 0 ;;
	agg) "$KAGG" offcpu >/dev/null 2>"$err" & ;;
	stream) "$KAGG" offcpu --mode stream >/dev/null 2>"$err" & ;;
	both) "$KAGG" offcpu --mode both >/dev/null 2>"$err" & ;;
	runqlat) /usr/sbin/runqlat >/dev/null 2>"$err" & ;;
	perf-record) perf record -q -a -e sched:sched_switch -o "$tmp/perf.data" \
		>/dev/null 2>"$err" & ;;
	bpftrace) bpftrace -e "$BT_PROG" >/dev/null 2>"$err" & ;;
	esac
	tracer=$!
	# Attached when it says so (kagg, runqlat: "Tracing", bpftrace: "Attaching"); perf: 2 s.
	for _ in $(seq 50); do
		grep -qE 'Tracing|Attaching' "$err" 2>/dev/null && break
		kill -0 "$tracer" 2>/dev/null || die "$name exited: $(head -c 300 "$err")"
		sleep 0.1
	done
	sleep 0.5
}

stop_tracer() {
	[ -z "$tracer" ] && return 0
	bench_case=$1
	kill -0 "$tracer" 2>/dev/null ||
		not_measured "the tracer exited before the workload ended: $(head -c 300 "$tmp/$1.err")"
	kill -INT "$tracer" 2>/dev/null
	wait "$tracer" 2>/dev/null
	tracer=""
	rm -f "$tmp/perf.data"
}

# tracer_ns: CPU time of the tracer's threads so far, ns (0 without a tracer)
tracer_ns() {
	[ -n "$tracer" ] || { echo 0; return; }
	cat /proc/"$tracer"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { print t + 0 }'
}

# cpu_op: run the workload; prints "wall_usecs_per_op cpu_usecs_per_op"
cpu_op() {
	local t0 t1 wall cpu
	t0=$(tracer_ns)
	{ TIMEFORMAT='%3U %3S'; time taskset -c 0 perf bench sched pipe -l "$LOOPS" \
		>"$tmp/pipe.out" 2>/dev/null; } 2>"$tmp/pipe.time" || return 1
	t1=$(tracer_ns)
	wall=$(awk '/usecs\/op/ { print $1 }' "$tmp/pipe.out")
	[ -n "$wall" ] || return 1
	awk -v w="$wall" -v t="$((t1 - t0))" -v n="$LOOPS" '{ printf "%s %.3f\n", w,
		(($1 + $2) * 1e6 + t / 1e3) / n }' "$tmp/pipe.time"
}

declare -A res wall
for r in $(seq "$ROUNDS"); do
	for c in "${configs[@]}"; do
		start_tracer "$c"
		v=$(cpu_op)
		stop_tracer "$c"
		[ -n "$v" ] || die "perf bench sched pipe printed no usecs/op under $c"
		wall[$c]="${wall[$c]:-} ${v% *}"
		res[$c]="${res[$c]:-} ${v#* }"
	done
done

base=$(echo "${res[baseline]}" | median)
agg=$(echo "${res[agg]}" | median)
add_agg=$(awk -v a="$agg" -v b="$base" 'BEGIN { print a - b }')
echo "perf bench sched pipe -l $LOOPS pinned to CPU 0, median of $ROUNDS rounds"
printf '%-12s %12s %10s %12s %12s %14s\n' tracer "wall us/op" "CPU us/op" "added/op" \
	"x baseline" "added x agg"
for c in "${configs[@]}"; do
	m=$(echo "${res[$c]}" | median)
	awk -v n="$c" -v m="$m" -v b="$base" -v aa="$add_agg" -v w="$(echo "${wall[$c]}" | median)" 'BEGIN {
		add = m - b
		printf "%-12s %12.3f %10.3f %12.3f %12.2f %14s\n", n, w, m, add, m / b,
		       (n == "baseline" ? "-" : (aa > 0 ? sprintf("%.2f", add / aa) : "n/a"))
	}'
done
echo "(CPU us/op: perf bench's and the tracer's CPU per op; added/op: above the untraced run;"
echo " each op is 2 context switches)"
bench_case=agg
awk -v a="$add_agg" 'BEGIN { exit !(a > 0) }' ||
	not_measured "kagg agg added no CPU per op over the untraced run (baseline $base, agg $agg" \
		"us/op): the ratios to it mean nothing; raise BENCH_LOOPS or BENCH_ROUNDS"
