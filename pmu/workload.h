/* SPDX-License-Identifier: MIT */
/*
 * The stress workload: a loop with a known instruction count per
 * iteration, stamping the TSC each time so that a PMI handler can tell
 * how long ago the guest last ran (the delivery gap; README, "Stressing
 * PMI/NMI ordering").
 */
#ifndef PMU_WORKLOAD_H
#define PMU_WORKLOAD_H

#include "kernel/lib/types.h"

/* rdtsc, shl, or, mov, 26 nops, dec, jnz */
#define WORKLOAD_INSNS_PER_ITERATION 32

static inline void workload_run(volatile u64 *stamp, u64 iterations)
{
	if (!iterations)
		return;
	asm volatile("1:\n\t"
		     "rdtsc\n\t"
		     "shl $32, %%rdx\n\t"
		     "or %%rdx, %%rax\n\t"
		     "mov %%rax, (%[stamp])\n\t"
		     ".rept 26\n\t"
		     "nop\n\t"
		     ".endr\n\t"
		     "dec %[n]\n\t"
		     "jnz 1b"
		     : [n] "+r"(iterations)
		     : [stamp] "r"(stamp)
		     : "rax", "rdx", "memory", "cc");
}

#endif
