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
#   make bench    boot time of the three boot paths, and the SMP bring-up
#                 sweep side by side with Debian's Linux kernel (about an hour)
#
# run and check first make sure the tools they need are installed.

CC := gcc
LD := ld
OBJCOPY := objcopy
PYTHON := python3
BUILD := build

ifneq ($(shell uname -m),x86_64)
$(error hvprobe builds on an x86-64 host with GCC and GNU binutils)
endif

KERNEL_CFLAGS := -std=gnu11 -O2 -g -I. \
	-ffreestanding -nostdlib -mno-red-zone -mgeneral-regs-only \
	-fno-pic -fno-pie -fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-tree-loop-distribute-patterns \
	-Wall -Wextra -Werror
KERNEL_ASFLAGS := -I. -D__ASSEMBLER__
KERNEL_LDFLAGS := -nostdlib -static -no-pie -z max-page-size=0x1000 \
	-z noexecstack -T linker.ld

# Link order is test order: tests/ objects run in the order listed.
KERNEL_OBJS := \
	apic/apic.o \
	apic/options.o \
	apic/smp.o \
	apic/timer.o \
	apic/trampoline.o \
	boot/entry.o \
	boot/boot.o \
	hv/hv.o \
	hv/hv_init.o \
	hv/hyperv.o \
	hv/hyperv_math.o \
	hv/kvm.o \
	hv/pvclock.o \
	pmu/options.o \
	pmu/pmi.o \
	pmu/pmu.o \
	pmu/pmu_math.o \
	pmu/stress.o \
	boot/boot_info.o \
	kernel/acpi/acpi.o \
	kernel/acpi/fadt.o \
	kernel/acpi/hpet.o \
	kernel/acpi/madt.o \
	kernel/acpi/srat.o \
	kernel/x86/alloc.o \
	kernel/time/clock.o \
	kernel/cmdline.o \
	kernel/console.o \
	kernel/x86/cpuid.o \
	kernel/time/delay.o \
	kernel/x86/entry.o \
	kernel/time/hpet.o \
	kernel/lib/json.o \
	kernel/test/ktap.o \
	kernel/lib/libc.o \
	kernel/time/lpj.o \
	kernel/time/options.o \
	kernel/main.o \
	kernel/options.o \
	kernel/x86/nmi.o \
	kernel/x86/nmi_account.o \
	kernel/x86/percpu.o \
	kernel/x86/pic.o \
	kernel/time/pit.o \
	kernel/time/pmtimer.o \
	kernel/power.o \
	kernel/lib/printf.o \
	kernel/test/options.o \
	kernel/test/runner.o \
	kernel/lib/stats.o \
	kernel/lib/string.o \
	kernel/x86/trap.o \
	kernel/test/watchdog.o \
	tests/boot.o \
	tests/exceptions.o \
	tests/cpuinfo.o \
	tests/hv.o \
	tests/timers.o \
	tests/smp.o \
	tests/lpj.o \
	tests/nmi_storm.o \
	tests/pmi_stress.o \
	tests/crash.o \
	tests/crash_ap.o \
	tests/hang.o \
	tests/acpidump.o

KERNEL_OBJS := $(addprefix $(BUILD)/,$(KERNEL_OBJS))

# Pure logic, built unchanged into the host unit tests.
UNIT_SHARED := \
	apic/options.c \
	boot/boot_info.c \
	hv/hv.c \
	hv/hyperv_math.c \
	hv/pvclock.c \
	kernel/acpi/acpi.c \
	kernel/acpi/fadt.c \
	kernel/acpi/hpet.c \
	kernel/acpi/madt.c \
	kernel/acpi/srat.c \
	kernel/cmdline.c \
	kernel/options.c \
	kernel/test/options.c \
	kernel/time/options.c \
	kernel/lib/json.c \
	kernel/test/ktap.c \
	kernel/time/lpj.c \
	kernel/lib/printf.c \
	kernel/test/runner.c \
	kernel/lib/stats.c \
	kernel/lib/string.c \
	kernel/x86/nmi_account.c \
	pmu/options.c \
	pmu/pmu_math.c

UNIT_TESTS := \
	tests/unit/acpi_build.c \
	tests/unit/main.c \
	tests/unit/phys_buffer.c \
	tests/unit/test_acpi.c \
	tests/unit/test_boot_info.c \
	tests/unit/test_cmdline.c \
	tests/unit/test_fuzz_found.c \
	tests/unit/test_hpet.c \
	tests/unit/test_hv.c \
	tests/unit/test_hyperv.c \
	tests/unit/test_json.c \
	tests/unit/test_ktap.c \
	tests/unit/test_lpj.c \
	tests/unit/test_madt.c \
	tests/unit/test_nmi_account.c \
	tests/unit/test_pmu.c \
	tests/unit/test_printf.c \
	tests/unit/test_pvclock.c \
	tests/unit/test_srat.c \
	tests/unit/test_stats.c

UNIT_CFLAGS := -std=gnu11 -O1 -g -I. -DHOST_TEST \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -Wall -Wextra -Werror

.PHONY: all run check check-lava bench bench-quick unit deps clean soak

all: $(BUILD)/hvprobe.elf $(BUILD)/hvprobe.elf32 $(BUILD)/hvprobe.iso

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_ASFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/hvprobe.elf: $(KERNEL_OBJS) linker.ld
	$(LD) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS)

# QEMU's Multiboot loader refuses ELF64; the same image as ELF32 loads,
# since every address is below 4 GiB (the code stays 64-bit).
$(BUILD)/hvprobe.elf32: $(BUILD)/hvprobe.elf
	$(OBJCOPY) -O elf32-i386 $< $@

$(BUILD)/isodir/boot/grub/grub.cfg: boot/grub.cfg
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/isodir/boot/hvprobe.elf: $(BUILD)/hvprobe.elf
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/hvprobe.iso: $(BUILD)/isodir/boot/hvprobe.elf $(BUILD)/isodir/boot/grub/grub.cfg tools/mkiso
	tools/mkiso $(BUILD)/isodir $@

$(BUILD)/unit/hvprobe-unit: $(UNIT_SHARED) $(UNIT_TESTS) $(wildcard */*.h tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $(UNIT_SHARED) $(UNIT_TESTS)

unit: $(BUILD)/unit/hvprobe-unit
	$(BUILD)/unit/hvprobe-unit

deps:
	@tools/deps

# The showcase: the default matrix (tools/matrices/default.toml), two
# guests at a time, ending with the bring-up table.
run: deps all
	tools/run --no-build --matrix default -j 2

check: deps all $(BUILD)/unit/hvprobe-unit fuzz-build
	tools/check --no-build

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
	tools/run --no-build --matrix seed --repeat 3 -j 1

bench-quick: deps all
	bench/smp --no-build --quick

# Randomised boots of the whole suite; SOAK_SEED repeats an earlier soak.
SOAK_RUNS ?= 200
SOAK_JOBS ?= 2
soak: deps all
	tools/soak --no-build --runs $(SOAK_RUNS) -j $(SOAK_JOBS) $(if $(SOAK_SEED),--seed $(SOAK_SEED))

include tests/fuzz/fuzz.mk

clean:
	rm -rf $(BUILD)

-include $(KERNEL_OBJS:.o=.d)
