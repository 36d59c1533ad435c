// SPDX-License-Identifier: MIT
/*
 * Remap and mask the 8259s (Intel 8259A datasheet: ICW1-ICW4, then OCW1).
 * A masked 8259 can still raise a spurious IRQ7 or IRQ15, so their vectors
 * get a handler that ignores them. On a platform with no 8259 (Hyper-V
 * Gen2) the port writes go nowhere, which is harmless.
 */
#include "kernel/x86/pic.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

/* clang-format off */
#define PIC1_CMD 0x20
#define PIC1_DATA 0x21
#define PIC2_CMD 0xa0
#define PIC2_DATA 0xa1
#define  ICW1_INIT_ICW4 0x11 /* edge triggered, cascaded, ICW4 follows */
#define  ICW3_SLAVE_ON_IRQ2 0x04
#define  ICW3_SLAVE_ID 0x02
#define  ICW4_8086 0x01
#define  OCW1_MASK_ALL 0xff
/* clang-format on */

static void ignore(struct trap_frame *f)
{
	(void)f;
}

void pic_disable(void)
{
	for (u32 v = PIC_VECTOR_BASE; v < PIC_VECTOR_BASE + PIC_VECTOR_COUNT; v++)
		trap_set_handler(v, ignore);
	outb(PIC1_CMD, ICW1_INIT_ICW4);
	outb(PIC2_CMD, ICW1_INIT_ICW4);
	outb(PIC1_DATA, PIC_VECTOR_BASE);
	outb(PIC2_DATA, PIC_VECTOR_BASE + 8);
	outb(PIC1_DATA, ICW3_SLAVE_ON_IRQ2);
	outb(PIC2_DATA, ICW3_SLAVE_ID);
	outb(PIC1_DATA, ICW4_8086);
	outb(PIC2_DATA, ICW4_8086);
	outb(PIC1_DATA, OCW1_MASK_ALL);
	outb(PIC2_DATA, OCW1_MASK_ALL);
}
