#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# The kernel matrix: run kagg's test binaries inside Debian cloud kernels
# under qemu (TCG) and natively on the host, and print one table
#
#	test group x kernel -> passed/failed/skipped
#
#   tests/vm/vmtest.sh [--out DIR] [--timeout SECONDS] [--kernels "6.1 arm64-6.12"]
#                      [--no-host] [--cross ARCH=DIR] [--cmd 'NAME=COMMAND']... BIN...
#
# BIN are cmocka test binaries (one group each, counted from cmocka's
# summary); each --cmd is a shell command run from the repository root (one
# group, cmd/NAME, passing when it exits 0), e.g. --cmd 'offcpu=build/bin/kagg
# offcpu -d 1 -v'.
#
# Kernels are resolved at run time with apt-cache: the newest
# linux-image-5.10*-cloud-amd64-unsigned (bullseye, listed at priority 1),
# linux-image-6.1*-cloud-amd64-unsigned (bookworm) and the newest
# linux-image-6.12*-cloud-amd64-unsigned (bookworm-backports); the .debs are
# cached in OUT/cache and only vmlinuz is extracted (the serial console,
# initramfs and BPF support the tests need are all built in, no modules).
#
# A kernel named arm64-SERIES (arm64-6.1, arm64-6.12) is Debian's
# linux-image-SERIES*-cloud-arm64-unsigned, booted under qemu-system-aarch64
# (-M virt -cpu max, TCG).  Its initramfs holds the same tree built for arm64:
# --cross arm64=DIR names that build (make ARCH=arm64: build-arm64), whose
# files stand in for BIN, kagg and the helpers at the same paths under /kagg,
# with Debian's busybox-static:arm64 (apt-get download, cached in OUT/cache)
# and the arm64 libraries their ELF NEEDED entries name (multiarch, resolved
# with readelf: ldd cannot run a foreign binary).
#
# Guarantees: a guest that does not reach the end of its /init within the
# timeout (no boot, panic, hang) is a failure, reported with the tail of its
# console log; it is never skipped.  Exit status is non-zero when any guest
# or host test failed.
#
# Each guest is told which attach paths its kernel must support
# (kagg.require= on the command line, see KERNEL_REQUIRE below), so that a
# path that regresses fails instead of skipping.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/backports.sh
. "$here/../backports.sh"
out=build/vm
timeout_s=${VMTEST_TIMEOUT:-300}
kernels=${VMTEST_KERNELS:-"6.1 6.12"}
host=${VMTEST_HOST:-1}
cmds=()
declare -A cross # cross[ARCH] = the build directory of that architecture
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out="$2"; shift 2 ;;
	--timeout) timeout_s="$2"; shift 2 ;;
	--kernels) kernels="$2"; shift 2 ;;
	--no-host) host=0; shift ;;
	--cross)
		case "$2" in *=?*) ;; *) echo "vmtest: --cross wants ARCH=DIR" >&2; exit 2 ;; esac
		cross[${2%%=*}]=${2#*=}; shift 2 ;;
	--cmd)
		case "$2" in *=*) ;; *) echo "vmtest: --cmd wants NAME=COMMAND" >&2; exit 2 ;; esac
		cmds+=("$2"); shift 2 ;;
	--) shift; break ;;
	-*) echo "vmtest: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
bins=("$@")
[ ${#bins[@]} -gt 0 ] || { echo "vmtest: no test binaries given" >&2; exit 2; }
kagg_bin=${KAGG:-build/bin/kagg}
# The build directory BIN and kagg are in (build/): a cross build's paths are
# the same under its own directory.
native_out=${kagg_bin%/bin/kagg}
case "$(uname -m)" in
aarch64) host_arch=arm64 ;;
*) host_arch=x86 ;;
esac

# Attach paths each kernel series must support (the kernel config says so:
# 6.1 cloud has CONFIG_KPROBES but no CONFIG_FPROBE, 6.12 has both).
# 5.10 (bullseye cloud) has kprobes, fentry and tp_btf, and no fprobe either.
# arm64 cloud kernels have kprobes and no CONFIG_FPROBE (arm64 cannot build it
# before 6.14, fprobe on fgraph); fentry/fexit on kernel functions need ftrace
# direct calls, on arm64 from 6.4: 6.12 has them, 6.1 refuses (ENOTSUPP at attach).
declare -A KERNEL_REQUIRE=(
	[5.10]="kprobe,kretprobe,fentry,fexit,tp_btf,raw_tp"
	[6.1]="kprobe,kretprobe,fentry,fexit,tp_btf,raw_tp"
	[6.12]="all"
	[arm64-6.1]="kprobe,kretprobe,tp_btf,raw_tp"
	[arm64-6.12]="kprobe,kretprobe,fentry,fexit,tp_btf,raw_tp"
)
# apt-cache name patterns per series
declare -A KERNEL_PATTERN=(
	[5.10]='^linux-image-5\.10\.[0-9]+-[0-9]+-cloud-amd64-unsigned$'
	[6.1]='^linux-image-6\.1\.[0-9]+-[0-9]+-cloud-amd64-unsigned$'
	[6.12]='^linux-image-6\.12\.[0-9]+[^ ]*-cloud-amd64-unsigned$'
	[arm64-6.1]='^linux-image-6\.1\.[0-9]+-[0-9]+-cloud-arm64-unsigned$'
	[arm64-6.12]='^linux-image-6\.12\.[0-9]+[^ ]*-cloud-arm64-unsigned$'
)
# The suite a series comes from when it is not bookworm or bookworm-backports:
# bullseye's 5.10 is the oldest LTS kernel fleets still run.
declare -A KERNEL_SUITE=(
	[5.10]=bullseye
)

log() { printf 'vmtest: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The architecture of a kernel series: arm64-* is arm64, the rest x86.
kernel_arch() {
	case "$1" in
	arm64-*) echo arm64 ;;
	*) echo x86 ;;
	esac
}

# Debian's name for an architecture.
dpkg_arch() {
	case "$1" in
	arm64) echo arm64 ;;
	*) echo amd64 ;;
	esac
}

# ------------------------------------------------------------ kernels
ensure_backports() {
	backports_listed && return 0
	[ "$(id -u)" = 0 ] || die "bookworm-backports missing from apt sources; run as root"
	backports_add vmtest >&2
	apt-get update -q >/dev/null
}

# ensure_suite SERIES: the series' own suite (bullseye for 5.10) is listed.
ensure_suite() {
	case "${KERNEL_SUITE[$1]:-}" in
	bullseye)
		bullseye_listed && return 0
		[ "$(id -u)" = 0 ] || die "bullseye missing from apt sources; run as root"
		bullseye_add vmtest >&2
		apt-get update -q >/dev/null
		;;
	esac
}

# ensure_arch ARCH: apt lists ARCH's packages (dpkg multiarch), for an
# arm64 kernel and busybox on an x86_64 host.
ensure_arch() {
	local d
	d=$(dpkg_arch "$1")
	[ "$d" = "$(dpkg --print-architecture)" ] && return 0
	dpkg --print-foreign-architectures | grep -qx "$d" && return 0
	[ "$(id -u)" = 0 ] || die "dpkg does not list the $d architecture; run as root (make vmtest-deps)"
	log "adding the $d architecture (multiarch)"
	dpkg --add-architecture "$d"
	apt-get update -q >/dev/null
}

# Newest package name matching the series' pattern.
resolve_kernel() {
	local pat=${KERNEL_PATTERN[$1]:-}
	[ -n "$pat" ] || die "unknown kernel series $1 (known: ${!KERNEL_PATTERN[*]})"
	apt-cache search --names-only "$pat" | cut -d' ' -f1 | sort -V | tail -1
}

# fetch_kernel SERIES -> sets kdir (OUT/<series>) with vmlinuz and pkg name
fetch_kernel() {
	local series=$1 pkg deb darch
	darch=$(dpkg_arch "$(kernel_arch "$series")")
	ensure_suite "$series"
	pkg=$(resolve_kernel "$series")
	if [ -z "$pkg" ]; then
		apt-get update -q >/dev/null
		pkg=$(resolve_kernel "$series")
	fi
	[ -n "$pkg" ] || die "no package matches ${KERNEL_PATTERN[$series]}"
	mkdir -p "$out/cache" "$out/$series"
	deb=$(ls "$out/cache/${pkg}"_*.deb 2>/dev/null | sort -V | tail -1)
	if [ -z "$deb" ]; then
		log "downloading $pkg"
		if (cd "$out/cache" && apt-get download -q "$pkg:$darch" >/dev/null 2>&1); then
			deb=$(ls "$out/cache/${pkg}"_*.deb | sort -V | tail -1)
		else
			# offline: an older cached kernel of the series beats no column
			deb=$(ls "$out"/cache/linux-image-"${series#arm64-}".*-cloud-"$darch"-unsigned_*.deb \
				2>/dev/null | sort -V | tail -1)
			[ -n "$deb" ] || die "apt-get download $pkg failed"
			log "apt-get download $pkg failed: using the cached $(basename "$deb")"
		fi
	fi
	kdir="$out/$series"
	if [ ! -s "$kdir/vmlinuz" ] ||
	   [ "$(cat "$kdir/package" 2>/dev/null)" != "$(basename "$deb")" ]; then
		rm -rf "$kdir/x" && mkdir -p "$kdir/x"
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x -C "$kdir/x" --wildcards './boot/vmlinuz-*' './boot/config-*' ||
			die "cannot extract vmlinuz from $deb"
		mv "$kdir"/x/boot/vmlinuz-* "$kdir/vmlinuz"
		mv "$kdir"/x/boot/config-* "$kdir/config"
		rm -rf "$kdir/x"
		basename "$deb" > "$kdir/package"
	fi
}

# ------------------------------------------------------------ initramfs
# add_libs FILE ROOT: FILE's shared libraries into ROOT at their own paths.
add_libs() {
	local f=$1 root=$2 lib
	for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# add_libs_foreign ARCH FILE ROOT: the same for another architecture's ELF
# file, from its multiarch directories: its interpreter, then each NEEDED
# library (found in /lib/TRIPLET or /usr/lib/TRIPLET, copied to
# ROOT/lib/TRIPLET) and theirs.
add_libs_foreign() {
	local f=$1 root=$2 triplet=$3 interp name d lib
	interp=$(readelf -l "$f" 2>/dev/null | sed -n 's/.*interpreter: \([^]]*\)\]/\1/p')
	if [ -n "$interp" ] && [ ! -e "$root$interp" ]; then
		[ -e "$interp" ] || die "$f: interpreter $interp missing (make ARCH=$(arch_of_triplet "$triplet") deps)"
		mkdir -p "$root$(dirname "$interp")"
		cp -L "$interp" "$root$interp"
	fi
	for name in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$root/lib/$triplet/$name" ] && continue
		lib=""
		for d in "/lib/$triplet" "/usr/lib/$triplet"; do
			[ -e "$d/$name" ] && { lib=$d/$name; break; }
		done
		[ -n "$lib" ] || die "$f needs $name: not in /lib/$triplet or /usr/lib/$triplet"
		mkdir -p "$root/lib/$triplet"
		cp -L "$lib" "$root/lib/$triplet/$name"
		add_libs_foreign "$lib" "$root" "$triplet"
	done
}

arch_of_triplet() { case "$1" in aarch64-*) echo arm64 ;; *) echo x86 ;; esac; }

# busybox_for ARCH: the path of a static busybox for ARCH.  The host's own
# (busybox-static) for its architecture; another's from Debian's
# busybox-static:ARCH, downloaded into OUT/cache and unpacked (installing it
# would replace the host's busybox-static: the package is not multiarch).
busybox_for() {
	local arch=$1 darch deb dir
	if [ "$arch" = "$host_arch" ]; then
		# ldd fails on a static executable: that is the busybox the guest needs
		if [ ! -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
			die "/bin/busybox is not busybox-static: make vmtest-deps"
		fi
		echo /bin/busybox
		return
	fi
	darch=$(dpkg_arch "$arch")
	mkdir -p "$out/cache"
	deb=$(ls "$out"/cache/busybox-static_*_"$darch".deb 2>/dev/null | sort -V | tail -1)
	if [ -z "$deb" ]; then
		log "downloading busybox-static:$darch"
		(cd "$out/cache" && apt-get download -q "busybox-static:$darch" >/dev/null 2>&1) ||
			die "apt-get download busybox-static:$darch failed"
		deb=$(ls "$out"/cache/busybox-static_*_"$darch".deb | sort -V | tail -1)
	fi
	dir=$out/busybox-$darch
	if [ ! -x "$dir/bin/busybox" ] || [ "$(cat "$dir/package" 2>/dev/null)" != "${deb##*/}" ]; then
		rm -rf "$dir" && mkdir -p "$dir"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" ./bin/busybox ||
			die "cannot extract busybox from $deb"
		echo "${deb##*/}" > "$dir/package"
	fi
	echo "$dir/bin/busybox"
}

# src_of ARCH PATH: where PATH (a file of the native build) is in ARCH's build.
src_of() {
	if [ "$1" = "$host_arch" ]; then
		echo "$2"
	else
		echo "${cross[$1]}${2#"$native_out"}"
	fi
}

# add_file ARCH FILE ROOT: ARCH's build of FILE into ROOT/kagg/FILE, with its
# shared libraries.
add_file() {
	local arch=$1 f=$2 root=$3 src
	src=$(src_of "$arch" "$f")
	[ -f "$src" ] || die "$src missing: build it first (make${cross[$arch]:+ ARCH=$arch} all)"
	mkdir -p "$root/kagg/$(dirname "$f")"
	cp -L "$src" "$root/kagg/$f" || die "copy $src"
	if [ "$arch" = "$host_arch" ]; then
		add_libs "$src" "$root"
	else
		add_libs_foreign "$src" "$root" "$(triplet_of "$arch")"
	fi
}

triplet_of() { case "$1" in arm64) echo aarch64-linux-gnu ;; *) echo x86_64-linux-gnu ;; esac; }

# build_initramfs ARCH: OUT/initramfs-ARCH.cpio.gz, ARCH's build of the tree.
build_initramfs() {
	local arch=$1 root=$out/initramfs-$1 b bb
	bb=$(busybox_for "$arch") || exit 1
	rm -rf "$root" && mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,kagg}
	cp "$bb" "$root/bin/busybox"
	cp "$here/init.sh" "$root/init"
	chmod 755 "$root/init"
	: > "$root/kagg/tests.list"
	: > "$root/kagg/commands.list"
	for c in "${cmds[@]}"; do
		printf '%s\t%s\n' "${c%%=*}" "${c#*=}" >> "$root/kagg/commands.list"
	done
	for b in "${bins[@]}"; do
		[ -x "$(src_of "$arch" "$b")" ] ||
			die "test binary $(src_of "$arch" "$b") missing: build it first (make${cross[$arch]:+ ARCH=$arch} all)"
		add_file "$arch" "$b" "$root"
		echo "$b" >> "$root/kagg/tests.list"
	done
	[ -x "$(src_of "$arch" "$kagg_bin")" ] && add_file "$arch" "$kagg_bin" "$root"
	for b in "$(src_of "$arch" "$native_out")"/tests/helpers/*; do
		[ -f "$b" ] && [ -x "$b" ] || continue
		add_file "$arch" "$native_out/tests/helpers/${b##*/}" "$root"
	done
	[ -d tests/data ] && mkdir -p "$root/kagg/tests" && cp -r tests/data "$root/kagg/tests/"
	# the SDK's examples and test objects, which test_prog loads from beside kagg's build
	for b in "$(src_of "$arch" "$native_out")"/examples/bpf/*.bpf.o \
		"$(src_of "$arch" "$native_out")"/bpf/sdk_*.bpf.o; do
		[ -f "$b" ] || continue
		d=${b#"$(src_of "$arch" "$native_out")"/}
		mkdir -p "$root/kagg/$native_out/$(dirname "$d")"
		cp "$b" "$root/kagg/$native_out/$d"
	done
	# no UAPI headers: kagg syscount names syscalls from its built-in table, as on
	# a production machine
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs-$arch.cpio.gz" ||
		die "cpio failed"
	log "initramfs-$arch: $(du -h "$out/initramfs-$arch.cpio.gz" | cut -f1)"
}

# ------------------------------------------------------------ results
declare -A cell   # cell[group|column] = "p/f/s"
groups=() columns=()
declare -A attach # attach[path|column] = ok/unsupported/FAILED
declare -A release # release[column] = uname -r of the guest
tools=()   # groups whose tool printed the attach path it chose
bad=0

add_group() {
	local g=$1 x
	for x in "${groups[@]}"; do [ "$x" = "$g" ] && return; done
	groups+=("$g")
}

# Parse KAGG-RESULT / KAGG-ATTACH lines of LOG into column COL.
parse_log() {
	local col=$1 logf=$2 line g p f s cur=""
	while read -r line; do
		case "$line" in
		KAGG-RESULT*)
			g=$(sed -n 's/.*group=\([^ ]*\).*/\1/p' <<<"$line")
			p=$(sed -n 's/.*passed=\([0-9]*\).*/\1/p' <<<"$line")
			f=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' <<<"$line")
			s=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' <<<"$line")
			add_group "$g"
			cell["$g|$col"]="$p/$f/$s"
			;;
		"# kagg "*)
			# a tool's header names the attach path it chose:
			#   # kagg offcpu: sched:sched_switch via tp_btf, kernel ...
			p=$(sed -n 's/^# kagg [^:]*: \([^ ]*\) via \([^ ,]*\).*/\2/p' <<<"$line")
			[ -n "$cur" ] && [ -n "$p" ] || continue
			case " ${tools[*]:-} " in *" $cur "*) ;; *) tools+=("$cur") ;; esac
			attach["$cur|$col"]=$p
			;;
		KAGG-BEGIN*)
			# a group that began and never reported hung or crashed the guest
			g=$(sed -n 's/.*group=\([^ ]*\).*/\1/p' <<<"$line")
			cur=$g
			add_group "$g"
			cell["$g|$col"]="0/1/0 hung"
			;;
		KAGG-BOOT*)
			release[$col]=$(sed -n 's/.*kernel=\([^ ]*\).*/\1/p' <<<"$line")
			;;
		KAGG-ATTACH*)
			g=$(sed -n 's/.*path=\([^ ]*\).*/\1/p' <<<"$line")
			p=$(sed -n 's/.*result=\([^ ]*\).*/\1/p' <<<"$line")
			f=$(sed -n 's/.*reason=\([^ ]*\).*/\1/p' <<<"$line")
			[ "$p" = unsupported ] && p=skip
			[ -n "$f" ] && p="$p($f)"
			case "$line" in *chose=*) p="$p:$(sed -n 's/.*chose=\([^ ]*\).*/\1/p' <<<"$line")" ;; esac
			attach["$g|$col"]=$p
			;;
		esac
	done < <(tr -d '\r' < "$logf" | grep -e '^KAGG-' -e '^# kagg [^:]*: [^ ]* via ')
}

# Unpack the guest's trace_pipe_raw pages; count rb-capture / rb-decode.
unpack_pages() {
	local col=$1 logf=$2 dir=$3 want
	rm -rf "$dir" && mkdir -p "$dir"
	want=$(tr -d '\r' < "$logf" | sed -n 's/^KAGG-PAGES-BEGIN events=\([0-9]*\).*/\1/p' | head -1)
	add_group rb-capture
	if [ -z "$want" ] ||
	   ! tr -d '\r' < "$logf" | sed -n '/^KAGG-PAGES-BEGIN/,/^KAGG-PAGES-END/p' |
		sed '1d;$d' | base64 -d -i 2>/dev/null | tar -xz -C "$dir" 2>/dev/null; then
		cell["rb-capture|$col"]="0/1/0"; bad=1
		log "$col: no trace_pipe_raw pages came back"
		return
	fi
	local raw_bytes
	raw_bytes=$(cat "$dir"/cpu*.raw 2>/dev/null | wc -c)
	if [ "$want" -gt 0 ] && [ "$raw_bytes" -gt 0 ] && [ $((raw_bytes % 4096)) = 0 ]; then
		cell["rb-capture|$col"]="1/0/0"
	else
		cell["rb-capture|$col"]="0/1/0"; bad=1
		log "$col: pages: $want events in trace, $raw_bytes raw bytes"
	fi
	log "$col: $want sched_switch events, $raw_bytes bytes of pages in $dir"

	# The decoder belongs to `kagg rb decode` (another room).  Contract
	# assumed here: `kagg rb decode FILE` prints one line per event.
	add_group rb-decode
	if ! [ -x "$kagg_bin" ] || ! "$kagg_bin" rb decode --help >/dev/null 2>&1; then
		cell["rb-decode|$col"]="0/0/1"
		log "$col: rb-decode skipped: '$kagg_bin rb decode' does not exist yet"
		return
	fi
	local n=0 c got ok=1
	for c in "$dir"/cpu*.raw; do
		[ -s "$c" ] || continue # a CPU without pages: decode refuses an empty file
		got=$("$kagg_bin" rb decode "$c" 2>"$c.err" | grep -c .) || true
		if [ -s "$c.err" ] && ! "$kagg_bin" rb decode "$c" >/dev/null 2>&1; then ok=0; fi
		n=$((n + got))
	done
	if [ "$ok" = 1 ] && [ "$n" = "$want" ]; then
		cell["rb-decode|$col"]="1/0/0"
	else
		cell["rb-decode|$col"]="0/1/0"; bad=1
		log "$col: rb-decode: decoded $n events, trace showed $want"
		for c in "$dir"/cpu*.dd; do
			[ -r "$c" ] && log "$col: ${c##*/}: $(tr '\n' ' ' < "$c")"
		done
	fi
}

# The line that says why a guest died: its first oops or panic line, else its last line.
boot_death() {
	local line
	line=$(tr -d '\r' < "$1" | grep -m 1 -o -E '(Oops|BUG|Kernel panic).*') ||
		line=$(tr -d '\r' < "$1" | grep . | tail -n 1)
	printf '%s' "${line:0:120}"
}

# boot_guest SERIES: boot the fetched kernel of SERIES until it powers off or
# times out; its console in OUT/SERIES/console.log, qemu's exit status in
# rc, the wall time in seconds.  Touches no table state: it may run in the
# background, next to another guest (VMTEST_JOBS).
boot_guest() {
	local series=$1 kdir=$out/$1 logf start rc cmdline attempt arch qemu
	arch=$(kernel_arch "$series")
	logf="$kdir/console.log"
	log "booting $(cat "$kdir/package") (timeout ${timeout_s}s)"
	start=$(date +%s)
	rm -f "$kdir/console.boot1.log" "$kdir/rc" "$kdir/seconds" "$kdir"/time.*
	if [ "$arch" = arm64 ]; then
		# -cpu max: every feature TCG emulates (pointer authentication, BTI,
		# SVE...), with QEMU's own pointer-authentication hash (pauth-impdef):
		# the architected QARMA5 costs TCG most of its time.  The PL011 UART.
		qemu=(qemu-system-aarch64 -M virt -accel tcg -cpu max,pauth-impdef=on -smp 2)
		cmdline="console=ttyAMA0 panic=-1 quiet loglevel=3"
		[ -z "${VMTEST_MAXCPUS:-}" ] ||
			log "$series: VMTEST_MAXCPUS is for x86 guests (possible_cpus=): 2 CPUs"
	else
		qemu=(qemu-system-x86_64 -accel tcg -cpu Skylake-Client
		      -smp "2${VMTEST_MAXCPUS:+,maxcpus=$VMTEST_MAXCPUS}")
		# tsc=reliable: no clocksource watchdog.  Under TCG on a busy host it can find the TSC
		# "unstable" mid-run and switch sched_clock's static key; a 6.12 guest once took an int3
		# oops in sched_clock_cpu() from that live patch and panicked.
		cmdline="console=ttyS0 panic=-1 quiet loglevel=3 tsc=reliable"
		# VMTEST_MAXCPUS=N: N possible CPUs (2 online), as a big machine has
		[ -z "${VMTEST_MAXCPUS:-}" ] || cmdline+=" possible_cpus=$VMTEST_MAXCPUS"
	fi
	cmdline+=" kagg.require=${KERNEL_REQUIRE[$series]:-} kagg.timeout=$((timeout_s * 4 / 5))"
	# extra kernel parameters, e.g. VMTEST_APPEND="loglevel=7" for lockup backtraces
	cmdline+="${VMTEST_APPEND:+ $VMTEST_APPEND}"
	# A guest that dies before its /init prints KAGG-BOOT ran none of our code: its kernel
	# crashed booting (under TCG: an int3 oops in __schedule from the kernel's own boot-time
	# code patching, seen once in ~20 6.12 boots).  That boot is retried once, said, and its
	# log kept as console.boot1.log; anything that fails after KAGG-BOOT is not retried.
	# the host CPU time qemu took (user + system), next to the wall time: what a guest
	# costs when guests share the host (VMTEST_JOBS)
	local TIMEFORMAT='%U %S'
	for attempt in 1 2; do
		{ time timeout --kill-after=10 "$timeout_s" "${qemu[@]}" \
			-m 1G -nographic -no-reboot -monitor none \
			-serial "file:$logf" -kernel "$kdir/vmlinuz" \
			-initrd "$out/initramfs-$arch.cpio.gz" -append "$cmdline" \
			</dev/null >"$kdir/qemu.out" 2>&1; } 2>"$kdir/time.$attempt"
		rc=$?
		if [ "$attempt" = 2 ] || tr -d '\r' < "$logf" | grep -q '^KAGG-BOOT'; then
			break
		fi
		cp "$logf" "$kdir/console.boot1.log"
		log "$series: the guest kernel died before /init ran (qemu rc=$rc: $(boot_death "$logf"));" \
		    "booting again, first log in $kdir/console.boot1.log"
	done
	echo "$rc" > "$kdir/rc"
	echo $(( $(date +%s) - start )) > "$kdir/seconds"
	cat "$kdir"/time.* | awk '{ t += $1 + $2 } END { printf "%d\n", t }' > "$kdir/cpu-seconds"
	rm -f "$kdir"/time.*
}

# collect_guest SERIES: the column of a booted guest, from its console log.
collect_guest() {
	local series=$1 kdir=$out/$1 col=$1 logf=$out/$1/console.log rc
	columns+=("$col")
	rc=$(cat "$kdir/rc" 2>/dev/null)
	parse_log "$col" "$logf"
	if ! tr -d '\r' < "$logf" | grep -q '^KAGG-DONE'; then
		bad=1
		add_group boot
		cell["boot|$col"]="0/1/0"
		echo "=================================================================" >&2
		log "GUEST $series FAILED: did not finish (qemu rc=${rc:-?}, $(cat "$kdir/seconds")s; 124 = timeout)"
		log "last 40 lines of $logf:"
		tail -n 40 "$logf" | tr -d '\r' >&2
		cat "$kdir/qemu.out" >&2
		echo "=================================================================" >&2
		return
	fi
	add_group boot
	cell["boot|$col"]="1/0/0"
	log "$series: ${release[$col]:-?} done in $(cat "$kdir/seconds")s"
	unpack_pages "$col" "$logf" "$kdir/pages"
}

run_host() {
	local col="host" logf=$out/host/console.log b group start rc p f s
	columns+=("$col")
	mkdir -p "$out/host"
	: > "$logf"
	start=$(date +%s)
	for b in "${bins[@]}"; do
		group=${b#build/tests/}
		echo "KAGG-BEGIN group=$group" >> "$logf"
		CMOCKA_MESSAGE_OUTPUT=stdout KAGG=$(realpath "$kagg_bin" 2>/dev/null) \
			KAGG_HELPERS=$(realpath build/tests/helpers 2>/dev/null) \
			timeout --kill-after=10 600 "$b" > "$out/host/out" 2>&1
		rc=$?
		cat "$out/host/out" >> "$logf"
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s).*/\1/p' "$out/host/out" | head -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' "$out/host/out" | head -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' "$out/host/out" | head -1)
		if [ -z "$p$f$s" ] || { [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; }; then
			echo "KAGG: $group exited $rc without a cmocka verdict" >> "$logf"
			f=$(( ${f:-0} + 1 ))
		fi
		echo "KAGG-RESULT group=$group passed=${p:-0} failed=${f:-0} skipped=${s:-0} rc=$rc" >> "$logf"
	done
	for c in "${cmds[@]}"; do
		group="cmd/${c%%=*}"
		{ echo "KAGG-BEGIN group=$group"; echo "\$ ${c#*=}"; } >> "$logf"
		KAGG=$(realpath "$kagg_bin" 2>/dev/null) timeout --kill-after=10 600 \
			sh -c "${c#*=}" >> "$logf" 2>&1
		rc=$?
		if [ "$rc" = 0 ]; then p=1 f=0; else p=0 f=1; fi
		echo "KAGG-RESULT group=$group passed=$p failed=$f skipped=0 rc=$rc" >> "$logf"
	done
	echo $(( $(date +%s) - start )) > "$out/host/seconds"
	parse_log "$col" "$logf"
	cell["boot|$col"]="-"
}

# ------------------------------------------------------------ table
print_table() {
	local g c v
	echo
	echo "kernel matrix (passed/failed/skipped; logs in $out/<kernel>/console.log)"
	printf '%-26s' "group"
	for c in "${columns[@]}"; do
		v="${release[$c]:-$c}"
		v=${v%-cloud-amd64}
		v=${v/%-cloud-arm64/ arm64}
		[ "$c" = host ] && v="host $(uname -r)"
		printf ' %-24s' "${v:0:24}"
	done
	echo
	for g in "${groups[@]}"; do
		printf '%-26s' "$g"
		for c in "${columns[@]}"; do printf ' %-24s' "${cell[$g|$c]:--}"; done
		echo
	done
	echo
	echo "attach paths (test_attach)"
	local paths="kprobe kretprobe fentry fexit kprobe.multi kretprobe.multi"
	paths+=" kprobe.multi|kprobe tp_btf raw_tp"
	for g in $paths; do
		printf '%-26s' "$g"
		for c in "${columns[@]}"; do printf ' %-24s' "${attach[$g|$c]:--}"; done
		echo
	done
	if [ ${#tools[@]} -gt 0 ]; then
		echo
		echo "attach paths the tools chose"
		for g in "${tools[@]}"; do
			printf '%-26s' "$g"
			for c in "${columns[@]}"; do printf ' %-24s' "${attach[$g|$c]:--}"; done
			echo
		done
	fi
	printf '%-26s' "seconds"
	for c in "${columns[@]}"; do printf ' %-24s' "$(cat "$out/$c/seconds" 2>/dev/null)"; done
	echo
	printf '%-26s' "qemu cpu seconds"
	for c in "${columns[@]}"; do printf ' %-24s' "$(cat "$out/$c/cpu-seconds" 2>/dev/null || echo -)"; done
	echo
	echo
}

# What failed, last, so that the tail of a CI log names it: each failed
# cell's group, column and cmocka verdict lines (or its last lines).
print_failures() {
	local k g c logf sect
	for k in "${!cell[@]}"; do
		[[ ${cell[$k]} =~ ^[0-9]+/0/[0-9]+$ || ${cell[$k]} = - ]] && continue
		g=${k%|*} c=${k#*|}
		if [ "$c" = host ]; then logf=$out/host/console.log; else logf=$out/$c/console.log; fi
		echo "FAILED: $g on $c (${cell[$k]}; log $logf)"
		[ -r "$logf" ] || continue
		sect=$(tr -d '\r' < "$logf" |
			awk -v g="$g" '$0 ~ "^KAGG-BEGIN group=" g "$" { on = 1; next }
				on && $0 ~ "^KAGG-RESULT group=" g " " { on = 0 }
				on')
		if grep -q -E '^\[ *(ERROR|FAILED|LINE) *\]' <<<"$sect"; then
			grep -E -B2 '^\[ *(ERROR|FAILED|LINE) *\]' <<<"$sect" | head -n 40
		else
			tail -n 20 <<<"$sect"
		fi
	done
}

# ------------------------------------------------------------ main
command -v cpio >/dev/null || die "cpio missing: make vmtest-deps"
arches=""
for k in $kernels; do
	[ -n "${KERNEL_PATTERN[$k]:-}" ] || die "unknown kernel $k (known: ${!KERNEL_PATTERN[*]})"
	a=$(kernel_arch "$k")
	case " $arches " in *" $a "*) continue ;; esac
	arches="$arches $a"
	case "$a" in
	arm64) command -v qemu-system-aarch64 >/dev/null ||
		die "qemu-system-aarch64 missing: make vmtest-deps" ;;
	*) command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 missing: make vmtest-deps" ;;
	esac
	[ "$a" = "$host_arch" ] || [ -n "${cross[$a]:-}" ] ||
		die "$k: an $a guest needs the $a build of the tree: --cross $a=DIR (make ARCH=$a)"
done
ensure_backports
mkdir -p "$out"
for a in $arches; do
	ensure_arch "$a"
	build_initramfs "$a"
done
# Fetch every kernel first (apt, one at a time), then boot the guests,
# VMTEST_JOBS at a time (default 1: each guest has 2 vCPUs, one host thread
# each under TCG), and read their logs in the order given.
for k in $kernels; do fetch_kernel "$k"; done
jobs_max=${VMTEST_JOBS:-1}
running=0
for k in $kernels; do
	if [ "$running" -ge "$jobs_max" ]; then
		wait -n
		running=$((running - 1))
	fi
	boot_guest "$k" &
	running=$((running + 1))
done
wait
for k in $kernels; do collect_guest "$k"; done
[ "$host" = 1 ] && run_host
print_table
# any cell with failures fails the matrix
for k in "${!cell[@]}"; do
	[[ ${cell[$k]} =~ ^[0-9]+/0/[0-9]+$ || ${cell[$k]} = - ]] || bad=1
done
if [ "$bad" != 0 ]; then
	print_failures >&2
	echo "kernel matrix: FAILED" >&2
	exit 1
fi
echo "kernel matrix: all passed"
