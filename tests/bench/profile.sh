#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark for `kagg profile` (issue 7): BPF run time per perf sample of kagg's
# program next to its peer at the same frequency, both attached at the same time
# while a CPU-bound workload (one user-mode loop and one kernel-heavy dd per CPU)
# keeps every CPU busy, so every sample lands in a task with a user and a kernel side.
#
# Peer: libbpf-tools `profile` when installed.  Debian's libbpf-tools (0.26) does not
# ship it; then the stand-in is bpftrace's equivalent in-kernel aggregation,
#   profile:hz:HZ { @[kstack, ustack, pid, comm] = count(); }
# (stack ids from a stack map, a hash keyed by them, one count per sample: the same
# work as libbpf-tools profile), and the output says which peer ran.
#
# Next to them, tests/bench/bench_floor.c's perf_floor does only the stack walks no
# sampling profiler can skip (kernel stack of kernel-mode samples, user stack of user
# tasks): the floor under both figures.
# ns/event = delta run_time_ns / delta run_cnt of each program over the workload window,
# from `bpftool prog show` with kernel.bpf_stats_enabled=1 (restored after).  Prints
# figures and ratios; asserts nothing on time.  Exits non-zero when something could
# not run or a program took no sample, saying which.  Software cpu-clock events: no
# hardware PMU needed.
#
# Environment: KAGG, BENCH_ROUNDS (3), BENCH_HZ (999), BENCH_SECONDS (3, workload window).
set -u

. "$(dirname "$0")/lib.sh"
HZ=${BENCH_HZ:-999}
SECS=${BENCH_SECONDS:-3}
PROFILE=${PROFILE:-/usr/sbin/profile}
BPFTRACE=${BPFTRACE:-bpftrace}
bench_name="profile bench"

[ "$(id -u)" = 0 ] || die "needs root (BPF and kernel.bpf_stats_enabled); run: sudo make bench"
[ -x "$KAGG" ] || die "no kagg at $KAGG: run make"
[ -x "$BPFTOOL" ] || die "bpftool missing"
if [ -x "$PROFILE" ]; then
	peer="libbpf-tools profile"
	peer_cmd=("$PROFILE" -F "$HZ")
elif command -v "$BPFTRACE" >/dev/null 2>&1; then
	peer="bpftrace profile:hz:$HZ (stand-in: $PROFILE not installed)"
	peer_cmd=("$BPFTRACE" -e "profile:hz:$HZ { @[kstack, ustack, pid, comm] = count(); }")
else
	die "no peer: neither $PROFILE (libbpf-tools) nor bpftrace is installed"
fi
case "$ROUNDS$HZ$SECS" in *[!0-9]*) die "BENCH_ROUNDS/HZ/SECONDS must be integers" ;; esac

# $pids: the tools, $work: the workload, $all_ids: the programs, checked at exit
bench_init "profile bench"

# perf_event program ids held by PID (from its fds' fdinfo).
perf_prog_of() {
	local id
	for id in $(prog_ids_of "$1"); do
		"$BPFTOOL" prog show id "$id" 2>/dev/null | head -1 | grep -q ' perf_event ' &&
			echo "$id" && return 0
	done
	return 1
}

# start_tool LABEL CMD...: start it, wait until it holds a perf_event program; sets tool_id.
start_tool() {
	local label=$1 pid
	shift
	"$@" >"$tmp/$label.out" 2>"$tmp/$label.err" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || {
			sed 's/^/  /' "$tmp/$label.err" | head -5 >&2
			die "$label ('$*') exited early"
		}
		if tool_id=$(perf_prog_of "$pid"); then
			all_ids="$all_ids $tool_id"
			sleep 0.5 # every CPU's event attached
			return 0
		fi
		sleep 0.1
	done
	die "$label ('$*') loaded no perf_event program within 15 s"
}

# stats ID LABEL: "run_time_ns run_cnt"; fails the bench when the program is gone
stats() {
	local out
	out=$("$BPFTOOL" prog show id "$1" 2>/dev/null) ||
		not_measured "$2's program $1 unloaded before the window ended (the tool exited)"
	echo "$out" | awk 'NR == 1 { rt = 0; c = 0
		for (i = 1; i < NF; i++) { if ($i == "run_time_ns") rt = $(i + 1)
					   if ($i == "run_cnt") c = $(i + 1) }
		print rt, c }'
}

per_event() {	# per_event "rt0 c0" "rt1 c1" -> "runs ns"
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		c = y[2] - x[2]; printf "%d %.1f\n", c, (c > 0 ? (y[1] - x[1]) / c : 0) }'
}

ncpu=$(nproc)
echo "kagg profile bench: -F $HZ on $ncpu CPUs, ${SECS} s window, $ROUNDS rounds"
echo "peer: $peer"
printf '  %-6s %-28s %10s %10s   %s\n' round program samples ns/event ratio
ratios="" floors=""
[ -x "$FLOOR" ] || die "no $FLOOR (make bench builds it)"
for r in $(seq "$ROUNDS"); do
	start_tool kagg "$KAGG" profile -F "$HZ" --overhead
	kid=$tool_id
	start_tool peer "${peer_cmd[@]}"
	pidp=$tool_id
	# the stack walks alone (kernel stack of kernel-mode samples, user stack of user tasks)
	start_tool floor "$FLOOR" "perf:$HZ" 600
	fid=$tool_id
	bench_case="round $r"
	k0=$(stats "$kid" kagg) || exit 1
	p0=$(stats "$pidp" peer) || exit 1
	f0=$(stats "$fid" floor) || exit 1
	for _ in $(seq "$ncpu"); do
		(while :; do :; done) &
		work+=($!)
		dd if=/dev/zero of=/dev/null bs=4k 2>/dev/null &
		work+=($!)
	done
	sleep "$SECS"
	k1=$(stats "$kid" kagg) || exit 1
	p1=$(stats "$pidp" peer) || exit 1
	f1=$(stats "$fid" floor) || exit 1
	stop_tools
	dk=$(per_event "$k0" "$k1")
	dp=$(per_event "$p0" "$p1")
	df=$(per_event "$f0" "$f1")
	for v in "kagg:$dk" "peer:$dp" "floor:$df"; do
		set -- ${v#*:}
		[ "$1" -gt 0 ] || not_measured "${v%%:*} took no sample in ${SECS} s"
	done
	rt=$(ratio "${dk##* }" "${dp##* }")
	rf=$(ratio "${df##* }" "${dp##* }")
	ratios="$ratios $rt" floors="$floors $rf"
	printf '  %-6s %-28s %10s %10s\n' "$r" "kagg profile_sample" "${dk%% *}" "${dk##* }"
	printf '  %-6s %-28s %10s %10s   kagg/peer %s\n' "$r" "peer" "${dp%% *}" "${dp##* }" "$rt"
	printf '  %-6s %-28s %10s %10s   walks alone/peer %s\n' "$r" "stack walks alone (floor)" \
		"${df%% *}" "${df##* }" "$rf"
done
med=$(echo "$ratios" | median_mean)
met=$(met "$med" "$PEER_TARGET")
echo "median kagg/peer ratio: $med (target <= $PEER_TARGET: $met)"
echo "median stack walks alone/peer: $(echo "$floors" | median_mean) (no profiler that walks them goes below)"
