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
# Prints figures and ratios; asserts nothing on time.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_LOOPS (perf bench ops, 2000000),
# BENCH_DURATION (safety cap, 30), SYSCOUNT, BPFTOOL, PERF.
set -u

here=$(cd "$(dirname "$0")" && pwd)
KAGG=${KAGG:-$here/../../build/bin/kagg}
ROUNDS=${BENCH_ROUNDS:-3}
LOOPS=${BENCH_LOOPS:-2000000}
DUR=${BENCH_DURATION:-30}
BPFTOOL=${BPFTOOL:-/usr/sbin/bpftool}
PEER=${SYSCOUNT:-/usr/sbin/syscount}
FLOOR=${BENCH_FLOOR:-$here/../../build/tests/bench/bench_floor}
PERF=${PERF:-perf}
TARGET=0.5

die() { echo "syscount bench: cannot run: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$KAGG" ] || die "no kagg binary at $KAGG (make build/bin/kagg)"
[ -x "$PEER" ] || die "no libbpf-tools syscount at $PEER (make bench-deps)"
[ -x "$FLOOR" ] || die "no $FLOOR (make bench builds it)"
command -v "$PERF" >/dev/null || die "no perf (make bench-deps)"
"$PERF" bench syscall basic -l 1000 >/dev/null 2>&1 || die "perf bench syscall not supported by $PERF"
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

snapshot() {
	"$BPFTOOL" prog show | awk '/^[0-9]+:/ { id = $1; sub(":", "", id); rt = 0; c = 0; n = ""
		for (i = 1; i < NF; i++) { if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") rt = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
		print id, n, rt, c }' >"$1"
}
prog_ids_of() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u; }

start() {	# start LABEL N CMD...: until CMD owns N programs; ids in $tmp/LABEL.ids
	local label=$1 want=$2 pid
	shift 2
	"$@" >"$tmp/$label.out" 2>"$tmp/$label.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || { sed 's/^/  /' "$tmp/$label.err" >&2; die "$label exited early"; }
		prog_ids_of "$pid" >"$tmp/$label.ids"
		if [ "$(wc -l <"$tmp/$label.ids")" -ge "$want" ]; then
			sleep 0.5
			return 0
		fi
		sleep 0.1
	done
	die "$label did not load $want programs within 15 s"
}

report() {	# per-program lines, then ns per syscall (all programs / sys_enter runs)
	awk -v ids="$(tr '\n' ' ' <"$tmp/$1.ids")" 'BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		FNR == NR { rt0[$1] = $3; c0[$1] = $4; next }
		($1 in want) { rt = $3 - rt0[$1]; c = $4 - c0[$1]; tot += rt
			printf "    %-28s %10d runs %8.1f ns/run\n", $2, c, (c ? rt / c : 0)
			if (c > calls) calls = c }
		END { printf "%.1f\n", (calls ? tot / calls : 0) }' "$tmp/before" "$tmp/after"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "n/a") }'; }

# phase NAME PEER_ARGS KAGG_ARGS KAGG_PROGS FLOOR_KIND FLOOR_PROGS
phase() {
	local name=$1 p k x f fx
	start peer 2 "$PEER" -d "$DUR" $2
	start kagg "$4" "$KAGG" syscount -d "$DUR" --overhead --format json $3
	start floor "$6" "$FLOOR" "$5" "$DUR"
	snapshot "$tmp/before"
	"$PERF" bench syscall basic -l "$LOOPS" >/dev/null 2>&1 || die "perf bench syscall failed"
	snapshot "$tmp/after"
	stop_tools
	echo "  [$name] libbpf-tools syscount $2:"
	report peer >"$tmp/peer.rep"; head -n -1 "$tmp/peer.rep"; p=$(tail -1 "$tmp/peer.rep")
	echo "  [$name] kagg syscount $3:"
	report kagg >"$tmp/kagg.rep"; head -n -1 "$tmp/kagg.rep"; k=$(tail -1 "$tmp/kagg.rep")
	echo "  [$name] floor, empty programs ($5):"
	report floor >"$tmp/floor.rep"; head -n -1 "$tmp/floor.rep"; f=$(tail -1 "$tmp/floor.rep")
	x=$(ratio "$k" "$p") fx=$(ratio "$f" "$p")
	echo "  [$name] BPF ns per syscall: syscount $p, kagg $k, kagg/syscount $x (target <= $TARGET);" \
		"empty programs $f = $fx x syscount, the least any tool attached there pays"
	eval "r_$name=\"\${r_$name:-} $x\""
	eval "f_$name=\"\${f_$name:-} $fx\""
}

echo "kagg syscount benchmark: $ROUNDS round(s), perf bench syscall basic -l $LOOPS"
echo "kernel $(uname -r), $(nproc) CPUs"
for r in $(seq "$ROUNDS"); do
	echo "== round $r/$ROUNDS"
	phase count "" "" 1 sys_enter 1
	phase latency "-L" "-L" 2 sys_both 2
done
echo "== median kagg/syscount: count $(echo "$r_count" | median), latency $(echo "$r_latency" | median) (target <= $TARGET)"
echo "== median empty programs/syscount (the floor): count $(echo "$f_count" | median), latency $(echo "$f_latency" | median)"
exit 0
