// SPDX-License-Identifier: MIT
/*
 * Linux's warp loop (check_tsc_warp()) on two CPUs of the host model,
 * whose TSC is one counter and so never warps. On an out-of-order host a
 * plain RDTSC may be read before the lock's acquire completes, and sees
 * a time older than the other CPU's last reading: a false warp, after
 * which hvprobe would calibrate where Linux copies. The loop reads with
 * rdtsc_ordered(), as Linux does, and must see none.
 */
#include "apic/smp/smp.h"
#include "apic/smp/tsc_warp.h"
#include "kernel/test/ktap.h"
#include "kernel/test/test.h"
#include "kernel/x86/percpu.h"
#include "tests/unit/model.h"

#define LOOP_CYCLES 20000 /* model cycles: thousands of turns, many hand-overs */

static struct tsc_warp warp;

static void loop(void *arg)
{
	(void)arg;
	tsc_warp_loop(&warp, LOOP_CYCLES);
}

DEFINE_TEST(unit_tsc_warp_ordered, "the warp loop sees no warp of one TSC read out of order", 0)
{
	for (u64 seed = 1; seed <= 3; seed++) {
		struct model_config m = model_intel_v2(2, seed);

		m.tsc_reads_early = true;
		m.switch_permille = 200;
		model_start(&m);
		warp = (struct tsc_warp){ 0 };
		smp_run_all(loop, NULL, 0);
		report(!warp.warps, "seed %llu: %u warps, the largest %llu cycles", seed,
		       warp.warps, warp.max_warp);
	}
}

/*
 * A vCPU whose TSC the host offset ahead of CPU 0's: the source sees
 * time go backwards. With TSC_ADJUST Linux's target steps its TSC back
 * by the source's warp and the pair runs again (check_tsc_sync_target(),
 * tsc_sync.c v6.5:475-508), so the check ends in step within 3 runs and
 * nothing is marked unstable; with one run, the first warp marks it.
 */
#define TSC_AHEAD 5000 /* cycles: far beyond a turn of the loop */

static struct tsc_sync_pair pair;
static struct tsc_sync_source_runs source_runs;
static u32 allowed_runs, target_runs;
static s64 adjusted;
static bool target_in_step;

static void check(void *arg)
{
	(void)arg;
	if (this_cpu()->index == 0)
		tsc_sync_source(&pair, LOOP_CYCLES, allowed_runs, &source_runs);
	else
		target_in_step = tsc_sync_target(&pair, LOOP_CYCLES, &adjusted, &target_runs);
}

static void run_check(u32 runs, u64 seed)
{
	struct model_config m = model_intel_v2(2, seed);

	m.switch_permille = 200;
	m.tsc_offset[1] = TSC_AHEAD;
	model_start(&m);
	pair = (struct tsc_sync_pair){ 0 };
	allowed_runs = runs;
	target_runs = 0;
	adjusted = 0;
	smp_run_all(check, NULL, 0);
}

DEFINE_TEST(unit_tsc_sync_adjust, "a TSC offset between two CPUs: TSC_ADJUST, rerun, in step", 0)
{
	for (u64 seed = 1; seed <= 3; seed++) {
		run_check(3, seed);
		report(source_runs.in_step && target_in_step,
		       "seed %llu, 3 runs: in step after %u runs, %u warped", seed,
		       source_runs.runs, source_runs.warped);
		report(source_runs.runs >= 2 && source_runs.runs == target_runs,
		       "seed %llu: the first run warped, both halves ran %u and %u", seed,
		       source_runs.runs, target_runs);
		report(adjusted < 0 && adjusted > -2 * TSC_AHEAD && -adjusted > TSC_AHEAD / 2,
		       "seed %llu: TSC_ADJUST stepped back by about the offset (%lld)", seed,
		       (long long)adjusted);
		run_check(1, seed);
		report(!source_runs.in_step && !target_in_step && source_runs.runs == 1,
		       "seed %llu, no TSC_ADJUST: the first warp marks the TSC unstable", seed);
	}
}
