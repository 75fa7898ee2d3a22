#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Run cmocka test binaries, show their output, and close with one line
# "N passed, N failed, N skipped" summed over all of them.  A binary that
# dies without cmocka's summary counts as one failure.
#
#   tests/run.sh GROUP BIN...
#
# KAGG_TEST_RUNNER, when set, is a command each BIN runs under (e.g.
# "qemu-aarch64-static -L /" for a cross build's tests).
set -u
group="$1"; shift
passed=0; failed=0; skipped=0; which=""
log=$(mktemp); trap 'rm -f "$log"' EXIT
for bin in "$@"; do
	echo "=== $group: $(basename "$bin")"
	# shellcheck disable=SC2086 # the runner is a command and its arguments
	CMOCKA_MESSAGE_OUTPUT=stdout timeout --kill-after=10 600 ${KAGG_TEST_RUNNER:-} "$bin" \
		>"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | head -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | head -1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | head -1)
	for t in $(sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_]*\)$/\1/p' "$log" | sort -u); do
		which="$which $(basename "$bin")/$t"
	done
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	if [ -z "$p$f$s" ] || { [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; }; then
		echo "=== $group: $(basename "$bin") exited $rc without a cmocka verdict: counted as a failure"
		failed=$((failed + 1))
		which="$which $(basename "$bin")"
	fi
done
echo
[ -n "$which" ] && echo "$group: failed:$which"
echo "$group: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
