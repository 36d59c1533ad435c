/* SPDX-License-Identifier: MIT */
/*
 * Linux's check_tsc_warp(): two CPUs read the TSC in turn under one
 * lock, each reading ordered after the lock's acquire; a reading earlier
 * than the other CPU's last is a warp. The loop alone, with no bring-up
 * around it, so that the host model can run it on two CPUs.
 */
#ifndef APIC_SMP_TSC_WARP_H
#define APIC_SMP_TSC_WARP_H

#include "kernel/x86/spinlock.h"

/* The state both CPUs share, as Linux's last_tsc, max_warp and nr_warps. */
struct tsc_warp {
	struct spinlock lock;
	u64 last;
	u64 max_warp;
	u32 warps;
	/* Warps seen by both CPUs in turn: Linux's random_warps. */
	u32 random;
};

/*
 * Read in turn for about cycles TSC cycles; returns the largest warp
 * this CPU saw itself (Linux's cur_max_warp), 0 for none.
 */
u64 tsc_warp_loop(struct tsc_warp *w, u64 cycles);

#endif
