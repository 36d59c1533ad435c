// SPDX-License-Identifier: MIT
/*
 * kvmclock arithmetic: the TSC frequency Linux derives from the published
 * multiplier and shift (pvclock_tsc_khz), and nanoseconds from TSC cycles
 * (pvclock_scale_delta), for the mul and shift KVM publishes at common TSC
 * frequencies. Shifts of either sign, the 128-bit product, and the
 * degenerate inputs a corrupt structure could hold.
 */
#include "hv/kvm.h"
#include "kernel/test/test.h"

#define NS_PER_SECOND 1000000000ULL

/*
 * KVM publishes ns per cycle = mul / 2^32 * 2^shift with shift chosen so
 * that mul lies in [2^31, 2^32), from the TSC rate in kHz times 1000 (so
 * right shifts by up to 3 are exact). The table below comes from
 *
 *	def kvm_scale(hz):
 *	    shift = 0
 *	    while True:
 *	        h = hz << shift if shift >= 0 else hz >> -shift
 *	        mul = (10**9 << 32) // h
 *	        if mul >= 1 << 32: shift += 1
 *	        elif mul < 1 << 31: shift -= 1
 *	        else: return mul, shift
 *	sh = lambda v, s: v << s if s >= 0 else v >> -s
 *	khz = lambda mul, shift: sh((10**6 << 32) // mul, -shift)
 *	ns = lambda d, mul, shift: (sh(d, shift) * mul) >> 32
 *
 * with khz(mul, shift) and ns(hz, mul, shift) for the last two columns.
 */
struct pvclock_case {
	const char *name;
	u64 hz;
	u32 mul;
	s8 shift;
	u64 khz;	   /* pvclock_tsc_khz(mul, shift) */
	u64 one_second_ns; /* pvclock_scale_delta(hz, mul, shift) */
};

static const struct pvclock_case cases[] = {
	/* Exactly 1 ns per cycle: mul 2^31 and shift 1, no rounding at all. */
	{ "1 GHz", 1000000000ULL, 0x80000000, 1, 1000000, 1000000000 },
	/* mul is 2^32 / 1.2 rounded down: a second reads 1 ns short. */
	{ "2.4 GHz", 2400000000ULL, 0xd5555555, -1, 2400000, 999999999 },
	/* Rounding down mul leaves Linux's kvmclock tsc_khz 1 kHz low. */
	{ "2.445369 GHz", 2445369000ULL, 0xd1601732, -1, 2445368, 999999999 },
	{ "3.5 GHz", 3500000000ULL, 0x92492492, -1, 3500000, 999999999 },
	/* 10 ns per cycle = 0.625 * 2^4: exact. */
	{ "100 MHz", 100000000ULL, 0xa0000000, 4, 100000, 1000000000 },
	/* A shift of -2: 0.2 ns per cycle = 0.8 * 2^-2. */
	{ "5 GHz", 5000000000ULL, 0xcccccccc, -2, 5000000, 999999999 },
};

/* The rule above in C, to check the table's constants against it. */
static void kvm_time_scale(u64 hz, u32 *mul, s8 *shift)
{
	int s = 0;

	for (;;) {
		u64 h = s >= 0 ? hz << s : hz >> -s;
		u64 m = (NS_PER_SECOND << 32) / h;

		if (m >> 32) {
			s++;
		} else if (m < BIT(31)) {
			s--;
		} else {
			*mul = (u32)m;
			*shift = (s8)s;
			return;
		}
	}
}

static u64 distance(u64 a, u64 b)
{
	return a > b ? a - b : b - a;
}

DEFINE_TEST(unit_pvclock_scale, "the mul and shift KVM publishes for each TSC rate", 0)
{
	for (u32 i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct pvclock_case *c = &cases[i];
		u32 mul;
		s8 shift;

		report_prefix_push(c->name);
		kvm_time_scale(c->hz, &mul, &shift);
		report_eq(mul, c->mul, "mul");
		report_eq((s64)shift, (s64)c->shift, "shift");
		report_prefix_pop();
	}
}

DEFINE_TEST(unit_pvclock_tsc_khz, "the TSC rate Linux reads from kvmclock", 0)
{
	for (u32 i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct pvclock_case *c = &cases[i];
		u64 khz = pvclock_tsc_khz(c->mul, c->shift);

		report_prefix_push(c->name);
		report_eq(khz, c->khz, "kHz");
		report(distance(khz, c->hz / 1000) <= 1, "%llu kHz within 1 kHz of %llu", khz,
		       (c->hz / 1000));
		report_prefix_pop();
	}

	/* Before the division: 2^52 / 2^31 = 2^21, then the shift. */
	report_eq(pvclock_tsc_khz(0x80000000, 0), 2000000, "shift 0 divides only");
	report_eq(pvclock_tsc_khz(0x80000000, 3), 250000, "shift 3: 8 times fewer kHz");
	report_eq(pvclock_tsc_khz(0x80000000, -3), 16000000, "shift -3: 8 times more kHz");
	/* The smallest mul gives the largest quotient, 10^6 << 32 itself. */
	report_eq(pvclock_tsc_khz(1, 0), 1000000ULL << 32, "mul 1");
	report_eq(pvclock_tsc_khz(0, 0), 0, "mul 0 is no clock, not a division by 0");
	report_eq(pvclock_tsc_khz(0, -1), 0, "mul 0 with a shift");
	/* A corrupt shift shifts every bit out instead of wrapping. */
	report_eq(pvclock_tsc_khz(0x80000000, 64), 0, "shift 64");
	report_eq(pvclock_tsc_khz(0x80000000, 127), 0, "shift 127");
	report_eq(pvclock_tsc_khz(0x80000000, -64), 0, "shift -64");
	report_eq(pvclock_tsc_khz(0x80000000, -128), 0, "shift -128");
}

DEFINE_TEST(unit_pvclock_scale_delta, "nanoseconds from TSC cycles", 0)
{
	const struct pvclock_case *ghz = &cases[0], *ghz24 = &cases[1], *mhz = &cases[4];

	for (u32 i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct pvclock_case *c = &cases[i];
		u64 ns = pvclock_scale_delta(c->hz, c->mul, c->shift);

		report_prefix_push(c->name);
		report_eq(ns, c->one_second_ns, "a second of cycles");
		report(distance(ns, NS_PER_SECOND) <= 1,
		       "a second of cycles is %llu ns, within 1 ns", ns);
		report_prefix_pop();
	}

	/*
	 * Near 2^40 cycles the product of delta and mul needs 72 to 76 bits;
	 * a 64-bit product would wrap. At 1 GHz the answer is delta itself.
	 */
	report_eq(pvclock_scale_delta(1ULL << 40, ghz->mul, ghz->shift), 1ULL << 40,
		  "2^40 cycles at 1 GHz");
	report_eq(pvclock_scale_delta((1ULL << 40) + 12345, ghz->mul, ghz->shift),
		  (1ULL << 40) + 12345, "2^40 + 12345 cycles at 1 GHz");
	report_eq(pvclock_scale_delta((1ULL << 40) - 1, ghz->mul, ghz->shift), (1ULL << 40) - 1,
		  "2^40 - 1 cycles at 1 GHz");
	/* 2^40 * 10 ns, through a left shift of 4: a 76-bit product. */
	report_eq(pvclock_scale_delta(1ULL << 40, mhz->mul, mhz->shift), 10995116277760ULL,
		  "2^40 cycles at 100 MHz");
	report_eq(pvclock_scale_delta((1ULL << 40) + 12345, mhz->mul, mhz->shift),
		  10995116401210ULL, "2^40 + 12345 cycles at 100 MHz");
	/* (2^39 * 0xd5555555) >> 32 = 2^7 * 0xd5555555 exactly. */
	report_eq(pvclock_scale_delta(1ULL << 40, ghz24->mul, ghz24->shift), 128ULL * 0xd5555555,
		  "2^40 cycles at 2.4 GHz");
	report_eq(pvclock_scale_delta((1ULL << 40) + 12345, ghz24->mul, ghz24->shift),
		  458129850007ULL, "2^40 + 12345 cycles at 2.4 GHz");

	/* A negative shift drops the low bits of delta before the multiply. */
	report_eq(pvclock_scale_delta((1ULL << 40) + 1, ghz24->mul, ghz24->shift),
		  pvclock_scale_delta(1ULL << 40, ghz24->mul, ghz24->shift),
		  "shift -1 drops an odd cycle");
	report_eq(pvclock_scale_delta(7, 0x80000000, -2), 0, "7 >> 2 = 1 cycle of half a ns: 0");
	report_eq(pvclock_scale_delta(8, 0x80000000, -2), 1, "8 >> 2 = 2 cycles of half a ns");
	/* The largest delta and mul: (2^64 - 1) * (2^32 - 1) >> 32. */
	report_eq(pvclock_scale_delta(~0ULL, 0xffffffff, 0), 0xfffffffeffffffffULL,
		  "largest delta and mul");

	report_eq(pvclock_scale_delta(0, ghz24->mul, ghz24->shift), 0, "no cycles, no time");
	report_eq(pvclock_scale_delta(1ULL << 40, 0, 0), 0, "mul 0");
	report_eq(pvclock_scale_delta(1, 0x80000000, 63), 1ULL << 62, "shift 63");
	report_eq(pvclock_scale_delta(1, 0x80000000, 64), 0, "shift 64 shifts every bit out");
	report_eq(pvclock_scale_delta(~0ULL, 0xffffffff, -128), 0, "shift -128 likewise");
}
