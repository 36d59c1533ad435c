// SPDX-License-Identifier: MIT
/*
 * The PMU arithmetic that no PMU under TCG can check: CPUID 0AH decoding
 * (the event bitmap's inverted sense and its length), the AMD layouts,
 * arming values for legacy 32-bit (bit 31 sign-extended), full-width and
 * 48-bit AMD counters, event-select encodings, and overflow and skid
 * detection without a status register.
 */
#include <string.h>

#include "kernel/test/test.h"
#include "pmu/pmu.h"

/* A KVM-like Intel vPMU: v2, 8 GP counters of 48 bits, 3 fixed of 48 bits. */
static const struct pmu_intel_cpuid kvm_intel = {
	.eax = 0x07300802, /* EBX length 7, width 48, 8 counters, v2 */
	.ebx = 0,
	.edx = 0x0603, /* 3 fixed counters, 48 bits */
	.fw_write = true,
};

DEFINE_TEST(unit_pmu_intel, "CPUID 0AH decodes as the SDM describes", 0)
{
	struct pmu_intel_cpuid c = kvm_intel;
	struct pmu_info p;

	report(pmu_decode_intel(&c, &p), "a v2 PMU is usable");
	report_eq(p.version, 2, "version");
	report_eq(p.gp_counters, 8, "GP counters");
	report_eq(p.gp_width, 48, "GP width");
	report_eq(p.fixed_counters, 3, "fixed counters");
	report_eq(p.fixed_width, 48, "fixed width");
	report(p.global_ctrl, "v2 has global control");
	report_eq(p.counter_base, MSR_IA32_PMC0, "FW_WRITE: counters through IA32_A_PMCx");
	report_eq(p.evtsel_base, MSR_IA32_PERFEVTSEL0, "event selects at 0x186");
	report_str_eq(p.event.name, "instructions", "instructions retired when available");
	report_eq(p.events_unavailable, ~0u << 7, "bits past the 7-bit vector are unavailable");

	report(MSR_IA32_PERFCTR0 == 0xc1 && MSR_IA32_PMC0 == 0x4c1,
	       "Linux's names: MSR_IA32_PERFCTR0 is 0xc1, MSR_IA32_PMC0 the full-width 0x4c1");
	c.fw_write = false;
	pmu_decode_intel(&c, &p);
	report_eq(p.counter_base, MSR_IA32_PERFCTR0, "no FW_WRITE: legacy IA32_PMCx");
	report(!p.full_width_writes, "and no full-width writes");

	/* EBX bit 1 set: instructions retired NOT available (inverted sense). */
	c.ebx = BIT(ARCH_EVENT_INSTRUCTIONS);
	report(pmu_decode_intel(&c, &p), "usable without instructions retired");
	report_str_eq(p.event.name, "cycles", "falls back to core cycles");
	c.ebx = BIT(ARCH_EVENT_INSTRUCTIONS) | BIT(ARCH_EVENT_CORE_CYCLES);
	report(!pmu_decode_intel(&c, &p) && p.vendor == PMU_NONE, "neither event: no PMU");
	report(strstr(p.why, "neither") != NULL, "and says so: %s", p.why);

	/* A vector of length 1 hides the instructions event whatever EBX says. */
	c = kvm_intel;
	c.eax = (c.eax & 0x00ffffff) | 1u << 24;
	pmu_decode_intel(&c, &p);
	report_str_eq(p.event.name, "cycles", "EBX length 1: only core cycles exists");

	c = kvm_intel;
	c.eax = 0x07300801;
	pmu_decode_intel(&c, &p);
	report_eq(p.fixed_counters, 0, "v1: EDX is not read (no fixed counters)");
	report(!p.global_ctrl, "v1: no global control");

	c = (struct pmu_intel_cpuid){ 0 };
	report(!pmu_decode_intel(&c, &p) && p.vendor == PMU_NONE, "TCG's zero leaf: no PMU");
	report_str_eq(p.why, "no architectural PMU (CPUID.0AH:EAX[7:0]=0)", "the SKIP reason");

	c = kvm_intel;
	c.eax &= ~0xff00u;
	report(!pmu_decode_intel(&c, &p) && strstr(p.why, "0 GP counters"),
	       "v2 with no GP counters is refused: %s", p.why);
}

DEFINE_TEST(unit_pmu_amd, "AMD legacy, core extension and PerfMonV2", 0)
{
	struct pmu_info p;
	char what[96];

	pmu_decode_amd(false, false, 0, &p);
	report(p.gp_counters == 4 && p.evtsel_base == MSR_K7_EVNTSEL0 &&
		       p.counter_base == MSR_K7_PERFCTR0 && p.msr_stride == 1,
	       "legacy: four counters at 0xc0010000/0xc0010004");
	report(!p.global_ctrl && p.gp_width == 48 && p.full_width_writes,
	       "48 bits, written whole, no global control");
	pmu_describe(&p, what, sizeof(what));
	report(strstr(what, "ECX[23]=0") != NULL, "described: %s", what);

	pmu_decode_amd(true, false, 0, &p);
	report(p.gp_counters == 6 && p.evtsel_base == 0xc0010200 && p.counter_base == 0xc0010201 &&
		       p.msr_stride == 2,
	       "core extension: six interleaved counters at 0xc0010200");
	pmu_decode_amd(true, true, 5, &p);
	report(p.version == 2 && p.global_ctrl && p.gp_counters == 5,
	       "PerfMonV2: global control, the count from CPUID 0x80000022");
	report_str_eq(p.event.name, "instructions", "instructions retired");
	report(p.event.event == 0xc0 && p.cycles.event == 0x76, "0xc0 and 0x76");
}

DEFINE_TEST(unit_pmu_arm, "arming values for every width and write kind", 0)
{
	u64 v = 0;

	report(pmu_arm_value(10000, 48, true, &v) && v == 0xffffffffd8f0ULL,
	       "full width, 48 bits: 2^48 - 10000 = 0x%llx", v);
	report(pmu_arm_value(10000, 48, false, &v) && pmu_legacy_write_result((u32)v, 48) == v,
	       "legacy write of bits 31:0 sign-extends to the same value");
	report(pmu_arm_value(1ULL << 31, 48, false, &v) && pmu_legacy_write_result((u32)v, 48) == v,
	       "legacy: 2^31 is the largest period that survives the sign extension");
	report(!pmu_arm_value((1ULL << 31) + 1, 48, false, &v),
	       "legacy: 2^31 + 1 is refused (bit 31 would be clear)");
	report(pmu_arm_value((1ULL << 31) + 1, 48, true, &v) && v == 0xffff7fffffffULL,
	       "full width takes it");
	report_eq(pmu_legacy_write_result(0x7fffffff, 48), 0x7fffffff,
		  "a legacy write with bit 31 clear is not extended");
	report_eq(pmu_legacy_write_result(0x80000000, 40), 0xff80000000ULL,
		  "a legacy write with bit 31 set fills the upper bits, to the width");
	report(pmu_arm_value(1ULL << 47, 48, true, &v) &&
		       !pmu_arm_value((1ULL << 47) + 1, 48, true, &v),
	       "48 bits: 2^47 is the largest period with the top bit set");
	report(pmu_arm_value(1, 64, true, &v) && v == ~0ULL, "64 bits: period 1 is all ones");
	report(!pmu_arm_value(0, 48, true, &v), "period 0 is refused");
	report(!pmu_arm_value(10, 16, true, &v), "a 16-bit counter is refused");
}

DEFINE_TEST(unit_pmu_evtsel, "event selects and overflow detection", 0)
{
	struct pmu_event insn = { "instructions", 0xc0, 0 }, wide = { "wide", 0x1c0, 0x12 };
	u64 armed = 0;

	report_eq(pmu_evtsel(PMU_INTEL, insn, true), 0x5300c0, "Intel INT|EN|OS|USR|0xc0");
	report_eq(pmu_evtsel(PMU_INTEL, insn, false), 0x4300c0, "without INT");
	report_eq(pmu_evtsel(PMU_AMD, wide, true), 0x1005312c0ULL,
		  "AMD event bits 11:8 go to 35:32, umask to 15:8");
	report_eq(pmu_evtsel(PMU_INTEL, wide, false), 0x4312c0,
		  "Intel has no bits 35:32: the high nibble is dropped");

	pmu_arm_value(10000, 48, true, &armed);
	report(!pmu_counter_overflowed(armed, 48), "an armed counter has not overflowed");
	report(!pmu_counter_overflowed(pmu_width_mask(48), 48), "nor one event before the wrap");
	report(pmu_counter_overflowed(0, 48), "0 is the wrap");
	report_eq(pmu_skid(37, 48), 37, "37 events after the wrap: skid 37");
	report_eq(pmu_skid(armed + 5, 48), 0, "no skid before the wrap");
}
