#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# libkagg's ABI, derived from the headers and checked against what was
# committed.
#
#  - Symbols: the KAGG_API declarations in user/include/kagg/*.h define the
#    exported set; the version script user/libkagg.map lists them, and both
#    build/lib/libkagg.so (dynamic symbols) and build/lib/libkagg.a (global
#    definitions) must export exactly them, all named kagg_*.
#  - Layouts: tests/abi/libkagg.abi is an abidw dump of libkagg.so's exported
#    functions and the public headers' types; abidiff compares a dump of the
#    built library with it and fails on any change but added functions and
#    added enumerators (harmless to abidiff).  A member appended to a struct,
#    which the ABI policy allows, fails too: abidiff 2.2 cannot be told to let
#    appends pass (its has_data_member_inserted_at suppression also hides a
#    reordering), so the append is accepted by `make abi-update` and a
#    reviewed dump.
#  - Headers: each public header, alone, and kagg/kagg.h compile with
#    `gcc -std=c11 -pedantic -Werror` and `g++ -Werror`.
#
#   tests/abi/abi.sh list                    symbols declared KAGG_API, sorted
#   tests/abi/abi.sh update-map [MAP]        regenerate the version script
#   tests/abi/abi.sh update-dump [SO] [DUMP] regenerate the layout dump from a built .so
#   tests/abi/abi.sh headers                 the header compile checks alone
#   tests/abi/abi.sh check [MAP] [SO] [A] [DUMP]   everything (make abi-check)
#
# `make abi-update` runs update-map, rebuilds the .so, then update-dump.
# Run from the repository root.  `check` exits 1 and says what differs.
set -u
cd "$(dirname "$0")/../.." || exit 2
HDR_DIR=user/include/kagg
HDRS=("$HDR_DIR"/*.h)
# The release (the Makefile's KAGG_VERSION, passed in the environment) names the
# newest version node: release 0.2.x exports its additions in KAGG_0.2.
RELEASE=${KAGG_VERSION:-$(sed -n 's/^KAGG_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*:=[[:space:]]*//p' Makefile |
	paste -sd.)}
VERSION_NODE=KAGG_${RELEASE%.*}
CC=${CC:-gcc}
CXX=${CXX:-g++}

# Function names declared with KAGG_API: strip comments and preprocessor
# lines, then take the identifier right before the first '(' after each
# KAGG_API (declarations may span lines).
header_syms() {
	perl -0777 -ne '
		s{/\*.*?\*/}{}gs; s{//[^\n]*}{}g; s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}gm;
		while (/\bKAGG_API\b([^;{]*?)\b([A-Za-z_]\w*)\s*\(/gs) { print "$2\n"; }
	' "${HDRS[@]}" | LC_ALL=C sort -u
}

# Symbols the version script makes global (explicit names only).
map_syms() {
	sed -n '/global:/,/local:/p' "$1" | sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_*]*\);.*/\1/p' |
		LC_ALL=C sort -u
}

# Symbols the shared library defines in its dynamic symbol table.
so_syms() {
	nm -D --defined-only "$1" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
		LC_ALL=C sort -u
}

# Global symbols the static archive defines (what a static link can see).
a_syms() {
	nm -g --defined-only "$1" | awk 'NF == 3 && $2 != "A" { print $3 }' | LC_ALL=C sort -u
}

# "NODE SYMBOL" for every symbol of the version script, nodes in their order.
map_nodes() {
	awk '/^KAGG_[0-9.]+ *\{/ { node = $1 }
	     node && /^[[:space:]]*kagg_[A-Za-z0-9_]+;/ { gsub(/[[:space:];]/, ""); print node, $0 }' "$1"
}

# The newest node of a version script.
map_newest() {
	sed -n 's/^\(KAGG_[0-9.]*\) *{.*/\1/p' "$1" | tail -1
}

# gen_map OLD_MAP: the version script for the headers' symbols.  A symbol keeps the
# node it was released in; a new one goes to the release's node (VERSION_NODE), which
# is appended, inheriting the last, when the old script has no such node yet.
gen_map() {
	local old=$1 d nodes n prev=""
	d=$(mktemp -d)
	header_syms >"$d/headers"
	[ -r "$old" ] && map_nodes "$old" >"$d/old" || : >"$d/old"
	nodes=$(awk '{ print $1 }' "$d/old" | awk '!seen[$0]++')
	echo "$nodes" | grep -qx "$VERSION_NODE" || nodes=$(printf '%s\n%s' "$nodes" "$VERSION_NODE")
	awk '{ print $2 }' "$d/old" | LC_ALL=C sort -u >"$d/released"
	echo "/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */"
	echo "/*"
	echo " * libkagg version script: one node per release, each inheriting the last."
	echo " * Generated from the KAGG_API declarations in user/include/kagg/*.h by"
	echo " * \`make abi-update\` (tests/abi/abi.sh): a symbol stays in the node it was"
	echo " * released in, a new one goes to the node of the Makefile's release."
	echo " * \`make abi-check\` fails when headers, this file and the .so disagree, or when"
	echo " * the newest node is not the release's."
	echo " */"
	for n in $nodes; do
		[ -n "$n" ] || continue
		echo "$n {"
		echo "	global:"
		{
			awk -v n="$n" '$1 == n { print $2 }' "$d/old"
			[ "$n" = "$VERSION_NODE" ] && LC_ALL=C comm -23 "$d/headers" "$d/released"
		} | LC_ALL=C sort -u | LC_ALL=C comm -12 - "$d/headers" | sed 's/^/		/; s/$/;/'
		if [ -z "$prev" ]; then
			echo "	local:"
			echo "		*;"
			echo "};"
		else
			echo "} $prev;"
		fi
		prev=$n
	done
	rm -rf "$d"
}

# diff_sets NAME_A FILE_A NAME_B FILE_B [HINT]: print what is in A and not in B; 1 if any.
diff_sets() {
	local extra
	extra=$(LC_ALL=C comm -23 "$2" "$4")
	[ -z "$extra" ] && return 0
	echo "abi-check: in $1 but not in $3:"
	echo "$extra" | sed 's/^/    /'
	[ -n "${5:-}" ] && echo "  ($5)"
	return 1
}

# The layout dump: the .so's functions and the public headers' types, without
# paths or source locations so that it does not depend on where it was built.
dump() {
	abidw --headers-dir "$HDR_DIR" --drop-private-types --drop-undefined-syms \
		--exported-interfaces-only --no-corpus-path \
		--no-comp-dir-path --no-show-locs --type-id-style hash --out-file "$2" "$1"
}

has_debug_info() {
	readelf -S "$1" 2>/dev/null | grep -q '\.debug_info'
}

# Each public header alone, and kagg.h, as C11 (pedantic) and as C++.
check_headers() {
	local h rc=0 out
	for h in "${HDRS[@]}"; do
		h=${h##*/}
		out=$(echo "#include <kagg/$h>" |
			"$CC" -std=c11 -pedantic -Wall -Wextra -Werror -I user/include -x c -c - \
				-o /dev/null 2>&1) ||
			{ echo "abi-check: <kagg/$h> does not compile with $CC -std=c11 -pedantic:"; \
			  echo "$out" | sed 's/^/    /'; rc=1; }
		out=$(echo "#include <kagg/$h>" |
			"$CXX" -Wall -Wextra -Werror -I user/include -x c++ -c - -o /dev/null 2>&1) ||
			{ echo "abi-check: <kagg/$h> does not compile with $CXX:"; \
			  echo "$out" | sed 's/^/    /'; rc=1; }
	done
	return $rc
}

# replace NEW FILE [NOTE]: FILE becomes NEW unless they are the same; says which.
replace() {
	if cmp -s "$1" "$2"; then
		rm -f "$1"
		echo "abi-update: $2 up to date${3:-}"
	else
		mv "$1" "$2" && chmod 644 "$2"
		echo "abi-update: wrote $2${3:-}"
	fi
}

check_layouts() {
	local so=$1 dump=$2 d=$3 rc
	command -v abidiff >/dev/null || {
		echo "abi-check: abidiff not found (Debian package abigail-tools: make deps)"
		return 1
	}
	[ -r "$dump" ] || { echo "abi-check: $dump missing: make abi-update"; return 1; }
	has_debug_info "$so" || {
		echo "abi-check: $so has no debug info: build with -g (the default CFLAGS)"
		return 1
	}
	# Dump against dump: both sides filtered the same way.
	dump "$so" "$d/built.abi" || { echo "abi-check: abidw failed on $so"; return 1; }
	abidiff --no-added-syms --no-show-locs "$dump" "$d/built.abi" >"$d/abidiff" 2>&1
	rc=$?
	[ $rc = 0 ] && return 0
	echo "abi-check: $so is not ABI compatible with $dump (abidiff exit $rc):"
	sed 's/^/    /' "$d/abidiff"
	echo "  (a struct member removed, reordered or retyped, a function removed or changed"
	echo "   is a break; a member appended to a struct is not: then, or for an intended"
	echo "   break, \`make abi-update\` and commit the dump)"
	return 1
}

case "${1:-check}" in
list)
	header_syms
	;;
update-map | update)
	MAP=${2:-user/libkagg.map}
	tmp=$(mktemp) && gen_map "$MAP" >"$tmp" || exit 2
	replace "$tmp" "$MAP" " ($(header_syms | wc -l) symbols)"
	;;
update-dump)
	SO=${2:-build/lib/libkagg.so}
	DUMP=${3:-tests/abi/libkagg.abi}
	[ -r "$SO" ] || { echo "abi-update: $SO not built"; exit 2; }
	has_debug_info "$SO" || { echo "abi-update: $SO has no debug info (build with -g)"; exit 2; }
	tmp=$(mktemp) && dump "$SO" "$tmp" || { rm -f "$tmp"; exit 2; }
	replace "$tmp" "$DUMP"
	;;
headers)
	check_headers && echo "abi-check: headers OK (C11 pedantic, C++)"
	;;
check)
	MAP=${2:-user/libkagg.map}
	SO=${3:-build/lib/libkagg.so}
	A=${4:-build/lib/libkagg.a}
	DUMP=${5:-tests/abi/libkagg.abi}
	[ -r "$SO" ] || { echo "abi-check: $SO not built"; exit 2; }
	[ -r "$A" ] || { echo "abi-check: $A not built"; exit 2; }
	d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
	header_syms >"$d/headers"
	map_syms "$MAP" >"$d/map"
	so_syms "$SO" >"$d/so"
	a_syms "$A" >"$d/a"
	rc=0
	newest=$(map_newest "$MAP")
	if [ "$newest" != "$VERSION_NODE" ]; then
		echo "abi-check: release $RELEASE (Makefile) exports its additions in $VERSION_NODE," \
			"but the newest node of $MAP is ${newest:-none}: make abi-update"
		rc=1
	fi
	if grep -q '[*]' "$d/map"; then
		echo "abi-check: $MAP has a wildcard in global: list every symbol (make abi-update)"
		rc=1
	fi
	if [ ! -s "$d/headers" ]; then
		echo "abi-check: no KAGG_API declarations found in ${HDRS[*]}"
		rc=1
	fi
	diff_sets "the headers (KAGG_API)" "$d/headers" "$MAP" "$d/map" \
		"new public functions: run \`make abi-update\` and commit the map" || rc=1
	diff_sets "$MAP" "$d/map" "the headers (KAGG_API)" "$d/headers" \
		"removed or renamed in the headers: an ABI break; \`make abi-update\` if intended" || rc=1
	diff_sets "$MAP" "$d/map" "$SO" "$d/so" \
		"listed but not defined in user/*.c, or the .so is stale: rebuild" || rc=1
	diff_sets "$SO" "$d/so" "$MAP" "$d/map" \
		"exported without being listed: the .so is stale, rebuild" || rc=1
	diff_sets "the headers (KAGG_API)" "$d/headers" "$SO" "$d/so" \
		"declared KAGG_API but not exported" || rc=1
	diff_sets "$A" "$d/a" "the headers (KAGG_API)" "$d/headers" \
		"global in the static library without being KAGG_API: build it with the Makefile's partial link" ||
		rc=1
	diff_sets "the headers (KAGG_API)" "$d/headers" "$A" "$d/a" \
		"declared KAGG_API but not defined in the static library" || rc=1
	for lib in "$SO" "$A"; do
		f=$d/so
		[ "$lib" = "$A" ] && f=$d/a
		if grep -v '^kagg_' "$f" | grep -q .; then
			echo "abi-check: $lib exports symbols without the kagg_ prefix:"
			grep -v '^kagg_' "$f" | sed 's/^/    /'
			rc=1
		fi
	done
	check_headers || rc=1
	check_layouts "$SO" "$DUMP" "$d" || rc=1
	if [ $rc = 0 ]; then
		echo "abi-check: OK, $(wc -l <"$d/so") symbols ($VERSION_NODE): headers == $MAP" \
			"== $SO == $A; layouts match $DUMP; headers compile as C11 and C++"
	else
		echo "abi-check: FAILED"
	fi
	exit $rc
	;;
*)
	echo "usage: $0 list | update-map [MAP] | update-dump [SO] [DUMP] | headers |" \
		"check [MAP] [SO] [A] [DUMP]" >&2
	exit 2
	;;
esac
