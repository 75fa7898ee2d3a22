#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Map memory census: every tool, with default limits, run for a moment with
# --overhead --format json; the meta's maps (bpf_map_get_info_by_fd: key and
# value size, max_entries, copies = possible CPUs for a per-CPU map) give its
# bytes here, and the bytes it would take with CENSUS_CPUS possible CPUs
# (per-CPU maps scaled, 256 by default; the dense exp arrays, which the library
# sizes by the possible CPUs, at most their 8 MiB).  Fails when a tool's bytes at
# CENSUS_CPUS pass CENSUS_LIMIT_MIB (64).  The bytes are those of the keys and
# values; the kernel's bookkeeping per hash entry (some 50 bytes) is not in.
#
#   tests/bench/mem_census.sh        (root; KAGG: the kagg binary)
set -u

here=$(cd "$(dirname "$0")" && pwd)
KAGG=${KAGG:-$here/../../build/bin/kagg}
CPUS=${CENSUS_CPUS:-256}
LIMIT=$((${CENSUS_LIMIT_MIB:-64} * 1024 * 1024))
die() { echo "mem census: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$KAGG" ] || die "no kagg binary at $KAGG"
command -v python3 >/dev/null || die "needs python3"

cases=(
	"offcpu"
	"offcpu -P"
	"offcpu -L"
	"offcpu --stacks"
	"runqlat"
	"runqlat -P"
	"runqlat -L"
	"runqlat -P --buckets exp:3"
	"syscount"
	"syscount -L"
	"syscount -P"
	"syscount -P -L"
	"syscount -L --buckets exp:3"
	"profile"
	"funclat vfs_read"
	"hist syscalls:sys_enter_read count --key common_pid"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
echo "kagg map memory: $(nproc) CPUs online, $(python3 -c 'import os; print(len(os.sched_getaffinity(0)))') usable; projected for $CPUS possible CPUs; limit $((LIMIT >> 20)) MiB"
printf '%-40s %12s %14s  %s\n' "tool" "bytes here" "bytes@$CPUS" "largest map"
for c in "${cases[@]}"; do
	# shellcheck disable=SC2086
	if ! "$KAGG" $c -d 0.5 --overhead --format json >"$tmp/out" 2>"$tmp/err"; then
		printf '%-40s skipped: %s\n' "$c" "$(head -1 "$tmp/err")"
		continue
	fi
	line=$(python3 - "$tmp/out" "$CPUS" <<'EOF'
import json, sys
cpus = int(sys.argv[2])
doc = json.load(open(sys.argv[1]))
def metas(o):
    if isinstance(o, dict):
        if "maps" in o and "map_bytes" in o:
            yield o
        for v in o.values():
            yield from metas(v)
    elif isinstance(o, list):
        for v in o:
            yield from metas(v)
m = next(metas(doc), None)
if m is None:
    print("none")
    sys.exit()
total = 0
big = ("", 0)
for mp in m["maps"]:
    copies = cpus if mp["copies"] > 1 or mp["type"].startswith(("percpu", "lru_percpu")) else 1
    if mp["type"] in ("ringbuf", "user_ringbuf"):
        b = mp["max_entries"]
    elif mp["type"].endswith("_storage") and not mp["type"].startswith("percpu"):
        b = 0
    else:
        b = mp["max_entries"] * (mp["key_size"] + mp["value_size"] * copies)
        # dense exp arrays: the library takes fewer as the CPUs grow, 8 MiB in all
        # (SESSION_EXP_DENSE_TOTAL), so a projection caps them there
        if mp["map"] == "exp_hist" and copies == cpus and copies != mp["copies"]:
            b = min(b, 8 << 20)
    total += b
    if b > big[1]:
        big = (mp["map"], b)
print(m["map_bytes"], total, "%s=%d" % big)
EOF
)
	[ "$line" != none ] || { printf '%-40s no map meta\n' "$c"; fail=1; continue; }
	read -r here_b at_b big <<<"$line"
	flag=""
	if [ "$at_b" -gt "$LIMIT" ]; then
		flag="  OVER"
		fail=1
	fi
	printf '%-40s %12d %14d  %s%s\n' "$c" "$here_b" "$at_b" "$big" "$flag"
done
exit $fail
