/* SPDX-License-Identifier: MIT */
/* What the kernel learned at boot, for the tests to read. */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include "kernel/acpi/acpi.h"
#include "kernel/acpi/fadt.h"
#include "kernel/x86/boot_info.h"

#define HVPROBE_VERSION "0.1"

extern const struct boot_info *boot_info;

__noreturn void kmain(const struct boot_info *bi);

#endif
