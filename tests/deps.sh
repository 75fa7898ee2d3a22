#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Install Debian packages kagg needs, idempotently: nothing is downloaded
# when everything is present.  Packages named after --backports come from
# bookworm-backports (the suite is added if missing), --main from bookworm.
# --arch arm64 adds a foreign dpkg architecture first (multiarch: the arm64
# -dev libraries a cross build links, named PKG:arm64).
#
#   tests/deps.sh --backports "libbpf-dev bpftool" --main "clang-19 ..."
#   tests/deps.sh --arch arm64 --backports "libbpf-dev:arm64" --main "gcc-aarch64-linux-gnu ..."
set -eu

# shellcheck source=tests/backports.sh
. "$(dirname "$0")/backports.sh"

bpo=""
main=""
arch=""
while [ $# -gt 0 ]; do
	case "$1" in
	--backports) bpo="$2"; shift 2 ;;
	--main) main="$2"; shift 2 ;;
	--arch) arch="$2"; shift 2 ;;
	*) echo "deps.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

# A package counts as present when installed; a backports package must also
# be the backports version (bookworm's libbpf 1.1 is too old for us).
missing_main=""
for p in $main; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing_main="$missing_main $p"
done
missing_bpo=""
for p in $bpo; do
	v=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null || true)
	case "$v" in
	*"ok installed"*bpo*) ;;
	*) missing_bpo="$missing_bpo $p" ;;
	esac
done

new_arch=""
if [ -n "$arch" ] && [ "$arch" != "$(dpkg --print-architecture)" ] &&
   ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
	new_arch=$arch
fi

[ -z "$missing_main$missing_bpo$new_arch" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing_main$missing_bpo; run as root, or as a user with sudo" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ -n "$new_arch" ]; then
	echo "deps: adding the $new_arch architecture (multiarch)"
	dpkg --add-architecture "$new_arch"
fi
if [ -n "$missing_bpo" ] && ! backports_listed; then
	backports_add deps
fi

echo "deps: installing:$missing_main$missing_bpo"
apt-get update -q >/dev/null
[ -z "$missing_main$missing_bpo" ] && { echo "deps: done"; exit 0; }
if [ -n "$missing_bpo" ]; then
	# shellcheck disable=SC2086
	apt-get install -y -q -t bookworm-backports $missing_bpo >/dev/null
fi
if [ -n "$missing_main" ]; then
	# shellcheck disable=SC2086
	apt-get install -y -q $missing_main >/dev/null
fi
echo "deps: done"
