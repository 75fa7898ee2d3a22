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
# kagg serve meanwhile is scraped every second by a real Prometheus (on loopback, its data in a
# temporary directory) besides the curl scrapes, while a process with a non-UTF-8 name runs
# (offcpu -P labels its series with that name) and a slow-client attacker keeps up to 100
# connections from 127.0.0.2 that send one header line a second and never end their
# request, reconnecting as the server closes them (at most 100 connections a second).
# Prometheus must see up == 1 at every scrape, about one scrape a second, no counter reset.
# SOAK_LOAD_GROUPS (default 4) sets the messaging groups (-g) and SOAK_LOAD_NICE (default 0)
# the load's nice value, for a soak beside other work on the same machine; SOAK_SERVE_NICE
# (default 0) the nice value of kagg serve and Prometheus: on a machine saturated by other
# work, a scrape waits for the CPU longer than the 1 s scrape_timeout, as fleet.md says, and
# a negative value gives them the CPU weight it advises.
set -u
KAGG=${KAGG:-build/bin/kagg}
MIN=${SOAK_MINUTES:-30}
GROUPS_=${SOAK_LOAD_GROUPS:-4}
NICE_=${SOAK_LOAD_NICE:-0}
SERVE_NICE=${SOAK_SERVE_NICE:-0}
secs=$((MIN * 60))
warm=$((secs / 6 < 60 ? secs / 6 : 60))
tmp=$(mktemp -d /tmp/kagg-soak-XXXXXX)
load=
hostile=
attacker=
prom=

die() { echo "soak: $*" >&2; exit 1; }
stop() { [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null; }
cleanup() {
	stop "$load"
	stop "$hostile"
	stop "$attacker"
	stop "$prom"
	rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$KAGG" ] || die "$KAGG not built"
command -v perf >/dev/null || die "missing perf; run: sudo make bench-deps"
command -v curl >/dev/null || die "missing curl; run: sudo make bench-deps"
command -v prometheus >/dev/null || die "missing prometheus; run: sudo make deps"
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

# the process with a hostile name: bytes that are no UTF-8, woken 100 times a second, for secs
start_hostile() {
	python3 - "$secs" <<'PY' &
import sys, time
open("/proc/self/comm", "wb").write(b"\xff\xfek\xc3(agg\x80")
end = time.monotonic() + int(sys.argv[1]) + 60
while time.monotonic() < end:
    time.sleep(0.01)
PY
	hostile=$!
}

# the slow-client attacker on 127.0.0.1:PORT, from 127.0.0.2, for secs (and a minute more)
start_attacker() {
	python3 - "$1" "$secs" >"$tmp/attacker.out" 2>&1 <<'PY' &
import signal, socket, sys, time
port, secs = int(sys.argv[1]), int(sys.argv[2])
socks, made, cut, end = [], 0, 0, time.monotonic() + secs + 60
signal.signal(signal.SIGTERM, lambda *a: setattr(sys.modules[__name__], "end", 0))
while time.monotonic() < end:
    t = time.monotonic()
    live = []
    for s in socks:  # a header line each; those the server closed are dropped
        try:
            s.send(b"X-Slow: 1\r\n")
            live.append(s)
        except OSError:
            s.close()
            cut += 1
    socks = live
    while len(socks) < 100:  # up to 100 new connections a second
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.bind(("127.0.0.2", 0))
            s.connect(("127.0.0.1", port))
            s.send(b"GET /metrics HTTP/1.1\r\n")
            socks.append(s)
            made += 1
        except OSError:
            s.close()
            break
    time.sleep(max(0, 1 - (time.monotonic() - t)))
print(f"attacker: {made} slow connections made, {cut} of them closed by the server")
PY
	attacker=$!
}

# prometheus on 127.0.0.1:PPORT scraping 127.0.0.1:PORT every second
start_prometheus() {
	mkdir -p "$tmp/prom"
	printf '%s\n' "global:" "  scrape_interval: 1s" "  scrape_timeout: 1s" \
		"scrape_configs:" "  - job_name: kagg" "    static_configs:" \
		"      - targets: ['127.0.0.1:$2']" >"$tmp/prom/prometheus.yml"
	nice -n "$SERVE_NICE" prometheus --config.file="$tmp/prom/prometheus.yml" \
		--storage.tsdb.path="$tmp/prom/data" --web.listen-address="127.0.0.1:$1" \
		--log.level=error >"$tmp/prom.log" 2>&1 &
	prom=$!
}

# up PPORT: 0 once Prometheus has scraped kagg and found it up
up() {
	curl -sf -G --data-urlencode 'query=up{job="kagg"}' "http://127.0.0.1:$1/api/v1/query" |
		grep -q '"value":\[[0-9.]*,"1"\]'
}

# prom_check PPORT T0 T1: what Prometheus stored from T0 to T1 - 2 s (epoch seconds): every up
# sample 1 (the time and last error of any 0), about one a second, the longest scrape, and
# no reset of any kagg counter (resets() of each counter name on its own: the names are
# dropped, so two of them could not be summed at once).  0 or 1
prom_check() {
	python3 - "$@" <<'PY'
import json, re, sys, urllib.parse, urllib.request
port, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) - 2
rng = int(t1 - t0)
def api(path, **q):
    url = f"http://127.0.0.1:{port}/api/v1/{path}?" + urllib.parse.urlencode(q)
    return json.load(urllib.request.urlopen(url, timeout=60))["data"]
def query(q):
    return api("query", query=q, time=f"{t1:.3f}")["result"]
bad = 0
up = query(f'up{{job="kagg"}}[{rng}s]')
samples = up[0]["values"] if up else []
down = [float(t) - t0 for t, v in samples if v != "1"]
dur = query(f'max_over_time(scrape_duration_seconds{{job="kagg"}}[{rng}s])')
dur = float(dur[0]["value"][1]) if dur else float("nan")
names = [n for n in api("label/__name__/values")
         if re.fullmatch(r"kagg_.*(_total|_bucket|_count)", n)]
resets, which = 0, []
for n in names:
    r = query(f'sum(resets({n}{{job="kagg"}}[{rng}s]))')
    v = float(r[0]["value"][1]) if r else 0
    resets += v
    if v:
        which.append(n)
print(f"serve: Prometheus scraped it {len(samples)} times in {rng} s, up = 0 at {len(down)}"
      f" of them, longest scrape {dur:.3f} s; {len(names)} counter names, {resets:g} resets")
if down:
    print("serve: up = 0 at", ", ".join(f"{t:.0f} s" for t in down[:10]))
    for t in api("targets")["activeTargets"]:
        print("serve: Prometheus' last error:", t["lastError"] or "none")
    bad += 1
if len(samples) < rng * 0.9:
    print("serve: not about one scrape a second"); bad += 1
if not names:
    print("serve: Prometheus stored no kagg counter"); bad += 1
if resets:
    print("serve: counters reset:", ", ".join(which[:10])); bad += 1
sys.exit(1 if bad else 0)
PY
}

# sample_serve PID T: append "T rss_kib fds sockets" of PID to $tmp/serve.samples, both
# counts from one listing of its fds (clients open and close sockets meanwhile)
sample_serve() {
	local rss fds
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
	fds=$(find "/proc/$1/fd" -mindepth 1 -printf '%l\n' 2>/dev/null |
		awk '/^socket:/ {s++} END {print NR, s + 0}')
	[ -n "$rss" ] && echo "$2 $rss $fds" >>"$tmp/serve.samples"
	return 0
}

# soak_serve: kagg serve (runqlat, offcpu -P, syscount) scraped through curl, 0.5 s apart,
# and by Prometheus every second, beside the hostile name and the attacker, for secs
# seconds, sampled after each curl scrape; RSS checked as above, fds other than sockets never
# above the warm-up's, sockets (its connections, which clients open and close) never above
# the listening one and --connections (64); every curl scrape's counters (events seen,
# recorded, buckets) never below the previous scrape's, and prom_check.  0 or 1
soak_serve() {
	local port=$((40000 + $$ % 10000)) pport=$((50000 + $$ % 10000)) pid t=0 rc=0 i start
	local t0 t1
	nice -n "$SERVE_NICE" "$KAGG" serve --listen "127.0.0.1:$port" --tool runqlat \
		--tool 'offcpu -P' --tool syscount --max-keys 50 2>"$tmp/serve.err" &
	pid=$!
	for ((i = 0; i < 300; i++)); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break
		sleep 0.1
	done
	start_prometheus "$pport" "$port"
	for ((i = 0; i < 600; i++)); do
		up "$pport" && break
		sleep 0.1
	done
	t0=$(date +%s.%N)
	start_attacker "$port"
	: >"$tmp/serve.samples"
	: >"$tmp/serve.scrapes"
	: >"$tmp/serve.times"
	start=$SECONDS
	while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$secs" ]; do
		curl -sf -o "$tmp/scrape" -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" \
			>>"$tmp/serve.times"
		grep -aE '^kagg_(events_(seen|recorded)_total|[a-z]+_seconds_(count|bucket))' \
			"$tmp/scrape" >>"$tmp/serve.scrapes"
		echo "--" >>"$tmp/serve.scrapes"
		sleep 0.5
		t=$((SECONDS - start))
		sample_serve "$pid" "$t" || break
	done
	# what Prometheus saw over the run, from its first up == 1; its last scrapes stored by now
	sleep 3
	t1=$(date +%s.%N)
	prom_check "$pport" "$t0" "$t1" || rc=1
	stop "$attacker"
	attacker=
	stop "$prom"
	prom=
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" || { echo "serve: kagg exited $?: $(head -3 "$tmp/serve.err")"; rc=1; }
	cat "$tmp/attacker.out"
	python3 - "$tmp/serve.scrapes" "$tmp/serve.samples" "$warm" \
		"$tmp/serve.times" <<'PY' || rc=1
import sys
scrapes, samples, warm, times = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tt = sorted(float(l) for l in open(times) if l.strip())
if tt:
    print(f"serve: curl scrapes took p50 {tt[len(tt) // 2]:.3f} s, p99 "
          f"{tt[len(tt) * 99 // 100]:.3f} s, max {tt[-1]:.3f} s; "
          f"{sum(t > 1 for t in tt)} of {len(tt)} over 1 s")
prev, n, bad = {}, 0, 0
cur = {}
for line in open(scrapes, encoding="utf-8", errors="surrogateescape"):
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
rss_max = max(r[1] for r in after)
files = [r[2] - r[3] for r in after]
socks_max = max(r[3] for r in after)
print(f"serve: {n} scrapes, {len(prev)} counter series followed, {bad} went backwards")
print(f"serve: RSS {rows[0][1]} KiB at 1 s, {base[1]} KiB after {warm} s warm-up, "
      f"max {rss_max}, last {last[1]} KiB; fds other than sockets {files[0]} after warm-up, "
      f"max {max(files)}, last {files[-1]}; sockets {base[3]} after warm-up, "
      f"max {socks_max}, last {last[3]}")
if rss_max - base[1] > 1024: print(f"serve: RSS grew by {rss_max - base[1]} KiB"); bad += 1
if max(files) - files[0] > 0: print(f"serve: fds grew by {max(files) - files[0]}"); bad += 1
if socks_max > 1 + 64: print(f"serve: {socks_max} sockets, above 1 + --connections"); bad += 1
if not n: print("serve: no scrape"); bad += 1
sys.exit(1 if bad else 0)
PY
	return "$rc"
}

fail=0
echo "soak: $MIN min, both commands at once, under perf bench sched messaging" \
	"-g $GROUPS_ at nice $NICE_, warm-up $warm s; serve (at nice $SERVE_NICE) scraped by" \
	"Prometheus too, beside a process named in bytes that are no UTF-8 and a" \
	"slow-client attacker"
start_hostile
soak offcpu offcpu --mode both -i 1 --format json -d "$secs" >"$tmp/offcpu.out" 2>&1 &
offcpu=$!
soak_serve >"$tmp/serve.out" 2>&1 &
serve=$!
wait "$offcpu" || fail=1
wait "$serve" || fail=1
cat "$tmp/offcpu.out" "$tmp/serve.out"
[ "$fail" = 0 ] && echo "soak: PASS" || echo "soak: FAIL"
exit "$fail"
