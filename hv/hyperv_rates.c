// SPDX-License-Identifier: MIT
/*
 * What Hyper-V states about clocks, in the table of stated rates
 * (kernel/time/rates.h): the TSC and APIC rates of its frequency MSRs
 * (TLFS 2.4.x: HV_X64_MSR_TSC_FREQUENCY, HV_X64_MSR_APIC_FREQUENCY), and
 * what Linux's Hyper-V platform code does to the TSC. hv_init() fills
 * them; pure, so the host tests see the same table. And timer=hv, the
 * partition reference counter (hyperv.c drives it).
 */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "kernel/time/options.h"
#include "kernel/time/rates.h"

struct hyperv_tsc_control hyperv_tsc_control;

/*
 * ms_hyperv_init_platform() (mshyperv.c v6.1 to v6.12): with
 * HV_ACCESS_TSC_INVARIANT it writes HV_X64_MSR_TSC_INVARIANT_CONTROL,
 * which exposes the invariant-TSC bit (CPUID.80000007H:EDX[8]), and sets
 * X86_FEATURE_TSC_RELIABLE. The write is a plain wrmsrl(), whose fault
 * the exception table only warns about, so the TSC is reliable whenever
 * the privilege is granted; without it, mark_tsc_unstable("running on
 * Hyper-V").
 */
static const char *hyperv_platform_tsc(bool *unstable, bool *reliable)
{
	const struct hyperv_tsc_control *c = &hyperv_tsc_control;

	if (!c->access) {
		*unstable = true;
		return "running on Hyper-V: TSC marked unstable";
	}
	*reliable = true;
	if (c->expose && c->expose())
		return "HV_X64_MSR_TSC_INVARIANT_CONTROL: invariant TSC exposed";
	return "HV_X64_MSR_TSC_INVARIANT_CONTROL: the write faulted, TSC reliable all the same";
}

/* Linux's ms_hyperv_platform() answers the block's fixed base. */
struct rate_platform hyperv_platform = {
	.name = "hyperv",
	.detect = HV_LEAF_FIRST,
	.tsc_key = "hyperv_tsc",
	.tsc_init = hyperv_platform_tsc,
	/* The patch calls it from ms_hyperv_init_platform(), after hv_init_clocksource(). */
	.runs_hv_preset = true,
};

/*
 * First of the interfaces, as Linux's Hyper-V calibrate_tsc hook is;
 * hvprobe's policy presets from it, and the lpj thread's hv_preset_lpj()
 * where Hyper-V is the platform; Linux's policies never do.
 */
DEFINE_RATE_SOURCE(hyperv_rate, .name = "hyperv", .rank = 100,
		   .lpj_flags = RATE_LPJ_HVPROBE | RATE_LPJ_HV_PRESET, .platform = &hyperv_platform,
		   .absent = "no Hyper-V leaves",
		   /* ms_hyperv_init_platform(): calibrate_tsc = hv_get_tsc_khz with the MSRs */
		   .linux_tsc = true);

/* After the HPET and the PM timer for auto, before the APIC timer. */
DEFINE_REFCLOCK_NAME("hv", 50, 40);
