#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# /init of the kernel-matrix guest (tests/vm/vmtest.sh builds the initramfs).
# Mounts the pseudo filesystems, runs every test binary listed in
# /kagg/tests.list and every command in /kagg/commands.list, captures the
# guest's own trace_pipe_raw pages, and
# powers off.  The serial console is the only channel back; everything the
# host parses is on lines starting with "KAGG-":
#
#   KAGG-BOOT kernel=<uname -r>
#   KAGG-BEGIN group=<name>            ... the binary's own output ...
#   KAGG-RESULT group=<name> passed=N failed=N skipped=N rc=N
#   KAGG-ATTACH path=... result=...    (printed by test_attach)
#   KAGG-PAGES-BEGIN / base64 of a tar.gz / KAGG-PAGES-END
#   KAGG-DONE
#
# Kernel command line: kagg.require=<list> is exported as KAGG_REQUIRE_ATTACH,
# kagg.timeout=<s> bounds each binary, kagg.filter=<pattern> runs only the tests
# matching it (KAGG_TEST_FILTER, e.g. VMTEST_APPEND=kagg.filter=test_library\*).
/bin/busybox mkdir -p /bin /sbin /proc /sys /dev /tmp /run
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
# the libraries vmtest.sh copied in, under the guest architecture's multiarch directory
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/aarch64-linux-gnu

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
# shellcheck disable=SC3045 # busybox ash has it
ulimit -l unlimited 2>/dev/null
echo 1 > /proc/sys/kernel/printk 2>/dev/null

# Pin the hot tracepoints the tests attach to.  Attaching the first or second
# probe to a tracepoint, or detaching back to one or none, rewrites the
# static call in its caller (text_poke_bp: int3, IPI, bytes, IPI).  Under
# qemu TCG that is not safe: a 6.1 guest was caught (monitor registers,
# nokaslr, kallsyms) with CPU0 looping on a stale int3 at __schedule+0x1bb
# with interrupts off -- the kernel's int3 handlers saw no int3 in memory and
# retried, the translated block still had it -- while CPU1 sat in
# text_poke_bp's on_each_cpu() from bpf_raw_tp_link_release waiting for
# CPU0 forever (soft lockup in the detaching task, once per ~20 test_offcpu
# runs).  Two tracefs instances enabling each event (tracing off, so they
# record nothing) keep two probes registered: the tests' own probes then move
# a tracepoint between N and N+1 probes, N >= 2, which patches no code.
T=/sys/kernel/tracing
for inst in kagg-pin1 kagg-pin2; do
	mkdir -p "$T/instances/$inst" 2>/dev/null || continue
	echo 0 > "$T/instances/$inst/tracing_on"
	for ev in sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new \
		  raw_syscalls/sys_enter raw_syscalls/sys_exit; do
		echo 1 > "$T/instances/$inst/events/$ev/enable" 2>/dev/null
	done
done

require=""
per_bin=240
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	kagg.require=*) require="${arg#kagg.require=}" ;;
	kagg.timeout=*) per_bin="${arg#kagg.timeout=}" ;;
	kagg.filter=*) export KAGG_TEST_FILTER="${arg#kagg.filter=}" ;;
	esac
done
export KAGG_REQUIRE_ATTACH="$require"
export KAGG=/kagg/build/bin/kagg KAGG_HELPERS=/kagg/build/tests/helpers
export CMOCKA_MESSAGE_OUTPUT=stdout
cd /kagg || exit 1

echo
echo "KAGG-BOOT kernel=$(uname -r) cpus=$(nproc) require=$require"

# cmocka's summary lines, as tests/run.sh reads them.
count() {
	sed -n "s/^\[  $1 *\] \([0-9]*\) test(s).*/\1/p" /tmp/out | head -1
}

while read -r bin; do
	[ -n "$bin" ] || continue
	group="${bin#build/tests/}"
	echo "KAGG-BEGIN group=$group"
	timeout "$per_bin" "./$bin" > /tmp/out 2>&1
	rc=$?
	cat /tmp/out
	p=$(count PASSED); f=$(count FAILED); s=$(count SKIPPED)
	if [ -z "$p$f$s" ] || { [ "$rc" != 0 ] && [ "${f:-0}" = 0 ]; }; then
		echo "KAGG: $group exited $rc without a cmocka verdict: counted as a failure"
		f=$(( ${f:-0} + 1 ))
	fi
	echo "KAGG-RESULT group=$group passed=${p:-0} failed=${f:-0} skipped=${s:-0} rc=$rc"
done < /kagg/tests.list

# Commands (kagg itself): one "NAME<TAB>COMMAND" a line, passing when it exits 0.
tab=$(printf '\t')
while IFS="$tab" read -r name cmd; do
	[ -n "$name" ] || continue
	echo "KAGG-BEGIN group=cmd/$name"
	echo "\$ $cmd"
	timeout "$per_bin" sh -c "$cmd" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then p=1 f=0; else p=0 f=1; fi
	echo "KAGG-RESULT group=cmd/$name passed=$p failed=$f skipped=0 rc=$rc"
done < /kagg/commands.list

# The guest's own ring-buffer pages, for the host-side decoder: enable
# sched_switch briefly, record what the `trace` file shows per CPU (a
# non-consuming read), then drain per_cpu/cpuN/trace_pipe_raw.
if [ -d $T/per_cpu ]; then
	R=/tmp/rb
	mkdir -p $R
	echo 0 > $T/tracing_on
	echo > $T/trace
	echo 1 > $T/events/sched/sched_switch/enable
	echo 1 > $T/tracing_on
	for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 0.02; done
	taskset 2 sh -c 'for i in 1 2 3 4 5; do sleep 0.02; done' 2>/dev/null
	echo 0 > $T/tracing_on
	echo 0 > $T/events/sched/sched_switch/enable
	cp $T/events/header_page $T/events/header_event $R/ 2>/dev/null
	cp $T/events/sched/sched_switch/format $R/sched_switch.format
	cp $T/trace $R/trace.txt
	total=0
	for d in $T/per_cpu/cpu*; do
		c=${d##*/}
		n=$(grep -vc "^#" "$d/trace")
		total=$((total + n))
		echo "$c $n" >> $R/counts
		# read(2) a page at a time: busybox cat splices, and splicing
		# trace_pipe_raw gives whole pages only (5.10 left most behind)
		# (the end blocks: timeout ends it; $c.dd says how far dd got, and
		# what the buffer held)
		timeout 2 dd if="$d/trace_pipe_raw" of="$R/$c.raw" bs=4096 2>"$R/$c.dd"
		echo "exit $?" >> "$R/$c.dd"
		cat "$d/stats" >> "$R/$c.dd" 2>/dev/null
	done
	echo "total $total" >> $R/counts
	echo "KAGG-PAGES-BEGIN events=$total"
	tar -c -C $R . | gzip | base64
	echo "KAGG-PAGES-END"
else
	echo "KAGG: no tracefs per_cpu directory"
fi

echo "KAGG-DONE"
sync
poweroff -f
