// SPDX-License-Identifier: MIT
/*
 * timer=, hz=, lpj=, lpj_source=, calibrate=, lpj_reuse= and lpj_policy=: see README,
 * "Kernel command line".
 */
#include "kernel/time/options.h"
#include "kernel/lib/option.h"

struct time_options time_options;

const char *const timer_names[] = {
	[TIMER_AUTO] = "auto",	 [TIMER_PIT] = "pit",	[TIMER_HPET] = "hpet",
	[TIMER_PMTMR] = "pmtmr", [TIMER_APIC] = "apic", [TIMER_HV] = "hv",
};
_Static_assert(ARRAY_SIZE(timer_names) == TIMER_COUNT, "timer_names");

const char *const lpj_source_names[] = {
	[LPJ_SOURCE_AUTO] = "auto",
	[LPJ_SOURCE_HYPERV] = "hyperv",
	[LPJ_SOURCE_KVM] = "kvm",
	[LPJ_SOURCE_KVMCLOCK] = "kvmclock",
	[LPJ_SOURCE_CPUID] = "cpuid",
	[LPJ_SOURCE_CMDLINE] = "cmdline",
	[LPJ_SOURCE_CALIBRATE] = "calibrate",
};
_Static_assert(ARRAY_SIZE(lpj_source_names) == LPJ_SOURCE_COUNT, "lpj_source_names");

const char *const calibrate_names[] = {
	[CALIBRATE_LINUX] = "linux",
	[CALIBRATE_FAST] = "fast",
};
_Static_assert(ARRAY_SIZE(calibrate_names) == CALIBRATE_COUNT, "calibrate_names");

const char *const lpj_reuse_names[] = {
	[LPJ_REUSE_NODE] = "node",
	[LPJ_REUSE_PACKAGE] = "package",
	[LPJ_REUSE_NONE] = "none",
};
_Static_assert(ARRAY_SIZE(lpj_reuse_names) == LPJ_REUSE_COUNT, "lpj_reuse_names");

const char *const lpj_policy_names[] = {
	[LPJ_POLICY_HVPROBE] = "hvprobe",
	[LPJ_POLICY_LINUX_6_1] = "linux-6.1",
	[LPJ_POLICY_LINUX_6_5] = "linux-6.5",
	[LPJ_POLICY_HV_PRESET] = "hv-preset",
};
_Static_assert(ARRAY_SIZE(lpj_policy_names) == LPJ_POLICY_COUNT, "lpj_policy_names");

DEFINE_OPTION_ENUM("timer", time_options.timer, timer_names, TIMER_AUTO);
/* Debian's CONFIG_HZ. */
DEFINE_OPTION_U64("hz", time_options.hz, 10, 10000, 250);
DEFINE_OPTION_U64("lpj", time_options.lpj, 0, UINT64_MAX, 0);
DEFINE_OPTION_ENUM("lpj_source", time_options.lpj_source, lpj_source_names, LPJ_SOURCE_AUTO);
DEFINE_OPTION_ENUM("calibrate", time_options.calibrate, calibrate_names, CALIBRATE_LINUX);
DEFINE_OPTION_ENUM("lpj_reuse", time_options.lpj_reuse, lpj_reuse_names, LPJ_REUSE_NODE);
DEFINE_OPTION_ENUM("lpj_policy", time_options.lpj_policy, lpj_policy_names, LPJ_POLICY_HVPROBE);
