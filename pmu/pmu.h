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

/*
 * Intel (SDM Vol 4 Table 2-2; full-width aliases SDM Vol 3B 21.2.6), named
 * as Linux's msr-index.h names them: IA32_PMC0 at 0xc1 is MSR_IA32_PERFCTR0
 * there, and MSR_IA32_PMC0 is the full-width alias IA32_A_PMC0 at 0x4c1.
 */
/* clang-format off */
#define MSR_IA32_PERFCTR0 0x000000c1
#define MSR_IA32_PERFEVTSEL0 0x00000186
#define MSR_IA32_PERF_CAPABILITIES 0x00000345
#define  PERF_CAP_FW_WRITE BIT(13)
#define MSR_IA32_FIXED_CTR0 0x00000309
#define MSR_IA32_FIXED_CTR_CTRL 0x0000038d
#define MSR_IA32_PERF_GLOBAL_STATUS 0x0000038e
#define MSR_IA32_PERF_GLOBAL_CTRL 0x0000038f
/* GLOBAL_OVF_CTRL in v2-v3, GLOBAL_STATUS_RESET in v4+: write 1 to clear. */
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x00000390
#define MSR_IA32_PMC0 0x000004c1 /* IA32_A_PMC0: all bits written */
#define PERF_GLOBAL_FIXED_SHIFT 32
/* clang-format on */

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
	/* Intel CPUID.0AH:EAX[7:0]; AMD: 2 with PerfMonV2, 1 with the core extension, 0 legacy */
	u32 version;
	u32 gp_counters;
	u32 gp_width;
	u32 fixed_counters;
	u32 fixed_width;
	u32 events_unavailable; /* Intel EBX, with bits past the vector length set */
	bool full_width_writes; /* MSR_IA32_PMC0 (IA32_A_PMCx) takes all bits */
	bool global_ctrl;	/* Intel v2+ or AMD PerfMonV2 */
	u32 evtsel_base, counter_base, msr_stride;
	struct pmu_event instructions, cycles;
	struct pmu_event event; /* what the stress counts: instructions, else cycles */
	char why[160];		/* what is missing when vendor is PMU_NONE */
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
 * The stress arms several counters with INT, each at its own period, so
 * that a status register can hold several bits at once and one PMI can
 * stand for several overflows: every GP counter but the last (which,
 * where there are two or more, counts freely as the reference for how
 * many events really happened) and every fixed counter, up to
 * PMU_ARMED_MAX or pmu.counters=, GP counters first. Periods are distinct primes from pmu.period
 * up: being co-prime, their overflows drift through each other and now and then fall into one
 * handler's window.
 */
#define PMU_ARMED_MAX 7
#define PMU_MAX_ARMED_GP 4

struct pmu_counter {
	bool fixed; /* a fixed counter (Intel v2+), else a GP one */
	u32 index;  /* its number among its kind */
	u32 width;
	u32 status_bit;		  /* GLOBAL_STATUS: n for GP counter n, 32 + i for fixed i */
	struct pmu_event event;	  /* what it counts */
	bool counts_instructions; /* so its overflows can be expected */
	u64 period;
	u64 armed_value; /* 2^width - period */
};

struct pmu_plan {
	struct pmu_counter armed[PMU_ARMED_MAX];
	u32 narmed;
	bool has_reference;
	u32 reference; /* the GP counter counting freely */
	/*
	 * pmu_lean(): one counter asked for (pmu.counters=1) where there is
	 * global control and no NMI IPIs; the stress decides (stress.c).
	 */
	bool lean;
};

/*
 * At most counters of them (GP ones first) to arm, and their periods,
 * from period up; pure. False (with why) when period cannot be armed on
 * these counters.
 */
bool pmu_plan(const struct pmu_info *p, u64 period, u32 counters, struct pmu_plan *plan, char *why,
	      size_t whylen);
/* The first prime at or above n (n >= 2), or 0 above limit. */
u64 pmu_prime_at_least(u64 n, u64 limit);
/* The fixed counter control field for counter i: count in both rings, PMI on overflow. */
u64 pmu_fixed_ctrl(u32 i, bool interrupt);

/*
 * On this CPU: every counter of plan programmed, the reference cleared,
 * status cleared, counting off; global control written explicitly (KVM
 * since 6.9 sets the enables at RESET; a guest must not rely on either
 * value). pmu_enable() then starts them, pmu_disable() stops them.
 */
void pmu_program(const struct pmu_plan *plan);
void pmu_enable(void);
void pmu_disable(void);
/*
 * After pmu_disable(), with the handler disarmed: the overflows nobody
 * serviced, counted; then everything cleared.
 */
u32 pmu_leftover(void);
/*
 * Before pmu_leftover(), on a PMU with a status register: the armed
 * counters (bit k for armed counter k) that wrapped with no status bit,
 * overflows the host lost.
 */
u64 pmu_silent_wraps(void);
/* A counter's value (GP or fixed), masked to its width. */
u64 pmu_read(const struct pmu_counter *c);
/* The free-running reference GP counter's value, 0 without one. */
u64 pmu_read_reference(void);
/*
 * Whether the plan programmed is the lean form (pmu_plan.lean): one armed
 * counter with global control, which the handler services with no pause,
 * status read or status clear (pmu.c).
 */
bool pmu_lean(void);
/*
 * Around servicing: global control off (what pmu_enable() or
 * pmu_disable() last set on this CPU is returned, not read back), and
 * back. Where there is none (AMD legacy and core, Intel v1), and in the
 * lean form, the counters keep counting meanwhile.
 */
u64 pmu_pause(void);
void pmu_resume(u64 ctrl);
/*
 * From the NMI (or PMI vector) handler, between pmu_pause() and
 * pmu_resume(): service every overflow there is (KVM merges several
 * overflows into one PMI), re-arming each counter. Returns the overflows
 * serviced, 0 if the PMU did not cause this interrupt; each armed
 * counter's serviced overflows are added to per_counter, and counter 0's
 * skid (events past its wrap, read here: after the pause and the handler's
 * path to it) goes to *skid.
 */
u32 pmu_service(u64 *per_counter, u64 *skid);
/* Any overflow waiting to be serviced (a status bit, or a wrapped counter). */
bool pmu_pending(void);

#endif
