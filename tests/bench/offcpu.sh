#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Benchmark for `kagg offcpu` (issue 2): BPF run time per sched_switch event of kagg's
# program next to libbpf-tools runqlat and offcputime, all attached at the same time
# while `perf bench sched pipe` runs pinned to CPU 0.
#
#   round r:  baseline   perf bench, nothing of ours attached
#             hist       runqlat + offcputime + `kagg offcpu` + switch_floor (one
#                        clock read and task storage, no aggregation) + perf bench;
#                        the attach order changes every round, balanced over 4
#                        rounds (the first program on a tracepoint, and the one
#                        after offcputime's stack walks, pay more)
#             stacks     offcputime + `kagg offcpu --stacks` + stack_floor (the two
#                        stack walks alone, tests/bench/bench_floor.c) + perf bench
#
# Each program is identified by the process that owns it (prog_id in /proc/PID/fdinfo),
# then `bpftool prog show` is sampled just before and just after the perf bench window:
# ns/event = delta run_time_ns / delta run_cnt (kernel.bpf_stats_enabled=1 for the run).
# Prints figures and ratios; asserts nothing on time.  Exits non-zero when something
# could not run or a program measured nothing (gone before the window ended, no runs),
# saying which.
#
# Environment: KAGG (kagg binary), BENCH_ROUNDS (4), BENCH_LOOPS (perf bench ops, 500000),
# BENCH_DURATION (-d given to every tool; a safety cap, they are stopped with SIGINT
# as soon as the window is sampled; 300).
set -u

here=$(cd "$(dirname "$0")" && pwd)
LOOPS=${BENCH_LOOPS:-500000}
RUNQLAT=${RUNQLAT:-/usr/sbin/runqlat}
OFFCPUTIME=${OFFCPUTIME:-/usr/sbin/offcputime}

# Targets from issue 2 (information only).
TARGET_HIST=0.5		# kagg / runqlat
TARGET_STACKS=0.5	# kagg --stacks / offcputime

. "$here/lib.sh"
ROUNDS=${BENCH_ROUNDS:-4}	# 4: one pass of the attach orders (see the hist round)
bench_name="offcpu bench"

# ------------------------------------------------------------ preconditions
[ "$(id -u)" = 0 ] || die "needs root (BPF and kernel.bpf_stats_enabled); run: sudo make bench"
missing=""
[ -x "$KAGG" ] || missing="$missing kagg($KAGG: run make)"
[ -x "$BPFTOOL" ] || missing="$missing bpftool"
command -v "$PERF" >/dev/null 2>&1 || missing="$missing perf(linux-perf)"
[ -x "$RUNQLAT" ] || missing="$missing runqlat(libbpf-tools)"
[ -x "$OFFCPUTIME" ] || missing="$missing offcputime(libbpf-tools)"
[ -x "$FLOOR" ] || missing="$missing bench_floor($FLOOR: run make bench)"
command -v taskset >/dev/null 2>&1 || missing="$missing taskset(util-linux)"
[ -z "$missing" ] || die "missing:$missing; run: sudo make bench-deps"
"$PERF" bench sched pipe -l 10 >/dev/null 2>&1 ||
	die "'perf bench sched pipe' does not run (perf version for this kernel?)"
case "$ROUNDS$LOOPS$DUR" in *[!0-9]*) die "BENCH_ROUNDS/LOOPS/DURATION must be integers" ;; esac
[ "$ROUNDS" -ge 1 ] || die "BENCH_ROUNDS must be >= 1"

# ------------------------------------------------------------ run state
# $pids: background tools started by us; $all_ids: every program id we identified
# (both checked at exit by bench_cleanup)
bench_init "offcpu bench"

# ------------------------------------------------------------ helpers
# prog_name ID
prog_name() {
	"$BPFTOOL" prog show id "$1" 2>/dev/null | awk 'NR == 1 {
		for (i = 1; i < NF; i++) if ($i == "name") { print $(i + 1); exit } }'
}

# snapshot FILE: "id run_time_ns run_cnt" for every loaded program.
snapshot() {
	"$BPFTOOL" prog show | awk '/^[0-9]+:/ {
		id = $1; sub(":", "", id); rt = 0; cnt = 0
		for (i = 1; i < NF; i++) {
			if ($i == "run_time_ns") rt = $(i + 1)
			if ($i == "run_cnt") cnt = $(i + 1)
		}
		print id, rt, cnt }' >"$1"
}

# start_tool LABEL NAME_REGEX CMD...: start CMD in the background and wait until it owns a
# program whose name matches NAME_REGEX; sets $tool_id to that program's id.
start_tool() {
	local label=$1 re=$2 pid id name
	shift 2
	"$@" >"$tmp/$label.out" 2>"$tmp/$label.err" &
	pid=$!
	pids+=("$pid")
	tool_id=""
	for _ in $(seq 150); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "offcpu bench: '$*' exited early:" >&2
			sed 's/^/  /' "$tmp/$label.err" | head -5 >&2
			die "$label did not start"
		fi
		for id in $(prog_ids_of "$pid"); do
			name=$(prog_name "$id")
			if [[ "$name" =~ ^($re)$ ]]; then
				tool_id=$id
				prog_names[$label]=$name
				all_ids="$all_ids $id"
				# the program is attached once the link exists; a short settle
				sleep 0.3
				return 0
			fi
		done
		sleep 0.1
	done
	die "$label ('$*') loaded no program named $re within 15 s"
}

# delta FILE_BEFORE FILE_AFTER ID: prints "runs ns_per_event", nothing when the
# program is gone from FILE_AFTER
delta() {
	awk -v id="$3" 'FNR == NR { if ($1 == id) { rt0 = $2; c0 = $3 }; next }
		$1 == id { rt = $2 - rt0; c = $3 - c0
			printf "%d %.1f\n", c, (c > 0 ? rt / c : 0) }' "$1" "$2"
}

# pipe_usecs: run the workload, print its usecs/op
pipe_usecs() {
	taskset -c 0 "$PERF" bench sched pipe -l "$LOOPS" 2>&1 |
		awk '/usecs\/op/ { print $1; found = 1 } END { exit !found }'
}

kagg_self() {	# kagg's own --overhead figure (whole run, not just the window)
	grep -o '"ns_per_event": *[0-9.]*' "$tmp/$1.out" 2>/dev/null | head -1 | awk '{ print $2 }'
}

declare -A prog_names
r_hist_rq="" r_hist_oc="" r_stacks_oc="" p_hist="" p_stacks=""
ns_kagg="" ns_kagg_st="" ns_rq="" ns_oc="" ns_oc2="" r_floor="" ns_fl="" r_sfloor="" ns_sf=""

# run_phase PHASE: tools are started; sample, run the workload, sample, stop them.
# Sets $usecs; writes $tmp/PHASE.before/.after.
run_phase() {
	snapshot "$tmp/$1.before"
	usecs=$(pipe_usecs) || die "perf bench sched pipe failed (traced, $1)"
	snapshot "$tmp/$1.after"
	stop_tools
}

cols() { printf '  %-42s %10s %10s   %s\n' "$@"; }
note() { cols "" "" "" "$1"; }	# a line of text under the rows, in their last column

row() {	# row LABEL PHASE ID [RATIO_TEXT]
	local d
	d=$(delta "$tmp/$2.before" "$tmp/$2.after" "$3")
	bench_case="round $r, $2 phase"
	[ -n "$d" ] || not_measured "$1: program unloaded before the window ended (its tool exited)"
	[ "${d%% *}" -gt 0 ] || not_measured "$1: no runs over the window"
	set -- "$1" "$d" "${4:-}"
	cols "$1" "${2%% *}" "${2##* }" "$3"
	last_ns=${2##* }
}

echo "kagg offcpu benchmark: $ROUNDS round(s), perf bench sched pipe -l $LOOPS on CPU 0"
echo "kernel $(uname -r), $(nproc) CPUs, kagg $KAGG"
echo "issue 2 reference on its machine: runqlat sched_switch ~520 ns/event, offcputime ~3800"

williams=("runqlat offcputime1 switch_floor kagg" "offcputime1 kagg runqlat switch_floor"
	"kagg switch_floor offcputime1 runqlat" "switch_floor runqlat kagg offcputime1")
for r in $(seq "$ROUNDS"); do
	echo
	echo "== round $r/$ROUNDS"
	base=$(pipe_usecs) || die "perf bench sched pipe failed (baseline)"

	# hist: runqlat, offcputime, kagg histogram mode and the switch floor side
	# by side.  Programs on one tracepoint run in attach order, and the order
	# shows: the first pays for warming what they all touch (on a PTI
	# machine without PCID, every switch starts with a cold TLB), and the
	# one after offcputime pays for its stack walks' misses (seen: the
	# switch floor ~92 ns/event mid-chain, ~240 first; kagg 117 behind the
	# floor, ~180 behind offcputime).  So the order follows a Williams
	# square: over 4 rounds each program is once in each place and once
	# behind each other one.
	order=${williams[$(((r - 1) % 4))]}
	for t in $order; do
		case $t in
		runqlat) start_tool runqlat 'sched_switch|sched_switch_raw|handle_sched_switch|handle_switch' \
			"$RUNQLAT" "$DUR" 1; id_rq=$tool_id ;;
		offcputime1) start_tool offcputime1 'sched_switch|sched_switch_raw|handle_sched_switch|oncpu' \
			"$OFFCPUTIME" "$DUR"; id_oc=$tool_id ;;
		kagg) start_tool kagg 'offcpu_tp_btf|offcpu_raw_tp' \
			"$KAGG" offcpu -d "$DUR" --overhead --format json; id_k=$tool_id ;;
		switch_floor) start_tool switch_floor 'switch_floor' "$FLOOR" switch "$DUR"
			id_sf=$tool_id ;;
		esac
	done
	echo "  hist round: attached in the order $order"
	run_phase hist
	u_hist=$usecs

	# stacks: offcputime and kagg --stacks side by side
	start_tool offcputime2 'sched_switch|sched_switch_raw|handle_sched_switch|oncpu' "$OFFCPUTIME" "$DUR"
	id_oc2=$tool_id
	start_tool kagg_stacks 'offcpu_tp_btf|offcpu_raw_tp' \
		"$KAGG" offcpu --stacks -d "$DUR" --overhead --format json
	id_ks=$tool_id
	# the two stack walks alone, nothing else: what any such tool pays per event
	start_tool stack_floor 'stack_floor' "$FLOOR" stacks "$DUR"
	id_fl=$tool_id
	run_phase stacks
	u_stacks=$usecs

	cols program runs ns/event "kagg ratio (target)"
	row "runqlat ${prog_names[runqlat]} #$id_rq" hist "$id_rq"; rq=$last_ns
	row "offcputime ${prog_names[offcputime1]} #$id_oc" hist "$id_oc"; oc=$last_ns
	row "kagg offcpu ${prog_names[kagg]} #$id_k" hist "$id_k"; k=$last_ns
	a=$(ratio "$k" "$rq") b=$(ratio "$k" "$oc")
	note "kagg/runqlat $a (<= $TARGET_HIST: $(met "$a" "$TARGET_HIST")), kagg/offcputime $b"
	row "one clock read + task storage (switch_floor #$id_sf)" hist "$id_sf"; sf=$last_ns
	g=$(ratio "$sf" "$rq")
	note "switch floor/runqlat $g: the least an off-CPU histogram pays"
	r_sfloor="$r_sfloor $g" ns_sf="$ns_sf $sf"
	row "offcputime ${prog_names[offcputime2]} #$id_oc2" stacks "$id_oc2"; oc2=$last_ns
	row "kagg offcpu --stacks ${prog_names[kagg_stacks]} #$id_ks" stacks "$id_ks"; ks=$last_ns
	c=$(ratio "$ks" "$oc2")
	note "kagg --stacks/offcputime $c (<= $TARGET_STACKS: $(met "$c" "$TARGET_STACKS"))"
	row "stack walks alone (stack_floor #$id_fl)" stacks "$id_fl"; fl=$last_ns
	f=$(ratio "$fl" "$oc2")
	note "stack walks/offcputime $f: no tool making them can go below"
	r_floor="$r_floor $f" ns_fl="$ns_fl $fl"
	ph=$(ratio "$u_hist" "$base") ps=$(ratio "$u_stacks" "$base")
	echo "  perf bench sched pipe: baseline $base usecs/op; hist round $u_hist ($ph x);" \
		"stacks round $u_stacks ($ps x)"
	echo "  kagg --overhead self-report (whole run): hist $(kagg_self kagg) ns/event," \
		"stacks $(kagg_self kagg_stacks) ns/event"

	r_hist_rq="$r_hist_rq $a" r_hist_oc="$r_hist_oc $b" r_stacks_oc="$r_stacks_oc $c"
	p_hist="$p_hist $ph" p_stacks="$p_stacks $ps"
	ns_kagg="$ns_kagg $k" ns_kagg_st="$ns_kagg_st $ks" ns_rq="$ns_rq $rq"
	ns_oc="$ns_oc $oc" ns_oc2="$ns_oc2 $oc2"
done

m_a=$(echo "$r_hist_rq" | median_mean) m_c=$(echo "$r_stacks_oc" | median_mean)
echo
echo "== median over $ROUNDS round(s)"
echo "  ns/event: kagg $(echo "$ns_kagg" | median_mean), kagg --stacks $(echo "$ns_kagg_st" | median_mean)," \
	"runqlat $(echo "$ns_rq" | median_mean), offcputime $(echo "$ns_oc" | median_mean)" \
	"(stacks round $(echo "$ns_oc2" | median_mean))"
echo "  kagg/runqlat             $m_a   target <= $TARGET_HIST: $(met "$m_a" "$TARGET_HIST")"
echo "  kagg/offcputime          $(echo "$r_hist_oc" | median_mean)"
echo "  switch floor/runqlat     $(echo "$r_sfloor" | median_mean)" \
	"($(echo "$ns_sf" | median_mean) ns/event: one clock read and task storage, no aggregation)"
echo "  kagg --stacks/offcputime $m_c   target <= $TARGET_STACKS: $(met "$m_c" "$TARGET_STACKS")"
echo "  stack walks alone/offcputime $(echo "$r_floor" | median_mean)" \
	"($(echo "$ns_fl" | median_mean) ns/event: the floor under both --stacks figures)"
echo "  perf bench usecs/op vs untraced: hist round $(echo "$p_hist" | median_mean) x," \
	"stacks round $(echo "$p_stacks" | median_mean) x"
exit 0
