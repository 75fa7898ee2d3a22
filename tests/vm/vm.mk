# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# The kernel matrix (tests/vm/vmtest.sh): `make vmtest` boots the newest
# Debian 5.10 (bullseye), 6.1 and 6.12 cloud kernels under qemu (TCG) with
# the test binaries in an initramfs and runs the same binaries on the host;
# `make vmtest-deps` installs qemu, busybox-static and cpio.  Included by
# the top Makefile, whose OUT, KAGG_BIN, ROOT_BINS, UNIT_BINS and `all` it
# uses.
#
#   make vmtest VMTEST_KERNELS="6.12" VMTEST_TIMEOUT=300 VMTEST_HOST=0 VMTEST_CMDS=
#   VMTEST_APPEND="loglevel=7" make vmtest   # extra guest kernel parameters
#   VMTEST_MAXCPUS=256 make vmtest           # guests with 256 possible CPUs, 2 online

VMTEST_DEPS	:= qemu-system-x86 busybox-static cpio
VMTEST_KERNELS	?= 5.10 6.1 6.12
VMTEST_TIMEOUT	?= 900
VMTEST_HOST	?= 1
# What the guests run: the tests whose answer depends on the kernel (attach
# paths, the tools' BPF programs, the kernel's own ring-buffer pages, and the
# ring buffer's stress test: its writers use rseq and membarrier(RSEQ), so it
# runs in time-bounded rounds on every kernel).  Pure userspace tests
# (formats, the ring buffer's unit tests and benches, install, ABI) give the
# same answer on every kernel and take minutes under TCG: the host runs them.
VMTEST_BINS	?= $(filter %/test_attach %/test_record %/test_offcpu %/test_stream \
			    %/test_runqlat %/test_syscount %/test_profile %/test_funclat \
			    %/test_hist %/test_unwind,\
			    $(ROOT_BINS)) \
		   $(filter %/test_rb_kernel %/test_ringbuf_stress,$(UNIT_BINS))
# test_prog runs on the host only: the guests' initramfs does not carry the SDK's
# example objects (examples/bpf/*.bpf.o) it loads.
# Commands run in every column too (group cmd/NAME passes when they exit 0);
# each tool's header names the attach path it chose, which the table shows.
VMTEST_CMDS	?= --cmd 'offcpu=$(KAGG_BIN) offcpu -d 1' \
		   --cmd 'offcpu-raw_tp=$(KAGG_BIN) offcpu -d 1 --attach raw_tp' \
		   --cmd 'runqlat=$(KAGG_BIN) runqlat -d 1' \
		   --cmd 'syscount=$(KAGG_BIN) syscount -d 1' \
		   --cmd 'profile=$(KAGG_BIN) profile -d 1'

.PHONY: vmtest vmtest-deps
vmtest-deps:
	$(Q)$(SUDO) tests/deps.sh --main "$(VMTEST_DEPS)"

vmtest: vmtest-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)VMTEST_KERNELS="$(VMTEST_KERNELS)" VMTEST_TIMEOUT=$(VMTEST_TIMEOUT) \
		VMTEST_HOST=$(VMTEST_HOST) VMTEST_MAXCPUS=$(VMTEST_MAXCPUS) KAGG=$(KAGG_BIN) \
		tests/vm/vmtest.sh --out $(OUT)/vm $(VMTEST_CMDS) $(VMTEST_BINS)
