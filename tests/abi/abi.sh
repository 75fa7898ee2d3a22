#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# libkagg's ABI, derived from the headers.  The set of exported symbols is
# defined by the KAGG_API declarations in user/include/kagg/*.h; the version
# script user/libkagg.map lists them explicitly and the shared library must
# export exactly them.
#
#   tests/abi/abi.sh list               symbols declared KAGG_API, sorted
#   tests/abi/abi.sh update [MAP]       regenerate the version script (make abi-update)
#   tests/abi/abi.sh check [MAP] [SO]   headers == map == .so exports (make abi-check)
#
# Run from the repository root.  `check` exits 1 and names every symbol that
# is in one set and not another.
set -u
cd "$(dirname "$0")/../.." || exit 2
HDRS=(user/include/kagg/*.h)
MAP=${2:-user/libkagg.map}
SO=${3:-build/lib/libkagg.so}
VERSION_NODE=KAGG_0.1

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
	sed -n '/global:/,/local:/p' "$MAP" | sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_*]*\);.*/\1/p' |
		LC_ALL=C sort -u
}

# Symbols the shared library defines in its dynamic symbol table.
so_syms() {
	nm -D --defined-only "$SO" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
		LC_ALL=C sort -u
}

gen_map() {
	echo "/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */"
	echo "/*"
	echo " * libkagg version script, generated from the KAGG_API declarations in"
	echo " * user/include/kagg/*.h by \`make abi-update\` (tests/abi/abi.sh)."
	echo " * \`make abi-check\` fails when headers, this file and the .so disagree."
	echo " */"
	echo "$VERSION_NODE {"
	echo "	global:"
	header_syms | sed 's/^/		/; s/$/;/'
	echo "	local:"
	echo "		*;"
	echo "};"
}

# diff_sets NAME_A FILE_A NAME_B FILE_B: print what is in A and not in B; 1 if any.
diff_sets() {
	local extra
	extra=$(LC_ALL=C comm -23 "$2" "$4")
	[ -z "$extra" ] && return 0
	echo "abi-check: in $1 but not in $3:"
	echo "$extra" | sed 's/^/    /'
	[ -n "${5:-}" ] && echo "  ($5)"
	return 1
}

case "${1:-check}" in
list)
	header_syms
	;;
update)
	tmp=$(mktemp) && gen_map >"$tmp" || exit 2
	if cmp -s "$tmp" "$MAP"; then
		rm -f "$tmp"
		echo "abi-update: $MAP up to date ($(header_syms | wc -l) symbols)"
	else
		mv "$tmp" "$MAP" && chmod 644 "$MAP"
		echo "abi-update: wrote $MAP ($(header_syms | wc -l) symbols)"
	fi
	;;
check)
	[ -r "$SO" ] || { echo "abi-check: $SO not built"; exit 2; }
	d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
	header_syms >"$d/headers"
	map_syms >"$d/map"
	so_syms >"$d/so"
	rc=0
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
	if grep -v '^kagg_' "$d/so" | grep -q .; then
		echo "abi-check: $SO exports symbols without the kagg_ prefix:"
		grep -v '^kagg_' "$d/so" | sed 's/^/    /'
		rc=1
	fi
	if [ $rc = 0 ]; then
		echo "abi-check: OK, $(wc -l <"$d/so") symbols ($VERSION_NODE): headers == $MAP == $SO"
	else
		echo "abi-check: FAILED"
	fi
	exit $rc
	;;
*)
	echo "usage: $0 list | update [MAP] | check [MAP] [SO]" >&2
	exit 2
	;;
esac
