// SPDX-License-Identifier: MIT
/*
 * The 8254 PIT as a reference counter: channel 2, mode 2 (rate generator)
 * with the full 65536 reload, gated on through port 0x61 with the speaker
 * off, read by latching (Intel 8254 datasheet; the PC wiring of channel 2
 * to port 0x61 is the IBM PC/AT's). Latch-and-read is two port accesses,
 * so readers on several CPUs take a lock.
 */
#include "kernel/time/clock.h"
#include "kernel/x86/spinlock.h"
#include "kernel/x86/x86.h"

/* clang-format off */
#define PIT_HZ 1193182
#define PIT_CH2 0x42
#define PIT_MODE 0x43
#define  PIT_SEL_CH2 0x80
#define  PIT_RW_LOHI 0x30
#define  PIT_MODE_RATE 0x04
#define  PIT_LATCH_CH2 0x80 /* select channel 2, access 00 = latch */
#define PC_PORT_B 0x61
#define  PORT_B_GATE2 BIT(0)
#define  PORT_B_SPEAKER BIT(1)
/* clang-format on */

static struct spinlock pit_lock;

static u16 pit_count(void)
{
	bool nested = spin_lock_reentrant(&pit_lock);
	u16 lo, hi;

	outb(PIT_MODE, PIT_LATCH_CH2);
	lo = inb(PIT_CH2);
	hi = inb(PIT_CH2);
	spin_unlock_reentrant(&pit_lock, nested);
	return (u16)(lo | hi << 8);
}

/* The channel counts down; the reference interface counts up. */
static u64 pit_read(void)
{
	return 0xffff - pit_count();
}

static bool pit_probe(struct refclock *r)
{
	*r = (struct refclock){ .name = "pit", .hz = PIT_HZ, .bits = 16, .read = pit_read };
	outb(PC_PORT_B, (inb(PC_PORT_B) & ~PORT_B_SPEAKER) | PORT_B_GATE2);
	outb(PIT_MODE, PIT_SEL_CH2 | PIT_RW_LOHI | PIT_MODE_RATE);
	outb(PIT_CH2, 0);
	outb(PIT_CH2, 0);
	/* Ports 0x40-0x43 read 0xff with no PIT behind them (pit=off). */
	return refclock_counts(r, "no PIT: channel 2 does not count");
}

DEFINE_REFCLOCK("pit", pit_probe);
