#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# make soak: `kagg offcpu --mode both -i 1` and `kagg serve` scraped 0.5 s apart,
# both at once for SOAK_MINUTES (default 30) under `perf bench sched messaging`
# (linux-perf, make bench-deps).  Every second the RSS and open fds of kagg are sampled;
# every interval's JSON must keep the stream's loss identity (docs/streaming.md,
# user/stream/stream.c): the stream's counters and the records delivered are
# counted by the events' generation, so each exact interval has
# stream.seen = stream.sent + stream.dropped and stream.delivered =
# stream.sent, exactly.
# Prints the figures; exits 1 when, after the warm-up (a sixth of the run,
# at most 60 s), RSS grows by more than 1 MiB or fds by more than 0, or an
# interval breaks the identity.  Needs root.
# SOAK_LOAD_GROUPS (default 4) sets the messaging groups (-g) and SOAK_LOAD_NICE (default 0)
# the load's nice value, for a soak beside other work on the same machine.
set -u
KAGG=${KAGG:-build/bin/kagg}
MIN=${SOAK_MINUTES:-30}
GROUPS_=${SOAK_LOAD_GROUPS:-4}
NICE_=${SOAK_LOAD_NICE:-0}
secs=$((MIN * 60))
warm=$((secs / 6 < 60 ? secs / 6 : 60))
tmp=$(mktemp -d /tmp/kagg-soak-XXXXXX)
load=

die() { echo "soak: $*" >&2; exit 1; }
cleanup() {
	[ -n "$load" ] && kill "$load" 2>/dev/null
	[ -n "$load" ] && wait "$load" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$KAGG" ] || die "$KAGG not built"
command -v perf >/dev/null || die "missing perf; run: sudo make bench-deps"
command -v curl >/dev/null || die "missing curl; run: sudo make bench-deps"
perf bench sched messaging -l 1 >/dev/null 2>&1 || die "perf bench sched messaging does not run"

# the load: messaging rounds back to back
(while :; do
	nice -n "$NICE_" perf bench sched messaging -g "$GROUPS_" -l 2000 >/dev/null 2>&1
done) &
load=$!

# sample NAME PID T: append "T rss_kib fds" of PID to $tmp/NAME.samples; 1 once PID is gone
sample() {
	local rss fds
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$2/status" 2>/dev/null) || return 1
	fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
	[ -n "$rss" ] && echo "$3 $rss $fds" >>"$tmp/$1.samples"
	return 0
}

# soak NAME ARGS...: run kagg ARGS for secs seconds, sample, check; 0 or 1
soak() {
	local name=$1 pid t=0 rc=0
	shift
	"$KAGG" "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" &
	pid=$!
	: >"$tmp/$name.samples"
	while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$secs" ]; do
		sleep 1
		t=$((t + 1))
		sample "$name" "$pid" "$t" || break
	done
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || { echo "$name: kagg exited $rc: $(head -3 "$tmp/$name.err")"; return 1; }
	python3 - "$name" "$tmp/$name.json" "$tmp/$name.samples" "$warm" <<'PY'
import json, sys
name, out, samples, warm = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text, dec, pos, objs = open(out).read(), json.JSONDecoder(), 0, []
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    o, pos = dec.raw_decode(text, pos)
    objs.append(o)
bad = 0
seen = delivered = dropped = flight_max = 0
for i, o in enumerate(objs):
    m = o.get("meta", o)
    s = m.get("stream")
    if s is None:
        print(f"{name}: interval {i}: no stream block"); bad += 1; continue
    seen += s["seen"]; delivered += s["delivered"]; dropped += s["dropped"]
    flight = seen - delivered - dropped
    flight_max = max(flight_max, flight)
    if s["seen"] != s["sent"] + s["dropped"]:
        print(f"{name}: interval {i}: seen {s['seen']} != sent {s['sent']} "
              f"+ dropped {s['dropped']}"); bad += 1
    if m.get("snapshot_exact", True) and s["delivered"] != s["sent"]:
        print(f"{name}: interval {i}: delivered {s['delivered']} != sent {s['sent']}"); bad += 1
    if flight < 0:
        print(f"{name}: interval {i}: {-flight} more records delivered than sent"); bad += 1
if seen - delivered - dropped:
    print(f"{name}: at the end {seen - delivered - dropped} records seen but neither "
          f"delivered nor dropped"); bad += 1
rows = [tuple(map(int, l.split())) for l in open(samples) if l.strip()]
after = [r for r in rows if r[0] > warm] or rows[-1:]
base, last = after[0], after[-1]
rss_max = max(r[1] for r in after); fds_max = max(r[2] for r in after)
print(f"{name}: {len(objs)} intervals, stream seen {seen} delivered {delivered} "
      f"dropped {dropped}, at most {flight_max} records in flight at an interval's end, "
      f"identity broken {bad} times")
print(f"{name}: RSS {rows[0][1]} KiB at 1 s, {base[1]} KiB after {warm} s warm-up, "
      f"max {rss_max}, last {last[1]} KiB; fds {base[2]} after warm-up, max {fds_max}, "
      f"last {last[2]}")
if rss_max - base[1] > 1024: print(f"{name}: RSS grew by {rss_max - base[1]} KiB"); bad += 1
if fds_max - base[2] > 0: print(f"{name}: fds grew by {fds_max - base[2]}"); bad += 1
if not objs: print(f"{name}: no interval"); bad += 1
sys.exit(1 if bad else 0)
PY
}

# soak_serve: kagg serve (runqlat, offcpu -P, syscount) scraped through curl, 0.5 s apart,
# for secs seconds, sampled after each scrape; RSS and fds checked as above, and every scrape's
# counters (events seen, recorded, buckets) never below the previous scrape's.  0 or 1
soak_serve() {
	local port=$((40000 + $$ % 10000)) pid t=0 rc=0 i start
	"$KAGG" serve --listen "127.0.0.1:$port" --tool runqlat --tool 'offcpu -P' \
		--tool syscount --max-keys 50 2>"$tmp/serve.err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break
		sleep 0.1
	done
	: >"$tmp/serve.samples"
	: >"$tmp/serve.scrapes"
	start=$SECONDS
	while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$secs" ]; do
		curl -sf "http://127.0.0.1:$port/metrics" |
			grep -E '^kagg_(events_(seen|recorded)_total|[a-z]+_seconds_(count|bucket))' \
			>>"$tmp/serve.scrapes"
		echo "--" >>"$tmp/serve.scrapes"
		sleep 0.5
		t=$((SECONDS - start))
		sample serve "$pid" "$t" || break
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || { echo "serve: kagg exited $rc: $(head -3 "$tmp/serve.err")"; return 1; }
	python3 - "$tmp/serve.scrapes" "$tmp/serve.samples" "$warm" <<'PY'
import sys
scrapes, samples, warm = sys.argv[1], sys.argv[2], int(sys.argv[3])
prev, n, bad = {}, 0, 0
cur = {}
for line in open(scrapes):
    line = line.strip()
    if line == "--":
        for k, v in cur.items():
            if k in prev and v < prev[k]:
                if bad < 5:
                    print(f"serve: scrape {n}: {k} went from {prev[k]} to {v}")
                bad += 1
        prev.update(cur); cur = {}; n += 1
        continue
    k, v = line.rsplit(" ", 1)
    cur[k] = float(v)
rows = [tuple(map(int, l.split())) for l in open(samples) if l.strip()]
after = [r for r in rows if r[0] > warm] or rows[-1:]
base, last = after[0], after[-1]
rss_max = max(r[1] for r in after); fds_max = max(r[2] for r in after)
print(f"serve: {n} scrapes, {len(prev)} counter series followed, {bad} went backwards")
print(f"serve: RSS {rows[0][1]} KiB at 1 s, {base[1]} KiB after {warm} s warm-up, "
      f"max {rss_max}, last {last[1]} KiB; fds {base[2]} after warm-up, max {fds_max}, "
      f"last {last[2]}")
if rss_max - base[1] > 1024: print(f"serve: RSS grew by {rss_max - base[1]} KiB"); bad += 1
if fds_max - base[2] > 0: print(f"serve: fds grew by {fds_max - base[2]}"); bad += 1
if not n: print("serve: no scrape"); bad += 1
sys.exit(1 if bad else 0)
PY
}

fail=0
echo "soak: $MIN min, both commands at once, under perf bench sched messaging" \
	"-g $GROUPS_ at nice $NICE_, warm-up $warm s"
soak offcpu offcpu --mode both -i 1 --format json -d "$secs" >"$tmp/offcpu.out" 2>&1 &
offcpu=$!
soak_serve >"$tmp/serve.out" 2>&1 &
serve=$!
wait "$offcpu" || fail=1
wait "$serve" || fail=1
cat "$tmp/offcpu.out" "$tmp/serve.out"
[ "$fail" = 0 ] && echo "soak: PASS" || echo "soak: FAIL"
exit "$fail"
