/* SPDX-License-Identifier: MIT */
/*
 * Local APIC registers (SDM Vol 3A 11 "Advanced Programmable Interrupt
 * Controller"): IA32_APIC_BASE and the x2APIC MSR window.
 */
#ifndef APIC_APIC_H
#define APIC_APIC_H

#include "kernel/msr.h"

/* MSR_IA32_APIC_BASE (kernel/msr.h) fields, SDM Vol 3A 11.4.4 */
#define  APIC_BASE_BSP BIT(8)
#define  APIC_BASE_EXTD BIT(10)
#define  APIC_BASE_EN BIT(11)

/* x2APIC register MSRs: 0x800 + xAPIC offset / 16 (SDM Vol 3A 11.12.1.2) */
#define MSR_IA32_X2APIC_APICID 0x00000802

#endif
