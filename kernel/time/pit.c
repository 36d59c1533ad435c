// SPDX-License-Identifier: MIT
/*
 * The 8254 PIT as a reference counter: channel 2, mode 2 (rate generator)
 * with the full 65536 reload, gated on through port 0x61 with the speaker
 * off, read by latching (Intel 8254 datasheet; the PC wiring of channel 2
 * to port 0x61 is the IBM PC/AT's). Latch-and-read is two port accesses,
 * so readers on several CPUs take a lock.
 */
#include "kernel/time/clock.h"
#include "kernel/time/linux_tsc_reads.h"
#include "kernel/x86/spinlock.h"
#include "kernel/x86/x86.h"

/* clang-format off */
#define PIT_HZ 1193182
#define PIT_CH2 0x42
#define PIT_MODE 0x43
#define  PIT_SEL_CH2 0x80
#define  PIT_RW_LOHI 0x30
#define  PIT_MODE_RATE 0x04
#define  PIT_MODE_ONESHOT 0x00 /* mode 0: interrupt on terminal count */
#define  PIT_LATCH_CH2 0x80 /* select channel 2, access 00 = latch */
#define PC_PORT_B 0x61
#define  PORT_B_GATE2 BIT(0)
#define  PORT_B_SPEAKER BIT(1)
#define  PORT_B_OUT2 BIT(5)
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

/* Channel 2 as the reference: mode 2 over the full 65536 reload. */
static void pit_arm_reference(void)
{
	outb(PC_PORT_B, (inb(PC_PORT_B) & ~PORT_B_SPEAKER) | PORT_B_GATE2);
	outb(PIT_MODE, PIT_SEL_CH2 | PIT_RW_LOHI | PIT_MODE_RATE);
	outb(PIT_CH2, 0);
	outb(PIT_CH2, 0);
}

/* A window that never ends (a PIT that stopped) is cut off at this many times its length. */
#define WINDOW_CUTOFF 20

/*
 * As Linux's pit_calibrate_tsc() loops: count ms down in mode 0 and read
 * port 0x61 until OUT2 goes high, timing each read by the TSC.
 */
void pit_linux_window(void *ctx, u32 ms, struct linux_pit_window *w)
{
	u32 latch = PIT_HZ / (1000 / ms);
	u64 cutoff = clock.tsc_hz / 1000 * ms * WINDOW_CUTOFF, start, prev, now;
	bool nested = spin_lock_reentrant(&pit_lock);

	(void)ctx;
	*w = (struct linux_pit_window){ .step_min = ~0ULL };
	outb(PC_PORT_B, (inb(PC_PORT_B) & ~PORT_B_SPEAKER) | PORT_B_GATE2);
	outb(PIT_MODE, PIT_SEL_CH2 | PIT_RW_LOHI | PIT_MODE_ONESHOT);
	outb(PIT_CH2, latch & 0xff);
	outb(PIT_CH2, latch >> 8);
	start = prev = rdtsc();
	while (!(inb(PC_PORT_B) & PORT_B_OUT2)) {
		now = rdtsc();
		w->step_min = MIN(w->step_min, now - prev);
		w->step_max = MAX(w->step_max, now - prev);
		prev = now;
		w->reads++;
		if (now - start > cutoff) {
			w->reads = 0;
			break;
		}
	}
	pit_arm_reference();
	spin_unlock_reentrant(&pit_lock, nested);
}

static bool pit_probe(struct refclock *r)
{
	*r = (struct refclock){ .name = "pit", .hz = PIT_HZ, .bits = 16, .read = pit_read };
	pit_arm_reference();
	/* Ports 0x40-0x43 read 0xff with no PIT behind them (pit=off). */
	return refclock_counts(r, "no PIT: channel 2 does not count");
}

DEFINE_REFCLOCK("pit", pit_probe);
