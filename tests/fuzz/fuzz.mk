# SPDX-License-Identifier: MIT
#
# libFuzzer targets for the parsers that read input the kernel does not
# control, one tests/fuzz/fuzz_<target>.c each, built with clang and the
# sanitizers over the same sources as the kernel, and run by
# tests/fuzz/run, which prints KTAP.
#
#   make fuzz [FUZZ_SECONDS=N]   run each target N seconds (default 60)
#   make fuzz-build              build them; make check runs each over fixed
#                                inputs (tests/fuzz/run --check)
#
# Included by the Makefile, so paths are from the repository root.

# Debian 12's clang; its libFuzzer runtime is only a Recommends of clang's,
# so it is named here for tools/deps.
FUZZ_CC := clang-14
FUZZ_DEPS := clang-14:clang-14 \
	/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a:libclang-rt-14-dev
FUZZ_SECONDS ?= 60
FUZZ_BUILD := $(BUILD)/fuzz

FUZZ_TARGETS := \
	acpi \
	boot_info \
	cmdline \
	hpet \
	madt \
	srat

# The kernel's pure logic, unchanged (the Makefile's LOGIC), and what the
# harnesses share.
FUZZ_SHARED := $(LOGIC) tests/fuzz/fuzz.c tests/unit/phys_buffer.c

FUZZ_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_SHARED))
FUZZ_BINS := $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZ_TARGETS))

FUZZ_CFLAGS := -std=gnu11 -O1 -g -I. -DHOST_TEST \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -Wall -Wextra -Werror

.PHONY: fuzz fuzz-build fuzz-deps
# Built only through the pattern rules, but kept: every target links them.
.SECONDARY: $(FUZZ_OBJS)

fuzz-deps:
	@tools/deps $(FUZZ_DEPS)

# The harnesses' helpers are not what is being fuzzed: no coverage
# tracing there, where fuzz_acpi's reader spends most of its time.
FUZZ_COVERAGE := -fsanitize=fuzzer-no-link
$(FUZZ_BUILD)/obj/tests/%.o: FUZZ_COVERAGE :=

quiet_cmd_fuzz_o = HOSTCC  $(shown)
      cmd_fuzz_o = $(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_COVERAGE) -MMD -MP -c $< -o $@
$(FUZZ_BUILD)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	$(call cmd,fuzz_o)

quiet_cmd_fuzz = HOSTCC  $(shown)
      cmd_fuzz = $(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< $(FUZZ_OBJS)
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) | fuzz-deps
	$(call cmd,fuzz)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	tests/fuzz/run --seconds $(FUZZ_SECONDS) $(FUZZ_TARGETS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:=.d)
