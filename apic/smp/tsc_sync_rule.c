// SPDX-License-Identifier: MIT
/* Which TSC-sync check runs, and for how long; see tsc_sync.h. */
#include "apic/bringup.h"
#include "apic/smp/tsc_sync.h"
#include "kernel/time/policy.h"

#define TSC_SYNC_FIRST_IN_PACKAGE_MS 20
#define TSC_SYNC_SIBLING_MS 2

const char *const smp_tsc_sync_mode_names[] = {
	[SMP_TSC_SYNC_STAMPS] = "stamps",
	[SMP_TSC_SYNC_LINUX_6_1] = "linux-6.1",
	[SMP_TSC_SYNC_LINUX_6_5] = "linux-6.5",
};
_Static_assert(ARRAY_SIZE(smp_tsc_sync_mode_names) == SMP_TSC_SYNC_MODE_COUNT,
	       "smp_tsc_sync_mode_names");

u32 smp_tsc_sync_mode(const struct bringup_mode *mode, const struct lpj_policy *policy)
{
	if (!mode->linux_tsc_sync)
		return SMP_TSC_SYNC_STAMPS;
	/* The kernel version decides the order, whatever the bring-up's shape. */
	switch (policy->tsc_sync) {
	case LPJ_TSC_SYNC_AFTER_CALIBRATION: return SMP_TSC_SYNC_LINUX_6_1;
	case LPJ_TSC_SYNC_BEFORE_CALIBRATION: return SMP_TSC_SYNC_LINUX_6_5;
	default: return SMP_TSC_SYNC_STAMPS;
	}
}

u32 smp_tsc_sync_timeout_ms(const struct smp_tsc_sync_facts *f)
{
	bool many = f->unsync_count == LPJ_UNSYNC_PACKAGES ? f->packages > 1 : f->possible_cpus > 1;
	bool unsynchronized = f->unstable || (!f->constant && !f->reliable && !f->intel && many);

	if (unsynchronized || f->reliable)
		return 0;
	if (f->tsc_adjust && f->package_online)
		return 0;
	return f->package_online ? TSC_SYNC_SIBLING_MS : TSC_SYNC_FIRST_IN_PACKAGE_MS;
}

u32 smp_tsc_sync_runs(const struct lpj_policy *policy, bool tsc_adjust)
{
	return tsc_adjust && policy->tsc_adjust_runs ? policy->tsc_adjust_runs : 1;
}

/* check_tsc_sync_source(), tsc_sync.c v6.5: atomic_dec_and_test(&test_runs). */
u32 smp_tsc_sync_after_run(u32 *runs_left, u32 warps, u32 random)
{
	if (!warps) {
		*runs_left = 0;
		return SMP_TSC_SYNC_RUN_IN_STEP;
	}
	if (!*runs_left || !--*runs_left || random) {
		*runs_left = 0;
		return SMP_TSC_SYNC_RUN_UNSTABLE;
	}
	return SMP_TSC_SYNC_RUN_AGAIN;
}

/* check_tsc_sync_target(), tsc_sync.c v6.5: cur_max_warp, else -gbl_max_warp. */
s64 smp_tsc_adjust_step(u64 mine, u64 source)
{
	return mine ? (s64)mine : -(s64)source;
}
