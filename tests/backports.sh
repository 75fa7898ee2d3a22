# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Sourced by tests/deps.sh and tests/vm/vmtest.sh: the one place that knows
# how kagg adds Debian's bookworm-backports suite to apt's sources.

# True when apt already lists bookworm-backports.
backports_listed() {
	grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/
}

# backports_add WHO: write the suite's sources file (root only), saying so
# on stdout as WHO.  The caller runs apt-get update.
backports_add() {
	echo "$1: adding the bookworm-backports suite"
	cat > /etc/apt/sources.list.d/kagg-backports.sources <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}
