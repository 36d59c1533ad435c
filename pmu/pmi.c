// SPDX-License-Identifier: MIT
/* The PMU as an NMI source, and the fixed-vector PMI handler. */
#include "apic/apic.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"
#include "pmu/pmi.h"
#include "pmu/pmu.h"

static struct pmu_cpu pmu_cpus[MAX_CPUS];

struct pmu_cpu *pmu_cpu(u32 index)
{
	return &pmu_cpus[index];
}

static void sample(struct pmu_cpu *p, u64 entry_tsc, u64 skid)
{
	u32 slot;

	if (!p->sample_cap)
		return;
	slot = p->samples++ % p->sample_cap;
	p->gap[slot] = entry_tsc - p->work_tsc;
	p->skid[slot] = skid;
}

/* Service the PMU if it is armed; LVTPC is written back on every entry. */
static u64 poll_pmu(struct pmu_cpu *p, u64 entry_tsc)
{
	u64 skid = 0, overflows;

	if (!p->pmu_armed)
		return 0;
	overflows = pmu_service(&skid);
	if (overflows) {
		p->pmis++;
		p->overflows += overflows;
		sample(p, entry_tsc, skid);
	}
	/*
	 * SDM Vol 3A 11.5.1: the APIC masks LVTPC on each PMI, and KVM does
	 * the same for Intel-compatible guests; a PMI that arrives after an
	 * earlier NMI serviced its overflow still masks it, so unmask always.
	 */
	apic_write(APIC_LVT_PMC, p->lvtpc);
	return overflows;
}

static u64 pmu_nmi_poll(const struct trap_frame *f, u64 entry_tsc)
{
	struct pmu_cpu *p = &pmu_cpus[this_cpu()->index];

	(void)f;
	return p->lvtpc == APIC_LVT_DM_NMI ? poll_pmu(p, entry_tsc) : 0;
}

DEFINE_NMI_SOURCE(pmu, pmu_nmi_poll);

static void pmi_vector_handler(struct trap_frame *f)
{
	u64 entry_tsc = rdtsc();
	struct pmu_cpu *p = &pmu_cpus[this_cpu()->index];

	(void)f;
	nmi_account(&p->vector_counts, poll_pmu(p, entry_tsc), 0);
	apic_eoi();
}

void pmi_init(void)
{
	trap_set_handler(APIC_VECTOR_PMI, pmi_vector_handler);
}
