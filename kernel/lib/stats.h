/* SPDX-License-Identifier: MIT */
/* Small statistics for measurements: sorting, percentiles, tolerances. */
#ifndef KERNEL_LIB_STATS_H
#define KERNEL_LIB_STATS_H

#include "kernel/lib/types.h"

/* In place, ascending; insertion sort: n is at most a few thousand. */
void sort_u64(u64 *v, u32 n);
/* The p-th percentile (0..100) of sorted v, nearest rank; 0 for n = 0. */
u64 percentile_u64(const u64 *sorted, u32 n, u32 p);
/* |a - b| <= b * pct / 100, without overflow for any u64 below 2^57. */
bool within_pct(u64 a, u64 b, u32 pct);
/* The same in tenths of a percent, for clocks that must agree to 0.1 %. */
bool within_permille(u64 a, u64 b, u32 permille);

#endif
