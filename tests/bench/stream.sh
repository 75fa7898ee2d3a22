#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Added cost per `perf bench sched pipe` operation (pinned to CPU 0) of each way of
# consuming sched_switch (issue 4): kagg offcpu in agg, stream and both modes,
# libbpf-tools runqlat, `perf record -e sched:sched_switch`, and a bpftrace off-CPU
# histogram one-liner.  Each tracer is started, given time to attach, then perf bench
# runs; usecs/op are compared with an untraced run of the same round.  Printed as
# ratios to the untraced baseline and to kagg agg (medians over BENCH_ROUNDS rounds).
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

usecs_op() {
	taskset -c 0 perf bench sched pipe -l "$LOOPS" 2>/dev/null |
		awk '/usecs\/op/ { print $1 }'
}

declare -A res
for r in $(seq "$ROUNDS"); do
	for c in "${configs[@]}"; do
		start_tracer "$c"
		v=$(usecs_op)
		stop_tracer "$c"
		[ -n "$v" ] || die "perf bench printed no usecs/op under $c"
		res[$c]="${res[$c]:-} $v"
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

base=$(echo "${res[baseline]}" | median)
agg=$(echo "${res[agg]}" | median)
add_agg=$(awk -v a="$agg" -v b="$base" 'BEGIN { print a - b }')
echo "perf bench sched pipe -l $LOOPS pinned to CPU 0, median of $ROUNDS rounds"
printf '%-12s %10s %12s %12s %14s\n' tracer usecs/op added/op "x baseline" "added x agg"
for c in "${configs[@]}"; do
	m=$(echo "${res[$c]}" | median)
	awk -v n="$c" -v m="$m" -v b="$base" -v aa="$add_agg" 'BEGIN {
		add = m - b
		printf "%-12s %10.3f %12.3f %12.2f %14s\n", n, m, add, m / b,
		       (n == "baseline" ? "-" : (aa > 0 ? sprintf("%.2f", add / aa) : "n/a"))
	}'
done
echo "(added/op: usecs per op above the untraced run; each op is 2 context switches)"
