// SPDX-License-Identifier: MIT
/* Statistics helpers; see stats.h. */
#include "kernel/lib/stats.h"

void sort_u64(u64 *v, u32 n)
{
	for (u32 i = 1; i < n; i++) {
		u64 x = v[i];
		u32 j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

u64 percentile_u64(const u64 *sorted, u32 n, u32 p)
{
	u32 rank;

	if (!n)
		return 0;
	if (p >= 100)
		return sorted[n - 1];
	/* Nearest rank: ceil(p/100 * n), 1-based; p = 0 is the minimum. */
	rank = (u32)(((u64)p * n + 99) / 100);
	return sorted[rank ? rank - 1 : 0];
}

bool within_permille(u64 a, u64 b, u32 permille)
{
	u64 d = a > b ? a - b : b - a;

	return d * 1000 <= b * permille;
}

bool within_pct(u64 a, u64 b, u32 pct)
{
	return within_permille(a, b, pct * 10);
}
