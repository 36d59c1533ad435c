// SPDX-License-Identifier: MIT
/*
 * What KVM states about clocks, in the table of stated rates
 * (kernel/time/rates.h): kvmclock's TSC rate (from its mul and shift),
 * and the TSC and APIC bus rates of the timing leaf at base + 0x10.
 * hv_init() fills them; pure, so the host tests see the same table.
 */
#include "hv/kvm.h"
#include "kernel/time/rates.h"

/*
 * Linux's kvm_detect() answers the base it found KVM's block at:
 * 0x40000100 behind Hyper-V's, so that KVM is the platform wherever both
 * are offered. hv_init() sets the base found.
 */
struct rate_platform kvm_platform = { .name = "kvm", .detect = 0x40000100 };

/*
 * After Hyper-V's, as Linux's calibrate_tsc hooks go; with KVM as the
 * platform Linux presets lpj from it (kvm_get_preset_lpj() from
 * kvmclock_init()).
 */
DEFINE_RATE_SOURCE(kvmclock_rate, .name = "kvmclock", .rank = 200,
		   .lpj_flags = RATE_LPJ_HVPROBE | RATE_LPJ_LINUX, .platform = &kvm_platform,
		   .absent = "no KVM leaves",
		   /* kvmclock_init(), kvmclock.c v6.1 to v6.12: calibrate_tsc = kvm_get_tsc_khz */
		   .linux_tsc = true);
/* The timing leaf: a preset under hvprobe's policy only, and no Linux hook reads it. */
DEFINE_RATE_SOURCE(kvm_timing_rate, .name = "kvm", .rank = 300, .lpj_flags = RATE_LPJ_HVPROBE,
		   .platform = &kvm_platform, .absent = "no KVM leaves");
