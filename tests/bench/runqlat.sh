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
# Prints figures and ratios; asserts nothing on time.  Exits non-zero only when
# something could not run.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_LOOPS (perf bench ops, 300000),
# BENCH_DURATION (safety cap given to both tools, 30), RUNQLAT, BPFTOOL, PERF.
set -u

here=$(cd "$(dirname "$0")" && pwd)
KAGG=${KAGG:-$here/../../build/bin/kagg}
ROUNDS=${BENCH_ROUNDS:-3}
LOOPS=${BENCH_LOOPS:-300000}
DUR=${BENCH_DURATION:-30}
BPFTOOL=${BPFTOOL:-/usr/sbin/bpftool}
PEER=${RUNQLAT:-/usr/sbin/runqlat}
PERF=${PERF:-perf}
TARGET=0.5

die() { echo "runqlat bench: cannot run: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$KAGG" ] || die "no kagg binary at $KAGG (make build/bin/kagg)"
[ -x "$PEER" ] || die "no libbpf-tools runqlat at $PEER (make bench-deps)"
command -v "$PERF" >/dev/null || die "no perf (make bench-deps)"
stats_old=$(sysctl -n kernel.bpf_stats_enabled) || die "kernel.bpf_stats_enabled not available"
tmp=$(mktemp -d)
pids=()

stop_tools() {
	local p
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop_tools
	sysctl -q -w kernel.bpf_stats_enabled="$stats_old" >/dev/null 2>&1
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable BPF stats"

# "id name run_time_ns run_cnt" for every loaded program
snapshot() {
	"$BPFTOOL" prog show | awk '/^[0-9]+:/ { id = $1; sub(":", "", id); rt = 0; c = 0; n = ""
		for (i = 1; i < NF; i++) { if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") rt = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
		print id, n, rt, c }' >"$1"
}
prog_ids_of() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u; }

# start LABEL N CMD...: run CMD in the background until it owns N programs; ids in $tmp/LABEL.ids
start() {
	local label=$1 want=$2 pid
	shift 2
	"$@" >"$tmp/$label.out" 2>"$tmp/$label.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || { sed 's/^/  /' "$tmp/$label.err" >&2; die "$label exited early"; }
		prog_ids_of "$pid" >"$tmp/$label.ids"
		if [ "$(wc -l <"$tmp/$label.ids")" -ge "$want" ]; then
			sleep 0.5	# links attached
			return 0
		fi
		sleep 0.1
	done
	die "$label did not load $want programs within 15 s"
}

# report LABEL: per-program lines, then "total_ns_per_switch" on the last line
report() {
	awk -v ids="$(tr '\n' ' ' <"$tmp/$1.ids")" 'BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		FNR == NR { rt0[$1] = $3; c0[$1] = $4; next }
		($1 in want) { rt = $3 - rt0[$1]; c = $4 - c0[$1]; tot += rt
			printf "    %-28s %10d runs %8.1f ns/run\n", $2, c, (c ? rt / c : 0)
			if ($2 ~ /switch/) sw = c }
		END { printf "%.1f\n", (sw ? tot / sw : 0) }' "$tmp/before" "$tmp/after"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "kagg runqlat benchmark: $ROUNDS round(s), perf bench sched pipe -l $LOOPS"
echo "kernel $(uname -r), $(nproc) CPUs"
ratios=""
for r in $(seq "$ROUNDS"); do
	echo "== round $r/$ROUNDS"
	start peer 3 "$PEER" "$DUR" 1
	start kagg 3 "$KAGG" runqlat -d "$DUR" --overhead --format json
	snapshot "$tmp/before"
	"$PERF" bench sched pipe -l "$LOOPS" >/dev/null 2>&1 || die "perf bench sched pipe failed"
	snapshot "$tmp/after"
	stop_tools
	echo "  libbpf-tools runqlat:"
	report peer >"$tmp/peer.rep"
	head -n -1 "$tmp/peer.rep"
	p=$(tail -1 "$tmp/peer.rep")
	echo "  kagg runqlat:"
	report kagg >"$tmp/kagg.rep"
	head -n -1 "$tmp/kagg.rep"
	k=$(tail -1 "$tmp/kagg.rep")
	x=$(ratio "$k" "$p")
	echo "  BPF ns per context switch (all programs): runqlat $p, kagg $k, kagg/runqlat $x (target <= $TARGET)"
	ratios="$ratios $x"
done
med=$(echo "$ratios" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "n/a") }')
echo "== median kagg/runqlat: $med (target <= $TARGET)"
exit 0
