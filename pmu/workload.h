/* SPDX-License-Identifier: MIT */
/*
 * The stress workload: a loop with a known instruction count per
 * iteration, stamping the TSC each time so that a PMI handler can tell
 * how long ago the guest last ran (the delivery gap; README, "Stressing
 * PMI/NMI ordering"), and whether it interrupted the loop at all.
 */
#ifndef PMU_WORKLOAD_H
#define PMU_WORKLOAD_H

#include "kernel/lib/types.h"

#define WORKLOAD_INSNS_PER_ITERATION 32

void workload_run(volatile u64 *stamp, u64 iterations);
/* [workload_loop, workload_loop_end): the loop's instructions. */
extern const u8 workload_loop[], workload_loop_end[];

static inline bool workload_interrupted(u64 rip)
{
	return rip >= (u64)(uintptr_t)workload_loop && rip < (u64)(uintptr_t)workload_loop_end;
}

#endif
