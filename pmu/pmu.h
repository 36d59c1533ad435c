/* SPDX-License-Identifier: MIT */
/*
 * The counters this CPU has, and one of them armed to overflow into a PMI.
 *
 * Intel architectural perfmon (SDM Vol 3B "Architectural Performance
 * Monitoring", CPUID 0AH) and AMD's legacy, core-extension and PerfMonV2
 * counters (APM Vol 2 "Performance Monitoring Counters") are described by
 * one struct pmu_info: where the event-select and counter MSRs are, how
 * wide the counters are, whether overflow has a status register, and the
 * event encodings for instructions retired and core cycles. The pure
 * arithmetic (pmu_math.c) builds on the host and is unit-tested there.
 */
#ifndef PMU_PMU_H
#define PMU_PMU_H

#include "kernel/lib/types.h"

/* Intel (SDM Vol 4 Table 2-2; full-width aliases SDM Vol 3B 21.2.6) */
#define MSR_IA32_PMC0 0x000000c1
#define MSR_IA32_PERFEVTSEL0 0x00000186
#define MSR_IA32_PERF_CAPABILITIES 0x00000345
#define  PERF_CAP_FW_WRITE BIT(13)
#define MSR_IA32_FIXED_CTR0 0x00000309
#define MSR_IA32_FIXED_CTR_CTRL 0x0000038d
#define MSR_IA32_PERF_GLOBAL_STATUS 0x0000038e
#define MSR_IA32_PERF_GLOBAL_CTRL 0x0000038f
/* GLOBAL_OVF_CTRL in v2-v3, GLOBAL_STATUS_RESET in v4+: write 1 to clear. */
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x00000390
#define MSR_IA32_A_PMC0 0x000004c1
#define PERF_GLOBAL_FIXED_SHIFT 32

/* AMD (APM Vol 2 13.2; PerfMonV2 APM Vol 2 13.2.2) */
#define MSR_K7_EVNTSEL0 0xc0010000
#define MSR_K7_PERFCTR0 0xc0010004
#define MSR_F15H_PERF_CTL0 0xc0010200 /* CTLn = base + 2n, CTRn = base + 2n + 1 */
#define MSR_AMD_PERF_CNTR_GLOBAL_STATUS 0xc0000300
#define MSR_AMD_PERF_CNTR_GLOBAL_CTL 0xc0000301
#define MSR_AMD_PERF_CNTR_GLOBAL_STATUS_CLR 0xc0000302

#define AMD_LEGACY_COUNTERS 4
#define AMD_CORE_COUNTERS 6
#define AMD_COUNTER_WIDTH 48

/* Event-select bits shared by both vendors (SDM Vol 3B 21.2.1.1, APM Vol 2 13.2.1) */
#define EVTSEL_USR BIT(16)
#define EVTSEL_OS BIT(17)
#define EVTSEL_INT BIT(20)
#define EVTSEL_EN BIT(22)

/* SDM Vol 3B Table 21-1: an EBX bit set means the event is NOT available. */
#define ARCH_EVENT_CORE_CYCLES 0
#define ARCH_EVENT_INSTRUCTIONS 1

#define PMU_MAX_COUNTERS 32

enum pmu_vendor { PMU_NONE, PMU_INTEL, PMU_AMD };

struct pmu_event {
	const char *name;
	u16 event; /* 12 bits on AMD */
	u8 umask;
};

struct pmu_info {
	enum pmu_vendor vendor;
	u32 version;	    /* Intel CPUID.0AH:EAX[7:0]; AMD: 2 with PerfMonV2, 1 with the core extension, 0 legacy */
	u32 gp_counters;
	u32 gp_width;
	u32 fixed_counters;
	u32 fixed_width;
	u32 events_unavailable; /* Intel EBX, with bits past the vector length set */
	bool full_width_writes; /* IA32_A_PMCx takes all bits */
	bool global_ctrl;	/* Intel v2+ or AMD PerfMonV2 */
	u32 evtsel_base, counter_base, msr_stride;
	struct pmu_event instructions, cycles;
	struct pmu_event event; /* what the stress counts: instructions, else cycles */
	char why[160]; /* what is missing when vendor is PMU_NONE */
};

/* Raw CPUID.0AH and the one capability bit that matters. */
struct pmu_intel_cpuid {
	u32 eax, ebx, ecx, edx;
	bool fw_write;
};

/* Decode CPUID 0AH; false (with why) when there is no usable counter. */
bool pmu_decode_intel(const struct pmu_intel_cpuid *c, struct pmu_info *p);
/* AMD: legacy four, core extension six, PerfMonV2's count when stated. */
void pmu_decode_amd(bool core_ext, bool perfmon_v2, u32 v2_counters, struct pmu_info *p);

/* "Intel architectural PMU v2", "AMD legacy PMU (CPUID 0x80000001:ECX[23]=0)", ... */
void pmu_describe(const struct pmu_info *p, char *buf, size_t size);

static inline u64 pmu_width_mask(u32 width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

/*
 * The value that makes a width-bit counter overflow after period events:
 * 2^width - period. Through the legacy IA32_PMCx only bits 31:0 are written
 * and bit 31 is sign-extended (SDM Vol 3B 21.2.2; KVM emulates it as
 * (s64)(s32)data), which yields the same value for period <= 2^31.
 * False when period cannot be armed that way.
 */
bool pmu_arm_value(u64 period, u32 width, bool full_width, u64 *value);
/* What a legacy 32-bit write of v leaves in a width-bit counter. */
u64 pmu_legacy_write_result(u32 v, u32 width);
/* The event-select value for ev, counting in both rings, with INT if asked. */
u64 pmu_evtsel(enum pmu_vendor vendor, struct pmu_event ev, bool interrupt);
/*
 * Without a status register, an armed counter (top bit set) has overflowed
 * once its top bit is clear (Linux's AMD handler uses the same test).
 */
bool pmu_counter_overflowed(u64 value, u32 width);
/* Events counted since the wrap: the skid, read in the handler. */
u64 pmu_skid(u64 value, u32 width);

extern struct pmu_info pmu;

struct json;

/* The PMU as CPUID described it and the probe found it; vendor "none" without one. */
void pmu_json(struct json *j);

/* Fill pmu from CPUID on this CPU (the BSP); every CPU has the same. */
void pmu_discover(void);
/*
 * Check the counter really counts: a hypervisor that offers no PMU may
 * still answer the MSRs (TCG reads 0), so arm, work, and read back.
 * False with why set when it does not.
 */
bool pmu_probe_counts(void);

/*
 * On this CPU: counter 0 armed to overflow after period events with INT
 * set, counter 1 (where there is one) counting the same event freely as a
 * reference, global control programmed explicitly (KVM since 6.9 sets the
 * enables at RESET; a guest must not rely on either value).
 */
void pmu_arm(u64 period);
/* Stop counting, leaving status for in-flight PMIs to find. */
void pmu_disable(void);
/* After pmu_disable: the overflows nobody serviced; then clear everything. */
u32 pmu_stop(void);
/* Counter reads: 0 is the interrupting one, 1 the reference. */
u64 pmu_read(u32 counter);
bool pmu_has_reference(void);
/*
 * From the NMI (or PMI vector) handler: service every overflow status bit
 * (KVM merges several overflows into one PMI), re-arming counter 0 and
 * putting global control back as it was. Returns the bits serviced, 0 if
 * the PMU did not cause this interrupt; the counter's value on entry goes
 * to *skid.
 */
u32 pmu_service(u64 *skid);

#endif
