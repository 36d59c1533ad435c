// SPDX-License-Identifier: MIT
/*
 * Hyper-V arithmetic: reference time from the TSC page (a full 128-bit
 * product, signed offsets), the TSC frequency recovered from the page's
 * scale (exact floor, saturating where the quotient cannot fit), and the
 * guest OS identity's fields. No TCG run reaches this code with real
 * Hyper-V leaves, so these tests are its only check before a real host.
 *
 * Expected values are exact integers from Python's arbitrary precision,
 * N = 10**7 << 64:
 *	scale(f) = N // f
 *	hz(s)    = N // s
 *	time     = (tsc * scale) >> 64
 */
#include "hv/hyperv.h"
#include "kernel/test/test.h"

/* N // 2500000000: 2^64 / 250 = 73786976294838206.464 rounded down. */
#define SCALE_2_5GHZ 73786976294838206ULL
/* N // 2400000000 = 0x111111111111111 (2^64 / 240 is 0x0111... repeating). */
#define SCALE_2_4GHZ 0x111111111111111ULL

static u64 field(u64 v, u64 mask)
{
	return (v & mask) >> __builtin_ctzll(mask);
}

DEFINE_TEST(unit_hyperv_tsc_page_time, "reference time from the TSC page", 0)
{
	/*
	 * The scale is rounded down, so a whole second of 2.5 GHz cycles
	 * comes out one 100 ns unit short: (2.5e9 * scale) >> 64 = 9999999.
	 */
	report_eq(hv_tsc_page_time(2500000000ULL, SCALE_2_5GHZ, 0), 9999999,
		  "1 s at 2.5 GHz is 10^7 units, less the scale's rounding");
	report_eq(hv_tsc_page_time(25000000000ULL, SCALE_2_5GHZ, 0), 99999999, "10 s at 2.5 GHz");
	report_eq(hv_tsc_page_time(0, SCALE_2_5GHZ, 0), 0, "TSC 0 is time 0");
	report_eq(hv_tsc_page_time(2400000000ULL, SCALE_2_4GHZ, 0), 9999999, "1 s at 2.4 GHz");

	/* Offsets: the page moves the partition's time origin either way. */
	report_eq(hv_tsc_page_time(25000000000ULL, SCALE_2_5GHZ, -5000000), 94999999,
		  "a negative offset subtracts");
	report_eq(hv_tsc_page_time(25000000000ULL, SCALE_2_5GHZ, 123456789), 223456788,
		  "a positive offset adds");
	report_eq(hv_tsc_page_time(25000000000ULL, SCALE_2_5GHZ, -99999999), 0,
		  "an offset of minus the product lands on 0");
	report_eq(hv_tsc_page_time(0, SCALE_2_5GHZ, -1), UINT64_MAX,
		  "below 0 wraps modulo 2^64, as the unsigned count does");
	report_eq(hv_tsc_page_time(1, 1, INT64_MAX), (u64)INT64_MAX, "the largest offset");

	/*
	 * The product needs all 128 bits near the top of the TSC's range: a
	 * 64-bit multiply would wrap and keep garbage.
	 * (2^64 - 1) * SCALE_2_5GHZ >> 64 = 73786976294838205 and
	 * 2^63 * SCALE_2_5GHZ >> 64 = SCALE_2_5GHZ / 2 = 36893488147419103.
	 */
	report_eq(hv_tsc_page_time(UINT64_MAX, SCALE_2_5GHZ, 0), 73786976294838205ULL,
		  "TSC 2^64 - 1 keeps the high half of the product");
	report_eq(hv_tsc_page_time(1ULL << 63, SCALE_2_5GHZ, 0), 36893488147419103ULL, "TSC 2^63");
	report_eq(hv_tsc_page_time(UINT64_MAX, UINT64_MAX, 0), UINT64_MAX - 1,
		  "(2^64 - 1)^2 >> 64 = 2^64 - 2");
	report_eq(hv_tsc_page_time(UINT64_MAX, UINT64_MAX, 2), 0,
		  "and an offset that carries out wraps to 0");
}

DEFINE_TEST(unit_hyperv_tsc_hz, "TSC frequency from the page's scale", 0)
{
	/* Round trips: hz(scale(f)) == f for each, checked in Python. */
	report_eq(hv_tsc_hz_from_scale(184467440737095516ULL), 1000000000,
		  "1 GHz: scale 184467440737095516");
	report_eq(hv_tsc_hz_from_scale(SCALE_2_4GHZ), 2400000000ULL,
		  "2.4 GHz: scale 0x111111111111111");
	report_eq(hv_tsc_hz_from_scale(SCALE_2_5GHZ), 2500000000ULL,
		  "2.5 GHz: scale 73786976294838206");
	report_eq(hv_tsc_hz_from_scale(51533767765762273ULL), 3579545000ULL,
		  "3.579545 GHz: scale 51533767765762273");
	report_eq(hv_tsc_hz_from_scale(75435405038109610ULL), 2445369527ULL,
		  "2445369527 Hz, not round: scale 75435405038109610");
	report_eq(hv_tsc_hz_from_scale(61489146891868789ULL), 3000000001ULL,
		  "3000000001 Hz: scale 61489146891868789");

	/* Rounding is down, exactly: one more in the scale loses a hertz. */
	report_eq(hv_tsc_hz_from_scale(SCALE_2_4GHZ + 1), 2399999999ULL,
		  "scale 0x111111111111112 is 2399999999 Hz (floor)");

	/*
	 * 10 MHz, the reference counter's own rate, would need scale 2^64;
	 * the largest scale, 2^64 - 1, is the slowest TSC the page can
	 * describe: N // (2^64 - 1) = 10^7 exactly (the excess is 10^7 /
	 * (2^64 - 1), under 1).
	 */
	report_eq(hv_tsc_hz_from_scale(UINT64_MAX), 10000000, "scale 2^64 - 1 is 10 MHz");
	report_eq(hv_tsc_hz_from_scale(1ULL << 32), 42949672960000000ULL,
		  "scale 2^32: 10^7 * 2^32 Hz");

	/* Edges: no scale, and scales whose quotient does not fit 64 bits. */
	report_eq(hv_tsc_hz_from_scale(0), 0, "scale 0 gives 0, not a division by 0");
	report_eq(hv_tsc_hz_from_scale(10000001), 18446742229035328712ULL,
		  "scale 10^7 + 1: the largest quotient that fits");
	report_eq(hv_tsc_hz_from_scale(10000000), UINT64_MAX,
		  "scale 10^7 would be 2^64 Hz: saturates");
	report_eq(hv_tsc_hz_from_scale(1), UINT64_MAX, "scale 1 saturates");
}

DEFINE_TEST(unit_hyperv_guest_os_id, "hvprobe's guest OS identity fields", 0)
{
	u64 id = hv_guest_os_id();

	/* TLFS "Guest OS Identity MSR for Open Source Operating Systems" */
	report_eq(id >> 63, 1, "bit 63: open source");
	report_eq(field(id, HV_GUEST_OS_ID_OS_TYPE), 0x7f,
		  "62:56 OS type 0x7F (unallocated; Linux is 0x1)");
	report_eq(field(id, HV_GUEST_OS_ID_OS_ID), 0, "55:48 OS ID unused");
	report_eq(field(id, HV_GUEST_OS_ID_VERSION), 0x000100, "47:16 version 0.1.0");
	report_eq(field(id, HV_GUEST_OS_ID_BUILD), 0, "15:0 build unused");
	/* The whole value, with the layout spelt out independently. */
	report_eq(id, (1ULL << 63) | (0x7fULL << 56) | (0x000100ULL << 16), "0xff00000001000000");
	report(id != 0, "nonzero, as enabling hypercalls requires");
}
