/* SPDX-License-Identifier: MIT */
/*
 * Time: the reference timers (PIT, HPET, ACPI PM timer, APIC timer when
 * its rate is stated), the TSC's frequency measured against one of them,
 * and the jiffy tick. A reference is a counter that increases modulo
 * 2^bits at a known rate; wraps are accumulated by polling.
 */
#ifndef KERNEL_TIME_CLOCK_H
#define KERNEL_TIME_CLOCK_H

#include "kernel/cmdline.h"

struct refclock {
	const char *name;
	bool present;
	char absent[112]; /* why not, when !present */
	u64 hz;
	u32 bits;
	u64 (*read)(void);
	/* Around a measurement, for counters that must be started and put back. */
	void (*start)(void);
	void (*stop)(void);
};

/*
 * Whether r's counter moves within a thousand reads: an absent device
 * reads a constant (ports float to 0xff), a present one moves within
 * microseconds. Sets r->present, or r->absent to why_not.
 */
bool refclock_counts(struct refclock *r, const char *why_not);
/* Probe each reference and fill r; false (with r->absent) if missing. */
bool pit_probe(struct refclock *r);
bool hpet_probe(struct refclock *r);
bool pmtimer_probe(struct refclock *r);

struct clock_state {
	struct refclock refs[TIMER_COUNT]; /* indexed by enum timer_choice */
	u32 ref;			   /* the reference in use */
	const char *ref_why;		   /* why that one (auto's choice) */
	u64 tsc_hz;
	const char *tsc_hz_source;	   /* who stated it, or the reference's name */
	bool tsc_hz_measured;		   /* against a reference, not stated */
	u64 apic_timer_hz;
	const char *apic_timer_hz_source;
	u32 hz;				   /* jiffies per second */
	volatile u64 tick_catchups;	   /* ticks that made up for lost ones */
};

extern struct clock_state clock;
extern volatile u64 jiffies;

/*
 * Probe the references, pick one (choice is an enum timer_choice), measure
 * the TSC and the APIC timer against it, start the jiffy tick on this CPU.
 * False with a message in err when the chosen reference is absent.
 */
bool clock_init(u32 choice, u32 hz, char *err, size_t errlen);
/* The TSC frequency CPUID.15H states, or 0. */
u64 clock_tsc_hz_cpuid(void);
/* Whether a reference timer is in use (a stated TSC rate can do without). */
static inline bool clock_have_ref(void)
{
	return clock.ref != TIMER_AUTO;
}
/* TSC Hz measured against r over window_us microseconds. */
u64 clock_measure_tsc_hz(const struct refclock *r, u64 window_us);
/* Elapsed reference ticks from a to b, a counter of the given width. */
static inline u64 refclock_delta(u64 a, u64 b, u32 bits)
{
	return bits >= 64 ? b - a : (b - a) & ((1ULL << bits) - 1);
}
u64 tsc_to_us(u64 cycles);
struct json;
/* The clock state DATA lines share: reference, TSC and APIC timer rates, hz. */
void clock_json(struct json *j);
/* (Re)start the jiffy tick on this CPU's APIC timer. */
void clock_tick_start(void);

#endif
