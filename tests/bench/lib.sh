#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Shared by the benchmark scripts that compare BPF run time per event of
# kagg's programs and a peer's, attached at the same time (sourced, not run):
#
#   bench_init NAME [perf] [floor]
#                         die() prefix, root and $KAGG present (and perf, $FLOOR
#                         when named), temp dir,
#                         kernel.bpf_stats_enabled=1 for the run (restored on
#                         exit, with the tools in $pids stopped, the workloads
#                         in $work killed, and a failure when a program id in
#                         $all_ids is still loaded)
#   start LABEL N CMD...  run CMD until it owns N BPF programs; ids in $tmp/LABEL.ids
#   snapshot FILE         "id name run_time_ns run_cnt" of every loaded program
#   report LABEL [RE]     per-program lines from $tmp/before and $tmp/after, then
#                         (last line) the label's ns per event: all its programs'
#                         run time over the runs of its program named like RE
#                         (default: its busiest program).  Fails the bench
#                         (not_measured) when one of the label's programs is
#                         gone from $tmp/after (the tool exited during the
#                         workload) or the program counted no runs
#   report_to VAR LABEL [RE]  report's per-program lines printed, its ns per
#                         event (the last line) into $VAR
#   not_measured WHAT...  "NAME: CASE: not measured: WHAT" on stderr and exit 1
#                         ($bench_case names the case; set it before each one)
#   stop_tools, ratio A B, median (stdin; the lower middle), median_mean (stdin;
#                         the mean of the two middle values of an even count)
#   bench_require NAME TOOL...  die() prefix; root, each TOOL and $KAGG present
#                         (for scripts that time perf bench instead: no bench_init)
#   bench_peer VAR PATH NAME  $PEER: the libbpf-tools NAME at $VAR, else PATH; present
#
# Benchmarks print figures and ratios; they assert nothing on time.  A case
# that yields no figure (no events, a tool gone, a peer missing) fails the
# script with a line naming it: a bench never prints n/a and exits 0.
#
# The paths every bench uses, unless the environment (or the script before it
# sources this) sets them: KAGG, BPFTOOL, PERF and FLOOR (BENCH_FLOOR: the
# floors' program, tests/bench/bench_floor.c).  Also set: here (this folder),
# ROUNDS (BENCH_ROUNDS, 3) and DUR (BENCH_DURATION, the tools' safety cap in s,
# 300: the scripts stop the tools themselves; a cap shorter than a workload on
# a loaded machine unloads the programs before the after sample, which report
# then names), which a script with other defaults sets again after sourcing this, and
# PEER_TARGET, issue 7's kagg / peer ratio (information only).

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
here=$bench_dir
ROUNDS=${BENCH_ROUNDS:-3}
DUR=${BENCH_DURATION:-300}
PEER_TARGET=0.5
KAGG=${KAGG:-$bench_dir/../../build/bin/kagg}
BPFTOOL=${BPFTOOL:-/usr/sbin/bpftool}
PERF=${PERF:-perf}
FLOOR=${BENCH_FLOOR:-$bench_dir/../../build/tests/bench/bench_floor}

bench_init() {
	local need
	bench_name=$1
	shift
	[ "$(id -u)" = 0 ] || die "needs root"
	[ -x "$KAGG" ] || die "no kagg binary at $KAGG (make build/bin/kagg)"
	for need in "$@"; do
		case $need in
		perf) command -v "$PERF" >/dev/null || die "no perf (make bench-deps)" ;;
		floor) [ -x "$FLOOR" ] || die "no $FLOOR (make bench builds it)" ;;
		*) die "bench_init: unknown need $need" ;;
		esac
	done
	stats_old=$(sysctl -n kernel.bpf_stats_enabled) || die "kernel.bpf_stats_enabled not available"
	tmp=$(mktemp -d)
	pids=()
	work=()
	all_ids=${all_ids:-}
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot enable BPF stats"
}

die() { echo "${bench_name:-bench}: cannot run: $*" >&2; exit 1; }
bench_case=""
not_measured() { echo "${bench_name:-bench}: ${bench_case:+$bench_case: }not measured: $*" >&2; exit 1; }

bench_require() {
	local t
	bench_name=$1
	shift
	[ "$(id -u)" = 0 ] || die "needs root; run: sudo make bench"
	for t in "$@"; do command -v "$t" >/dev/null || die "missing $t; run: sudo make bench-deps"; done
	[ -x "$KAGG" ] || die "no kagg binary at $KAGG (run make)"
}

bench_peer() {
	PEER=${!1:-$2}
	[ -x "$PEER" ] || die "no libbpf-tools $3 at $PEER (make bench-deps)"
}

stop_tools() {
	local p
	for p in "${work[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	work=()
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}

bench_cleanup() {
	local rc=$? id left=""
	trap - EXIT INT TERM
	stop_tools
	sysctl -q -w kernel.bpf_stats_enabled="$stats_old" >/dev/null 2>&1
	[ -n "$all_ids" ] && sleep 0.2
	for id in $all_ids; do
		"$BPFTOOL" prog show id "$id" >/dev/null 2>&1 && left="$left $id"
	done
	if [ -n "$left" ]; then
		echo "$bench_name: BPF programs still loaded after exit:$left" >&2
		[ "$rc" = 0 ] && rc=1
	fi
	rm -rf "$tmp"
	exit "$rc"
}

snapshot() {
	"$BPFTOOL" prog show | awk '/^[0-9]+:/ { id = $1; sub(":", "", id); rt = 0; c = 0; n = ""
		for (i = 1; i < NF; i++) { if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") rt = $(i + 1); if ($i == "run_cnt") c = $(i + 1) }
		print id, n, rt, c }' >"$1"
}
prog_ids_of() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u; }

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
			sleep 0.5
			# again: a tool that fell back (tp_btf -> raw_tp) holds other ids now
			prog_ids_of "$pid" >"$tmp/$label.ids"
			all_ids="$all_ids $(tr '\n' ' ' <"$tmp/$label.ids")"
			return 0
		fi
		sleep 0.1
	done
	die "$label did not load $want programs within 15 s"
}

report() {
	local rc=0
	awk -v ids="$(tr '\n' ' ' <"$tmp/$1.ids")" -v per="${2:-}" '
		BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		FNR == NR { rt0[$1] = $3; c0[$1] = $4; next }
		($1 in want) { rt = $3 - rt0[$1]; c = $4 - c0[$1]; tot += rt; seen[$1] = 1
			printf "    %-28s %10d runs %8.1f ns/run\n", $2, c, (c ? rt / c : 0)
			if (per != "" ? $2 ~ per : c > calls) calls = c }
		END { for (i in want) if (!(i in seen)) { printf "%s\n", i > "/dev/stderr"; gone = 1 }
		      printf "%.1f\n", (calls ? tot / calls : 0)
		      exit gone ? 3 : !calls ? 4 : 0 }' "$tmp/before" "$tmp/after" 2>"$tmp/$1.gone" || rc=$?
	case $rc in
	0) ;;
	3) not_measured "$1's program(s) $(tr '\n' ' ' <"$tmp/$1.gone")unloaded before the" \
		"workload ended (the tool exited: $(tail -1 "$tmp/$1.err" 2>/dev/null))" ;;
	4) not_measured "$1's programs ${2:+named like '$2' }counted no events over the workload" ;;
	*) not_measured "$1: report failed ($rc)" ;;
	esac
}
report_to() {
	local var=$1 rep="$tmp/$2.rep"
	shift
	report "$@" >"$rep"
	head -n -1 "$rep"
	printf -v "$var" '%s' "$(tail -1 "$rep")"
}
# in_order R ITEM...: round R's attach order, the items rotated by R-1 places.
# Programs on one hook run in attach order and the first pays for warming
# what they all touch (tens of ns per event on a PTI machine without PCID),
# so over as many rounds as items each is first once.
in_order() {
	local k=$(( ($1 - 1) % ($# - 1) ))
	shift
	echo "${@:k+1}" "${@:1:k}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# met RATIO TARGET: "met" when RATIO <= TARGET, "not met", or "n/a" for an n/a ratio.
met() { awk -v r="$1" -v t="$2" 'BEGIN { if (r == "n/a") print "n/a";
	else if (r + 0 <= t + 0) print "met"; else print "not met" }'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "n/a") }'; }
median_mean() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 }
	END { if (!NR) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
	      else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
