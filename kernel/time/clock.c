// SPDX-License-Identifier: MIT
/*
 * Reference selection, TSC and APIC-timer frequencies, and the jiffy tick.
 *
 * The tick is the BSP's APIC timer in periodic mode at hz=, like a Linux
 * guest's local timer after boot; it needs no I/O APIC or 8259 routing, so
 * it runs on legacy-free platforms (Hyper-V Gen2, q35 with pit=off) too.
 * Lost ticks are made up from the TSC, so late or lost interrupts delay
 * an edge but lose no time.
 */
#include "apic/apic.h"
#include "hv/hyperv.h"
#include "hv/kvm.h"
#include "kernel/time/clock.h"
#include "kernel/x86/cpuid.h"
#include "kernel/lib/json.h"
#include "kernel/x86/percpu.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/x86/trap.h"
#include "kernel/test/watchdog.h"
#include "kernel/x86/x86.h"

/* Long enough for 0.1 % against a 1.19 MHz PIT, short enough for boot. */
#define TSC_WINDOW_US 25000
#define APIC_WINDOW_US 10000
#define US_PER_SECOND 1000000ULL

struct clock_state clock;
volatile u64 jiffies;

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
 * The APIC timer is a reference only where its rate is stated: the core
 * crystal clock of CPUID.15H:ECX (SDM Vol 3A 11.5.4: the timer counts at
 * the core crystal clock frequency on processors that enumerate it).
 */
static bool apic_ref_probe(struct refclock *r)
{
	u32 crystal = cpuid_max_leaf(0) >= CPUID_LEAF_TSC ? cpuid(CPUID_LEAF_TSC).ecx : 0;

	*r = (struct refclock){ .name = "apic", .hz = crystal, .bits = 32,
				.read = apic_ref_read, .start = apic_ref_start,
				.stop = apic_ref_stop };
	if (!crystal) {
		str_copy(r->absent, "APIC timer rate not stated (CPUID.15H:ECX=0)",
			 sizeof(r->absent));
		return false;
	}
	r->present = true;
	return true;
}

/* TLFS "Partition Reference Counter": 100 ns units, through the TSC page or MSR. */
static bool hv_ref_probe(struct refclock *r)
{
	*r = (struct refclock){ .name = "hv", .hz = HV_REF_COUNT_HZ, .bits = 64,
				.read = hyperv_ref_time };
	if (!hyperv.present) {
		str_copy(r->absent, "no Hyper-V reference counter: no Hyper-V leaves",
			 sizeof(r->absent));
		return false;
	}
	if (!hyperv.ref_counter && !hyperv.tsc_page) {
		str_copy(r->absent, "Hyper-V grants no reference counter (CPUID 0x40000003 EAX[1])",
			 sizeof(r->absent));
		return false;
	}
	r->present = true;
	return true;
}

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

struct ref_pair {
	u64 tsc;
	u64 ref;
};

static struct ref_pair read_pair(u64 (*read)(void))
{
	struct ref_pair best = { 0, 0 };
	u64 width = ~0ULL;

	for (int i = 0; i < PAIR_TRIES; i++) {
		u64 before = rdtsc(), ref = read(), after = rdtsc();

		if (after - before < width) {
			width = after - before;
			best = (struct ref_pair){ before + width / 2, ref };
		}
	}
	return best;
}

/* Progress before a window's own rate is trusted to judge its steps. */
#define WRAP_CHECK_AFTER_TICKS 1024

/*
 * One window; *clean is false when some step between two reads took,
 * by the TSC, more than half a wrap at the rate seen before it, so that
 * whole wraps may have gone uncounted.
 */
static u64 measure_window(const struct refclock *r, u64 window_us, bool *clean)
{
	u64 want = r->hz * window_us / US_PER_SECOND, got = 0, prev, prev_tsc;
	u64 half_wrap = r->bits <= 32 ? 1ULL << (r->bits - 1) : 0;
	struct ref_pair start, end;

	*clean = true;
	if (r->start)
		r->start();
	start = read_pair(r->read);
	/* Step through the window so that a narrow counter's wraps are all seen. */
	prev = start.ref;
	prev_tsc = start.tsc;
	while (got < want) {
		u64 now = r->read(), tsc = rdtsc();

		if (half_wrap && got >= WRAP_CHECK_AFTER_TICKS &&
		    tsc - prev_tsc > (prev_tsc - start.tsc) * half_wrap / got)
			*clean = false;
		got += refclock_delta(prev, now, r->bits);
		prev = now;
		prev_tsc = tsc;
	}
	end = read_pair(r->read);
	got += refclock_delta(prev, end.ref, r->bits);
	if (r->stop)
		r->stop();
	return (end.tsc - start.tsc) * r->hz / got;
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

u64 clock_measure_tsc_hz(const struct refclock *r, u64 window_us)
{
	u32 wanted = r->bits <= NARROW_COUNTER_BITS ? NARROW_COUNTER_WINDOWS : 1, clean_windows = 0;
	u64 best_clean = ~0ULL, best_any = ~0ULL;

	for (u32 i = 0; i < MEASURE_TRIES && clean_windows < wanted; i++) {
		bool clean;
		u64 hz = measure_window(r, window_us, &clean);

		best_any = MIN(best_any, hz);
		if (clean) {
			best_clean = MIN(best_clean, hz);
			clean_windows++;
		}
	}
	return clean_windows ? best_clean : best_any;
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

static u64 measure_apic_timer_hz(void)
{
	u64 wait = clock.tsc_hz * APIC_WINDOW_US / US_PER_SECOND;
	struct ref_pair start, end;

	apic_ref_start();
	start = read_pair(apic_ref_read);
	while (rdtsc() - start.tsc < wait)
		pause();
	end = read_pair(apic_ref_read);
	apic_timer_stop();
	return (end.ref - start.ref) * clock.tsc_hz / (end.tsc - start.tsc);
}

static u64 tick_tsc_base, tsc_per_jiffy;

/*
 * One jiffy per tick, as the timer paces them; but a vCPU that was not
 * running when its timer fired loses ticks (the APIC holds only one
 * pending), so when the TSC says jiffies fell behind by more than a tick,
 * they catch up at once. Linux's jiffies likewise follow its clocksource
 * (kernel/time/tick-sched.c tick_do_update_jiffies64()) and lose no time.
 */
static void tick(struct trap_frame *f)
{
	u64 by_tsc = (rdtsc() - tick_tsc_base) / tsc_per_jiffy;

	if (by_tsc > jiffies + 1) {
		jiffies = by_tsc;
		clock.tick_catchups++;
	} else {
		jiffies++;
	}
	apic_eoi();
	watchdog_tick(f);
}

static void eoi_only(struct trap_frame *f)
{
	(void)f;
	apic_eoi();
}

/* Spurious interrupts get no EOI (SDM Vol 3A 11.9). */
static void spurious(struct trap_frame *f)
{
	(void)f;
}

void clock_tick_start(void)
{
	tsc_per_jiffy = clock.tsc_hz / clock.hz;
	tick_tsc_base = rdtsc() - jiffies * tsc_per_jiffy;
	apic_timer_start(APIC_VECTOR_TICK, (u32)(clock.apic_timer_hz / clock.hz), true);
}

u64 tsc_to_us(u64 cycles)
{
	/* Exact for up to 2^64 / 10^6 cycles: minutes at any real TSC rate. */
	return clock.tsc_hz ? cycles * US_PER_SECOND / clock.tsc_hz : 0;
}

/*
 * A TSC rate the platform states, in the order Linux's x86_platform
 * calibrate_tsc hooks take it: Hyper-V's MSR, kvmclock, the KVM timing
 * leaf, then CPUID.15H.
 */
static void tsc_hz_stated(void)
{
	if (hyperv.tsc_hz) {
		clock.tsc_hz = hyperv.tsc_hz;
		clock.tsc_hz_source = "hyperv";
	} else if (kvm.kvmclock && kvm.kvmclock_tsc_khz) {
		clock.tsc_hz = kvm.kvmclock_tsc_khz * 1000;
		clock.tsc_hz_source = "kvmclock";
	} else if (kvm.timing_leaf && kvm.timing_tsc_khz) {
		clock.tsc_hz = (u64)kvm.timing_tsc_khz * 1000;
		clock.tsc_hz_source = "kvm";
	} else if (clock_tsc_hz_cpuid()) {
		clock.tsc_hz = clock_tsc_hz_cpuid();
		clock.tsc_hz_source = "cpuid";
	}
}

/* The APIC timer's rate: stated by the hypervisor or CPUID.15H, else measured. */
static void apic_timer_rate(void)
{
	if (hyperv.apic_hz) {
		clock.apic_timer_hz = hyperv.apic_hz;
		clock.apic_timer_hz_source = "hyperv";
	} else if (kvm.timing_leaf && kvm.timing_apic_khz) {
		clock.apic_timer_hz = (u64)kvm.timing_apic_khz * 1000;
		clock.apic_timer_hz_source = "kvm";
	} else if (clock.refs[TIMER_APIC].present) {
		clock.apic_timer_hz = clock.refs[TIMER_APIC].hz;
		clock.apic_timer_hz_source = "cpuid";
	} else {
		clock.apic_timer_hz = measure_apic_timer_hz();
		clock.apic_timer_hz_source = "measured";
	}
}

bool clock_init(u32 choice, u32 hz, char *err, size_t errlen)
{
	static const u32 auto_order[] = { TIMER_HPET, TIMER_PMTMR, TIMER_PIT, TIMER_HV,
					  TIMER_APIC };
	struct refclock *refs = clock.refs;

	clock.hz = hz;
	clock.ref = TIMER_AUTO;
	pit_probe(&refs[TIMER_PIT]);
	hpet_probe(&refs[TIMER_HPET]);
	pmtimer_probe(&refs[TIMER_PMTMR]);
	apic_ref_probe(&refs[TIMER_APIC]);
	hv_ref_probe(&refs[TIMER_HV]);
	str_copy(refs[TIMER_AUTO].absent, "auto is a choice, not a timer",
		 sizeof(refs[TIMER_AUTO].absent));

	tsc_hz_stated();
	if (choice == TIMER_AUTO) {
		for (u32 i = 0; i < ARRAY_SIZE(auto_order) && clock.ref == TIMER_AUTO; i++)
			if (refs[auto_order[i]].present)
				clock.ref = auto_order[i];
		clock.ref_why = "auto: first present of hpet, pmtmr, pit, hv, apic";
		if (clock.ref == TIMER_AUTO && clock.tsc_hz) {
			/* Legacy-free and no reference counter: the stated rate must do. */
			clock.ref_why = "auto: no reference timer; the TSC rate is stated";
		} else if (clock.ref == TIMER_AUTO) {
			snprintf(err, errlen, "timer=auto: no reference timer (%s; %s; %s; %s)",
				 refs[TIMER_HPET].absent, refs[TIMER_PMTMR].absent,
				 refs[TIMER_PIT].absent, refs[TIMER_HV].absent);
			return false;
		}
	} else {
		if (!refs[choice].present) {
			snprintf(err, errlen, "timer=%s: %s", timer_names[choice],
				 refs[choice].absent);
			return false;
		}
		clock.ref = choice;
		clock.ref_why = "timer= on the command line";
	}

	if (!clock.tsc_hz) {
		clock.tsc_hz = clock_measure_tsc_hz(&refs[clock.ref], TSC_WINDOW_US);
		clock.tsc_hz_source = refs[clock.ref].name;
		clock.tsc_hz_measured = true;
	}
	apic_timer_rate();

	trap_set_handler(APIC_VECTOR_TICK, tick);
	trap_set_handler(APIC_VECTOR_WAKE, eoi_only);
	trap_set_handler(APIC_VECTOR_SPURIOUS, spurious);
	clock_tick_start();
	sti();
	return true;
}

void clock_json(struct json *j)
{
	json_string(j, "reference", clock_have_ref() ? clock.refs[clock.ref].name : "none");
	json_string(j, "reference_why", clock.ref_why);
	json_u64(j, "tsc_hz", clock.tsc_hz);
	json_string(j, "tsc_hz_source", clock.tsc_hz_source);
	json_u64(j, "apic_timer_hz", clock.apic_timer_hz);
	json_string(j, "apic_timer_hz_source", clock.apic_timer_hz_source);
	json_u64(j, "hz", clock.hz);
}
