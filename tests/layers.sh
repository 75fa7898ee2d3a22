#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# The floors of the tree (docs/architecture.md, "Where each piece lives"): a file may include
# a header of its own room or of a lower floor, never of its floor's other
# rooms nor of a higher floor.  Run from the repository root by `make test`
# (and `make layers`); prints every include that climbs and exits 1.
#
#   floor 0  bpf/shared/            types and bucket math both sides include
#   floor 1  user/util/             leaf helpers: arrays, maps, text, JSON, logs, tracefs
#   floor 2  user/rb/ user/syms/ user/unwind/   the ring-buffer mechanism; symbols; unwind tables
#   floor 3  user/ftrace/ user/snapshot/   ftrace formats; snapshots, buckets, units
#   floor 4  user/stream/ user/export/ user/render/   consumers and outputs of snapshots
#   floor 5  user/session/          the spine: a session over BPF objects
#   floor 6  user/builtin/          the built-in tools' library halves
#            user/prog/             the generic loader of programs written with bpf/sdk/
#   tools/   the kagg command: <kagg/*.h> and its own headers only
#   bpf/     BPF programs and BPF-only headers (*.bpf.h): shared/ and their own
#
# Generated headers (*.skel.h, *.pb-c.h, kagg_version.h, exp_table_data.h,
# syscall_names.h) sit
# in build/ and name no room.
set -u
cd "$(dirname "$0")/.." || exit 2

declare -A FLOOR=([shared]=0 [util]=1 [rb]=2 [syms]=2 [unwind]=2 [ftrace]=3 [snapshot]=3
	[stream]=4 [export]=4 [render]=4 [session]=5 [prog]=6 [builtin]=7)
rc=0
bad() {
	echo "layers: $1:$2: $3"
	rc=1
}

generated() {
	case "$1" in
	*.skel.h | *.pb-c.h | kagg_version.h | exp_table_data.h | syscall_names.h) return 0 ;;
	esac
	return 1
}

# check FILE ROOM FLOOR: every #include "X" of FILE
check() {
	local file=$1 room=$2 floor=$3 n inc dir
	while IFS=: read -r n inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		generated "$inc" && continue
		case "$inc" in
		*.bpf.h)
			[ "$room" = bpf ] || bad "$file" "$n" "\"$inc\": BPF-only headers are for bpf/"
			continue
			;;
		*/*) dir=${inc%%/*} ;;
		*)
			# a bare name: a header of the file's own folder (tools/, bpf/, tests/)
			case "$room" in
			tools | bpf) continue ;;
			esac
			bad "$file" "$n" "\"$inc\": name the room (\"ROOM/$inc\")"
			continue
			;;
		esac
		if [ "$room" = tools ]; then
			bad "$file" "$n" "\"$inc\": tools/ includes <kagg/*.h> and its own headers only"
			continue
		fi
		if [ -z "${FLOOR[$dir]+x}" ]; then
			bad "$file" "$n" "\"$inc\": no such room"
			continue
		fi
		[ "$dir" = "$room" ] && continue
		if [ "$room" = bpf ]; then
			[ "$dir" = shared ] || bad "$file" "$n" "\"$inc\": BPF code includes shared/ only"
			continue
		fi
		if [ "${FLOOR[$dir]}" -ge "$floor" ]; then
			bad "$file" "$n" "\"$inc\" (floor ${FLOOR[$dir]}) from $room/ (floor $floor): an include climbs"
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file")
}

for f in user/*/*.[ch]; do
	room=${f#user/}
	room=${room%%/*}
	[ "$room" = include ] && continue
	[ -n "${FLOOR[$room]+x}" ] || { bad "$f" 0 "user/$room/ is no room of docs/architecture.md"; continue; }
	check "$f" "$room" "${FLOOR[$room]}"
done
for f in bpf/shared/*.h; do
	check "$f" shared 0
done
for f in bpf/*.bpf.c bpf/*.bpf.h; do
	check "$f" bpf 0
done
for f in tools/*.[ch]; do
	check "$f" tools 8
done
[ $rc = 0 ] && echo "layers: OK, no include climbs a floor"
exit $rc
