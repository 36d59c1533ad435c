/* SPDX-License-Identifier: MIT */
/*
 * Ending a run (README, "What the output means"): QEMU's isa-debug-exit
 * device carries the result; elsewhere ACPI S5 powers the VM off;
 * exit=halt keeps it up.
 */
#ifndef KERNEL_POWER_H
#define KERNEL_POWER_H

/*
 * QEMU's isa-debug-exit: the run's tools/run adds it at this port, and
 * QEMU exits with (value << 1) | 1 when the guest writes value there.
 */
#define QEMU_DEBUG_EXIT_PORT 0xf4
#define QEMU_DEBUG_EXIT_PASSED 0 /* QEMU's status 1 */
#define QEMU_DEBUG_EXIT_FAILED 1 /* QEMU's status 3 */

/* QEMU fw_cfg I/O interface (QEMU docs/specs/fw_cfg.rst) */
#define FW_CFG_PORT_SEL 0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_SIGNATURE 0x0000

#ifndef __ASSEMBLER__
#include "kernel/acpi/fadt.h"
#include "kernel/test/ktap.h"

/* method: an enum exit_method; fadt may be NULL (no ACPI). */
void power_init(u32 method, const struct fadt_info *fadt);
__noreturn void power_exit(enum result r);
#endif /* __ASSEMBLER__ */

#endif
