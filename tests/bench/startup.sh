#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Start-up cost of embedding libkagg: time from exec to "attached" of
# build/examples/offcpu_hist (kagg_offcpu__open + kagg_session__attach,
# linked against build/lib/libkagg.so) against tests/bench/bare_offcpu (a
# bare libbpf skeleton open/load/attach of the same BPF object, configured
# the same way).  Both run with CLI_EXIT_AFTER_ATTACH=1: they print the
# CLOCK_REALTIME time of attach and exit.  Runs alternate, N of each
# (default 30); prints medians, the median ratio (target <= 1.3x) and max
# RSS from /usr/bin/time (getrusage of the child).  Asserts nothing.
#
#   tests/bench/startup.sh [N]        (run by make bench through tests/bench/run.sh)
set -u
cd "$(dirname "$0")/../.." || exit 2
N=${1:-${N:-30}}
EMBED=build/examples/offcpu_hist
BARE=build/tests/bench/bare_offcpu
TIME=/usr/bin/time

[ "$(id -u)" = 0 ] || { echo "startup: cannot run: needs root (the programs attach)"; exit 1; }
for b in "$EMBED" "$BARE"; do
	[ -x "$b" ] || { echo "startup: $b not built (make examples $BARE)"; exit 1; }
done
[ -x "$TIME" ] || { echo "startup: $TIME missing (apt-get install time)"; exit 1; }

tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

# run NAME BIN: one start; appends "to_attach_us total_us maxrss_kb" to $tmp/NAME
run() {
	local name=$1 bin=$2 t0 t1 att
	t0=${EPOCHREALTIME/./}
	att=$(CLI_EXIT_AFTER_ATTACH=1 "$TIME" -f '%M' -o "$tmp/rss" "$bin" 2>"$tmp/err" |
		sed -n 's/^attached \([0-9]*\)$/\1/p')
	t1=${EPOCHREALTIME/./}
	if [ -z "$att" ]; then
		echo "startup: $bin did not attach:"; cat "$tmp/err"
		return 1
	fi
	echo "$((att / 1000 - t0)) $((t1 - t0)) $(tail -1 "$tmp/rss")" >>"$tmp/$name"
}

# Warm the page cache and the kernel's BTF parsing once, unmeasured.
run warm "$BARE" && run warm "$EMBED" || exit 1
for ((i = 0; i < N; i++)); do
	run bare "$BARE" || exit 1
	run embed "$EMBED" || exit 1
done

# median FILE COLUMN
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxcol() { cut -d' ' -f"$2" "$1" | sort -n | tail -1; }

ba=$(median "$tmp/bare" 1); ea=$(median "$tmp/embed" 1)
bt=$(median "$tmp/bare" 2); et=$(median "$tmp/embed" 2)
br=$(median "$tmp/bare" 3); er=$(median "$tmp/embed" 3)
bm=$(maxcol "$tmp/bare" 3); em=$(maxcol "$tmp/embed" 3)

echo "startup: exec -> attached, offcpu system-wide histogram, $N runs each (alternating)"
printf '  %-34s %12s %12s %14s %12s\n' "" "to attach" "exec->exit" "maxRSS median" "maxRSS max"
printf '  %-34s %9.2f ms %9.2f ms %11.0f KB %9.0f KB\n' "bare libbpf skeleton (bare_offcpu)" \
	"$(echo "$ba / 1000" | bc -l)" "$(echo "$bt / 1000" | bc -l)" "$br" "$bm"
printf '  %-34s %9.2f ms %9.2f ms %11.0f KB %9.0f KB\n' "libkagg embedding (offcpu_hist)" \
	"$(echo "$ea / 1000" | bc -l)" "$(echo "$et / 1000" | bc -l)" "$er" "$em"
printf '  median ratio libkagg / bare: to attach %.2fx (target <= 1.3x), exec->exit %.2fx, RSS %.2fx\n' \
	"$(echo "$ea / $ba" | bc -l)" "$(echo "$et / $bt" | bc -l)" "$(echo "$er / $br" | bc -l)"
