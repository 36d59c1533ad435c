// SPDX-License-Identifier: MIT
/* The NMI handler and the fixed-vector PMI handler; see nmi.h. */
#include "apic/apic.h"
#include "apic/smp.h"
#include "kernel/x86/trap.h"
#include "kernel/test/watchdog.h"
#include "kernel/x86/x86.h"
#include "pmu/nmi.h"
#include "pmu/pmu.h"

static struct nmi_cpu nmi_cpus[SMP_MAX_CPUS];

struct nmi_cpu *nmi_cpu(u32 index)
{
	return &nmi_cpus[index];
}

void nmi_ipi_send(const struct percpu *target)
{
	__atomic_fetch_add(&nmi_cpus[target->index].mail, 1, __ATOMIC_RELEASE);
	apic_send_ipi(target->apic_id, APIC_ICR_DM_NMI);
}

static void sample(struct nmi_cpu *n, u64 entry_tsc, u64 skid)
{
	u32 slot;

	if (!n->sample_cap)
		return;
	slot = n->samples++ % n->sample_cap;
	n->gap[slot] = entry_tsc - n->work_tsc;
	n->skid[slot] = skid;
}

/* Service the PMU if it is armed; LVTPC is written back on every entry. */
static u64 poll_pmu(struct nmi_cpu *n, u64 entry_tsc)
{
	u64 skid = 0, overflows;

	if (!n->pmu_armed)
		return 0;
	overflows = pmu_service(&skid);
	if (overflows)
		sample(n, entry_tsc, skid);
	/*
	 * SDM Vol 3A 11.5.1: the APIC masks LVTPC on each PMI, and KVM does
	 * the same for Intel-compatible guests; a PMI that arrives after an
	 * earlier NMI serviced its overflow still masks it, so unmask always.
	 */
	apic_write(APIC_LVT_PMC, n->lvtpc);
	return overflows;
}

static void nmi_handler(struct trap_frame *f)
{
	u64 entry_tsc = rdtsc(), overflows = 0, mail;
	struct percpu *cpu = this_cpu();
	struct nmi_cpu *n = &nmi_cpus[cpu->index];

	if (watchdog_nmi(f))
		return;
	cpu->nmi_count++;
	/* Architecturally impossible (NMIs are blocked until IRET): count it. */
	if (n->in_handler)
		n->counts.nested++;
	n->in_handler = true;
	if (n->lvtpc == APIC_LVT_DM_NMI)
		overflows = poll_pmu(n, entry_tsc);
	mail = __atomic_exchange_n(&n->mail, 0, __ATOMIC_ACQ_REL);
	n->counts.nmis++;
	nmi_account(&n->counts, overflows, mail);
	n->in_handler = false;
}

static void pmi_vector_handler(struct trap_frame *f)
{
	u64 entry_tsc = rdtsc();
	struct nmi_cpu *n = &nmi_cpus[this_cpu()->index];

	(void)f;
	nmi_account(&n->vector_counts, poll_pmu(n, entry_tsc), 0);
	apic_eoi();
}

void nmi_init(void)
{
	trap_set_handler(X86_TRAP_NMI, nmi_handler);
	trap_set_handler(APIC_VECTOR_PMI, pmi_vector_handler);
}
