#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Run the benchmarks: every compiled benchmark given as an argument
# (build/tests/bench/*, from tests/bench/*.c), then every other script
# tests/bench/*.sh.  Benchmarks print figures and ratios and assert nothing
# on time; this exits non-zero only when one of them could not run.
#
#   tests/bench/run.sh BIN...        (make bench)
set -u
here=$(cd "$(dirname "$0")" && pwd)
rc=0

# ---------------------------------------------------------------- compiled benches
for bin in "$@"; do
	echo "=== bench: $(basename "$bin")"
	"$bin" || { echo "=== bench: $(basename "$bin") failed ($?)"; rc=1; }
	echo
done

# ---------------------------------------------------------------- script benches
for sh in "$here"/*.sh; do
	case "$(basename "$sh")" in run.sh | lib.sh | before_after.sh) continue ;; esac  # before_after: two binaries
	echo "=== bench: $(basename "$sh")"
	bash "$sh" || { echo "=== bench: $(basename "$sh") failed ($?)"; rc=1; }
	echo
done
exit $rc
