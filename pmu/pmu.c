// SPDX-License-Identifier: MIT
/*
 * PMU discovery from CPUID and the counter programming the stress needs;
 * see pmu.h. Counter 0 interrupts, counter 1 is the reference that says
 * how many events really happened.
 */
#include "kernel/x86/cpuid.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"
#include "pmu/pmu.h"

/* Instructions the probe runs; any counting PMU sees at least this many. */
#define PROBE_LOOPS 10000

struct pmu_info pmu;
static u64 armed_value;

static u32 evtsel_msr(u32 n)
{
	return pmu.evtsel_base + n * pmu.msr_stride;
}

static u32 counter_msr(u32 n)
{
	return pmu.counter_base + n * pmu.msr_stride;
}

static u32 status_msr(void)
{
	return pmu.vendor == PMU_AMD ? MSR_AMD_PERF_CNTR_GLOBAL_STATUS : MSR_IA32_PERF_GLOBAL_STATUS;
}

static u32 status_clear_msr(void)
{
	return pmu.vendor == PMU_AMD ? MSR_AMD_PERF_CNTR_GLOBAL_STATUS_CLR
				     : MSR_IA32_PERF_GLOBAL_OVF_CTRL;
}

static u32 global_ctrl_msr(void)
{
	return pmu.vendor == PMU_AMD ? MSR_AMD_PERF_CNTR_GLOBAL_CTL : MSR_IA32_PERF_GLOBAL_CTRL;
}

/* The GP counters' bits: writing a reserved status bit #GPs under KVM. */
static u64 gp_bits(void)
{
	return pmu_width_mask(pmu.gp_counters);
}

static u32 bits_set(u64 v)
{
	u32 n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

static bool vendor_amd(void)
{
	return cpu_vendor_is("AuthenticAMD") || cpu_vendor_is("HygonGenuine");
}

void pmu_discover(void)
{
	struct pmu_intel_cpuid c = { 0 };

	if (vendor_amd()) {
		bool v2 = cpu_has(X86_FEATURE_PERFMON_V2);

		pmu_decode_amd(cpu_has(X86_FEATURE_PERFCTR_CORE), v2,
			       v2 ? cpu_property(X86_PROPERTY_NR_PERFCTR_CORE) : 0, &pmu);
		return;
	}
	if (cpuid_max_leaf(0) >= CPUID_LEAF_ARCH_PERFMON) {
		struct cpuid_regs r = cpuid(CPUID_LEAF_ARCH_PERFMON);
		u64 caps = 0;

		c = (struct pmu_intel_cpuid){ r.eax, r.ebx, r.ecx, r.edx, false };
		/* IA32_PERF_CAPABILITIES exists where CPUID.1:ECX[15] PDCM says so. */
		if (cpu_has(X86_FEATURE_PDCM) && !rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &caps))
			c.fw_write = caps & PERF_CAP_FW_WRITE;
	}
	pmu_decode_intel(&c, &pmu);
}

/* Program counter 0 to count freely; the first MSR that faults, or 0. */
static u32 probe_program(void)
{
	if (wrmsr_safe(evtsel_msr(0), 0))
		return evtsel_msr(0);
	if (wrmsr_safe(counter_msr(0), 0))
		return counter_msr(0);
	if (pmu.global_ctrl && wrmsr_safe(global_ctrl_msr(), BIT(0)))
		return global_ctrl_msr();
	if (wrmsr_safe(evtsel_msr(0), pmu_evtsel(pmu.vendor, pmu.event, false)))
		return evtsel_msr(0);
	return 0;
}

bool pmu_probe_counts(void)
{
	u64 before = 0, after = 0;
	char what[96];
	u32 fault;

	if (pmu.vendor == PMU_NONE)
		return false;
	pmu_describe(&pmu, what, sizeof(what));
	fault = probe_program();
	if (fault) {
		snprintf(pmu.why, sizeof(pmu.why), "%s, but writing MSR 0x%x faults", what, fault);
		pmu.vendor = PMU_NONE;
		return false;
	}
	rdmsr_safe(counter_msr(0), &before);
	for (volatile u32 i = 0; i < PROBE_LOOPS; i++)
		;
	rdmsr_safe(counter_msr(0), &after);
	wrmsr_safe(evtsel_msr(0), 0);
	if (pmu.global_ctrl)
		wrmsr_safe(global_ctrl_msr(), 0);
	if (after == before) {
		snprintf(pmu.why, sizeof(pmu.why),
			 "%s, but counter 0 does not count (MSR 0x%x stays 0x%llx over %u loops)",
			 what, counter_msr(0), after, PROBE_LOOPS);
		pmu.vendor = PMU_NONE;
		return false;
	}
	return true;
}

bool pmu_has_reference(void)
{
	return pmu.gp_counters >= 2;
}

static void write_counter(u32 n, u64 value)
{
	/* Legacy IA32_PMCx: bits 31:0 written, bit 31 sign-extended. */
	wrmsr(counter_msr(n), pmu.full_width_writes ? value : (u32)value);
}

void pmu_arm(u64 period)
{
	u64 enable = BIT(0);

	if (!pmu_arm_value(period, pmu.gp_width, pmu.full_width_writes, &armed_value))
		return;
	if (pmu.global_ctrl)
		wrmsr(global_ctrl_msr(), 0);
	wrmsr(evtsel_msr(0), 0);
	write_counter(0, armed_value);
	if (pmu_has_reference()) {
		wrmsr(evtsel_msr(1), 0);
		write_counter(1, 0);
		wrmsr(evtsel_msr(1), pmu_evtsel(pmu.vendor, pmu.event, false));
		enable |= BIT(1);
	}
	if (pmu.global_ctrl)
		wrmsr(status_clear_msr(), gp_bits());
	wrmsr(evtsel_msr(0), pmu_evtsel(pmu.vendor, pmu.event, true));
	if (pmu.global_ctrl)
		wrmsr(global_ctrl_msr(), enable);
}

void pmu_disable(void)
{
	if (pmu.global_ctrl)
		wrmsr(global_ctrl_msr(), 0);
	wrmsr(evtsel_msr(0), 0);
	if (pmu_has_reference())
		wrmsr(evtsel_msr(1), 0);
}

u32 pmu_stop(void)
{
	u32 pending;

	if (pmu.global_ctrl) {
		pending = bits_set(rdmsr(status_msr()) & BIT(0));
		wrmsr(status_clear_msr(), gp_bits());
	} else {
		pending = pmu_counter_overflowed(rdmsr(counter_msr(0)), pmu.gp_width);
	}
	return pending;
}

u64 pmu_read(u32 counter)
{
	return rdmsr(counter_msr(counter)) & pmu_width_mask(pmu.gp_width);
}

u32 pmu_service(u64 *skid)
{
	u64 value = rdmsr(counter_msr(0)) & pmu_width_mask(pmu.gp_width), status, ctrl;

	if (!pmu.global_ctrl) {
		if (!pmu_counter_overflowed(value, pmu.gp_width))
			return 0;
		*skid = pmu_skid(value, pmu.gp_width);
		write_counter(0, armed_value);
		return 1;
	}
	status = rdmsr(status_msr()) & gp_bits();
	if (!status)
		return 0;
	/*
	 * Counting off while re-arming, control restored last, as Linux's
	 * intel_pmu_handle_irq() does (SDM Vol 3B 21.2.2: clear GLOBAL_CTRL,
	 * then the status bits through GLOBAL_OVF_CTRL).
	 */
	ctrl = rdmsr(global_ctrl_msr());
	wrmsr(global_ctrl_msr(), 0);
	*skid = 0;
	if (status & BIT(0)) {
		*skid = pmu_skid(value, pmu.gp_width);
		write_counter(0, armed_value);
	}
	wrmsr(status_clear_msr(), status);
	wrmsr(global_ctrl_msr(), ctrl);
	return bits_set(status);
}

static const char *vendor_name(enum pmu_vendor v)
{
	return v == PMU_INTEL ? "intel" : v == PMU_AMD ? "amd" : "none";
}

void pmu_json(struct json *j)
{
	json_string(j, "vendor", vendor_name(pmu.vendor));
	json_u64(j, "pmu_version", pmu.version);
	if (pmu.vendor == PMU_NONE)
		return;
	json_string(j, "event", pmu.event.name);
	json_u64(j, "gp_counters", pmu.gp_counters);
	json_u64(j, "counter_width", pmu.gp_width);
	json_u64(j, "fixed_counters", pmu.fixed_counters);
	json_bool(j, "full_width_writes", pmu.full_width_writes);
}
