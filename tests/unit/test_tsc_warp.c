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
