// SPDX-License-Identifier: MIT
/*
 * PMU discovery from CPUID and the counter programming the stress needs;
 * see pmu.h. The plan's counters interrupt; the last GP counter, where
 * there are two or more, is the reference that says how many events
 * really happened.
 */
#include "pmu/pmu.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

/* Instructions the probe runs; any counting PMU sees at least this many. */
#define PROBE_LOOPS 10000

struct pmu_info pmu;

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
	return pmu.vendor == PMU_AMD ? MSR_AMD_PERF_CNTR_GLOBAL_STATUS
				     : MSR_IA32_PERF_GLOBAL_STATUS;
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

static const struct pmu_plan *plan;
static u64 enable_bits; /* what GLOBAL_CTRL holds while counting */
/*
 * What each CPU's GLOBAL_CTRL holds, as pmu_enable() and pmu_disable()
 * set it, so that pmu_pause() need not read it back: one VM exit less
 * per PMI under KVM's emulated vPMU, where every PMU MSR access exits.
 * Set before the MSR on the way up and on the way down alike: a PMI
 * between the two resumes to the new value, which the write then holds
 * anyway (counting starts a few instructions early, or stops early).
 */
static volatile u64 global_on[MAX_CPUS];

static u32 fixed_msr(u32 i)
{
	return MSR_IA32_FIXED_CTR0 + i;
}

static u32 msr_of(const struct pmu_counter *c)
{
	return c->fixed ? fixed_msr(c->index) : counter_msr(c->index);
}

static void write_counter(const struct pmu_counter *c, u64 value)
{
	/* Legacy IA32_PMCx: bits 31:0 written, bit 31 sign-extended; fixed ones take all. */
	wrmsr(msr_of(c), c->fixed || pmu.full_width_writes ? value : (u32)value);
}

u64 pmu_read(const struct pmu_counter *c)
{
	return rdmsr(msr_of(c)) & pmu_width_mask(c->width);
}

u64 pmu_read_reference(void)
{
	return plan && plan->has_reference
		       ? rdmsr(counter_msr(plan->reference)) & pmu_width_mask(pmu.gp_width)
		       : 0;
}

/* The GP and fixed event selects and fixed control, enabled or not. */
static void select_events(bool on)
{
	u64 fixed_ctrl = 0;

	for (u32 i = 0; i < plan->narmed; i++) {
		const struct pmu_counter *c = &plan->armed[i];

		if (c->fixed)
			fixed_ctrl |= on ? pmu_fixed_ctrl(c->index, true) : 0;
		else
			wrmsr(evtsel_msr(c->index),
			      on ? pmu_evtsel(pmu.vendor, c->event, true) : 0);
	}
	if (plan->has_reference)
		wrmsr(evtsel_msr(plan->reference),
		      on ? pmu_evtsel(pmu.vendor, pmu.event, false) : 0);
	if (pmu.fixed_counters)
		wrmsr(MSR_IA32_FIXED_CTR_CTRL, fixed_ctrl);
}

static u64 all_status_bits(void)
{
	u64 bits = 0;

	for (u32 i = 0; i < plan->narmed; i++)
		bits |= BIT(plan->armed[i].status_bit);
	if (plan->has_reference)
		bits |= BIT(plan->reference);
	return bits;
}

void pmu_program(const struct pmu_plan *p)
{
	plan = p;
	enable_bits = all_status_bits();
	global_on[this_cpu()->index] = 0;
	if (pmu.global_ctrl)
		wrmsr(global_ctrl_msr(), 0);
	select_events(false);
	for (u32 i = 0; i < plan->narmed; i++)
		write_counter(&plan->armed[i], plan->armed[i].armed_value);
	if (plan->has_reference)
		wrmsr(counter_msr(plan->reference), 0);
	if (pmu.global_ctrl)
		wrmsr(status_clear_msr(), enable_bits);
}

/*
 * Event selects on, then global control last: where there is global
 * control the counters start together; without it each starts with its
 * select.
 */
void pmu_enable(void)
{
	select_events(true);
	global_on[this_cpu()->index] = enable_bits;
	if (pmu.global_ctrl)
		wrmsr(global_ctrl_msr(), enable_bits);
}

void pmu_disable(void)
{
	global_on[this_cpu()->index] = 0;
	if (pmu.global_ctrl)
		wrmsr(global_ctrl_msr(), 0);
	select_events(false);
}

/*
 * pmu.counters=1 (the quick form) where there is global control and no
 * NMI IPIs: the handler's own exits are what a host probe records, so it
 * takes only the four it cannot do without. A lone armed counter,
 * counting on through the handler: its value says
 * whether it wrapped, as on a PMU without a status register, for the
 * counter read the servicing needs anyway (its carry-over), so that
 * neither a pause nor a status read nor a status clear costs an exit.
 * Every NMI is then a PMI, after which the counter was re-armed a
 * period short of its wrap, and a period is far longer than the
 * handler, so it cannot wrap while serviced. The
 * status keeps the bit KVM sets on each overflow: neither KVM
 * (__kvm_perf_overflow()) nor the SDM (Vol 3B 21.2.2) makes a set bit
 * hold back the next PMI.
 */
bool pmu_lean(void)
{
	return plan && plan->lean;
}

/* The armed counters' bits that say "overflowed": the status, or wrapped values. */
static u64 overflowed_bits(void)
{
	u64 bits = 0;

	if (pmu.global_ctrl && !pmu_lean())
		return rdmsr(status_msr()) & enable_bits;
	for (u32 i = 0; i < plan->narmed; i++)
		if (pmu_counter_overflowed(pmu_read(&plan->armed[i]), plan->armed[i].width))
			bits |= BIT(plan->armed[i].status_bit);
	return bits;
}

bool pmu_pending(void)
{
	return plan && overflowed_bits();
}

/*
 * With a status register, an armed counter always holds its top bit
 * (re-armed at 2^width - period plus less than half a period): one that
 * has it clear and no status bit wrapped with no overflow recorded. KVM
 * ignores a host PMI for a counter whose reprogramming is pending
 * (kvm_perf_overflow(), "a PMI for the previous event races with KVM's
 * handling of a related guest WRMSR"), and the counter then counts on
 * from 0 with no status bit and no PMI.
 */
u64 pmu_silent_wraps(void)
{
	u64 status, lost = 0;

	/* The lean form never clears the status: a lost wrap is not told
	 * apart there, and its counter falls short in the strict check. */
	if (!pmu.global_ctrl || !plan || pmu_lean())
		return 0;
	status = rdmsr(status_msr());
	for (u32 i = 0; i < plan->narmed; i++) {
		const struct pmu_counter *c = &plan->armed[i];

		if (!(status & BIT(c->status_bit)) && pmu_counter_overflowed(pmu_read(c), c->width))
			lost |= BIT(i);
	}
	return lost;
}

u32 pmu_leftover(void)
{
	u32 pending =
		bits_set(overflowed_bits() & ~(plan->has_reference ? BIT(plan->reference) : 0));

	if (pmu.global_ctrl)
		wrmsr(status_clear_msr(), enable_bits);
	return pending;
}

/*
 * Counting off while servicing, control restored last, as Linux's
 * intel_pmu_handle_irq() does (SDM Vol 3B 21.2.2: clear GLOBAL_CTRL,
 * then the status bits through GLOBAL_OVF_CTRL): nothing overflows
 * behind the handler's back. A PMU without global control counts on.
 */
u64 pmu_pause(void)
{
	if (!pmu.global_ctrl || pmu_lean())
		return 0;
	wrmsr(global_ctrl_msr(), 0);
	return global_on[this_cpu()->index];
}

void pmu_resume(u64 ctrl)
{
	if (pmu.global_ctrl && !pmu_lean())
		wrmsr(global_ctrl_msr(), ctrl);
}

/* The lean form's servicing: one read, and the re-arm if it wrapped. */
static u32 service_lone(u64 *per_counter, u64 *skid)
{
	const struct pmu_counter *c = &plan->armed[0];
	u64 since_wrap = pmu_read(c);

	if (!pmu_counter_overflowed(since_wrap, c->width))
		return 0;
	*skid = pmu_skid(since_wrap, c->width);
	write_counter(c, c->armed_value + MIN(since_wrap, c->period / 2));
	per_counter[0]++;
	return 1;
}

u32 pmu_service(u64 *per_counter, u64 *skid)
{
	u64 status;
	u32 serviced = 0;

	if (pmu_lean())
		return service_lone(per_counter, skid);
	status = overflowed_bits();
	if (!status)
		return 0;
	for (u32 i = 0; i < plan->narmed; i++) {
		const struct pmu_counter *c = &plan->armed[i];
		u64 since_wrap;

		if (!(status & BIT(c->status_bit)))
			continue;
		since_wrap = pmu_read(c);
		if (i == 0)
			*skid = pmu_skid(since_wrap, c->width);
		/*
		 * What counted since the wrap belongs to the next period, as
		 * Linux's x86_perf_event_set_period() carries it over: without
		 * it each period runs its skid and the handler long, and the
		 * overflows fall short of the events counted over the period.
		 */
		write_counter(c, c->armed_value + MIN(since_wrap, c->period / 2));
		per_counter[i]++;
		serviced++;
	}
	if (pmu.global_ctrl)
		wrmsr(status_clear_msr(), status);
	return serviced;
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
