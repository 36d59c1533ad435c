// SPDX-License-Identifier: MIT
/*
 * Linux's timer calibration of tsc_khz (arch/x86/kernel/tsc.c
 * pit_hpet_ptimer_calibrate_cpu()) over made-up reads: a nested guest
 * whose every timer read is an exit to a TCG-emulated host fails both
 * the PIT window's and tsc_read_refs()' checks, and Linux then has no
 * tsc_khz; one fast read, or one good PIT window, is enough.
 */
#include <string.h>

#include "kernel/test/test.h"
#include "kernel/time/linux_tsc.h"

struct fake {
	/* Each tsc_read_refs() try's span, in call order; the last repeats. */
	u64 reads[64];
	u32 nreads, read_calls;
	/* Each PIT window, in call order; the last repeats. */
	struct linux_pit_window windows[3];
	u32 nwindows, window_calls;
	u32 window_ms[3];
};

static u64 fake_read(void *ctx)
{
	struct fake *f = ctx;
	u32 i = f->read_calls < f->nreads ? f->read_calls : f->nreads - 1;

	f->read_calls++;
	return f->reads[i];
}

static void fake_window(void *ctx, u32 ms, struct linux_pit_window *w)
{
	struct fake *f = ctx;
	u32 i = f->window_calls < f->nwindows ? f->window_calls : f->nwindows - 1;

	if (f->window_calls < 3)
		f->window_ms[f->window_calls] = ms;
	f->window_calls++;
	*w = f->windows[i];
}

static struct linux_tsc_reads reads_of(struct fake *f, bool pit, const char *ref)
{
	return (struct linux_tsc_reads){ .have_pit = pit,
					 .ref = ref,
					 .read_ref = fake_read,
					 .pit_window = fake_window,
					 .ctx = f };
}

/* The nested run's numbers: an HPET read of 81 us at 2.1 GHz, a PIT port read of ~40 us. */
static const struct linux_pit_window slow_pit = { 250, 80000, 90000 };
static const struct linux_pit_window good_pit = { 6000, 2000, 3000 };

DEFINE_TEST(unit_linux_pit_window, "pit_calibrate_tsc()'s checks", 0)
{
	struct linux_pit_window w = { 1000, 100, 1000 };

	report(linux_pit_window_ok(&w, 1000), "1000 reads, max exactly 10x min: passes");
	w.reads = 999;
	report(!linux_pit_window_ok(&w, 1000), "999 reads: fails (loopmin 1000)");
	w = (struct linux_pit_window){ 1000, 100, 1001 };
	report(!linux_pit_window_ok(&w, 1000), "max over 10x min: fails");
	w = (struct linux_pit_window){ 4999, 100, 200 };
	report(!linux_pit_window_ok(&w, 5000), "the 50 ms window wants 5000 reads");
}

DEFINE_TEST(unit_linux_tsc_nested_fails, "slow timer reads: Linux has no tsc_khz", 0)
{
	struct fake f = {
		.reads = { 170000 }, .nreads = 1, .windows = { slow_pit }, .nwindows = 1
	};
	struct linux_tsc_reads r = reads_of(&f, true, "HPET");
	struct linux_tsc_verdict v;

	linux_tsc_calibrate(&r, &v);
	report(!v.ok, "no tsc_khz: %s", v.why);
	report_eq(f.window_calls, 3, "three PIT rounds");
	report_eq(f.window_ms[0], 10, "first round: CAL_MS");
	report_eq(f.window_ms[1], 10, "second round: CAL_MS");
	report_eq(f.window_ms[2], 50, "after two failed: CAL2_MS");
	report_eq(f.read_calls, 30, "five tries at each of six tsc_read_refs()");
	report_eq(v.fastest_ref_read, 170000, "the fastest try is reported");
	report(strstr(v.why, "HPET reads >= 170000 cycles") != NULL, "the HPET's failure is said");
}

DEFINE_TEST(unit_linux_tsc_threshold, "tsc_read_refs() takes a try under 0x20000 cycles", 0)
{
	struct fake f = {
		.reads = { 0x20000 }, .nreads = 1, .windows = { slow_pit }, .nwindows = 1
	};
	struct linux_tsc_reads r = reads_of(&f, true, "HPET");
	struct linux_tsc_verdict v;

	linux_tsc_calibrate(&r, &v);
	report(!v.ok, "exactly the threshold is refused");

	f = (struct fake){
		.reads = { 0x1ffff }, .nreads = 1, .windows = { slow_pit }, .nwindows = 1
	};
	linux_tsc_calibrate(&r, &v);
	report(v.ok, "one below: the reference calibrates (%s)", v.why);
	report_eq(f.read_calls, 2, "first try of each read passes");

	/* Four slow tries, the fifth fast: tsc_read_refs() returns it. */
	f = (struct fake){ .reads = { 200000, 200000, 200000, 200000, 1000, 200000, 200000, 200000,
				      200000, 1000 },
			   .nreads = 10,
			   .windows = { slow_pit },
			   .nwindows = 1 };
	linux_tsc_calibrate(&r, &v);
	report(v.ok, "the fifth try counts");
	report_eq(f.window_calls, 1, "settled in the first round");

	/* Only the round's first read passes: that round gives nothing. */
	f = (struct fake){
		.reads = { 1000, 200000 }, .nreads = 2, .windows = { slow_pit }, .nwindows = 1
	};
	linux_tsc_calibrate(&r, &v);
	report(!v.ok, "both of a round's reads must pass");
}

DEFINE_TEST(unit_linux_tsc_pit, "a passing PIT window gives tsc_khz whatever the reference", 0)
{
	struct fake f = { .reads = { 170000 },
			  .nreads = 1,
			  .windows = { slow_pit, slow_pit, good_pit },
			  .nwindows = 3 };
	struct linux_tsc_reads r = reads_of(&f, true, "HPET");
	struct linux_tsc_verdict v;

	linux_tsc_calibrate(&r, &v);
	report(v.ok, "third (50 ms) window passes: %s", v.why);

	f = (struct fake){
		.reads = { 170000 }, .nreads = 1, .windows = { slow_pit }, .nwindows = 1
	};
	r = reads_of(&f, false, "HPET");
	linux_tsc_calibrate(&r, &v);
	report(!v.ok, "no legacy PIC and a slow HPET: fails");
	report_eq(f.window_calls, 0, "no PIT window is run without a legacy PIC");

	f = (struct fake){ .reads = { 100 }, .nreads = 1, .windows = { slow_pit }, .nwindows = 1 };
	r = reads_of(&f, true, NULL);
	linux_tsc_calibrate(&r, &v);
	report(!v.ok, "slow PIT and no HPET or PM timer: fails");
	report(strstr(v.why, "no HPET or PM timer") != NULL, "%s", v.why);
	report_eq(f.read_calls, 0, "no reference is read");
}

/* A CPUID.15H leaf: EAX denominator, EBX numerator, ECX crystal Hz. */
static struct linux_native_tsc native(bool intel, u32 max_leaf, u32 den, u32 num, u32 crystal_hz,
				      u32 base_mhz)
{
	return (struct linux_native_tsc){
		.intel = intel,
		.max_leaf = max_leaf,
		.leaf_15 = { .eax = den, .ebx = num, .ecx = crystal_hz },
		.leaf_16 = { .eax = base_mhz },
	};
}

/* native_calibrate_tsc(), tsc.c v6.1 to v6.12. */
DEFINE_TEST(unit_linux_native_tsc, "native_calibrate_tsc(): CPUID.15H, 16H where no crystal", 0)
{
	struct linux_native_tsc c = native(true, 0x16, 2, 200, 24000000, 2400);

	report_eq(linux_native_tsc_hz(&c), 2400000000ULL, "24 MHz crystal * 200 / 2");
	c = native(true, 0x16, 2, 176, 0, 2200);
	report_eq(linux_native_tsc_hz(&c), 2200000000ULL,
		  "no crystal: from CPUID.16H's base MHz (Skylake, Kabylake)");
	c = native(true, 0x15, 2, 176, 0, 2200);
	report_eq(linux_native_tsc_hz(&c), 0, "no crystal and no 16H: none");
	c = native(false, 0x16, 2, 200, 24000000, 2400);
	report_eq(linux_native_tsc_hz(&c), 0, "not Intel: none");
	c = native(true, 0x14, 2, 200, 24000000, 2400);
	report_eq(linux_native_tsc_hz(&c), 0, "below leaf 15H: none");
	c = native(true, 0x16, 0, 200, 24000000, 2400);
	report_eq(linux_native_tsc_hz(&c), 0, "no ratio: none");
}
