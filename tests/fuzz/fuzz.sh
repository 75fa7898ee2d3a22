#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Run the libFuzzer targets built by tests/fuzz/fuzz.mk (docs/fuzzing.md).
#
#   tests/fuzz/fuzz.sh replay BIN...         every file of tests/fuzz/corpus/NAME and
#                                            tests/fuzz/regress/NAME once; fails on any crash,
#                                            leak, sanitizer report or input slower than 10 s
#   tests/fuzz/fuzz.sh fuzz SECONDS BIN...   fuzz each target SECONDS (FUZZ_JOBS at once);
#                                            new inputs go to build/san/fuzz-corpus/NAME, a
#                                            crash, hang (> FUZZ_TIMEOUT s, default 1), leak
#                                            or out-of-memory to build/san/fuzz-crash/NAME
#
# The committed seeds stay small; what a run finds is kept under build/ to seed
# the next run.  A crasher to keep goes to tests/fuzz/regress/NAME (after the
# fix), where `make test` replays it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "$here/../.." && pwd)/build/san
mode=${1:-}
shift || true

# Per-target input size limit: a trace.dat holds at least two 4 KiB pages.
max_len() {
	case "$1" in
	fuzz_tracedat) echo 65536 ;;
	fuzz_syms) echo 32768 ;;
	*) echo 8192 ;;
	esac
}

inputs() {
	local name=$1 d
	for d in "$here/corpus/$name" "$here/regress/$name"; do
		[ -d "$d" ] && find "$d" -type f ! -name '.*' | sort
	done
}

replay() {
	local failed=0 total=0 bin name n log
	log=$(mktemp)
	trap 'rm -f "$log"' RETURN
	for bin in "$@"; do
		name=$(basename "$bin")
		mapfile -t files < <(inputs "$name")
		n=${#files[@]}
		total=$((total + n))
		if [ "$n" = 0 ]; then
			echo "=== fuzz-replay: $name: no inputs committed: counted as a failure"
			failed=$((failed + 1))
			continue
		fi
		if "$bin" -timeout=10 -rss_limit_mb=2048 "${files[@]}" >"$log" 2>&1; then
			echo "=== fuzz-replay: $name: $n inputs passed"
		else
			cat "$log"
			echo "=== fuzz-replay: $name: FAILED (see above)"
			failed=$((failed + 1))
		fi
	done
	echo
	echo "fuzz-replay: $total inputs, $# targets, $failed failed"
	[ "$failed" = 0 ]
}

fuzz_one() {
	local secs=$1 bin=$2 name log rc execs
	name=$(basename "$bin")
	mkdir -p "$out/fuzz-corpus/$name" "$out/fuzz-crash/$name"
	log="$out/fuzz-crash/$name.log"
	dirs=("$out/fuzz-corpus/$name")
	for d in "$here/corpus/$name" "$here/regress/$name"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	"$bin" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-1}" -rss_limit_mb=2048 \
		-malloc_limit_mb=512 -max_len="$(max_len "$name")" -print_final_stats=1 \
		-artifact_prefix="$out/fuzz-crash/$name/" "${dirs[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		echo "=== fuzz: $name: ${execs:-?} inputs in $secs s, no crash, hang, leak or OOM" \
			"(corpus $(find "$out/fuzz-corpus/$name" -type f | wc -l) files)"
	else
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|ALARM|.*out-of-memory)' "$log" | head -5
		echo "=== fuzz: $name: FAILED after ${execs:-?} inputs: $(ls "$out/fuzz-crash/$name")" \
			"(log $log)"
	fi
	return $rc
}

case "$mode" in
replay)
	replay "$@"
	;;
fuzz)
	secs=$1
	shift
	jobs=${FUZZ_JOBS:-1}
	rc=0
	pids=()
	for bin in "$@"; do
		fuzz_one "$secs" "$bin" &
		pids+=($!)
		if [ "${#pids[@]}" -ge "$jobs" ]; then
			wait "${pids[0]}" || rc=1
			pids=("${pids[@]:1}")
		fi
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	exit $rc
	;;
*)
	sed -n '4,16p' "$0" >&2
	exit 2
	;;
esac
