// SPDX-License-Identifier: MIT
/*
 * The lpj policies, one descriptor each (policy.h), and the table's
 * walk. Linux's functions are cited with the version whose behaviour
 * the field copies; the sources a policy presets from are the rate
 * table's (rates.h), by their lpj_flags.
 */
#include "kernel/lib/string.h"
#include "kernel/time/options.h"
#include "kernel/time/policy.h"
#include "kernel/time/rates.h"

TABLE_DECLARE(struct lpj_policy, hvprobe_lpj_policies);
_Static_assert(sizeof(struct lpj_policy) % 8 == 0, "a table entry is a multiple of 8 bytes");

/*
 * hvprobe's own: the fastest stated rate as a preset, lpj_reuse='s copy
 * rule, and the cheap stamp check instead of Linux's warp loop.
 */
DEFINE_LPJ_POLICY(.name = "hvprobe", .rank = 10, .rule_prefix = "hvprobe's: fastest stated rate (",
		  .rule_suffix = ")", .preset_flags = RATE_LPJ_HVPROBE, .copy_rule = LPJ_COPY_REUSE,
		  .tsc_sync = LPJ_TSC_SYNC_STAMPS, .warp_mark = LPJ_WARP_MARKS_AT_ONCE,
		  .unsync_count = LPJ_UNSYNC_POSSIBLE_CPUS, .tsc_adjust_runs = 1);

/* Linux 6.1 to 6.4. */
DEFINE_LPJ_POLICY(.name = "linux-6.1", .rank = 20, .rule_prefix = "Linux's: ",
		  /* lpj_setup() (init/calibrate.c) and kvm_get_preset_lpj() from kvmclock_init(),
		     v6.1 */
		  .preset_flags = RATE_LPJ_LINUX,
		  /* init_hypervisor_platform(), hypervisor.c v6.1: x86_hyper's init_platform */
		  .linux_platform = true,
		  /* tsc_init(), tsc.c v6.1: mark_tsc_unstable("could not calculate TSC khz") */
		  .tsc_khz_refusal = true,
		  /* calibrate_delay_is_known(), tsc.c v6.1:
		     cpumask_any_but(topology_core_cpumask()) */
		  .copy_rule = LPJ_COPY_PACKAGE,
		  /* start_secondary(), smpboot.c v6.1: smp_callin() calibrates, then
		     check_tsc_sync_target() */
		  .tsc_sync = LPJ_TSC_SYNC_AFTER_CALIBRATION,
		  /* check_tsc_sync_source(), tsc_sync.c v6.1: mark_tsc_unstable() */
		  .warp_mark = LPJ_WARP_MARKS_AT_ONCE,
		  /* unsynchronized_tsc(), tsc.c v6.1: num_possible_cpus() > 1 */
		  .unsync_count = LPJ_UNSYNC_POSSIBLE_CPUS,
		  /* check_tsc_sync_source(), tsc_sync.c v6.1: test_runs = 3 with TSC_ADJUST */
		  .tsc_adjust_runs = 3);

/* Linux 6.5.0, the first with the parallel bring-up; 6.12 is its own entry. */
DEFINE_LPJ_POLICY(.name = "linux-6.5", .rank = 30, .rule_prefix = "Linux's: ",
		  /* lpj_setup() and kvm_get_preset_lpj() from kvmclock_init(), v6.5 */
		  .preset_flags = RATE_LPJ_LINUX,
		  /* init_hypervisor_platform(), v6.5 */
		  .linux_platform = true,
		  /* tsc_init(), tsc.c v6.5 */
		  .tsc_khz_refusal = true,
		  /* calibrate_delay_is_known(), tsc.c v6.5: CPU 0's while !tsc_unstable */
		  .copy_rule = LPJ_COPY_BOOT_CPU,
		  /* start_secondary(), smpboot.c v6.5: check_tsc_sync_target(), then
		     ap_calibrate_delay() */
		  .tsc_sync = LPJ_TSC_SYNC_BEFORE_CALIBRATION,
		  /*
		   * check_tsc_sync_source(), tsc_sync.c v6.5, run on the control
		   * CPU by smp_call_function_single(): mark_tsc_unstable() there
		   */
		  .warp_mark = LPJ_WARP_MARKS_AT_ONCE,
		  /* unsynchronized_tsc(), tsc.c v6.5: num_possible_cpus() > 1 */
		  .unsync_count = LPJ_UNSYNC_POSSIBLE_CPUS,
		  /*
		   * check_tsc_sync_source(), tsc_sync.c v6.5:358-361: test_runs = 3
		   * with TSC_ADJUST; check_tsc_sync_target() 475-508 adjusts and reruns
		   */
		  .tsc_adjust_runs = 3);

/* Linux 6.12, the referee's Debian kernel. */
DEFINE_LPJ_POLICY(.name = "linux-6.12", .rank = 35, .rule_prefix = "Linux's: ",
		  /* lpj_setup() and kvm_get_preset_lpj() from kvmclock_init(), v6.12 */
		  .preset_flags = RATE_LPJ_LINUX,
		  /* init_hypervisor_platform(), v6.12 */
		  .linux_platform = true,
		  /* tsc_init(), tsc.c v6.12 */
		  .tsc_khz_refusal = true,
		  /* calibrate_delay_is_known(), tsc.c v6.12: as v6.5 */
		  .copy_rule = LPJ_COPY_BOOT_CPU,
		  /* start_secondary(), smpboot.c v6.12: as v6.5 */
		  .tsc_sync = LPJ_TSC_SYNC_BEFORE_CALIBRATION,
		  /*
		   * check_tsc_sync_source(), tsc_sync.c v6.12:
		   * schedule_work(&tsc_sync_work), whose
		   * tsc_sync_mark_tsc_unstable() marks it later (late 2023)
		   */
		  .warp_mark = LPJ_WARP_MARKS_DEFERRED,
		  /* unsynchronized_tsc(), tsc.c v6.12: topology_max_packages() > 1 */
		  .unsync_count = LPJ_UNSYNC_PACKAGES,
		  /* check_tsc_sync_source(), tsc_sync.c v6.12: as v6.5 */
		  .tsc_adjust_runs = 3);

/*
 * The lpj thread's patch on the kernel it was posted against (6.2-rc,
 * so linux-6.1's rules): hv_preset_lpj(), called from Hyper-V's platform
 * code after hv_init_clocksource(), presets lpj on every CPU from
 * x86_platform.calibrate_tsc: Hyper-V's frequency MSR where granted,
 * else the native CPUID.15H (its !calibrate_tsc guard never fires). In
 * no mainline kernel.
 */
DEFINE_LPJ_POLICY(.name = "hv-preset", .rank = 40, .rule_prefix = "thread's hv_preset_lpj(): ",
		  .preset_flags = RATE_LPJ_LINUX | RATE_LPJ_HV_PRESET, .linux_platform = true,
		  /* the rest as linux-6.1's, the patch's base */
		  .tsc_khz_refusal = true, .copy_rule = LPJ_COPY_PACKAGE,
		  .tsc_sync = LPJ_TSC_SYNC_AFTER_CALIBRATION, .warp_mark = LPJ_WARP_MARKS_AT_ONCE,
		  .unsync_count = LPJ_UNSYNC_POSSIBLE_CPUS, .tsc_adjust_runs = 3);

/* Whether a comes before b: by rank, then by name so that a tie is still an order. */
static bool before(const struct lpj_policy *a, const struct lpj_policy *b)
{
	return a->rank < b->rank || (a->rank == b->rank && strcmp(a->name, b->name) < 0);
}

/* A handful of entries in the linker's order: a scan per step. */
static const struct lpj_policy *next(const struct lpj_policy *prev)
{
	const struct lpj_policy *p, *best = NULL;

	table_for_each (p, hvprobe_lpj_policies)
		if ((!prev || before(prev, p)) && (!best || before(p, best)))
			best = p;
	return best;
}

const struct lpj_policy *lpj_policy_at(u32 i)
{
	const struct lpj_policy *p = next(NULL);

	while (p && i--)
		p = next(p);
	return p;
}

const char *lpj_policy_word(u32 i)
{
	const struct lpj_policy *p = lpj_policy_at(i);

	return p ? p->name : NULL;
}

const struct lpj_policy *lpj_policy_named(const char *name)
{
	const struct lpj_policy *p;

	table_for_each (p, hvprobe_lpj_policies)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

const struct lpj_policy *lpj_policy_chosen(void)
{
	return lpj_policy_at(time_options.lpj_policy);
}
