// SPDX-License-Identifier: MIT
/*
 * Loops-per-jiffy arithmetic: Linux's lpj from a TSC frequency (kHz
 * truncation included, so presets compare exactly with Linux's), delay
 * lengths, and the direct method's verdict on its samples (bracket width
 * under 1/8, outliers dropped until the spread is under 1/8 of the mean).
 */
#include "kernel/time/lpj.h"
#include "kernel/test/test.h"

DEFINE_TEST(unit_lpj_from_hz, "lpj from the TSC frequency as Linux computes it", 0)
{
	/* 2.4 GHz at HZ=250: 9.6 M cycles per jiffy. */
	report_eq(lpj_from_tsc_hz(2400000000ULL, 250), 9600000, "2.4 GHz, HZ=250");
	/* Linux keeps tsc_khz: the 999 Hz below a kHz are dropped first. */
	report_eq(lpj_from_tsc_hz(2445369527ULL, 250), 9781476, "2445369527 Hz -> kHz first");
	report_eq(lpj_from_tsc_hz(2445369527ULL, 1000), 2445369, "HZ=1000");
	report_eq(lpj_from_tsc_hz(2445369527ULL, 100), 24453690, "HZ=100");
	report_eq(lpj_from_tsc_hz(999, 250), 0, "below 1 kHz there is nothing left");
	report_eq(lpj_from_tsc_hz(2400000000ULL, 0), 0, "HZ=0 is refused, not a division by 0");
	/* A 64-bit frequency must not overflow on the way. */
	report_eq(lpj_from_tsc_hz(UINT64_MAX, 10), UINT64_MAX / 1000 * 1000 / 10, "u64 max");
}

DEFINE_TEST(unit_lpj_delay, "delay lengths in TSC cycles", 0)
{
	/* 9.6 M cycles per jiffy at 250 Hz is 2.4 GHz: 10 ms is 24 M cycles. */
	report_eq(lpj_delay_cycles(9600000, 250, 10000), 24000000, "10 ms at 2.4 GHz");
	report_eq(lpj_delay_cycles(9600000, 250, 1), 2400, "1 us at 2.4 GHz");
	report_eq(lpj_delay_cycles(9600000, 250, 0), 0, "0 us");
	/* Non-round rates keep their fraction of a cycle per microsecond. */
	report_eq(lpj_delay_cycles(9781476, 250, 1000000), 2445369000, "1 s at 2445369 kHz");
	/* An hour at 5 GHz stays in range. */
	report_eq(lpj_delay_cycles(20000000, 250, 3600000000ULL), 18000000000000ULL,
		  "an hour at 5 GHz");
}

/*
 * The lpj test's udelay check under lpj=: the delay lasts what the preset
 * implies on the TSC at hand, whatever machine the preset was written on.
 * A preset of 9800000 (a 2.45 GHz host at HZ=250) on the TSC rates seen
 * on this project's machines.
 */
DEFINE_TEST(unit_lpj_delay_lasts, "how long udelay lasts under an lpj= preset", 0)
{
	report_eq(lpj_delay_lasts_us(9800000, 250, 2450000000ULL, 2000), 2000,
		  "the preset is this TSC's own: as asked");
	report_eq(lpj_delay_lasts_us(9800000, 250, 2096015000ULL, 2000), 2337,
		  "a 2.45 GHz preset on a 2.096 GHz TSC: 17 % long");
	report_eq(lpj_delay_lasts_us(8384060, 250, 2096015000ULL, 2000), 2000,
		  "the 2.096 GHz TSC's own lpj: as asked");
	report_eq(lpj_delay_lasts_us(8384060, 250, 2450000000ULL, 2000), 1711,
		  "a 2.096 GHz preset on a 2.45 GHz TSC: short");
	report_eq(lpj_delay_lasts_us(2450000, 1000, 2450000000ULL, 2000), 2000, "HZ=1000");
	report_eq(lpj_delay_lasts_us(9800000, 250, 0, 2000), 0, "no TSC rate, no answer");
	report_eq(lpj_delay_lasts_us(9800000, 250, 2450000000ULL, 36000000000ULL), 36000000000ULL,
		  "ten hours: cycles times 10^6 would pass 64 bits");
}

DEFINE_TEST(unit_lpj_direct, "the direct method's verdict on its samples", 0)
{
	/*
	 * Two ticks of 9.6 M: tight brackets around 19.2 M, whose midpoints per
	 * tick are 9600000, 9600000, 9601000, 9600250 and 9602500.
	 */
	const u64 lo[] = { 19190000, 19195000, 19200000, 19198000, 19201000 };
	const u64 hi[] = { 19210000, 19205000, 19204000, 19203000, 19209000 };
	u64 lo2[5], hi2[5];

	report_eq(lpj_direct_combine(lo, hi, 5, 2), 9600750, "five good samples averaged");
	report_eq(lpj_direct_combine(lo, hi, 5, 0), 0, "zero ticks is no measurement");
	report_eq(lpj_direct_combine(lo, hi, 0, 2), 0, "no samples, no value");

	/* A bracket of 1/8 or more of the upper bound is not a sample. */
	for (int i = 0; i < 5; i++) {
		lo2[i] = lo[i];
		hi2[i] = hi[i];
	}
	lo2[0] = 10000000;
	hi2[0] = 30000000;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600937, "a wide bracket is ignored");

	/* A void sample (lower above upper) is ignored too. */
	lo2[0] = 1;
	hi2[0] = 0;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600937, "a void sample is ignored");

	/* One tight but wrong sample (a late tick) is dropped as an outlier. */
	lo2[0] = 12290000;
	hi2[0] = 12300000;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600937, "an outlier is dropped");

	/* One good sample alone proves nothing: it may be a cut-short jiffy. */
	for (int i = 1; i < 5; i++) {
		lo2[i] = 1;
		hi2[i] = 0;
	}
	lo2[0] = lo[0];
	hi2[0] = hi[0];
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 0, "a single good sample gives 0");
	/* Two that disagree: either may be the cut-short one. */
	lo2[1] = 120000;
	hi2[1] = 121000;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 0, "two that disagree give 0");
	/* Two that agree are enough. */
	lo2[1] = lo[1];
	hi2[1] = hi[1];
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600000, "two that agree are enough");

	/* All void: no value, and the caller must try again. */
	for (int i = 0; i < 5; i++) {
		lo2[i] = 1;
		hi2[i] = 0;
	}
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 0, "no good sample gives 0");
}
