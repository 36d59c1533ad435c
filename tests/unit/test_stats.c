// SPDX-License-Identifier: MIT
/*
 * The statistics the DATA lines report: sorting, nearest-rank percentiles
 * (min, median, p99, max of bring-up and delivery times) and tolerances.
 */
#include "kernel/lib/stats.h"
#include "kernel/test/test.h"

DEFINE_TEST(unit_stats, "sorting, percentiles and tolerances", 0)
{
	u64 v[] = { 5, 1, 4, 1, 3, 9, 2, 6 };
	u64 one[] = { 42 };
	u64 big[100];

	sort_u64(v, ARRAY_SIZE(v));
	report(v[0] == 1 && v[1] == 1 && v[2] == 2 && v[3] == 3 && v[4] == 4 && v[5] == 5 &&
		       v[6] == 6 && v[7] == 9,
	       "sort_u64 sorts ascending, duplicates kept");
	report_eq(percentile_u64(v, 8, 0), 1, "p0 is the minimum");
	report_eq(percentile_u64(v, 8, 50), 3, "p50 of 8 is the 4th value (nearest rank)");
	report_eq(percentile_u64(v, 8, 100), 9, "p100 is the maximum");
	report_eq(percentile_u64(v, 8, 250), 9, "past 100 is the maximum");
	report_eq(percentile_u64(one, 1, 50), 42, "one value is every percentile");
	report_eq(percentile_u64(v, 0, 50), 0, "no values give 0");

	for (u32 i = 0; i < ARRAY_SIZE(big); i++)
		big[i] = ARRAY_SIZE(big) - i;
	sort_u64(big, ARRAY_SIZE(big));
	report_eq(percentile_u64(big, 100, 99), 99, "p99 of 1..100 is 99");
	report_eq(percentile_u64(big, 100, 1), 1, "p1 of 1..100 is 1");

	report(within_pct(110, 100, 10), "110 is within 10 %% of 100");
	report(!within_pct(111, 100, 10), "111 is not");
	report(within_pct(90, 100, 10) && !within_pct(89, 100, 10), "and below, 90 is, 89 is not");
	report(within_pct(0, 0, 0), "0 is within 0 %% of 0");
	report(!within_pct(1, 0, 50), "nothing but 0 is within any %% of 0");
	report(within_permille(2402400000ULL, 2400000000ULL, 1) &&
		       !within_permille(2402400001ULL, 2400000000ULL, 1),
	       "0.1 %% of 2.4 GHz is 2.4 MHz, to the hertz");
}
