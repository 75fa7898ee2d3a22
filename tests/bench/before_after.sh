#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# BPF cost per event of two kagg builds, side by side:
#
#   tests/bench/before_after.sh OLD_KAGG NEW_KAGG
#
# For each case below, the old and the new binary run the same command at the
# same time (their programs on the same hooks) while one workload runs; the
# attach order alternates from round to round (the first program on a hook
# pays for warming what both touch).  Each binary's figure is all its BPF run
# time over the runs of its busiest program (lib.sh: report), sampled with
# `bpftool prog show` just before and after the workload
# (kernel.bpf_stats_enabled=1 for the run).  Prints per round new/old and, per
# case, the median and the range of the ratios.  Asserts nothing on time; exits
# non-zero only when something could not run.
#
#   case       command                      workload
#   offcpu     offcpu                       perf bench sched pipe
#   stacks     offcpu --stacks              perf bench sched pipe
#   runqlat    runqlat                      perf bench sched pipe
#   runqlatP   runqlat -P                   perf bench sched pipe
#   syscount   syscount                     perf bench syscall basic
#   syscountL  syscount -L                  perf bench syscall basic
#   syscountP  syscount -P                  perf bench syscall basic
#   profile    profile -F 999               perf bench sched pipe (CPU samples)
#   funclat    funclat vfs_read             perf bench sched pipe
#
# Environment: BENCH_ROUNDS (4, rounded up to even), BENCH_LOOPS (sched pipe
# ops, 100000; syscall basic runs 20 times as many), BENCH_CASES (space
# separated; the first six above when unset), BENCH_DURATION (safety cap given as -d, 60), BENCH_VERBOSE (set: each
# program's runs and ns/run under each round), BENCH_NEW_ARGS (words added to the new
# binary's command only, for an option the old one lacks: "--unwind fp" measures the
# frame-pointer path of profile and offcpu --stacks against a build from before tables).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bench_name="before/after bench"

[ $# = 2 ] || die "usage: $0 OLD_KAGG NEW_KAGG"
OLD=$1
NEW=$2
ROUNDS=${BENCH_ROUNDS:-4}
LOOPS=${BENCH_LOOPS:-100000}
DUR=${BENCH_DURATION:-60}
CASES=${BENCH_CASES:-offcpu stacks runqlat syscount profile funclat}
case "$ROUNDS$LOOPS$DUR" in *[!0-9]*) die "BENCH_ROUNDS/LOOPS/DURATION must be integers" ;; esac
[ "$ROUNDS" -ge 1 ] || die "BENCH_ROUNDS must be >= 1"
ROUNDS=$(((ROUNDS + 1) / 2 * 2))
for b in "$OLD" "$NEW"; do [ -x "$b" ] || die "no kagg binary at $b"; done
KAGG=$NEW
bench_init "before/after bench"
[ -x "$BPFTOOL" ] || die "no bpftool at $BPFTOOL"
command -v "$PERF" >/dev/null || die "no perf (make bench-deps)"
"$PERF" bench sched pipe -l 10 >/dev/null 2>&1 || die "'perf bench sched pipe' does not run"

# args CASE: the kagg command line of a case
args() {
	case $1 in
	offcpu) echo offcpu ;;
	stacks) echo offcpu --stacks ;;
	runqlat) echo runqlat ;;
	runqlatP) echo runqlat -P ;;
	syscount) echo syscount ;;
	syscountL) echo syscount -L ;;
	syscountP) echo syscount -P ;;
	profile) echo profile -F 999 ;;
	funclat) echo funclat vfs_read ;;
	*) return 1 ;;
	esac
}

workload() {
	case $1 in
	syscount*) "$PERF" bench syscall basic -l $((LOOPS * 20)) ;;
	*) "$PERF" bench sched pipe -l "$LOOPS" ;;
	esac >/dev/null 2>&1 || die "the workload of $1 failed"
}

# launch LABEL BIN CASE: start BIN's command and wait until it is attached
# (the banner on stderr is printed once every program is attached).
launch() {
	local label=$1 bin=$2 extra=""
	[ "$label" = new ] && extra=${BENCH_NEW_ARGS:-}
	# shellcheck disable=SC2046,SC2086
	start "$label" 1 "$bin" $(args "$3") $extra -d "$DUR" --overhead
	for _ in $(seq 100); do
		grep -q 'Hit Ctrl-C' "$tmp/$label.err" && break
		sleep 0.1
	done
	prog_ids_of "${pids[-1]}" >"$tmp/$label.ids"	# every program, once attached
	all_ids="$all_ids $(tr '\n' ' ' <"$tmp/$label.ids")"
}

for c in $CASES; do args "$c" >/dev/null || die "unknown case '$c'"; done
echo "kagg before/after: $ROUNDS rounds, kernel $(uname -r), $(nproc) CPUs"
echo "old: $OLD"
echo "new: $NEW${BENCH_NEW_ARGS:+ (with $BENCH_NEW_ARGS)}"
summary=()
# geo A B: the geometric mean of two ratios (an old-first and a new-first round:
# the order's own cost, paid by whichever is first, cancels out)
geo() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", sqrt(a * b) }'; }
# range LIST: "min .. max" of a space separated list
range() { echo "$1" | tr ' ' '\n' | grep -v '^$' | sort -g | sed -n '1h; $!d; x; G; s/\n/ .. /p'; }

for c in $CASES; do
	echo
	echo "== $c: kagg $(args "$c")"
	# shellcheck disable=SC2046,SC2086
	if ! "$NEW" $(args "$c") ${BENCH_NEW_ARGS:-} -d 0.1 --quiet >/dev/null 2>"$tmp/probe.err"; then
		echo "  skipped: $(head -1 "$tmp/probe.err")"
		summary+=("$(printf '%-9s skipped: %s' "$c" "$(head -1 "$tmp/probe.err")")")
		continue
	fi
	ratios="" pairs="" first=""
	for r in $(seq "$ROUNDS"); do
		order=$(in_order "$r" old new)
		for t in $order; do
			if [ "$t" = old ]; then launch old "$OLD" "$c"; else launch new "$NEW" "$c"; fi
		done
		snapshot "$tmp/before"
		workload "$c"
		snapshot "$tmp/after"
		stop_tools
		report old >"$tmp/old.rep"
		report new >"$tmp/new.rep"
		o=$(tail -1 "$tmp/old.rep") n=$(tail -1 "$tmp/new.rep") x=$(ratio "$n" "$o")
		printf '  round %d (%s first): old %s ns/event, new %s, new/old %s\n' "$r" \
			"${order%% *}" "$o" "$n" "$x"
		[ -z "${BENCH_VERBOSE:-}" ] || { echo "    old:"; head -n -1 "$tmp/old.rep"
			echo "    new:"; head -n -1 "$tmp/new.rep"; }
		[ "$x" = n/a ] || ratios="$ratios $x"
		if [ $((r % 2)) = 1 ]; then
			first=$x
		elif [ "$first" != n/a ] && [ "$x" != n/a ]; then
			pairs="$pairs $(geo "$first" "$x")"
		fi
	done
	line=$(printf '%-9s new/old: rounds median %s (%s); order-balanced pairs median %s (%s)' \
		"$c" "$(echo "$ratios" | median_mean)" "$(range "$ratios")" \
		"$(echo "$pairs" | median_mean)" "$(range "$pairs")")
	echo "  $line"
	summary+=("$line")
done
echo
echo "== summary (BPF ns per event, new over old, $ROUNDS rounds each)"
printf '  %s\n' "${summary[@]}"
