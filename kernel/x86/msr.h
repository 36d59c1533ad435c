/* SPDX-License-Identifier: MIT */
/*
 * Architectural MSRs (SDM Vol 4 "Model-Specific Registers", Table 2-2) that
 * the kernel itself uses. Hypervisor, APIC and perfmon MSRs live in the
 * headers of the modules that own them.
 */
#ifndef KERNEL_X86_MSR_H
#define KERNEL_X86_MSR_H

#include "kernel/lib/types.h"

/* clang-format off */
#define MSR_IA32_APIC_BASE 0x0000001b
#define MSR_IA32_TSC_ADJUST 0x0000003b
#define MSR_IA32_EFER 0xc0000080
#define  MSR_IA32_EFER_LME BIT(8)
#define MSR_IA32_FS_BASE 0xc0000100
#define MSR_IA32_GS_BASE 0xc0000101
#define MSR_IA32_KERNEL_GS_BASE 0xc0000102
/* clang-format on */

#endif
