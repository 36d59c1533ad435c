// SPDX-License-Identifier: MIT
/*
 * Reference selection, the TSC's frequency and the jiffy tick.
 *
 * The tick is a periodic interrupt at hz= from the tick device (the BSP's
 * APIC timer, like a Linux guest's local timer after boot); it needs no
 * I/O APIC or 8259 routing, so it runs on legacy-free platforms (Hyper-V
 * Gen2, q35 with pit=off) too. Lost ticks are made up from the TSC, so
 * late or lost interrupts delay an edge but lose no time.
 */
#include "kernel/time/clock.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/time/linux_tsc.h"
#include "kernel/time/policy.h"
#include "kernel/time/rates.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/x86.h"

/* Long enough for 0.1 % against a 1.19 MHz PIT, short enough for boot. */
#define TSC_WINDOW_US 25000
#define US_PER_SECOND 1000000ULL

TABLE_DECLARE(struct refclock_driver, hvprobe_refclocks);

struct clock_state clock;
volatile u64 jiffies;

static const struct tick_device *tick_device;
static void (*tick_hook)(const struct trap_frame *f);

#define REFCLOCK_PROBE_READS 1000

bool refclock_counts(struct refclock *r, const char *why_not)
{
	u64 first = r->read();

	for (int i = 0; i < REFCLOCK_PROBE_READS; i++)
		if (r->read() != first)
			return r->present = true;
	str_copy(r->absent, why_not, sizeof(r->absent));
	return false;
}

/*
 * A reference reading and the TSC at that moment. A vCPU descheduled
 * between the two reads pairs them wrongly by however long it was away
 * (milliseconds on a loaded host, enough to skew a 25 ms window by 14 %),
 * so the pair is bracketed by two TSC reads and the tightest of a few
 * tries is kept, as Linux's tsc_read_refs() retries past an SMI.
 */
#define PAIR_TRIES 5

struct ref_pair clock_read_pair(u64 (*read)(void))
{
	struct ref_pair best = { 0, 0, ~0ULL };

	for (int i = 0; i < PAIR_TRIES; i++) {
		u64 before = rdtsc(), ref = read(), after = rdtsc();

		if (after - before < best.width)
			best = (struct ref_pair){ before + (after - before) / 2, ref,
						  after - before };
	}
	return best;
}

/* Progress before a window's own rate is trusted to judge its steps. */
#define WRAP_CHECK_AFTER_TICKS 1024

/*
 * Each end of a window is placed only to within its pair's bracket, and a
 * reference that exits to the hypervisor on every read is slow to read:
 * Hyper-V's reference counter MSR, where KVM gives no valid TSC page
 * (kvm_hv_setup_tsc_page() without a master clock), takes a nested exit
 * each time. So a window lasts at least BRACKETS_PER_WINDOW of the first
 * bracket, two ends within 0.1 % of it, but no more than WINDOW_STRETCH_MAX
 * times what was asked, so that no reference holds a boot for long.
 */
#define BRACKETS_PER_WINDOW 1000
#define WINDOW_STRETCH_MAX 16

/*
 * One window; *clean is false when some step between two reads took,
 * by the TSC, more than half a wrap at the rate seen before it, so that
 * whole wraps may have gone uncounted.
 */
static struct tsc_measurement measure_window(const struct refclock *r, u64 window_us, bool *clean)
{
	u64 want = r->hz * window_us / US_PER_SECOND, got = 0, prev, prev_tsc, min_span;
	u64 half_wrap = r->bits <= 32 ? 1ULL << (r->bits - 1) : 0;
	struct ref_pair start, end;
	u64 span;

	*clean = true;
	if (r->start)
		r->start();
	start = clock_read_pair(r->read);
	min_span = start.width * BRACKETS_PER_WINDOW;
	/* Step through the window so that a narrow counter's wraps are all seen. */
	prev = start.ref;
	prev_tsc = start.tsc;
	while (got < want || (prev_tsc - start.tsc < min_span && got < want * WINDOW_STRETCH_MAX)) {
		u64 now = r->read(), tsc = rdtsc();

		if (half_wrap && got >= WRAP_CHECK_AFTER_TICKS &&
		    tsc - prev_tsc > (prev_tsc - start.tsc) * half_wrap / got)
			*clean = false;
		got += refclock_delta(prev, now, r->bits);
		prev = now;
		prev_tsc = tsc;
	}
	end = clock_read_pair(r->read);
	got += refclock_delta(prev, end.ref, r->bits);
	if (r->stop)
		r->stop();
	span = end.tsc - start.tsc;
	return (struct tsc_measurement){
		.hz = span * r->hz / got,
		.window_us = got * US_PER_SECOND / r->hz,
		.uncertainty_ppm = (start.width + end.width) / 2 * 1000000 / span,
	};
}

/*
 * A counter that wraps in milliseconds (the PIT's 16 bits: 55 ms) loses
 * whole wraps while its vCPU is descheduled that long (soak: the PIT once
 * read 9.9 GHz for a 2.4 GHz TSC), and a lost wrap only ever overstates
 * the rate. A narrow counter gets three windows and the lowest clean one
 * counts; any counter gets more tries while its windows are not clean,
 * and with none clean the lowest is the best there is.
 */
#define NARROW_COUNTER_BITS 16
#define NARROW_COUNTER_WINDOWS 3
#define MEASURE_TRIES 8

struct tsc_measurement clock_measure_tsc(const struct refclock *r, u64 window_us)
{
	u32 wanted = r->bits <= NARROW_COUNTER_BITS ? NARROW_COUNTER_WINDOWS : 1, clean_windows = 0;
	struct tsc_measurement best_clean = { .hz = ~0ULL }, best_any = { .hz = ~0ULL };

	for (u32 i = 0; i < MEASURE_TRIES && clean_windows < wanted; i++) {
		bool clean;
		struct tsc_measurement m = measure_window(r, window_us, &clean);

		if (m.hz < best_any.hz)
			best_any = m;
		if (clean) {
			if (m.hz < best_clean.hz)
				best_clean = m;
			clean_windows++;
		}
	}
	return clean_windows ? best_clean : best_any;
}

u64 clock_measure_tsc_hz(const struct refclock *r, u64 window_us)
{
	return clock_measure_tsc(r, window_us).hz;
}

/*
 * One window that a host stall or a step of the reference's own clock
 * fell into cannot carry a median: an L2's HPET is its L1's QEMU
 * reading L1's clock, and under a TCG L0 one 33 ms window once read the
 * TSC 6 % slow, well past the brackets' 1632 ppm.
 */
struct tsc_measurement clock_measure_tsc_median(const struct refclock *r, u64 window_us)
{
	struct tsc_measurement m[CLOCK_MEDIAN_WINDOWS];

	for (u32 i = 0; i < CLOCK_MEDIAN_WINDOWS; i++) {
		struct tsc_measurement next = clock_measure_tsc(r, window_us);
		u32 j = i;

		for (; j > 0 && m[j - 1].hz > next.hz; j--)
			m[j] = m[j - 1];
		m[j] = next;
	}
	return m[CLOCK_MEDIAN_WINDOWS / 2];
}

/* CPUID.15H: TSC = crystal * EBX / EAX, when all three are stated. */
u64 clock_tsc_hz_cpuid(void)
{
	struct cpuid_regs r;

	if (cpuid_max_leaf(0) < CPUID_LEAF_TSC)
		return 0;
	r = cpuid(CPUID_LEAF_TSC);
	if (!r.eax || !r.ebx || !r.ecx)
		return 0;
	return (u64)r.ecx * r.ebx / r.eax;
}

static u64 tick_tsc_base, tsc_per_jiffy;

/*
 * One jiffy per tick, as the timer paces them; but a vCPU that was not
 * running when its timer fired loses ticks (the APIC holds only one
 * pending), so when the TSC says jiffies fell behind by more than a tick,
 * they catch up at once. Linux's jiffies likewise follow its clocksource
 * (kernel/time/tick-sched.c tick_do_update_jiffies64()) and lose no time.
 */
void clock_tick(const struct trap_frame *f)
{
	u64 by_tsc = (rdtsc() - tick_tsc_base) / tsc_per_jiffy;

	if (by_tsc > jiffies + 1) {
		jiffies = by_tsc;
		clock.tick_catchups++;
	} else {
		jiffies++;
	}
	if (tick_hook)
		tick_hook(f);
}

void clock_set_tick_device(const struct tick_device *d)
{
	tick_device = d;
}

void clock_on_tick(void (*hook)(const struct trap_frame *f))
{
	tick_hook = hook;
}

void clock_tick_start(void)
{
	tsc_per_jiffy = clock.tsc_hz / clock.hz;
	tick_tsc_base = rdtsc() - jiffies * tsc_per_jiffy;
	tick_device->start(clock.apic_timer_hz, clock.hz);
}

u64 refclock_time_us(const struct refclock *r, void (*fn)(void *arg), void *arg)
{
	u64 a, b;

	if (r->start)
		r->start();
	a = r->read();
	fn(arg);
	b = r->read();
	if (r->stop)
		r->stop();
	return refclock_delta(a, b, r->bits) * US_PER_SECOND / r->hz;
}

u64 tsc_to_us(u64 cycles)
{
	/* Exact for up to 2^64 / 10^6 cycles: minutes at any real TSC rate. */
	return clock.tsc_hz ? cycles * US_PER_SECOND / clock.tsc_hz : 0;
}

/* native_calibrate_tsc()'s view of this CPU. */
static u64 linux_native_tsc(void)
{
	struct linux_native_tsc c = {
		.intel = cpu_vendor_is("GenuineIntel"),
		.max_leaf = cpuid_max_leaf(0),
	};

	if (c.max_leaf >= CPUID_LEAF_TSC)
		c.leaf_15 = cpuid(CPUID_LEAF_TSC);
	if (c.max_leaf >= CPUID_LEAF_FREQUENCY)
		c.leaf_16 = cpuid(CPUID_LEAF_FREQUENCY);
	return linux_native_tsc_hz(&c);
}

/*
 * A TSC rate someone states, the first in rank order (rates.h): the
 * order Linux's x86_platform calibrate_tsc hooks take the paravirtual
 * interfaces' rates, then CPUID. Under a policy that runs Linux's
 * platform code, only what tsc_khz would start from: the hook of Linux's
 * x86_hyper, else native_calibrate_tsc() (CPUID.15H, or 16H, on Intel);
 * a rate another interface states is measured instead, as Linux does.
 */
static void tsc_hz_stated(void)
{
	if (lpj_policy_chosen()->linux_platform) {
		rate_cpuid.tsc_hz = linux_native_tsc();
		clock.tsc_hz = rate_tsc_hz_linux(&clock.tsc_hz_source);
		return;
	}
	rate_cpuid.tsc_hz = clock_tsc_hz_cpuid();
	clock.tsc_hz = rate_tsc_hz(&clock.tsc_hz_source);
}

/*
 * The state of the reference timer= calls choice: its driver's, or, for
 * auto and a word with no driver in the build, an absent one that says
 * so.
 */
static struct refclock *ref_of(u32 choice)
{
	static struct refclock missing;
	const struct refclock_driver *d;

	if (choice != TIMER_AUTO)
		table_for_each (d, hvprobe_refclocks)
			if (timer_choice(d->name) == choice)
				return d->ref;
	missing = (struct refclock){ .name = timer_word(choice) };
	str_copy(missing.absent,
		 choice == TIMER_AUTO ? "auto is a choice, not a timer"
				      : "no driver for this timer in the build",
		 sizeof(missing.absent));
	return &missing;
}

const struct refclock *clock_refclock(u32 choice)
{
	return ref_of(choice);
}

/* Every registered reference timer= names, probed. */
static void probe_refclocks(void)
{
	const struct refclock_driver *d;

	table_for_each (d, hvprobe_refclocks)
		if (timer_choice(d->name) != TIMER_AUTO)
			d->probe(d->ref);
}

/* The references auto tries, by name, in its order. */
static const char *auto_order(void)
{
	static char buf[96];
	u32 c;

	str_copy(buf, "auto: first present of ", sizeof(buf));
	for (u32 i = 0; (c = timer_auto_choice(i)) != TIMER_AUTO; i++) {
		if (i)
			str_append(buf, ", ", sizeof(buf));
		str_append(buf, timer_word(c), sizeof(buf));
	}
	return buf;
}

/* Why auto found none: each reference's absence, in auto's order. */
static void none_present(char *why, size_t whylen)
{
	u32 c;

	snprintf(why, whylen, "timer=auto: no reference timer (");
	for (u32 i = 0; (c = timer_auto_choice(i)) != TIMER_AUTO; i++) {
		if (i)
			str_append(why, "; ", whylen);
		str_append(why, ref_of(c)->absent, whylen);
	}
	str_append(why, ")", whylen);
}

bool clock_init(u32 choice, u32 hz, char *why, size_t whylen)
{
	u32 c;

	clock.hz = hz;
	clock.ref = TIMER_AUTO;
	probe_refclocks();

	tsc_hz_stated();
	if (choice == TIMER_AUTO) {
		for (u32 i = 0; (c = timer_auto_choice(i)) != TIMER_AUTO && clock.ref == TIMER_AUTO;
		     i++)
			if (ref_of(c)->present)
				clock.ref = c;
		clock.ref_why = auto_order();
		if (clock.ref == TIMER_AUTO && clock.tsc_hz) {
			/* Legacy-free and no reference counter: the stated rate must do. */
			clock.ref_why = "auto: no reference timer; the TSC rate is stated";
		} else if (clock.ref == TIMER_AUTO) {
			none_present(why, whylen);
			return false;
		}
	} else {
		if (!ref_of(choice)->present) {
			snprintf(why, whylen, "timer=%s: %s", timer_word(choice),
				 ref_of(choice)->absent);
			return false;
		}
		clock.ref = choice;
		clock.ref_why = "timer= on the command line";
	}

	if (!clock.tsc_hz) {
		clock.tsc_hz = clock_measure_tsc_hz(ref_of(clock.ref), TSC_WINDOW_US);
		clock.tsc_hz_source = ref_of(clock.ref)->name;
		clock.tsc_hz_measured = true;
	}
	if (!tick_device) {
		snprintf(why, whylen, "no tick device: the local APIC timer was not set up");
		return false;
	}
	clock.apic_timer_hz = tick_device->rate(&clock.apic_timer_hz_source);
	clock_tick_start();
	sti();
	return true;
}

void clock_json(struct json *j)
{
	json_string(j, "reference", clock_have_ref() ? ref_of(clock.ref)->name : "none");
	json_string(j, "reference_why", clock.ref_why);
	json_u64(j, "tsc_hz", clock.tsc_hz);
	json_string(j, "tsc_hz_source", clock.tsc_hz_source);
	json_u64(j, "apic_timer_hz", clock.apic_timer_hz);
	json_string(j, "apic_timer_hz_source", clock.apic_timer_hz_source);
	json_u64(j, "hz", clock.hz);
}
