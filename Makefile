# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# kagg build.  `make` builds build/bin/kagg, build/lib/libkagg.{a,so} and the
# test binaries; `make deps` installs what the build needs from Debian
# bookworm and bookworm-backports; `make run` / `make test` are the two
# commands a new user types (see README.md).  Quiet by default, V=1 for
# full commands.
#
# The build never reads the running kernel's BTF: BPF programs include the
# committed vmlinux/$(ARCH)/vmlinux.h and CO-RE relocates them at load time.
# `make vmlinux` regenerates that header from /sys/kernel/btf/vmlinux.
#
# ARCH (x86 or arm64) defaults to the machine's.  `make ARCH=arm64` on x86_64
# cross-builds with Debian's aarch64-linux-gnu toolchain and the arm64
# libraries installed through multiarch (`make ARCH=arm64 deps`), into
# build-arm64/; its unit tests run under qemu-aarch64-static
# (`make ARCH=arm64 check-unit-qemu`).

HOST_ARCH	:= $(shell uname -m | sed -e 's/^x86_64$$/x86/' -e 's/^aarch64$$/arm64/')
ARCH		?= $(HOST_ARCH)
override ARCH	:= $(patsubst aarch64,arm64,$(patsubst x86_64,x86,$(ARCH)))
ifeq ($(filter x86 arm64,$(ARCH)),)
$(error ARCH=$(ARCH): kagg builds for x86 (x86_64) and arm64 (aarch64))
endif
# The GNU triplet and multiarch directory of the target.
GNU_ARCH	:= $(if $(filter arm64,$(ARCH)),aarch64,x86_64)-linux-gnu
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE	?= $(GNU_ARCH)-
OUT		?= build-$(ARCH)
else
OUT		?= build
endif
CLANG		?= clang-19
BPFTOOL		?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
# make's built-in defaults (cc, g++, ar) are replaced; a CC given by the user stays.
ifeq ($(origin CC),default)
CC		:= $(CROSS_COMPILE)gcc
endif
ifeq ($(origin CXX),default)
CXX		:= $(CROSS_COMPILE)g++
endif
ifeq ($(origin AR),default)
AR		:= $(CROSS_COMPILE)ar
endif
ifeq ($(origin LD),default)
LD		:= $(CROSS_COMPILE)ld
endif
OBJCOPY		?= $(CROSS_COMPILE)objcopy
PKG_CONFIG	?= pkg-config

KAGG_MAJOR	:= 0
KAGG_MINOR	:= 2
KAGG_PATCH	:= 0
KAGG_VERSION	:= $(KAGG_MAJOR).$(KAGG_MINOR).$(KAGG_PATCH)
# The one place the release is written: version.c reads it from the generated
# $(VERSION_H), the .so and kagg.pc are named from it, and `make abi-check`
# fails when user/libkagg.map's newest node is not KAGG_$(KAGG_MAJOR).$(KAGG_MINOR).
export KAGG_VERSION

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.DEFAULT_GOAL := all

# ---------------------------------------------------------------- sources
# bpf/: the product's programs; tests/progs/: programs only tests and benches load.
BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
TEST_BPF_SRCS	:= $(wildcard tests/progs/*.bpf.c)
BPF_HDRS	:= $(wildcard bpf/*.h bpf/shared/*.h tests/progs/*.h)
# The exponential-histogram thresholds, generated (bpf/exp_table.py), included by shared/exp_table.h.
EXP_TABLE_H	:= $(OUT)/include/exp_table_data.h
BPF_HDRS	+= $(EXP_TABLE_H)
SKELS		:= $(patsubst bpf/%.bpf.c,$(OUT)/include/%.skel.h,$(BPF_SRCS))
TEST_SKELS	:= $(patsubst tests/progs/%.bpf.c,$(OUT)/include/%.skel.h,$(TEST_BPF_SRCS))

# libkagg, one folder a room, floors as docs/architecture.md draws them
# (tests/layers.sh checks that no include climbs a floor).
LIB_DIRS	:= util rb syms unwind ftrace snapshot stream export render session builtin prog
LIB_SRCS	:= $(foreach d,$(LIB_DIRS),$(wildcard user/$(d)/*.c))
LIB_HDRS	:= $(wildcard user/*/*.h user/include/kagg/*.h)
LIB_OBJS	:= $(patsubst user/%.c,$(OUT)/obj/user/%.o,$(LIB_SRCS))
# Protocol buffer schemas (user/proto/*.proto) become C through protoc-c (protobuf-c)
# in $(OUT)/proto/, built into the library like its other objects.
PROTO_SRCS	:= $(wildcard user/proto/*.proto)
PROTO_C		:= $(patsubst user/proto/%.proto,$(OUT)/proto/%.pb-c.c,$(PROTO_SRCS))
PROTO_H		:= $(PROTO_C:.c=.h)
LIB_OBJS	+= $(patsubst $(OUT)/proto/%.c,$(OUT)/obj/proto/%.o,$(PROTO_C))
TOOL_SRCS	:= $(wildcard tools/*.c)
TOOL_OBJS	:= $(patsubst tools/%.c,$(OUT)/obj/tools/%.o,$(TOOL_SRCS))

UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))
ROOT_SRCS	:= $(wildcard tests/bpf/test_*.c)
ROOT_BINS	:= $(patsubst tests/bpf/%.c,$(OUT)/tests/bpf/%,$(ROOT_SRCS))
TEST_HELPERS	:= $(patsubst tests/helpers/%.c,$(OUT)/tests/helpers/%,$(wildcard tests/helpers/*.c)) \
		   $(patsubst tests/helpers/%.cc,$(OUT)/tests/helpers/%,$(wildcard tests/helpers/*.cc)) \
		   $(OUT)/tests/helpers/libstack_late.so $(OUT)/tests/helpers/libsymsrc.so \
		   $(if $(filter x86,$(ARCH)),$(OUT)/tests/helpers/libcfi_cases.so) \
		   $(OUT)/tests/helpers/unwind_target \
		   $(OUT)/tests/helpers/unwind_target_cxx
BENCH_SRCS	:= $(wildcard tests/bench/*.c)
BENCH_BINS	:= $(patsubst tests/bench/%.c,$(OUT)/tests/bench/%,$(BENCH_SRCS))

LIB_A		:= $(OUT)/lib/libkagg.a
LIB_RELOC	:= $(OUT)/obj/libkagg.o
# Every library object as it is, internal symbols global: for the tests and
# benches that call into the library's internals.  Never installed.
LIB_INTERNAL_A	:= $(OUT)/obj/libkagg-internal.a
LIB_SO		:= $(OUT)/lib/libkagg.so.$(KAGG_VERSION)
LIB_SONAME	:= libkagg.so.$(KAGG_MAJOR)
KAGG_BIN	:= $(OUT)/bin/kagg

# ---------------------------------------------------------------- flags
WARNS		:= -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS		?= -O2 -g
# Keep jumps from crossing or ending on 32-byte boundaries (Intel's JCC
# erratum on Skylake-derived cores): otherwise a layout accident pushed the
# ring buffer's write path out of the decoded-uop cache, and two writers on
# sibling vCPUs fought over the legacy decoders (256-byte records: two
# writers 1.72-1.78x one, 1.93-2.00x with this; docs/bench.md).
JCC_FLAG	:= $(shell [ "$(ARCH)" = x86 ] && $(CC) -Wa,-mbranches-within-32B-boundaries \
		     -x c -c /dev/null -o /dev/null 2>/dev/null && \
		     echo -Wa,-mbranches-within-32B-boundaries)
BASE_CFLAGS	:= $(CFLAGS) $(WARNS) -std=gnu11 -D_GNU_SOURCE -fPIC $(JCC_FLAG)
ALL_CFLAGS	:= $(BASE_CFLAGS) -Iuser/include -Iuser -Ibpf -I$(OUT)/include -I$(OUT)/proto
# tools/ is a client of the public API: <kagg/*.h>, its own headers, libkagg.a.
TOOL_CFLAGS	:= $(BASE_CFLAGS) -Iuser/include -Itools
# libiberty: its C++ and Rust demanglers (a static archive; licence: docs/stacks.md).
# protobuf-c: the protobuf encodings (pprof, Prometheus); libmicrohttpd: kagg serve's
# HTTP server, in the kagg binary only.  libdw: build ids, .gnu_debuglink and the CFI the
# unwind tables are compiled from; liblzma: MiniDebugInfo; libdebuginfod: debuginfod servers.
LIBS		:= -lbpf -ldw -lelf -lz -llzma -ldebuginfod -liberty -lprotobuf-c -lpthread
TOOL_LIBS	:= -lmicrohttpd $(LIBS)
# __float128 through libquadmath on x86_64; arm64's long double is already binary128.
TEST_LIBS	:= -lcmocka -ltraceevent $(if $(filter x86,$(ARCH)),-lquadmath) -lm $(LIBS)

BPF_CFLAGS	:= -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall \
		   -Wno-unused-function -I$(OUT)/include -Ibpf -Ivmlinux/$(ARCH) \
		   -idirafter /usr/include -idirafter /usr/include/$(GNU_ARCH)

# The BPF-side SDK (docs/sdk.md), installed as <kagg/bpf/...> with the kernel types its
# programs include; the example programs written with it, built as a user would.
SDK_HDRS	:= bpf/sdk/kagg.bpf.h bpf/shared/kagg_sdk.h bpf/shared/bucket_math.h
SDK_INC		:= $(OUT)/sdk/include
SDK_COPIES	:= $(addprefix $(SDK_INC)/kagg/bpf/,$(notdir $(SDK_HDRS)) vmlinux.h)
SDK_EXAMPLES	:= $(patsubst examples/bpf/%.bpf.c,$(OUT)/examples/bpf/%.bpf.o,\
			     $(wildcard examples/bpf/*.bpf.c))

# ---------------------------------------------------------------- build
VERSION_H	:= $(OUT)/include/kagg_version.h
# Generated headers exist before any compile (order-only); which file includes
# which header, generated or not, is what the compiler writes into each
# object's .d file (-MMD -MP), so touching one header rebuilds its includers.
# syscount's built-in syscall names (the target's <asm/unistd.h>, linux-libc-dev).
SYSCALL_NAMES_H	:= $(OUT)/include/syscall_names.h
GEN_HDRS	:= $(SKELS) $(PROTO_H) $(EXP_TABLE_H) $(VERSION_H) $(SYSCALL_NAMES_H)
DEPFLAGS	= -MMD -MP -MF $@.d
-include $(shell find $(OUT) -name '*.d' 2>/dev/null)

.PHONY: all
all: $(KAGG_BIN) $(LIB_A) $(OUT)/lib/libkagg.so $(UNIT_BINS) $(ROOT_BINS) $(TEST_HELPERS) \
	$(SDK_EXAMPLES)

$(SDK_INC)/kagg/bpf/kagg.bpf.h: bpf/sdk/kagg.bpf.h
	@mkdir -p $(@D)
	$(Q)cp $< $@

# kagg_sdk.h and bucket_math.h, from floor 0.
$(SDK_INC)/kagg/bpf/%.h: bpf/shared/%.h
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(SDK_INC)/kagg/bpf/vmlinux.h: vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(OUT)/examples/bpf/%.bpf.o: examples/bpf/%.bpf.c $(SDK_COPIES)
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -I$(SDK_INC) -c $< -o $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(EXP_TABLE_H)
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUT)/bpf/%.bpf.o: tests/progs/%.bpf.c | $(EXP_TABLE_H)
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OUT)/include/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	@mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(OUT)/obj/user/%.o: user/%.c | $(GEN_HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fvisibility=hidden -c $< -o $@

$(OUT)/proto/%.pb-c.c $(OUT)/proto/%.pb-c.h: user/proto/%.proto
	$(call msg,PROTOC,$@)
	@mkdir -p $(@D)
	$(Q)protoc-c --proto_path=user/proto --c_out=$(OUT)/proto $<

$(OUT)/obj/proto/%.o: $(OUT)/proto/%.c | $(GEN_HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fvisibility=hidden -c $< -o $@

$(OUT)/obj/tools/%.o: tools/%.c | $(GEN_HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) $(DEPFLAGS) -c $< -o $@

# libkagg.a holds one object: a partial link of every library object in
# which only the KAGG_API symbols stay global (the objects are built with
# -fvisibility=hidden, so --localize-hidden turns every other symbol local).
# An embedder linking it statically sees kagg_* names only: no internal name
# (jw_*, session_*, tracefs_*...) can clash with one of its own.
$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D) $(dir $(LIB_RELOC))
	$(Q)$(LD) -r -o $(LIB_RELOC) $^ && $(OBJCOPY) --localize-hidden $(LIB_RELOC)
	$(Q)rm -f $@ && $(AR) rcs $@ $(LIB_RELOC)

$(LIB_INTERNAL_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) user/libkagg.map
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=user/libkagg.map \
		-o $@ $(LIB_OBJS) $(LIBS)

$(OUT)/lib/libkagg.so: $(LIB_SO)
	$(Q)ln -sf libkagg.so.$(KAGG_VERSION) $(OUT)/lib/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $@

# kagg links the localized $(LIB_A), as any embedder does: only kagg_* is there.
$(KAGG_BIN): $(TOOL_OBJS) $(LIB_A)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -o $@ $(TOOL_OBJS) $(LIB_A) $(TOOL_LIBS)

# C++ test targets (demangled frames): frame pointers, so user stacks unwind through them.
$(OUT)/tests/helpers/%: tests/helpers/%.cc
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) -O1 -g -fno-omit-frame-pointer -Wall -Wextra -o $@ $<

# C test targets: ordinary programs, built as a user would build them (no
# library, none of the library's flags: the JCC-erratum padding would put
# segment-override prefixes on function entries, where the kernel refuses
# uprobes).
$(OUT)/tests/helpers/%: tests/helpers/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -Wall -Wextra -o $@ $<

# Code stack_target dlopen()s late (tests/helpers/late/): frame pointers too.
$(OUT)/tests/helpers/libstack_late.so: tests/helpers/late/stack_late.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -fPIC -shared -Wall -Wextra -o $@ $<

# What tests/unit/test_symsrc.c strips and serves back from each symbol source: with
# .symtab and DWARF, a build id, no frame pointer needed.
$(OUT)/tests/helpers/libsymsrc.so: tests/helpers/symsrc/symsrc.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,--build-id -Wall -Wextra -o $@ $<

# The chain only unwind tables can walk (tests/bpf/test_unwind.c): no frame pointer, no
# sibling calls (each function keeps its frame), C and C++.
$(OUT)/tests/helpers/unwind_target: tests/helpers/nofp/unwind_target.c tests/helpers/nofp/unwind_work.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -o $@ $<

$(OUT)/tests/helpers/unwind_target_cxx: tests/helpers/nofp/unwind_target_cxx.cc \
				      tests/helpers/nofp/unwind_work.h
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wall -Wextra -o $@ $<

# Hand-made call frame information for tests/unit/test_unwind_table.c.
$(OUT)/tests/helpers/libcfi_cases.so: tests/helpers/cfi/cfi_cases.S
	$(call msg,AS,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -nostdlib -Wl,--build-id -o $@ $<

# Tests and benches link the public libkagg.a, as an embedder would; those
# that call the library's internal functions (snap_*, syms__*, the ring
# buffer's rb_*, the stream consumers...) link the internal archive instead.
INTERNAL_TESTS	:= unit/test_offcpu_output unit/test_ringbuf unit/test_ringbuf_stress \
		   unit/test_syms unit/test_stacks unit/test_hist_parse unit/test_percentile unit/test_schain \
		   bpf/test_profile bench/bench_stream unit/test_ldcache unit/test_text \
		   unit/test_json_locale unit/test_prom unit/test_render unit/test_hostile_names \
		   unit/test_symsrc unit/test_unwind_table bench/bench_unwind_build unit/test_cgroup \
		   bpf/test_hist bpf/test_prog
TEST_LIB_A	:= $(LIB_A)
$(addprefix $(OUT)/tests/,$(INTERNAL_TESTS)): TEST_LIB_A := $(LIB_INTERNAL_A)
# test_rb_bench: the bench is the CLI's (tools/rb_bench.c), built into the test.
TEST_EXTRA	:=
$(OUT)/tests/unit/test_rb_bench: TEST_EXTRA := tools/rb_bench.c
$(OUT)/tests/unit/test_rb_bench: tools/rb_bench.c tools/rb_bench.h
# bench_rb_live: LTTng-UST as a peer, its tracepoint provider compiled in (BENCH_DEPS).
$(OUT)/tests/bench/bench_rb_live: TEST_LIBS += -llttng-ust -ldl

$(OUT)/tests/%: tests/%.c $(LIB_A) $(LIB_INTERNAL_A) | $(GEN_HDRS) $(TEST_SKELS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fno-omit-frame-pointer -Itests -Itools -I/usr/include/traceevent \
		-o $@ $< $(TEST_EXTRA) $(TEST_LIB_A) $(TEST_LIBS)

# ---------------------------------------------------------------- tests
.PHONY: check-unit check-root test layers
layers:
	$(Q)tests/layers.sh

check-unit: $(UNIT_BINS) $(KAGG_BIN)
	$(Q)tests/run.sh unit $(UNIT_BINS)

# A cross build's unit tests under qemu-user (ARCH=arm64 on x86_64): kagg is
# run through a wrapper that starts it under qemu too.  qemu-user has no rseq
# (the ring buffer takes its locked path and says so) and shows its own
# mappings in /proc/PID/maps, so the tests of another process's symbols skip
# there, saying so.  The tests' objcopy, strip and nm are the cross binutils.
QEMU_USER	:= qemu-$(if $(filter arm64,$(ARCH)),aarch64,x86_64)-static
.PHONY: check-unit-qemu
check-unit-qemu: $(UNIT_BINS) $(KAGG_BIN)
	$(Q)printf '#!/bin/sh\nexec %s -L / %s "$$@"\n' '$(QEMU_USER)' '$(abspath $(KAGG_BIN))' \
		> $(OUT)/kagg-qemu && chmod +x $(OUT)/kagg-qemu
	$(Q)mkdir -p $(OUT)/cross-bin && for t in objcopy strip nm; do \
		ln -sf "$$(command -v $(CROSS_COMPILE)$$t)" $(OUT)/cross-bin/$$t; done
	$(Q)KAGG=$(abspath $(OUT)/kagg-qemu) KAGG_TEST_RUNNER="$(QEMU_USER) -L /" \
		KAGG_HELPERS=$(abspath $(OUT)/tests/helpers) PATH="$(abspath $(OUT)/cross-bin):$$PATH" \
		tests/run.sh unit-$(ARCH) $(UNIT_BINS)

# The ring buffer's writer cost against its floor, both in one qemu-user run
# (`make ARCH=arm64 bench-rb-qemu` on x86_64: no rseq there, so the locked
# path, casp or ldaxp/stlxp): bench_rb built from the ring buffer's own
# sources only.  Emulation is ~50x slower: KAGG_BENCH_ITERS defaults to 200000.
.PHONY: bench-rb-qemu
bench-rb-qemu:
	$(Q)mkdir -p $(OUT)/tests/bench
	$(Q)$(CC) $(BASE_CFLAGS) -O2 -Iuser/include -Iuser -I/usr/include/traceevent \
		tests/bench/bench_rb.c user/rb/ringbuf.c user/rb/rb_read.c \
		-o $(OUT)/tests/bench/bench_rb-ring -ltraceevent -lpthread
	$(Q)KAGG_BENCH_ITERS=$${KAGG_BENCH_ITERS:-200000} $(QEMU_USER) -L / \
		$(OUT)/tests/bench/bench_rb-ring

check-root: all
	$(Q)KAGG=$(abspath $(KAGG_BIN)) KAGG_HELPERS=$(abspath $(OUT)/tests/helpers) \
		tests/run.sh root $(ROOT_BINS)

test: deps
	$(Q)tests/layers.sh
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)$(MAKE) --no-print-directory all
	$(Q)KAGG=$(abspath $(KAGG_BIN)) KAGG_HELPERS=$(abspath $(OUT)/tests/helpers) \
		tests/run.sh host $(UNIT_BINS) $(ROOT_BINS)
	$(Q)$(MAKE) --no-print-directory check-unit-asan check-fuzz
	$(Q)$(MAKE) --no-print-directory abi-check
	$(Q)$(MAKE) --no-print-directory vmtest VMTEST_HOST=0

# ---------------------------------------------------------------- run, bench
.PHONY: run bench
run: deps-run
	$(Q)$(MAKE) --no-print-directory $(KAGG_BIN)
	$(SUDO) $(KAGG_BIN) offcpu -d 5

bench: deps bench-deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS) examples
	$(Q)KAGG=$(abspath $(KAGG_BIN)) tests/bench/run.sh $(BENCH_BINS)

# ---------------------------------------------------------------- setup
# Dependencies.  `make run` installs what building and running kagg needs
# (RUN_DEPS), `make test` adds what the tests need (TEST_DEPS).  libbpf-dev
# and bpftool must come from bookworm-backports (libbpf 1.4, bpftool 7.5); the
# rest from bookworm.  As root they are installed directly; a user who is not
# root gets them through sudo, and so does the BPF part of `make run`.  libdw-dev and
# libdebuginfod-dev come from backports too, as the libdw1 libbpf's backport pulls in
# (debuginfod, the server the symbol tests start, with them).
SUDO		:= $(shell [ "$$(id -u)" = 0 ] || ! command -v sudo >/dev/null || echo sudo)
DEPS_BPO	:= libbpf-dev bpftool libdw-dev libdebuginfod-dev debuginfod
RUN_DEPS	:= clang-19 llvm-19 libelf-dev zlib1g-dev libiberty-dev pkg-config make gcc \
		   binutils libmicrohttpd-dev protobuf-c-compiler libprotobuf-c-dev python3 \
		   liblzma-dev
TEST_DEPS	:= libclang-rt-19-dev libcmocka-dev libtraceevent-dev trace-cmd g++ abigail-tools \
		   libxml2-utils prometheus golang-go chromium clang-format-19 \
		   python3-prometheus-client libc6-dbg xz-utils
DEPS		:= $(RUN_DEPS) $(TEST_DEPS)
DPKG_ARCH_arm64	:= arm64
DPKG_ARCH_x86	:= amd64
# A cross build (ARCH other than the machine's): the cross toolchain, the target's
# libraries through multiarch (PKG:arm64), and qemu-user to run its unit tests.
ifneq ($(ARCH),$(HOST_ARCH))
DPKG_ARCH	:= $(if $(filter arm64,$(ARCH)),arm64,amd64)
CROSS_LIBS	:= libc6-dev liblzma-dev zlib1g-dev \
		   libiberty-dev libprotobuf-c-dev \
		   libmicrohttpd-dev libcmocka-dev libtraceevent-dev libstdc++-12-dev
CROSS_DEPS	:= gcc-$(GNU_ARCH) g++-$(GNU_ARCH) binutils-$(GNU_ARCH) qemu-user-static \
		   $(addsuffix :$(DPKG_ARCH),$(CROSS_LIBS))
# elfutils' -dev packages are Multi-Arch: same, so the target's must be the very version
# of the host's, which come from bookworm-backports (DEPS_BPO).
CROSS_DEPS_BPO	:= $(addsuffix :$(DPKG_ARCH),libbpf-dev libelf-dev libdw-dev libdebuginfod-dev)
RUN_DEPS	+= $(CROSS_DEPS)
DEPS_BPO	+= $(CROSS_DEPS_BPO)
DEPS_ARCH	:= --arch $(DPKG_ARCH)
endif
BENCH_DEPS	:= libbpf-tools bpftrace lttng-tools liblttng-ust-dev prometheus-node-exporter curl
BENCH_DEPS_BPO	:= linux-perf

# Long run under load (tests/soak/soak.sh, not part of make test): SOAK_MINUTES=30 by default.
.PHONY: soak
soak: all
	$(Q)KAGG=$(abspath $(KAGG_BIN)) tests/soak/soak.sh

.PHONY: deps deps-run bench-deps
deps:
	$(Q)$(SUDO) tests/deps.sh $(DEPS_ARCH) --backports "$(DEPS_BPO)" --main "$(DEPS)"

deps-run:
	$(Q)$(SUDO) tests/deps.sh $(DEPS_ARCH) --backports "$(DEPS_BPO)" --main "$(RUN_DEPS)"

bench-deps:
	$(Q)$(SUDO) tests/deps.sh --backports "$(BENCH_DEPS_BPO)" --main "$(BENCH_DEPS)"

# The kernel matrix: `make vmtest` (qemu guests + host), see docs/kernel-matrix.md.
include tests/vm/vm.mk

# Sanitizers and fuzzing: `make check-unit-asan`, `make check-fuzz`, `make fuzz`
# (docs/fuzzing.md).
include tests/fuzz/fuzz.mk

# Regenerate the committed vmlinux.h: natively from the running kernel's BTF;
# for another architecture (or with VMLINUX_DEB=REGEX, an apt-cache name
# pattern: its newest match) from the BTF inside a Debian kernel image, fetched
# with apt-get download (tests/vm/image_btf.py).
VMLINUX_DEB	?= $(if $(filter $(HOST_ARCH),$(ARCH)),,$(VMLINUX_DEB_$(ARCH)))
VMLINUX_DEB_arm64 := ^linux-image-6\.12\.[0-9].*-cloud-arm64-unsigned$$
.PHONY: vmlinux
vmlinux:
ifeq ($(VMLINUX_DEB),)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h
	@printf 'vmlinux.h generated by `make vmlinux` (bpftool btf dump) from:\n  %s\n  BTF sha256 %s\n' \
		"$$(uname -srvm)" "$$(sha256sum /sys/kernel/btf/vmlinux | cut -d' ' -f1)" \
		> vmlinux/$(ARCH)/SOURCE
else
	$(Q)set -e; d=$(OUT)/vmlinux-deb; rm -rf $$d; mkdir -p $$d/x; \
	pkg=$$(apt-cache search --names-only '$(VMLINUX_DEB)' | \
		cut -d' ' -f1 | sort -V | tail -1); \
	[ -n "$$pkg" ] || { echo "vmlinux: no package matches $(VMLINUX_DEB)" >&2; exit 1; }; \
	(cd $$d && apt-get download -q "$$pkg:$(DPKG_ARCH_$(ARCH))" >/dev/null 2>&1); \
	dpkg-deb --fsys-tarfile $$d/*.deb | tar -x -C $$d/x --wildcards './boot/vmlinuz-*'; \
	python3 tests/vm/image_btf.py $$d/x/boot/vmlinuz-* $$d/btf; \
	$(BPFTOOL) btf dump file $$d/btf format c > vmlinux/$(ARCH)/vmlinux.h; \
	printf 'vmlinux.h generated by `make vmlinux` (tests/vm/image_btf.py, bpftool btf dump) from:\n  %s\n  BTF sha256 %s\n' \
		"$$(basename $$d/*.deb)" "$$(sha256sum $$d/btf | cut -d' ' -f1)" > vmlinux/$(ARCH)/SOURCE
endif
	@cat vmlinux/$(ARCH)/SOURCE

.PHONY: clean
clean:
	rm -rf $(OUT)

# Formatting: .clang-format (kernel-like: tabs, 100 columns), kept by
# clang-format 19.  `make format` rewrites, `make format-check` (in make test)
# fails on any file that `make format` would change.
FORMAT		?= clang-format-19
FORMAT_SRCS	= $(shell git ls-files '*.c' '*.h' '*.cc' 2>/dev/null | grep -v '^vmlinux/')

.PHONY: format format-check
format:
	$(Q)$(FORMAT) -i $(FORMAT_SRCS)

format-check:
	$(Q)$(FORMAT) --dry-run -Werror $(FORMAT_SRCS) && echo "format-check: OK, $(words $(FORMAT_SRCS)) files"

# ---------------------------------------------------------------- ABI
# The exported symbols are the KAGG_API declarations in user/include/kagg/*.h;
# the type layouts are those of the public headers.  `make abi-update`
# regenerates user/libkagg.map from the headers and tests/abi/libkagg.abi (an
# abidw dump of the .so) from the rebuilt library: run it after adding a
# public function or appending a field, and commit both.  `make abi-check`
# fails when headers, map, .so and .a differ, when the .a or .so exports a
# name without the kagg_ prefix, when abidiff finds an incompatible layout
# change against the committed dump, or when a public header does not compile
# alone as C11 (-pedantic) or C++.  See tests/abi/abi.sh.
.PHONY: abi-check abi-update
abi-check: $(OUT)/lib/libkagg.so $(LIB_A)
	$(Q)tests/abi/abi.sh check user/libkagg.map $(OUT)/lib/libkagg.so $(LIB_A) tests/abi/libkagg.abi

abi-update:
	$(Q)tests/abi/abi.sh update-map user/libkagg.map
	$(Q)$(MAKE) --no-print-directory $(OUT)/lib/libkagg.so
	$(Q)tests/abi/abi.sh update-dump $(OUT)/lib/libkagg.so tests/abi/libkagg.abi

# ---------------------------------------------------------------- install
# make install PREFIX=/usr/local DESTDIR=   (and make uninstall, same variables)
PREFIX		?= /usr/local
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
SYSTEMDDIR	?= $(PREFIX)/lib/systemd/system
INSTALL		?= install
PUBLIC_HDRS	:= $(wildcard user/include/kagg/*.h)
KAGG_PC		:= $(OUT)/lib/kagg.pc

# Rewritten whenever PREFIX/LIBDIR/INCLUDEDIR change (kept when unchanged).
.PHONY: FORCE
FORCE:
$(KAGG_PC): user/kagg.pc.in FORCE
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(KAGG_VERSION)|' $< > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

# Rewritten only when the release changes, so version.o is rebuilt just then.
$(VERSION_H): FORCE
	@mkdir -p $(@D)
	$(Q)printf '/* generated by the Makefile: the release */\n#define KAGG_VERSION "%s"\n' \
		'$(KAGG_VERSION)' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

.PHONY: install uninstall
install: $(KAGG_BIN) $(LIB_A) $(OUT)/lib/libkagg.so $(KAGG_PC)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(INCLUDEDIR)/kagg $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(Q)$(INSTALL) -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sfn libkagg.so.$(KAGG_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	$(Q)ln -sfn $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libkagg.so
	$(Q)$(INSTALL) -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(Q)$(INSTALL) -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/kagg/
	$(Q)$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/kagg/bpf
	$(Q)$(INSTALL) -m 644 $(SDK_HDRS) $(DESTDIR)$(INCLUDEDIR)/kagg/bpf/
	$(Q)$(INSTALL) -m 644 vmlinux/$(ARCH)/vmlinux.h $(DESTDIR)$(INCLUDEDIR)/kagg/bpf/
	$(Q)$(INSTALL) -m 644 $(KAGG_PC) $(DESTDIR)$(PKGCONFIGDIR)/
	$(Q)$(INSTALL) -m 755 $(KAGG_BIN) $(DESTDIR)$(BINDIR)/
	$(Q)$(INSTALL) -m 644 docs/kagg.1 $(DESTDIR)$(MANDIR)/man1/
	$(Q)$(INSTALL) -m 644 tools/kagg.bash-completion $(DESTDIR)$(BASHCOMPDIR)/kagg
	$(Q)$(INSTALL) -d $(DESTDIR)$(SYSTEMDDIR)
	$(Q)sed 's|@BINDIR@|$(BINDIR)|' tools/kagg-serve.service > $(DESTDIR)$(SYSTEMDDIR)/kagg-serve.service

uninstall:
	$(call msg,UNINST,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/libkagg.so.$(KAGG_VERSION) \
		$(DESTDIR)$(LIBDIR)/$(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libkagg.so \
		$(DESTDIR)$(LIBDIR)/libkagg.a $(DESTDIR)$(PKGCONFIGDIR)/kagg.pc \
		$(DESTDIR)$(BINDIR)/kagg $(DESTDIR)$(MANDIR)/man1/kagg.1 \
		$(DESTDIR)$(BASHCOMPDIR)/kagg $(DESTDIR)$(SYSTEMDDIR)/kagg-serve.service \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/kagg/,$(notdir $(PUBLIC_HDRS))) \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/kagg/bpf/,$(notdir $(SDK_HDRS)) vmlinux.h)
	$(Q)rmdir $(DESTDIR)$(INCLUDEDIR)/kagg/bpf 2>/dev/null || true
	$(Q)rmdir $(DESTDIR)$(INCLUDEDIR)/kagg 2>/dev/null || true

# ---------------------------------------------------------------- examples
# Built against the shared library in build/lib through the public headers
# only (tests/bpf/test_install.c builds them again against an installed copy).
EXAMPLE_SRCS	:= $(wildcard examples/*.c)
EXAMPLE_BINS	:= $(patsubst examples/%.c,$(OUT)/examples/%,$(EXAMPLE_SRCS))

.PHONY: examples
examples: $(EXAMPLE_BINS)

$(OUT)/examples/%: examples/%.c $(OUT)/lib/libkagg.so $(PUBLIC_HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARNS) -std=gnu11 -Iuser/include -o $@ $< \
		-L$(OUT)/lib -lkagg -Wl,-rpath,$(abspath $(OUT)/lib)

# ---------------------------------------------------------------- generated
# The target's syscall numbers -> names, from the kernel's UAPI table as the
# target's compiler sees it (<asm/unistd.h> of linux-libc-dev, through multiarch
# for a cross build): one "[__NR_name] = "name"," a line, each under #ifdef.
$(SYSCALL_NAMES_H): Makefile
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q){ printf '/* generated by the Makefile from <asm/unistd.h> (%s) */\n' '$(GNU_ARCH)'; \
	  echo | $(CC) -dM -E -include asm/unistd.h -x c - | \
	  sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/\1/p' | \
	  grep -vx -e syscalls -e arch_specific_syscall | sort -u | \
	  awk '{ printf "#ifdef __NR_%s\n\t[__NR_%s] = \"%s\",\n#endif\n", $$1, $$1, $$1 }'; \
	} > $@.tmp && mv $@.tmp $@

# The exact exponential-histogram thresholds that bpf/shared/exp_table.h includes.
.PHONY: exp-table
exp-table: $(EXP_TABLE_H)

$(EXP_TABLE_H): bpf/exp_table.py
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)python3 bpf/exp_table.py $@
