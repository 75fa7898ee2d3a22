# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# The kernel matrix (tests/vm/vmtest.sh): `make vmtest` boots the newest
# Debian 5.10 (bullseye), 6.1 and 6.12 x86_64 cloud kernels and the 6.12
# arm64 one under qemu (TCG) with the test binaries in an initramfs and runs
# the same binaries on the host; `make vmtest-deps` installs qemu,
# busybox-static and cpio, and for a guest of another architecture than the
# host's (arm64-*) its qemu and the cross build's packages (make ARCH=arm64
# deps-run: the arm64 dpkg architecture, the cross compiler, the arm64
# libraries).  That guest runs the same tests built by `make ARCH=arm64`
# (into $(OUT)-arm64).  Included by the top Makefile, whose OUT, KAGG_BIN,
# ROOT_BINS, UNIT_BINS and `all` it uses.
#
#   make vmtest VMTEST_KERNELS="6.12" VMTEST_TIMEOUT=300 VMTEST_HOST=0 VMTEST_CMDS=
#   make vmtest VMTEST_KERNELS="arm64-6.12" VMTEST_HOST=0  # the arm64 guest alone
#   VMTEST_APPEND="loglevel=7" make vmtest   # extra guest kernel parameters
#   VMTEST_MAXCPUS=256 make vmtest           # x86 guests with 256 possible CPUs, 2 online
#   make vmtest VMTEST_JOBS=1                # one guest at a time

VMTEST_KERNELS	?= 5.10 6.1 6.12 arm64-6.12
# The guests' architectures (arm64-SERIES is arm64), and those the host's build is not.
VMTEST_ARCHES	:= $(sort $(foreach k,$(VMTEST_KERNELS),$(if $(filter arm64-%,$(k)),arm64,x86)))
VMTEST_CROSS	:= $(filter-out $(HOST_ARCH),$(VMTEST_ARCHES))
VMTEST_QEMU_x86	:= qemu-system-x86
VMTEST_QEMU_arm64 := qemu-system-arm
VMTEST_DEPS	:= $(foreach a,$(VMTEST_ARCHES),$(VMTEST_QEMU_$(a))) busybox-static cpio
VMTEST_TIMEOUT	?= 900
# Guests booted at a time.  Each guest's 2 vCPUs are 2 host threads under TCG,
# idle much of the time (sleeps, the tools' -d 1): on 2 host CPUs the four-guest
# matrix took 24 minutes one at a time and 11-14.5 two at a time.
VMTEST_JOBS	?= 2
VMTEST_HOST	?= 1
# What the guests run: the tests whose answer depends on the kernel (attach
# paths, the tools' BPF programs, the kernel's own ring-buffer pages, and the
# ring buffer's stress test: its writers use rseq and membarrier(RSEQ), so it
# runs in time-bounded rounds on every kernel).  Pure userspace tests
# (formats, the ring buffer's unit tests and benches, install, ABI) give the
# same answer on every kernel and take minutes under TCG: the host runs them.
VMTEST_BINS	?= $(filter %/test_attach %/test_record %/test_offcpu %/test_stream \
			    %/test_runqlat %/test_syscount %/test_profile %/test_funclat \
			    %/test_hist %/test_unwind %/test_prog,\
			    $(ROOT_BINS)) \
		   $(filter %/test_rb_kernel %/test_ringbuf_stress,$(UNIT_BINS))
# test_prog loads the SDK's example objects: the initramfs carries them
# (examples/bpf/*.bpf.o of the guest's build).
# Commands run in every column too (group cmd/NAME passes when they exit 0);
# each tool's header names the attach path it chose, which the table shows.
VMTEST_CMDS	?= --cmd 'offcpu=$(KAGG_BIN) offcpu -d 1' \
		   --cmd 'offcpu-raw_tp=$(KAGG_BIN) offcpu -d 1 --attach raw_tp' \
		   --cmd 'runqlat=$(KAGG_BIN) runqlat -d 1' \
		   --cmd 'syscount=$(KAGG_BIN) syscount -d 1' \
		   --cmd 'profile=$(KAGG_BIN) profile -d 1'

# The matrix runs the host's own build; the guests' architectures come from
# VMTEST_KERNELS.
VMTEST_NATIVE	= $(if $(filter-out $(HOST_ARCH),$(ARCH)),$(error make vmtest runs \
		  the host's build, not ARCH=$(ARCH): name arm64 guests in VMTEST_KERNELS \
		  (arm64-6.12)))

.PHONY: vmtest vmtest-deps vmtest-bins
vmtest-deps:
	$(VMTEST_NATIVE)
	$(Q)$(SUDO) tests/deps.sh --main "$(VMTEST_DEPS)"
	$(Q)$(foreach a,$(VMTEST_CROSS),\
		$(MAKE) --no-print-directory ARCH=$(a) OUT=$(OUT)-$(a) deps-run &&) true

# What a guest's initramfs holds, for a cross build of the guests' architecture.
vmtest-bins: $(KAGG_BIN) $(VMTEST_BINS) $(TEST_HELPERS) $(SDK_EXAMPLES)

vmtest: vmtest-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(foreach a,$(VMTEST_CROSS),\
		$(MAKE) --no-print-directory ARCH=$(a) OUT=$(OUT)-$(a) vmtest-bins &&) true
	$(Q)VMTEST_KERNELS="$(VMTEST_KERNELS)" VMTEST_TIMEOUT=$(VMTEST_TIMEOUT) \
		VMTEST_HOST=$(VMTEST_HOST) VMTEST_MAXCPUS=$(VMTEST_MAXCPUS) VMTEST_JOBS=$(VMTEST_JOBS) \
		KAGG=$(KAGG_BIN) \
		tests/vm/vmtest.sh --out $(OUT)/vm $(foreach a,$(VMTEST_CROSS),--cross $(a)=$(OUT)-$(a)) \
		$(VMTEST_CMDS) $(VMTEST_BINS)
