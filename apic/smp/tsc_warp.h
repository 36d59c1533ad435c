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

/*
 * One check between the control CPU (the source) and an AP (the
 * target): they meet twice per run, as Linux's start_count and
 * stop_count, both in before the loop and both out before the verdict
 * is read; with TSC_ADJUST the source may call for more runs.
 */
struct tsc_sync_pair {
	volatile u32 start, stop;
	struct tsc_warp warp;
	volatile bool in_step; /* the last run's verdict, for the target */
	volatile bool again;   /* the last run warped and another follows */
};

/* What the source's runs of one check found. */
struct tsc_sync_source_runs {
	u32 runs, warped; /* runs, and those that saw a warp */
	u64 max_warp;	  /* the largest warp of any run, in TSC cycles */
	bool in_step;	  /* the verdict: no TSC marked unstable */
};

/*
 * check_tsc_sync_source()'s half: runs of cycles each, up to runs (the
 * policy's, smp_tsc_sync_runs()), until one is in step or none is left.
 */
void tsc_sync_source(struct tsc_sync_pair *p, u64 cycles, u32 runs, struct tsc_sync_source_runs *r);
/*
 * check_tsc_sync_target()'s half: where the source calls for another
 * run, step IA32_TSC_ADJUST by the warp (added to *adjusted) and run
 * again; the runs in *runs. True when the check ended in step.
 */
bool tsc_sync_target(struct tsc_sync_pair *p, u64 cycles, s64 *adjusted, u32 *runs);

#endif
