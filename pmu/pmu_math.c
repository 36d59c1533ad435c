// SPDX-License-Identifier: MIT
/* Counter description and arithmetic, free of MSR access; see pmu.h. */
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/x86/cpuid.h"
#include "pmu/pmu.h"

/* SDM Vol 3B Table 21-1, the pre-defined architectural events' encodings */
static const struct pmu_event intel_instructions = { "instructions", 0xc0, 0x00 };
static const struct pmu_event intel_cycles = { "cycles", 0x3c, 0x00 };
/* AMD PPR "Retired Instructions" and Linux's amd_perfmon_event_map cycles */
static const struct pmu_event amd_instructions = { "instructions", 0xc0, 0x00 };
static const struct pmu_event amd_cycles = { "cycles", 0x76, 0x00 };

bool pmu_decode_intel(const struct pmu_intel_cpuid *c, struct pmu_info *p)
{
	const struct cpuid_regs r = { c->eax, c->ebx, c->ecx, c->edx };
	u32 ebx_length = cpu_property_in(X86_PROPERTY_PMU_EBX_BIT_VECTOR_LENGTH, &r);

	*p = (struct pmu_info){ .vendor = PMU_INTEL };
	p->version = cpu_property_in(X86_PROPERTY_PMU_VERSION, &r);
	p->gp_counters = cpu_property_in(X86_PROPERTY_PMU_NR_GP_COUNTERS, &r);
	p->gp_width = cpu_property_in(X86_PROPERTY_PMU_GP_COUNTERS_BIT_WIDTH, &r);
	/* Bits at or past the vector length describe events that do not exist. */
	p->events_unavailable = cpu_property_in(X86_PROPERTY_PMU_EVENTS_MASK, &r) |
				(ebx_length >= 32 ? 0 : ~0u << ebx_length);
	if (p->version >= 2) {
		p->fixed_counters = cpu_property_in(X86_PROPERTY_PMU_NR_FIXED_COUNTERS, &r);
		p->fixed_width = cpu_property_in(X86_PROPERTY_PMU_FIXED_COUNTERS_BIT_WIDTH, &r);
	}
	p->global_ctrl = p->version >= 2;
	p->full_width_writes = c->fw_write;
	p->evtsel_base = MSR_IA32_PERFEVTSEL0;
	p->counter_base = c->fw_write ? MSR_IA32_PMC0 : MSR_IA32_PERFCTR0;
	p->msr_stride = 1;
	p->instructions = intel_instructions;
	p->cycles = intel_cycles;
	p->event = intel_instructions;

	if (!p->version) {
		snprintf(p->why, sizeof(p->why), "no architectural PMU (CPUID.0AH:EAX[7:0]=0)");
		p->vendor = PMU_NONE;
		return false;
	}
	if (!p->gp_counters || p->gp_width < 32 || p->gp_width > 64) {
		snprintf(p->why, sizeof(p->why),
			 "architectural PMU v%u without a usable counter (%u GP counters, %u bits)",
			 p->version, p->gp_counters, p->gp_width);
		p->vendor = PMU_NONE;
		return false;
	}
	if (p->gp_counters > PMU_MAX_COUNTERS)
		p->gp_counters = PMU_MAX_COUNTERS;
	if (p->events_unavailable & BIT(ARCH_EVENT_INSTRUCTIONS)) {
		if (p->events_unavailable & BIT(ARCH_EVENT_CORE_CYCLES)) {
			snprintf(p->why, sizeof(p->why),
				 "architectural PMU v%u offers neither instructions retired nor "
				 "core "
				 "cycles (CPUID.0AH:EBX=0x%x)",
				 p->version, c->ebx);
			p->vendor = PMU_NONE;
			return false;
		}
		p->event = intel_cycles;
	}
	return true;
}

void pmu_decode_amd(bool core_ext, bool perfmon_v2, u32 v2_counters, struct pmu_info *p)
{
	*p = (struct pmu_info){ .vendor = PMU_AMD, .gp_width = AMD_COUNTER_WIDTH };
	p->instructions = amd_instructions;
	p->cycles = amd_cycles;
	p->event = amd_instructions;
	if (core_ext) {
		p->version = 1;
		p->gp_counters = AMD_CORE_COUNTERS;
		p->evtsel_base = MSR_F15H_PERF_CTL0;
		p->counter_base = MSR_F15H_PERF_CTL0 + 1;
		p->msr_stride = 2;
	} else {
		p->gp_counters = AMD_LEGACY_COUNTERS;
		p->evtsel_base = MSR_K7_EVNTSEL0;
		p->counter_base = MSR_K7_PERFCTR0;
		p->msr_stride = 1;
	}
	if (perfmon_v2) {
		p->version = 2;
		p->global_ctrl = true;
		if (v2_counters)
			p->gp_counters = MIN(v2_counters, (u32)PMU_MAX_COUNTERS);
	}
	/* AMD counters take all 48 bits on a plain write. */
	p->full_width_writes = true;
}

void pmu_describe(const struct pmu_info *p, char *buf, size_t size)
{
	if (p->vendor == PMU_INTEL)
		snprintf(buf, size, "Intel architectural PMU v%u", p->version);
	else if (p->vendor == PMU_AMD && p->version == 2)
		snprintf(buf, size, "AMD PerfMonV2 PMU");
	else if (p->vendor == PMU_AMD && p->version == 1)
		snprintf(buf, size, "AMD core PMU");
	else if (p->vendor == PMU_AMD)
		snprintf(buf, size,
			 "AMD legacy PMU, no core counters (CPUID 0x80000001:ECX[23]=0)");
	else
		snprintf(buf, size, "no PMU");
}

bool pmu_arm_value(u64 period, u32 width, bool full_width, u64 *value)
{
	u64 mask = pmu_width_mask(width);

	if (!period || width < 32 || width > 64)
		return false;
	/* The armed value must have its top bit set, or overflow is undetectable. */
	if (width < 64 && period > (1ULL << (width - 1)))
		return false;
	if (!full_width && period > (1ULL << 31))
		return false;
	*value = (0 - period) & mask;
	return true;
}

u64 pmu_legacy_write_result(u32 v, u32 width)
{
	return (u64)(s64)(s32)v & pmu_width_mask(width);
}

u64 pmu_evtsel(enum pmu_vendor vendor, struct pmu_event ev, bool interrupt)
{
	u64 v = (ev.event & 0xff) | (u64)ev.umask << 8 | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN;

	/* APM Vol 2 13.2.1: EventSelect[11:8] lives in bits 35:32. */
	if (vendor == PMU_AMD)
		v |= (u64)((ev.event >> 8) & 0xf) << 32;
	if (interrupt)
		v |= EVTSEL_INT;
	return v;
}

bool pmu_counter_overflowed(u64 value, u32 width)
{
	return !(value & (1ULL << (width - 1)));
}

u64 pmu_skid(u64 value, u32 width)
{
	return pmu_counter_overflowed(value, width) ? value & pmu_width_mask(width) : 0;
}

u64 pmu_prime_at_least(u64 n, u64 limit)
{
	for (; n <= limit; n++) {
		bool prime = n >= 2;

		for (u64 d = 2; prime && d * d <= n; d++)
			prime = n % d;
		if (prime)
			return n;
	}
	return 0;
}

/* SDM Vol 3B 21.2.2 IA32_FIXED_CTR_CTRL: 4 bits per counter, OS, USR, -, PMI. */
#define FIXED_CTRL_OS BIT(0)
#define FIXED_CTRL_USR BIT(1)
#define FIXED_CTRL_PMI BIT(3)
#define FIXED_CTRL_BITS_PER_COUNTER 4

u64 pmu_fixed_ctrl(u32 i, bool interrupt)
{
	u64 field = FIXED_CTRL_OS | FIXED_CTRL_USR | (interrupt ? FIXED_CTRL_PMI : 0);

	return field << (i * FIXED_CTRL_BITS_PER_COUNTER);
}

/* SDM Vol 3B 21.2.2: fixed counter 0 counts instructions, 1 core cycles, 2 reference cycles. */
static const struct pmu_event fixed_events[] = {
	{ "instructions", 0, 0 },
	{ "cycles", 0, 0 },
	{ "ref-cycles", 0, 0 },
};

#define GLOBAL_FIXED_SHIFT 32

static bool add(struct pmu_plan *plan, struct pmu_counter c, u64 *next, u64 limit, bool full_width,
		char *why, size_t whylen)
{
	c.period = pmu_prime_at_least(*next, limit);
	if (!c.period || !pmu_arm_value(c.period, c.width, full_width, &c.armed_value)) {
		snprintf(why, whylen, "no period from %llu up fits a %u-bit %s counter", *next,
			 c.width, c.fixed ? "fixed" : "GP");
		return false;
	}
	*next = c.period + 1;
	plan->armed[plan->narmed++] = c;
	return true;
}

bool pmu_plan(const struct pmu_info *p, u64 period, u32 counters, struct pmu_plan *plan, char *why,
	      size_t whylen)
{
	u32 most = MIN(counters, (u32)PMU_ARMED_MAX);

	/* Legacy writes reach 2^31 at most; a counter's top bit must be set when armed. */
	u64 limit = p->full_width_writes ? 1ULL << (p->gp_width - 1) : 1ULL << 31, next = period;
	u32 gp = p->gp_counters >= 2 ? p->gp_counters - 1 : p->gp_counters;

	*plan = (struct pmu_plan){ .has_reference = p->gp_counters >= 2 };
	plan->reference = plan->has_reference ? p->gp_counters - 1 : 0;
	if (!period) {
		snprintf(why, whylen, "a period of 0 never overflows");
		return false;
	}
	for (u32 i = 0; i < MIN(gp, (u32)PMU_MAX_ARMED_GP) && plan->narmed < most; i++) {
		struct pmu_counter c = { .index = i,
					 .width = p->gp_width,
					 .status_bit = i,
					 .event = p->event,
					 .counts_instructions =
						 p->event.event == p->instructions.event };

		if (!add(plan, c, &next, limit, p->full_width_writes, why, whylen))
			return false;
	}
	/* Fixed counters are written at full width (SDM Vol 3B 21.2.2). */
	for (u32 i = 0;
	     i < p->fixed_counters && i < ARRAY_SIZE(fixed_events) && plan->narmed < most; i++) {
		struct pmu_counter c = { .fixed = true,
					 .index = i,
					 .width = p->fixed_width,
					 .status_bit = GLOBAL_FIXED_SHIFT + i,
					 .event = fixed_events[i],
					 .counts_instructions = i == 0 };

		if (!add(plan, c, &next, 1ULL << (p->fixed_width - 1), true, why, whylen))
			return false;
	}
	return true;
}
