/* SPDX-License-Identifier: MIT */
/*
 * The local APIC behind one interface, over two back ends: xAPIC (MMIO at
 * IA32_APIC_BASE) and x2APIC (MSRs 0x800 + offset/16). SDM Vol 3A 11
 * "Advanced Programmable Interrupt Controller" (ch. 10 in older editions).
 * Registers are named by their xAPIC offset; the x2APIC back end maps them.
 */
#ifndef APIC_APIC_H
#define APIC_APIC_H

#include "kernel/x86/msr.h"

/* MSR_IA32_APIC_BASE (kernel/x86/msr.h) fields, SDM Vol 3A 11.4.4 */
/* clang-format off */
#define  APIC_BASE_BSP BIT(8)
#define  APIC_BASE_EXTD BIT(10)
#define  APIC_BASE_EN BIT(11)
#define  APIC_BASE_ADDR_MASK 0xfffff000ULL
/* clang-format on */

/* x2APIC register MSRs: 0x800 + xAPIC offset / 16 (SDM Vol 3A 11.12.1.2) */
#define MSR_IA32_X2APIC_BASE 0x00000800
#define MSR_IA32_X2APIC_APICID 0x00000802
/* SDM Vol 3A Table 11-6 lists 0x801 as reserved: any access #GPs. */
#define MSR_X2APIC_RESERVED_801 0x00000801
#define MSR_IA32_X2APIC_ICR 0x00000830

/* Delivery modes, in the ICR and the LVT entries (SDM Vol 3A 11.6.1, 11.5.1) */
#define APIC_DM_FIXED 0
#define APIC_DM_NMI 4
#define APIC_DM_INIT 5
#define APIC_DM_STARTUP 6

/* Register offsets (SDM Vol 3A Table 11-1) */
/* clang-format off */
#define APIC_ID 0x020
#define  APIC_ID_XAPIC GENMASK(31, 24) /* x2APIC uses all 32 bits */
#define APIC_LVR 0x030
#define APIC_TPR 0x080
#define APIC_EOI 0x0b0
#define APIC_SVR 0x0f0
#define  APIC_SVR_ENABLE BIT(8)
#define APIC_ESR 0x280
/* Bit 4, an illegal redirectable-IPI request, is not a delivery failure. */
#define  APIC_ESR_REDIRECTABLE_IPI BIT(4)
#define  APIC_ESR_ERRORS (GENMASK(7, 0) & ~APIC_ESR_REDIRECTABLE_IPI)
#define APIC_ICR 0x300
#define  APIC_ICR_VECTOR_MASK GENMASK(7, 0)
#define  APIC_ICR_VECTOR(v) FIELD_PREP(APIC_ICR_VECTOR_MASK, v)
#define  APIC_ICR_DELIVERY_MODE GENMASK(10, 8)
#define  APIC_ICR_DM_FIXED FIELD_PREP(APIC_ICR_DELIVERY_MODE, APIC_DM_FIXED)
#define  APIC_ICR_DM_NMI FIELD_PREP(APIC_ICR_DELIVERY_MODE, APIC_DM_NMI)
#define  APIC_ICR_DM_INIT FIELD_PREP(APIC_ICR_DELIVERY_MODE, APIC_DM_INIT)
#define  APIC_ICR_DM_STARTUP FIELD_PREP(APIC_ICR_DELIVERY_MODE, APIC_DM_STARTUP)
#define  APIC_ICR_BUSY BIT(12) /* delivery status, xAPIC only */
#define  APIC_ICR_LEVEL_ASSERT BIT(14)
#define  APIC_ICR_TRIGGER_LEVEL BIT(15)
#define APIC_ICR2 0x310
#define  APIC_ICR2_XAPIC_DEST GENMASK(31, 24)
/* x2APIC: the ICR is one 64-bit MSR, the destination in its high half (SDM 11.12.9) */
#define  X2APIC_ICR_DEST GENMASK(63, 32)
#define APIC_LVT_TIMER 0x320
#define  APIC_LVT_TIMER_PERIODIC BIT(17)
#define APIC_LVT_THERMAL 0x330
#define APIC_LVT_PMC 0x340
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_LVT_ERROR 0x370
#define  APIC_LVT_DELIVERY_MODE GENMASK(10, 8)
#define  APIC_LVT_DM_NMI FIELD_PREP(APIC_LVT_DELIVERY_MODE, APIC_DM_NMI)
#define  APIC_LVT_MASKED BIT(16)
#define APIC_TIMER_ICR 0x380
#define APIC_TIMER_CCR 0x390
#define APIC_TIMER_DCR 0x3e0
#define  APIC_TIMER_DIVIDE_1 0xb
/* clang-format on */

/* Vectors hvprobe uses. Above the 32 exceptions, below the spurious one. */
#define APIC_VECTOR_TICK 0x20
#define APIC_VECTOR_WAKE 0x21
/* pmu.lvtpc=fixed: the baseline that is not an NMI */
#define APIC_VECTOR_PMI 0x22
#define APIC_VECTOR_SPURIOUS 0xff

#ifndef __ASSEMBLER__
#include "kernel/lib/types.h"

enum apic_mode { APIC_MODE_XAPIC, APIC_MODE_X2APIC };

/*
 * On the BSP: choose the mode (choice is an enum apic_choice) and set the
 * BSP's APIC up. Returns false with a message when the choice cannot be
 * honoured (x2apic asked on a CPU without it).
 */
bool apic_init_bsp(u32 choice, char *why, size_t whylen);
/* On every other CPU: the BSP's mode, software-enabled, LVTs masked. */
void apic_init_ap(void);
const char *apic_mode_name(void);

u32 apic_read(u32 reg);
void apic_write(u32 reg, u32 val);
u32 apic_id(void);
void apic_eoi(void);
/* Clear and read the error status (SDM Vol 3A 11.5.3: write, then read). */
u32 apic_esr(void);

/*
 * icr_low: delivery mode, vector and trigger bits; no destination
 * shorthand. False when an xAPIC never showed the IPI delivered (icr.h).
 */
bool apic_send_ipi(u32 dest_apic_id, u32 icr_low);
/* The highest APIC ID this mode can address. */
u32 apic_max_id(void);

/* The APIC timer's handler and tick device; from apic_init_bsp(). */
void apic_timer_init(void);
/* The APIC timer at divide-by-1: periodic or one-shot on vector, or stop. */
void apic_timer_start(u8 vector, u32 count, bool periodic);
void apic_timer_stop(void);
u32 apic_timer_current(void);

#endif /* __ASSEMBLER__ */
#endif
