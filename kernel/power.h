/* SPDX-License-Identifier: MIT */
/*
 * Ending a run (README, "What the output means"): QEMU's isa-debug-exit
 * device carries the result; elsewhere ACPI S5 powers the VM off;
 * exit=halt keeps it up.
 */
#ifndef KERNEL_POWER_H
#define KERNEL_POWER_H

#include "kernel/acpi/fadt.h"
#include "kernel/test/ktap.h"

/* QEMU's isa-debug-exit: the run's tools/run adds it at this port. */
#define QEMU_DEBUG_EXIT_PORT 0xf4

/* method: an enum exit_method; fadt may be NULL (no ACPI). */
void power_init(u32 method, const struct fadt_info *fadt);
/* True when fw_cfg answers with QEMU's signature. */
bool power_under_qemu(void);
__noreturn void power_exit(enum result r);

#endif
