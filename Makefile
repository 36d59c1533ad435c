# SPDX-License-Identifier: MIT
#
# hvprobe: a freestanding x86-64 guest test kernel.
#
#   make          build/hvprobe.elf, build/hvprobe.elf32 (QEMU -kernel) and
#                 build/hvprobe.iso (GRUB, BIOS + UEFI)
#   make run      boot the default scenario under QEMU and summarise it
#   make check    host unit tests + the guest suite on all three boot paths
#   make check-lava  the -kernel and BIOS ISO boots as LAVA jobs, run by a
#                 local lava-run; LAVA's cases must equal the KTAP lines
#   make fuzz     each parser fuzz target FUZZ_SECONDS (60) seconds
#   make soak     SOAK_RUNS boots on random machines and command lines
#                 (SOAK_SEED= repeats one soak)
#   make format   clang-format every C source in place, as make check's
#                 format row wants it
#   make bench    boot time of the three boot paths, the SMP bring-up
#                 sweep side by side with Debian's Linux kernel, and the lpj
#                 thread's five rows beside Linux 6.1 and 6.12 (hours)
#   make bench-pmi-exits  the guest PMI handler's VM exits per PMI, per
#                 PMU, on the unit tests' host model (seconds)
#
# run and check first make sure the tools they need are installed.
#
# make prints one line per step (`  CC      kernel/x86/trap.o`), as Linux's
# Kbuild does; make V=1 prints each whole command, make -s nothing.

CC := gcc
LD := ld
OBJCOPY := objcopy
PYTHON := python3
BUILD := build
.DEFAULT_GOAL := all

ifneq ($(shell uname -m),x86_64)
$(error hvprobe builds on an x86-64 host with GCC and GNU binutils)
endif

# Kbuild's quiet commands (Linux 6.12 scripts/Kbuild.include, cmd and
# echo-cmd): a rule runs $(call cmd,NAME), which prints quiet_cmd_NAME
# (the step and its target below $(BUILD)), or cmd_NAME itself under V=1,
# and runs cmd_NAME. Under -s nothing is printed, so the tools that run
# make -s and read its output (tools/lib/cli.py, buildinfo.py,
# tools/check) see what they always saw.
V ?= 0
ifeq ($(V),1)
quiet :=
else
quiet := quiet_
endif
ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
quiet := silent_
endif
squote := '
escsq = $(subst $(squote),'\$(squote)',$1)
echo-cmd = $(if $($(quiet)cmd_$(1)),echo '  $(call escsq,$($(quiet)cmd_$(1)))';)
cmd = @set -e; $(echo-cmd) $(cmd_$(1))
# What a step's line names: its target, as a path below the build folder.
shown = $(patsubst $(BUILD)/%,%,$@)

KERNEL_CFLAGS := -std=gnu11 -O2 -g -I. \
	-ffreestanding -nostdlib -mno-red-zone -mgeneral-regs-only \
	-fno-pic -fno-pie -fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-tree-loop-distribute-patterns \
	-Wall -Wextra -Werror
KERNEL_ASFLAGS := -I. -D__ASSEMBLER__
KERNEL_LDFLAGS := -nostdlib -static -no-pie -z max-page-size=0x1000 \
	-z noexecstack -T linker.ld

# Each source once. LOGIC is pure: it is built unchanged into the kernel,
# the host unit tests and the fuzzers. KERNEL is the rest of the kernel:
# hardware access, entry points, the composition in kernel/main.c.
LOGIC := \
	apic/bringup.c \
	apic/icr.c \
	apic/options.c \
	apic/smp/rules.c \
	apic/smp/tsc_sync_rule.c \
	apic/smp/turns.c \
	boot/boot_info.c \
	hv/hv.c \
	hv/hyperv_math.c \
	hv/hyperv_rates.c \
	hv/kvm_rates.c \
	hv/pvclock.c \
	kernel/acpi/acpi.c \
	kernel/acpi/fadt.c \
	kernel/acpi/hpet.c \
	kernel/acpi/madt.c \
	kernel/acpi/srat.c \
	kernel/cmdline.c \
	kernel/lib/json.c \
	kernel/lib/printf.c \
	kernel/lib/stats.c \
	kernel/lib/string.c \
	kernel/options.c \
	kernel/test/ktap.c \
	kernel/test/options.c \
	kernel/test/runner.c \
	kernel/time/linux_tsc.c \
	kernel/time/lpj.c \
	kernel/time/options.c \
	kernel/time/policies.c \
	kernel/time/rates.c \
	kernel/time/refclock_names.c \
	kernel/x86/nmi_account.c \
	kernel/x86/percpu.c \
	pmu/options.c \
	pmu/pmu_math.c

# The sources that touch the machine but run on the host too, in the
# unit tests' model of a KVM guest's PMU, LVTPC and NMIs (tests/unit/model.c).
MODELED := \
	apic/smp/tsc_warp.c \
	kernel/x86/cpuid.c \
	kernel/x86/nmi.c \
	pmu/pmi.c \
	pmu/pmu.c \
	pmu/stress.c

KERNEL := \
	$(MODELED) \
	apic/apic.c \
	apic/smp/ap.c \
	apic/smp/parallel.c \
	apic/smp/smp.c \
	apic/smp/smp_json.c \
	apic/smp/tsc_sync.c \
	apic/timer.c \
	apic/smp/trampoline.S \
	boot/boot.c \
	boot/entry.S \
	hv/hv_init.c \
	hv/hyperv.c \
	hv/kvm.c \
	kernel/console.c \
	kernel/lib/libc.c \
	kernel/main.c \
	kernel/power.c \
	kernel/test/watchdog.c \
	kernel/time/clock.c \
	kernel/time/delay.c \
	kernel/time/hpet.c \
	kernel/time/linux_tsc_reads.c \
	kernel/time/pit.c \
	kernel/time/pmtimer.c \
	kernel/x86/alloc.c \
	kernel/x86/entry.S \
	kernel/x86/pic.c \
	kernel/x86/trap.c \
	pmu/workload.S

# The guest tests, tests/<name>.c each, in the order they run. A new test
# is its file and its name here.
TESTS := \
	boot \
	exceptions \
	cpuinfo \
	hv \
	timers \
	smp \
	lpj \
	nmi_storm \
	pmi_stress \
	crash \
	crash_ap \
	hang \
	acpidump

UNLISTED := $(filter-out $(TESTS),$(basename $(notdir $(wildcard tests/*.c))))
ifneq ($(UNLISTED),)
$(error tests/ has $(UNLISTED).c, which TESTS does not list)
endif

# The tests link last, in TESTS order: the order of their table, which the
# runner follows (kernel/test/test.h).
KERNEL_OBJS := $(patsubst %,$(BUILD)/%.o,$(basename $(LOGIC) $(KERNEL)) $(addprefix tests/,$(TESTS)))

UNIT_TESTS := \
	tests/unit/acpi_build.c \
	tests/unit/main.c \
	tests/unit/model.c \
	tests/unit/phys_buffer.c \
	tests/unit/test_acpi.c \
	tests/unit/test_boot_info.c \
	tests/unit/test_bringup.c \
	tests/unit/test_cmdline.c \
	tests/unit/test_fuzz_found.c \
	tests/unit/test_hpet.c \
	tests/unit/test_hv.c \
	tests/unit/test_hyperv.c \
	tests/unit/test_json.c \
	tests/unit/test_ktap.c \
	tests/unit/test_linux_tsc.c \
	tests/unit/test_lpj.c \
	tests/unit/test_madt.c \
	tests/unit/test_nmi_account.c \
	tests/unit/test_pmi_model.c \
	tests/unit/test_pmu.c \
	tests/unit/test_printf.c \
	tests/unit/test_pvclock.c \
	tests/unit/test_rates.c \
	tests/unit/test_srat.c \
	tests/unit/test_stats.c \
	tests/unit/test_tsc_warp.c

# The folders of C sources: the unit binary's headers, make format and
# make check's format row (tools/lib/checks/style.py) read the same list.
C_TREES := apic boot hv kernel pmu tests
C_SOURCES = $(shell find $(C_TREES) -name '*.[ch]' | sort)

UNIT_CFLAGS := -std=gnu11 -O1 -g -I. -DHOST_TEST -pthread \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -Wall -Wextra -Werror

.PHONY: all run check check-lava bench bench-quick bench-pmi-exits unit info deps \
	clean soak format

all: $(BUILD)/hvprobe.elf $(BUILD)/hvprobe.elf32 $(BUILD)/hvprobe.iso

quiet_cmd_cc = CC      $(shown)
      cmd_cc = $(CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call cmd,cc)

quiet_cmd_as = AS      $(shown)
      cmd_as = $(CC) $(KERNEL_ASFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	$(call cmd,as)

quiet_cmd_ld = LD      $(shown)
      cmd_ld = $(LD) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS)
$(BUILD)/hvprobe.elf: $(KERNEL_OBJS) linker.ld Makefile
	$(call cmd,ld)

# QEMU's Multiboot loader refuses ELF64; the same image as ELF32 loads,
# since every address is below 4 GiB (the code stays 64-bit).
quiet_cmd_objcopy = OBJCOPY $(shown)
      cmd_objcopy = $(OBJCOPY) -O elf32-i386 $< $@
$(BUILD)/hvprobe.elf32: $(BUILD)/hvprobe.elf
	$(call cmd,objcopy)

quiet_cmd_copy = COPY    $(shown)
      cmd_copy = cp $< $@
$(BUILD)/isodir/boot/hvprobe.elf: $(BUILD)/hvprobe.elf
	@mkdir -p $(dir $@)
	$(call cmd,copy)

# tools/mkiso writes the tree's grub.cfg: the default entry, then one per
# shipped scenario.
quiet_cmd_mkiso = MKISO   $(shown)
      cmd_mkiso = tools/mkiso $(BUILD)/isodir $@
$(BUILD)/hvprobe.iso: $(BUILD)/isodir/boot/hvprobe.elf boot/grub.cfg tools/commands/mkiso.py \
		tools/lib/launch/media.py $(wildcard tools/scenarios/*.toml)
	$(call cmd,mkiso)

# TESTS reaches the unit binary's --list, the one export of the names the
# build defines (options, guest tests, unit tests) that tools read.
quiet_cmd_unit = HOSTCC  $(shown)
      cmd_unit = $(CC) $(UNIT_CFLAGS) -DGUEST_TESTS='"$(TESTS)"' -o $@ $(LOGIC) $(MODELED) $(UNIT_TESTS)
$(BUILD)/unit/hvprobe-unit: $(LOGIC) $(MODELED) $(UNIT_TESTS) Makefile $(shell find apic boot hv kernel pmu tests -name '*.h')
	@mkdir -p $(dir $@)
	$(call cmd,unit)

quiet_cmd_info = GEN     $(shown)
      cmd_info = $< --list > $@.tmp && mv $@.tmp $@
$(BUILD)/info.json: $(BUILD)/unit/hvprobe-unit
	$(call cmd,info)

unit: $(BUILD)/unit/hvprobe-unit
	$(BUILD)/unit/hvprobe-unit

info: $(BUILD)/info.json

deps:
	@tools/deps

# The showcase: the default matrix (tools/matrices/default.toml), two
# guests at a time, ending with the bring-up table.
run: deps all
	tools/run --no-build --matrix default -j 2

# Where there is a /dev/kvm, the host-probe row counts the guest's NMIs
# with perf on kvm: tracepoints. The nested leg boots Debian's kernels as
# L1 with a busybox initramfs, and probes inside them with this perf.
check: deps all $(BUILD)/unit/hvprobe-unit fuzz-build
	@tools/deps perf:linux-perf /bin/busybox:busybox-static pyflakes3:python3-pyflakes \
		clang-format-14:clang-format-14 mypy:mypy
	tools/check --no-build

# Debian bookworm's clang-format-14, the version the tree is laid out by.
quiet_cmd_format = FORMAT  $(C_TREES)
      cmd_format = clang-format-14 -i --style=file $(C_SOURCES)
format:
	@tools/deps clang-format-14:clang-format-14
	$(call cmd,format)

# The -kernel and ISO boots under LAVA's dispatcher; Debian's
# lava-dispatcher is installed if missing (as root; else the command).
check-lava: deps all
	@tools/deps lava-run:lava-dispatcher
	tools/lava/run

# The seed experiments' scenarios last, one guest at a time (timing) and
# three boots each, so that tools/compare can judge a later run against it.
bench: deps all
	bench/boot-time
	bench/smp --no-build
	bench/thread-table --no-build
	tools/run --no-build --matrix seed --repeat 3 -j 1

bench-quick: deps all
	bench/smp --no-build --quick
	bench/thread-table --no-build --quick

# The guest PMI handler's VM exits per PMI on the host model, per PMU
# (docs/figures.md): seconds, no guest.
quiet_cmd_pmi_exits = HOSTCC  $(shown)
      cmd_pmi_exits = $(CC) $(UNIT_CFLAGS) -o $@ $(LOGIC) $(MODELED) tests/unit/model.c tests/unit/model_bench.c
$(BUILD)/unit/pmi-exits: $(LOGIC) $(MODELED) tests/unit/model.c tests/unit/model_bench.c Makefile $(shell find apic kernel pmu tests -name '*.h')
	@mkdir -p $(dir $@)
	$(call cmd,pmi_exits)

bench-pmi-exits: $(BUILD)/unit/pmi-exits
	$(BUILD)/unit/pmi-exits

# Randomised boots of the whole suite; SOAK_SEED repeats an earlier soak.
SOAK_RUNS ?= 200
SOAK_JOBS ?= 2
soak: deps all
	tools/soak --no-build --runs $(SOAK_RUNS) -j $(SOAK_JOBS) $(if $(SOAK_SEED),--seed $(SOAK_SEED))

include tests/fuzz/fuzz.mk

clean:
	rm -rf $(BUILD)

-include $(KERNEL_OBJS:.o=.d)
