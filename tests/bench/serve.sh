#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Scrape cost of kagg serve against prometheus-node-exporter serving its own
# metrics, both on loopback in the same run: N scrapes of each, alternating
# (default 300), through curl in text format 0.0.4.  Prints, for each, the
# series per scrape, the daemon's CPU time per scrape and per series (utime +
# stime from /proc/PID/stat), the median scrape wall time, the daemon's CPU
# at idle over IDLE seconds (default 5) and under `perf bench sched pipe` (no
# scrape; the BPF programs' own time is the kernel's, not the daemon's), the ratio kagg / node-exporter
# of CPU per series, and the median scrape wall time of each while `perf bench
# sched messaging` saturates the CPUs (L scrapes each, alternating, default 20):
# a scrape's latency under load is the CPU the scheduler gives the daemon.
# kagg serves runqlat, offcpu -P (--max-keys 50) and syscount.  Asserts nothing;
# exits non-zero, saying which, when a figure could not be taken (a daemon
# serving no series, perf missing, no CPU time counted over the scrapes).
#
#   tests/bench/serve.sh [N]        (run by make bench through tests/bench/run.sh)
set -u
. "$(dirname "$0")/lib.sh"
N=${1:-${N:-300}}
IDLE=${IDLE:-5}
L=${L:-20}
NODE=${NODE_EXPORTER:-prometheus-node-exporter}
bench_require "serve bench" curl "$NODE" "$PERF"

tmp=$(mktemp -d)
kpid= npid= lpid=
cleanup() {
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	[ -n "$kpid" ] && kill "$kpid" 2>/dev/null && wait "$kpid" 2>/dev/null
	[ -n "$npid" ] && kill "$npid" 2>/dev/null && wait "$npid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

kport=$((30000 + $$ % 10000)); nport=$((kport + 1))
"$KAGG" serve --listen "127.0.0.1:$kport" --max-keys 50 --tool runqlat --tool 'offcpu -P' \
	--tool syscount 2>"$tmp/kagg.err" &
kpid=$!
"$NODE" --web.listen-address="127.0.0.1:$nport" >"$tmp/node.log" 2>&1 &
npid=$!

# up URL: wait up to 30 s for a 200
up() {
	local i
	for ((i = 0; i < 300; i++)); do
		curl -sf -o /dev/null "$1" && return 0
		sleep 0.1
	done
	return 1
}
up "http://127.0.0.1:$kport/metrics" || die "kagg serve did not start: $(cat "$tmp/kagg.err")"
up "http://127.0.0.1:$nport/metrics" || die "$NODE did not start: $(cat "$tmp/node.log")"

# cpu PID: utime + stime in clock ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
series() { curl -s "$1" | grep -vc '^#'; }
hz=$(getconf CLK_TCK)

# Idle: no scrape for IDLE seconds.
k0=$(cpu "$kpid"); n0=$(cpu "$npid")
sleep "$IDLE"
kidle=$(( $(cpu "$kpid") - k0 )); nidle=$(( $(cpu "$npid") - n0 ))

# Under load: perf bench sched pipe (when perf is there), no scrape.
k0=$(cpu "$kpid"); n0=$(cpu "$npid"); s0=$SECONDS
"$PERF" bench sched pipe -l 300000 >/dev/null 2>&1 || die "perf bench sched pipe does not run"
dt=$((SECONDS - s0)); [ "$dt" -gt 0 ] || dt=1
kload=$(awk -v c=$(( $(cpu "$kpid") - k0 )) -v hz="$hz" -v dt="$dt" 'BEGIN { printf "%.2f%%", c / hz / dt * 100 }')
nload=$(awk -v c=$(( $(cpu "$npid") - n0 )) -v hz="$hz" -v dt="$dt" 'BEGIN { printf "%.2f%%", c / hz / dt * 100 }')

# Warm both once, then alternate N scrapes each.
curl -s -o /dev/null "http://127.0.0.1:$kport/metrics"
curl -s -o /dev/null "http://127.0.0.1:$nport/metrics"
kc=0 nc=0
for ((i = 0; i < N; i++)); do
	a=$(cpu "$kpid")
	curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$kport/metrics" >>"$tmp/kwall"
	kc=$((kc + $(cpu "$kpid") - a))
	a=$(cpu "$npid")
	curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$nport/metrics" >>"$tmp/nwall"
	nc=$((nc + $(cpu "$npid") - a))
done
ks=$(series "http://127.0.0.1:$kport/metrics"); ns=$(series "http://127.0.0.1:$nport/metrics")
kw=$(median <"$tmp/kwall"); nw=$(median <"$tmp/nwall")
[ "$ks" -gt 0 ] || not_measured "kagg serve served no series"
[ "$ns" -gt 0 ] || not_measured "$NODE served no series"
[ "$kc" -gt 0 ] && [ "$nc" -gt 0 ] ||
	not_measured "no CPU tick counted over $N scrapes (kagg $kc, $NODE $nc): raise N"

# Under a saturating load: L scrapes each, alternating, while messaging rounds run.
"$PERF" bench sched messaging -l 1 >/dev/null 2>&1 || die "perf bench sched messaging does not run"
{
	(while :; do "$PERF" bench sched messaging -g 4 -l 2000 >/dev/null 2>&1; done) &
	lpid=$!
	sleep 2
	for ((i = 0; i < L; i++)); do
		curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$kport/metrics" >>"$tmp/klwall"
		curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$nport/metrics" >>"$tmp/nlwall"
	done
	kids=$(pgrep -P "$lpid")
	kill "$lpid" $kids 2>/dev/null
	wait "$lpid" 2>/dev/null
	lpid=
	klw=$(median <"$tmp/klwall"); nlw=$(median <"$tmp/nlwall")
}

echo "serve: $N scrapes each, alternating, text format; kagg serve (runqlat, offcpu -P, syscount)"
echo "       against $NODE, both on 127.0.0.1"
awk -v n="$N" -v hz="$hz" -v idle="$IDLE" -v ks="$ks" -v ns="$ns" -v kc="$kc" -v nc="$nc" \
	-v kw="$kw" -v nw="$nw" -v ki="$kidle" -v ni="$nidle" -v kl="$kload" -v nl="$nload" 'BEGIN {
	kcs = kc / hz / n; ncs = nc / hz / n
	printf "  %-22s %8s %14s %16s %12s %12s %12s\n", "", "series", "CPU/scrape", "CPU/series", "wall median", "idle CPU", "sched pipe"
	printf "  %-22s %8d %11.3f ms %13.3f us %9.3f ms %10.2f%% %12s\n", "kagg serve", ks, kcs * 1e3, kcs / ks * 1e6, kw * 1e3, ki / hz / idle * 100, kl
	printf "  %-22s %8d %11.3f ms %13.3f us %9.3f ms %10.2f%% %12s\n", "node-exporter", ns, ncs * 1e3, ncs / ns * 1e6, nw * 1e3, ni / hz / idle * 100, nl
	if (ncs > 0 && ns > 0)
		printf "  kagg / node-exporter, CPU per series: %.2fx\n", (kcs / ks) / (ncs / ns)
}'
awk -v l="$L" -v k="$klw" -v n="$nlw" 'BEGIN {
	printf "  under perf bench sched messaging -g 4, %d scrapes each: wall median kagg %.0f ms, node-exporter %.0f ms, ratio %.2fx\n", l, k * 1e3, n * 1e3, (n > 0 ? k / n : 0)
}'
