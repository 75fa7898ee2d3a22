# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Sanitizers and fuzzing (docs/fuzzing.md).  One more copy of libkagg is built
# with clang, ASan and UBSan (every UBSan report fatal) and libFuzzer's
# coverage hooks; the unit tests and the libFuzzer targets link against it.
# Included by the top Makefile, whose OUT, LIB_SRCS, UNIT_SRCS, WARNS and
# KAGG_BIN it uses.
#
#   make check-unit-asan          the unit tests under ASan+UBSan (part of `make test`)
#   make check-fuzz               replay every committed corpus and crasher file once under
#                                 the sanitizers, seconds (part of `make test`)
#   make fuzz FUZZ_SECONDS=600    fuzz each target that long; FUZZ_TARGETS=fuzz_page picks
#                                 some, FUZZ_JOBS=2 runs that many at once

SAN_OUT		:= $(OUT)/san
SAN_FLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_CFLAGS	:= -O1 -g $(SAN_FLAGS) $(WARNS) -std=gnu11 -D_GNU_SOURCE \
		   -Iuser/include -Iuser -Ibpf -I$(OUT)/include -I$(OUT)/proto
SAN_LIB_OBJS	:= $(patsubst user/%.c,$(SAN_OUT)/obj/user/%.o,$(LIB_SRCS)) \
		   $(patsubst $(OUT)/proto/%.c,$(SAN_OUT)/obj/proto/%.o,$(PROTO_C))
SAN_LIB		:= $(SAN_OUT)/lib/libkagg.a
SAN_UNIT_BINS	:= $(patsubst tests/unit/%.c,$(SAN_OUT)/tests/unit/%,$(UNIT_SRCS))
SAN_KAGG	:= $(SAN_OUT)/bin/kagg
# gcc's own headers (quadmath.h), searched after clang's and the system's
SAN_GCC_INC	:= $(shell $(CC) -print-file-name=include)
# halt on the first report; leaks count (LSan)
SAN_ENV		:= ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1 \
		   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS	:= $(patsubst tests/fuzz/%.c,$(SAN_OUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS	?= 60
FUZZ_TARGETS	?= $(notdir $(FUZZ_BINS))
FUZZ_JOBS	?= 1

# The library objects also carry libFuzzer's coverage hooks (-fsanitize=fuzzer-no-link):
# without libFuzzer linked in, the sanitizer runtime's no-op hooks take them.
$(SAN_OUT)/obj/user/%.o: user/%.c | $(GEN_HDRS)
	$(call msg,CC-SAN,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -fPIC -fvisibility=hidden -c $< -o $@

$(SAN_OUT)/obj/proto/%.o: $(OUT)/proto/%.c | $(GEN_HDRS)
	$(call msg,CC-SAN,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -fPIC -fvisibility=hidden -c $< -o $@

$(SAN_LIB): $(SAN_LIB_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SAN_KAGG): $(TOOL_SRCS) $(wildcard tools/*.h) $(SAN_LIB)
	$(call msg,LD-SAN,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) -Itools -o $@ $(TOOL_SRCS) $(SAN_LIB) $(TOOL_LIBS)

$(SAN_OUT)/tests/unit/test_rb_bench: TEST_EXTRA := tools/rb_bench.c
$(SAN_OUT)/tests/unit/test_rb_bench: tools/rb_bench.c tools/rb_bench.h
$(SAN_OUT)/tests/unit/%: tests/unit/%.c $(SAN_LIB) | $(GEN_HDRS) $(TEST_SKELS)
	$(call msg,CC-SAN,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) $(DEPFLAGS) -Wno-unused-command-line-argument -Itests -Itools \
		-I/usr/include/traceevent -idirafter $(SAN_GCC_INC) -o $@ $< $(TEST_EXTRA) $(SAN_LIB) \
		$(TEST_LIBS)

$(SAN_OUT)/fuzz/%: tests/fuzz/%.c $(SAN_LIB) | $(GEN_HDRS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer -o $@ $< $(SAN_LIB) $(LIBS)

# The option parsers: the tools (all but the dispatcher) built parse-only (tools/cli.h).
FUZZ_CLI_SRCS	:= $(filter-out tools/kagg.c,$(TOOL_SRCS))
$(SAN_OUT)/fuzz/fuzz_cli: tests/fuzz/fuzz_cli.c $(FUZZ_CLI_SRCS) $(wildcard tools/*.h) $(SAN_LIB) \
			  $(LIB_HDRS) $(BPF_HDRS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(SAN_CFLAGS) -DKAGG_CLI_PARSE_ONLY -Itools -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_CLI_SRCS) $(SAN_LIB) $(TOOL_LIBS)

.PHONY: check-unit-asan check-fuzz fuzz
check-unit-asan: $(SAN_UNIT_BINS) $(SAN_KAGG)
	$(Q)$(SAN_ENV) KAGG=$(abspath $(SAN_KAGG)) tests/run.sh unit-asan $(SAN_UNIT_BINS)

check-fuzz: $(FUZZ_BINS)
	$(Q)$(SAN_ENV) tests/fuzz/fuzz.sh replay $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	$(Q)$(SAN_ENV) FUZZ_JOBS=$(FUZZ_JOBS) tests/fuzz/fuzz.sh fuzz $(FUZZ_SECONDS) \
		$(filter $(addprefix %/,$(FUZZ_TARGETS)),$(FUZZ_BINS))
