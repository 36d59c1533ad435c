/* SPDX-License-Identifier: MIT */
/*
 * Time: the reference timers, the TSC's frequency (stated by the platform
 * or measured against a reference), and the jiffy tick.
 *
 * A reference is a counter that increases modulo 2^bits at a known rate;
 * wraps are accumulated by polling. Each one registers from the folder
 * that drives it with DEFINE_REFCLOCK (the PIT, HPET and ACPI PM timer
 * here, the APIC timer in apic/, Hyper-V's reference counter in hv/).
 * The tick comes from a tick device that its driver installs (the BSP's
 * local APIC timer); rates someone states instead come from the table of
 * stated rates (rates.h).
 */
#ifndef KERNEL_TIME_CLOCK_H
#define KERNEL_TIME_CLOCK_H

#include "kernel/lib/table.h"
#include "kernel/time/options.h"
#include "kernel/x86/trap.h"

struct json;

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
 * A driver for the reference timer= calls name (registered with
 * DEFINE_REFCLOCK_NAME, kernel/time/options.h).
 */
struct refclock_driver {
	const char *name;
	/* Fill r; false (with r->absent saying why) when the timer is missing. */
	bool (*probe)(struct refclock *r);
	struct refclock *ref; /* what probe() fills: each entry brings its own */
};

#define DEFINE_REFCLOCK(rname, rprobe) DEFINE_REFCLOCK_(rname, rprobe, __COUNTER__)
#define DEFINE_REFCLOCK_(rname, rprobe, n)                                                         \
	static struct refclock TABLE_CONCAT(refclock_state_, n);                                   \
	static const struct refclock_driver TABLE_CONCAT(refclock_, n)                             \
		TABLE_ENTRY(hvprobe_refclocks) = {                                                 \
			.name = (rname),                                                           \
			.probe = (rprobe),                                                         \
			.ref = &TABLE_CONCAT(refclock_state_, n),                                  \
		}

/*
 * The device that raises the jiffy tick on the BSP: its input rate (with
 * who stated it, or "measured"), known once the TSC's rate is, and a
 * periodic start; its interrupt handler calls clock_tick().
 */
struct tick_device {
	u64 (*rate)(const char **source);
	void (*start)(u64 rate, u32 hz);
};

/*
 * Whether r's counter moves within a thousand reads: an absent device
 * reads a constant (ports float to 0xff), a present one moves within
 * microseconds. Sets r->present, or r->absent to why_not.
 */
bool refclock_counts(struct refclock *r, const char *why_not);

/* The host tests link a libc, whose clock() this would clash with. */
#ifdef HOST_TEST
#define clock hvprobe_clock
#endif

struct clock_state {
	u32 ref;	     /* the reference in use, a choice (timer_word()) */
	const char *ref_why; /* why that one (auto's choice) */
	u64 tsc_hz;
	const char *tsc_hz_source; /* who stated it, or the reference's name */
	bool tsc_hz_measured;	   /* against a reference, not stated */
	u64 apic_timer_hz;	   /* the tick device's rate */
	const char *apic_timer_hz_source;
	u32 hz;			    /* jiffies per second */
	volatile u64 tick_catchups; /* ticks that made up for lost ones */
};

extern struct clock_state clock;
extern volatile u64 jiffies;

/* The tick device; its driver installs it before clock_init(). */
void clock_set_tick_device(const struct tick_device *d);
/* Called on every tick (the watchdog); one hook. */
void clock_on_tick(void (*hook)(const struct trap_frame *f));
/*
 * Probe the references, pick one (choice is timer='s), measure
 * the TSC against it, learn the tick device's rate and start the jiffy
 * tick on this CPU. False with a message in why when the chosen reference
 * is absent.
 */
bool clock_init(u32 choice, u32 hz, char *why, size_t whylen);
/* From the tick device's interrupt: one jiffy, or a catch-up. */
void clock_tick(const struct trap_frame *f);
/* (Re)start the jiffy tick on this CPU. */
void clock_tick_start(void);
/* The TSC frequency CPUID.15H states, or 0. */
u64 clock_tsc_hz_cpuid(void);
/* Whether a reference timer is in use (a stated TSC rate can do without). */
static inline bool clock_have_ref(void)
{
	return clock.ref != TIMER_AUTO;
}
/* The reference timer= calls choice, present or not (then absent says why). */
const struct refclock *clock_refclock(u32 choice);
/* The reference in use, or NULL when there is none. */
static inline const struct refclock *clock_reference(void)
{
	return clock_have_ref() ? clock_refclock(clock.ref) : NULL;
}
/*
 * TSC Hz measured against r over at least window_us microseconds (longer
 * for a reference slow to read: see clock.c), the window it took and how
 * far the two ends' brackets leave the rate uncertain.
 */
struct tsc_measurement {
	u64 hz;
	u64 window_us;
	u64 uncertainty_ppm;
};

struct tsc_measurement clock_measure_tsc(const struct refclock *r, u64 window_us);
/* The same, its rate alone. */
u64 clock_measure_tsc_hz(const struct refclock *r, u64 window_us);
/* The measurement of median rate among CLOCK_MEDIAN_WINDOWS of them. */
#define CLOCK_MEDIAN_WINDOWS 3
struct tsc_measurement clock_measure_tsc_median(const struct refclock *r, u64 window_us);
/* Elapsed reference ticks from a to b, a counter of the given width. */
static inline u64 refclock_delta(u64 a, u64 b, u32 bits)
{
	return bits >= 64 ? b - a : (b - a) & ((1ULL << bits) - 1);
}
/* Microseconds that pass on r while fn(arg) runs, r started and stopped around it. */
u64 refclock_time_us(const struct refclock *r, void (*fn)(void *arg), void *arg);

/*
 * A reference reading and the TSC at that moment, as close together as a
 * few tries get them (see clock.c).
 */
struct ref_pair {
	u64 tsc;
	u64 ref;
	u64 width; /* TSC cycles between the two reads around ref */
};

struct ref_pair clock_read_pair(u64 (*read)(void));

u64 tsc_to_us(u64 cycles);
/* The clock state DATA lines share: reference, TSC and APIC timer rates, hz. */
void clock_json(struct json *j);

#endif
