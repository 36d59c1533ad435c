/* SPDX-License-Identifier: MIT */
/*
 * KVM's paravirtual interfaces (Linux Documentation/virt/kvm/x86/cpuid.rst
 * and msr.rst): the feature leaf, the timing leaf QEMU adds at base+0x10
 * (VMware's convention), and kvmclock. Leaf numbers are offsets from the
 * KVM block's base (0x40000000, or 0x40000100 behind Hyper-V's).
 */
#ifndef HV_KVM_H
#define HV_KVM_H

#include "kernel/lib/types.h"

/* clang-format off */
#define KVM_CPUID_SIGNATURE 0x0
#define KVM_CPUID_FEATURES 0x1
/* EAX feature bits */
#define  KVM_FEATURE_CLOCKSOURCE 0
#define  KVM_FEATURE_CLOCKSOURCE2 3
#define  KVM_FEATURE_CLOCKSOURCE_STABLE_BIT 24
#define KVM_CPUID_TIMING 0x10 /* EAX TSC kHz, EBX APIC bus kHz */
/* clang-format on */

/* msr.rst: the legacy pair of KVM_FEATURE_CLOCKSOURCE, same layout */
/* clang-format off */
#define MSR_KVM_WALL_CLOCK 0x11
#define MSR_KVM_SYSTEM_TIME 0x12
#define MSR_KVM_WALL_CLOCK_NEW 0x4b564d00
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01
#define  KVM_SYSTEM_TIME_ENABLE BIT(0)
/* clang-format on */

/* msr.rst "MSR_KVM_SYSTEM_TIME": 32 bytes, version odd while updating */
struct pvclock_vcpu_time_info {
	volatile u32 version;
	u32 pad0;
	volatile u64 tsc_timestamp;
	volatile u64 system_time;
	volatile u32 tsc_to_system_mul;
	volatile s8 tsc_shift;
	volatile u8 flags;
	u8 pad[2];
} __attribute__((packed));

#define PVCLOCK_TSC_STABLE_BIT BIT(0)

struct kvm_state {
	bool present;
	u32 base;
	u32 max_leaf;
	u32 features;
	u32 hints;
	bool timing_leaf; /* max_leaf reaches base + KVM_CPUID_TIMING */
	u32 timing_tsc_khz, timing_apic_khz;
	bool kvmclock;	      /* CLOCKSOURCE2 or CLOCKSOURCE, enabled on the BSP */
	u64 kvmclock_tsc_khz; /* from mul and shift */
	u8 kvmclock_flags;
	char problems[192];
};

extern struct kvm_state kvm;

/* Its stated rates (hv/kvm_rates.c). */
extern struct rate_platform kvm_platform;
extern struct rate_offer kvmclock_rate, kvm_timing_rate;
/* kvmclock nanoseconds on the BSP, under the version protocol. */
u64 kvm_clock_ns(void);

/* Pure arithmetic, shared with the host tests (hv/pvclock.c). */
/*
 * The system-time MSR kvmclock is enabled through, as Linux's
 * kvmclock_init() chooses it from the features: the new one with
 * CLOCKSOURCE2, else the legacy one with CLOCKSOURCE, else 0 (none).
 */
u32 kvm_system_time_msr(u32 features);
/* Linux pvclock_tsc_khz(): (10^6 << 32) / mul, then shifted by -shift. */
u64 pvclock_tsc_khz(u32 mul, s8 shift);
/* ((delta shifted by shift) * mul) >> 32: nanoseconds for delta TSC cycles. */
u64 pvclock_scale_delta(u64 delta, u32 mul, s8 shift);

#endif
