# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Sourced by tests/deps.sh and tests/vm/vmtest.sh: the one place that knows
# how kagg adds Debian suites to apt's sources: bookworm-backports (libbpf,
# bpftool, the 6.12 guest kernel) and bullseye (the 5.10 guest kernel only,
# pinned so that nothing else is ever installed from it).

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

# True when apt already lists bullseye.
bullseye_listed() {
	grep -rqsE '(^|[[:space:]])bullseye([[:space:]]|$)' /etc/apt/sources.list \
		/etc/apt/sources.list.d/
}

# bullseye_add WHO: list bullseye (for `apt-get download` of its 5.10 kernel)
# with priority 1: apt never picks a package from it by itself.  Root only;
# the caller runs apt-get update.
bullseye_add() {
	echo "$1: adding the bullseye suite (pinned to priority 1)"
	cat > /etc/apt/sources.list.d/kagg-bullseye.sources <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bullseye
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	cat > /etc/apt/preferences.d/kagg-bullseye <<PIN
Package: *
Pin: release n=bullseye
Pin-Priority: 1
PIN
}
