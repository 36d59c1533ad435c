/* SPDX-License-Identifier: MIT */
/*
 * The legacy 8259 pair. hvprobe takes interrupts from the local APIC only,
 * but firmware leaves the 8259s mapped over the exception vectors (BIOS:
 * IRQ0-7 at vectors 8-15), so they are moved off them and masked.
 */
#ifndef KERNEL_X86_PIC_H
#define KERNEL_X86_PIC_H

/* Where the 8259s' vectors land: their own block, all ignored. */
#define PIC_VECTOR_BASE 0x30
#define PIC_VECTOR_COUNT 16

void pic_disable(void);

#endif
