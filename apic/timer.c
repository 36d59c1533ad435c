// SPDX-License-Identifier: MIT
/*
 * The local APIC timer (SDM Vol 3A 11.5.4 "APIC Timer"), at divide-by-1,
 * in two roles. It is a reference clock where its rate is stated: by the
 * hypervisor (Hyper-V's HV_X64_MSR_APIC_FREQUENCY, KVM's timing leaf) or
 * by CPUID.15H, since the timer counts at the core crystal clock on
 * processors that enumerate it (ECX). And it is the BSP's tick device:
 * periodic interrupts at hz= on APIC_VECTOR_TICK, at the stated rate or
 * one measured against the TSC.
 */
#include "apic/apic.h"
#include "kernel/lib/string.h"
#include "kernel/time/clock.h"
#include "kernel/time/rates.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define APIC_WINDOW_US 10000
#define US_PER_SECOND 1000000ULL

void apic_timer_start(u8 vector, u32 count, bool periodic)
{
	apic_write(APIC_TIMER_DCR, APIC_TIMER_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, vector | (periodic ? APIC_LVT_TIMER_PERIODIC : 0));
	apic_write(APIC_TIMER_ICR, count);
}

void apic_timer_stop(void)
{
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_TIMER_ICR, 0);
}

u32 apic_timer_current(void)
{
	return apic_read(APIC_TIMER_CCR);
}

/* The timer counts down; a reference counts up. */
static u64 apic_ref_read(void)
{
	return 0xffffffffu - apic_timer_current();
}

static void apic_ref_start(void)
{
	apic_write(APIC_TIMER_DCR, APIC_TIMER_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_TIMER_ICR, 0xffffffffu);
}

/* Give the timer back: the BSP's carries the tick, an AP's stays off. */
static void apic_ref_stop(void)
{
	if (this_cpu()->index == 0)
		clock_tick_start();
	else
		apic_timer_stop();
}

/*
 * The rate someone states, in the order Linux trusts them (rank order in
 * kernel/time/rates.h), then the core crystal; 0 for none.
 */
static u64 stated_rate(const char **source)
{
	u32 crystal = cpuid_max_leaf(0) >= CPUID_LEAF_TSC ? cpuid(CPUID_LEAF_TSC).ecx : 0;
	u64 hz = rate_apic_hz(source);

	if (hz)
		return hz;
	*source = "cpuid";
	return crystal;
}

static bool apic_ref_probe(struct refclock *r)
{
	const char *source;
	u64 hz = stated_rate(&source);

	*r = (struct refclock){ .name = "apic",
				.hz = hz,
				.bits = 32,
				.read = apic_ref_read,
				.start = apic_ref_start,
				.stop = apic_ref_stop };
	if (!hz) {
		str_copy(r->absent,
			 "APIC timer rate not stated (no Hyper-V or KVM rate, CPUID.15H:ECX=0)",
			 sizeof(r->absent));
		return false;
	}
	r->present = true;
	return true;
}

DEFINE_REFCLOCK("apic", apic_ref_probe);

static u64 measure_rate(void)
{
	u64 wait = clock.tsc_hz * APIC_WINDOW_US / US_PER_SECOND;
	struct ref_pair start, end;

	apic_ref_start();
	start = clock_read_pair(apic_ref_read);
	while (rdtsc() - start.tsc < wait)
		pause();
	end = clock_read_pair(apic_ref_read);
	apic_timer_stop();
	return (end.ref - start.ref) * clock.tsc_hz / (end.tsc - start.tsc);
}

static u64 tick_rate(const char **source)
{
	u64 hz = stated_rate(source);

	if (hz)
		return hz;
	*source = "measured";
	return measure_rate();
}

static void tick_start(u64 rate, u32 hz)
{
	apic_timer_start(APIC_VECTOR_TICK, (u32)(rate / hz), true);
}

static const struct tick_device apic_tick = { .rate = tick_rate, .start = tick_start };

static void tick_interrupt(struct trap_frame *f)
{
	clock_tick(f);
	apic_eoi();
}

void apic_timer_init(void)
{
	trap_set_handler(APIC_VECTOR_TICK, tick_interrupt);
	clock_set_tick_device(&apic_tick);
}
