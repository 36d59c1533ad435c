/* SPDX-License-Identifier: MIT */
/*
 * Hyper-V as a guest sees it (Hypervisor TLFS, "Feature and Interface
 * Discovery", "Partition Reference Counter", "Partition Reference TSC
 * Mechanism", "Reporting the Guest OS Identity"). Leaf numbers are offsets
 * from the block's base, normally 0x40000000. An MSR is read only when the
 * privilege that grants it is set; reads still go through rdmsr_safe().
 */
#ifndef HV_HYPERV_H
#define HV_HYPERV_H

#include "kernel/lib/types.h"

/* CPUID leaves, as offsets from the Hyper-V block's base */
/* clang-format off */
#define HV_CPUID_VENDOR_AND_MAX 0x0
#define HV_CPUID_INTERFACE 0x1
#define  HV_INTERFACE_HV1 0x31237648 /* "Hv#1" */
#define HV_CPUID_VERSION 0x2
#define HV_CPUID_FEATURES 0x3
/* EAX: partition privileges, low half */
#define  HV_MSR_TIME_REF_COUNT_AVAILABLE BIT(1)
#define  HV_MSR_HYPERCALL_AVAILABLE BIT(5)
#define  HV_MSR_VP_INDEX_AVAILABLE BIT(6)
#define  HV_MSR_REFERENCE_TSC_AVAILABLE BIT(9)
#define  HV_ACCESS_FREQUENCY_MSRS BIT(11)
#define  HV_ACCESS_TSC_INVARIANT BIT(15)
/* EDX: feature flags */
#define  HV_FEATURE_FREQUENCY_MSRS_AVAILABLE BIT(8)
#define  HV_STIMER_DIRECT_MODE_AVAILABLE BIT(19)
#define HV_CPUID_ENLIGHTENMENT_INFO 0x4
#define HV_CPUID_IMPLEMENT_LIMITS 0x5
#define HV_CPUID_HARDWARE_FEATURES 0x6
/* clang-format on */

/* clang-format off */
#define HV_X64_MSR_GUEST_OS_ID 0x40000000
/* TLFS "Guest OS Identity MSR for Open Source Operating Systems" */
#define  HV_GUEST_OS_ID_OPEN_SOURCE BIT(63)
#define  HV_GUEST_OS_ID_OS_TYPE GENMASK(62, 56) /* allocated by Microsoft */
#define  HV_GUEST_OS_ID_OS_ID GENMASK(55, 48) /* vendor's own information */
#define  HV_GUEST_OS_ID_VERSION GENMASK(47, 16) /* upstream version */
#define  HV_GUEST_OS_ID_BUILD GENMASK(15, 0)
#define HV_X64_MSR_TIME_REF_COUNT 0x40000020
#define HV_X64_MSR_REFERENCE_TSC 0x40000021
#define  HV_REFERENCE_TSC_ENABLE BIT(0)
#define  HV_REFERENCE_TSC_RSVDP GENMASK(11, 1) /* preserved on writes */
#define  HV_REFERENCE_TSC_GPA GENMASK(63, 12)
#define HV_X64_MSR_TSC_FREQUENCY 0x40000022
#define HV_X64_MSR_APIC_FREQUENCY 0x40000023
/* TLFS: with HV_ACCESS_TSC_INVARIANT, exposes CPUID.80000007H:EDX[8] */
#define HV_X64_MSR_TSC_INVARIANT_CONTROL 0x40000118
#define  HV_EXPOSE_INVARIANT_TSC BIT(0)
/* clang-format on */

/* The reference counter ticks in 100 ns units: 10 MHz. */
#define HV_REF_COUNT_HZ 10000000ULL

/* TLFS "Partition Reference TSC Mechanism" page layout */
struct hv_tsc_page {
	volatile u32 sequence; /* 0: invalid, use the MSR */
	u32 reserved1;
	volatile u64 scale;
	volatile s64 offset;
} __attribute__((packed));

struct hyperv_state {
	bool present;
	u32 base;
	u32 max_leaf;
	u32 interface;
	u32 build, version, service_pack, service_branch;
	u32 privileges_low, privileges_high, misc, features;
	u32 hints;
	u32 max_vps, max_lps;
	u32 hw_features;
	bool guest_os_id_set;
	/* From the frequency MSRs when EAX[11] and EDX[8] grant them, else 0. */
	u64 tsc_hz, apic_hz;
	bool ref_counter; /* EAX[1]: HV_X64_MSR_TIME_REF_COUNT readable */
	bool tsc_page;	  /* EAX[9] and the page enabled */
	u64 tsc_page_phys;
	u64 tsc_page_scale;
	s64 tsc_page_offset;
	u64 tsc_hz_from_page; /* derived from the page's scale: a cross-check */
	char problems[192];
};

extern struct hyperv_state hyperv;

/*
 * Write HV_X64_MSR_TSC_INVARIANT_CONTROL to expose the invariant TSC, as
 * Linux's ms_hyperv_init_platform() does; false without the privilege or
 * when the write faults.
 */
bool hyperv_expose_invariant_tsc(void);
/*
 * Its stated rates (hv/hyperv_rates.c), and what the platform code's TSC
 * step needs: the privilege and the write.
 */
struct hyperv_tsc_control {
	bool access; /* HV_ACCESS_TSC_INVARIANT */
	bool (*expose)(void);
};
extern struct hyperv_tsc_control hyperv_tsc_control;
extern struct rate_platform hyperv_platform;
extern struct rate_offer hyperv_rate;
/* Partition reference time in 100 ns units: the TSC page, else the MSR. */
u64 hyperv_ref_time(void);

/* Pure arithmetic, shared with the host tests (hv/hyperv_math.c). */
/* ((tsc * scale) >> 64) + offset, with the full 128-bit product. */
u64 hv_tsc_page_time(u64 tsc, u64 scale, s64 offset);
/* TSC Hz from the page's scale: 10^7 * 2^64 / scale, 0 for scale 0. */
u64 hv_tsc_hz_from_scale(u64 scale);
/* hvprobe's identity in the TLFS's recommended layout for open source. */
u64 hv_guest_os_id(void);

#endif
