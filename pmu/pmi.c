// SPDX-License-Identifier: MIT
/* The PMU as an NMI source, and the fixed-vector PMI handler. */
#include "pmu/pmi.h"
#include "apic/apic.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"
#include "pmu/workload.h"

/*
 * The PMIs (so NMIs, or PMI-vector interrupts) that the overflows one
 * entry serviced may have raised, for nmi_account()'s credit. Where the
 * host masked LVTPC, every overflow the first look found came with the
 * one PMI that masked it (later ones were dropped, or coalesced into one
 * request per VM exit, 73554b29bd70); each overflow a later look found
 * came after the unmask, with a PMI of its own that the one NMI held
 * pending covers; a PMU without global control counts on after the
 * LVTPC read, so each of its overflows may have had a PMI. Where the host
 * does not mask, each overflow raised its own PMI, and one that can have
 * happened inside a VM exit (exit_overflows) a second: before
 * 73554b29bd70, an overflow of an instruction KVM emulates is delivered
 * by irq_work (kvm_pmi_trigger_fn()) and again by KVM_REQ_PMI, both
 * calling kvm_pmu_deliver_pmi() before the next VM-entry (Linux 6.1.y,
 * __kvm_perf_overflow()). An overflow of the workload loop, which never
 * exits, raised one PMI only: a host that doubles those is not explained.
 */
u64 pmi_raised(bool masked, bool global_ctrl, u64 overflows, u64 late, u64 exit_overflows)
{
	if (!overflows)
		return 0;
	if (!masked)
		return overflows + MIN(exit_overflows, overflows);
	if (!global_ctrl)
		return overflows;
	return 1 + (late ? 1 : 0);
}

/*
 * Looks at the PMU within one entry. Each look after the first means an
 * overflow came while servicing; with pmu.period above its floor a second
 * look finds nothing, so this bound is only there against a runaway.
 */
#define SERVICE_LOOKS 8
#define NO_SKID (~0ULL)

static struct pmu_cpu pmu_cpus[MAX_CPUS];

struct pmu_cpu *pmu_cpu(u32 index)
{
	return &pmu_cpus[index];
}

static void keep(u64 *ring, u64 *taken, u32 cap, u64 value)
{
	if (cap)
		ring[(*taken)++ % cap] = value;
}

/*
 * Service the PMU if it is armed. SDM Vol 3A 11.5.1: the APIC masks
 * LVTPC on each PMI. KVM does so from a16eb25b09c0 (6.6), for
 * Intel-compatible guests only from 49ff3b4aec51 (6.9), and drops a PMI
 * that finds LVTPC masked (kvm_apic_local_deliver()); before 6.6 it never
 * masks. So counting stops first (where there is global control), LVTPC
 * is read (what the host did) and unmasked, whether or not this entry
 * finds an overflow (a PMI whose overflow an earlier NMI serviced still
 * masked it): an overflow from then on raises a PMI that waits behind
 * this NMI, never one lost while a counter counts on from 0. Then every
 * overflow is serviced, looking again until none is left on a PMU that
 * counts meanwhile, as Linux's intel_pmu_handle_irq() does; where counting
 * stopped (SDM Vol 3B 21.2.2, APM Vol 2 13.2.2) no status bit can be set
 * after the first look, and a second one would only cost the host a VM
 * exit. Counting resumes last. Counter 0's skid is read in the servicing, after the
 * pause, in both LVTPC modes alike.
 */
static u64 poll_pmu(struct pmu_cpu *p, const struct trap_frame *f, u64 entry_tsc)
{
	u64 skid = NO_SKID, overflows = 0, late = 0, found, ctrl, twice;
	u32 looks = 0, max_looks = pmu.global_ctrl ? 1 : SERVICE_LOOKS;
	bool masked, in_loop;

	p->raised = 0;
	if (!p->pmu_armed)
		return 0;
	if (pmu_lean()) {
		/*
		 * Nothing paused: every entry is a PMI, whose counter was
		 * re-armed a period short of its next wrap by the entry before.
		 */
		overflows = pmu_service(p->counter_overflows, &skid);
		looks = 1;
		masked = apic_read(APIC_LVT_PMC) & APIC_LVT_MASKED;
		apic_write(APIC_LVT_PMC, p->lvtpc);
	} else {
		ctrl = pmu_pause();
		masked = apic_read(APIC_LVT_PMC) & APIC_LVT_MASKED;
		apic_write(APIC_LVT_PMC, p->lvtpc);
		while (looks < max_looks && (found = pmu_service(p->counter_overflows, &skid))) {
			overflows += found;
			late += looks ? found : 0;
			looks++;
		}
		pmu_resume(ctrl);
	}
	if (!overflows)
		return 0;
	p->pmis++;
	p->overflows += overflows;
	p->rereads += looks - 1;
	p->lvtpc_masked += masked;
	p->lvtpc_unmasked += !masked;
	in_loop = workload_interrupted(f->rip);
	/*
	 * Inside the loop, only the overflows found after the first look can
	 * have come in a VM exit (the handler's own accesses exit); outside
	 * it, the NMI may be the one injected at the VM-entry after an
	 * emulated instruction, and every overflow it found may be that one.
	 */
	twice = masked ? 0 : in_loop ? late : overflows;
	p->raised = pmi_raised(masked, pmu.global_ctrl, overflows, late, twice);
	p->twice += masked ? 0 : MIN(twice, overflows);
	if (in_loop)
		keep(p->gap, &p->gap_samples, p->sample_cap, entry_tsc - p->work_tsc);
	else
		p->gap_outside++;
	if (skid != NO_SKID)
		keep(p->skid, &p->skid_samples, p->sample_cap, skid);
	return overflows;
}

static u64 pmu_nmi_poll(const struct trap_frame *f, u64 entry_tsc)
{
	struct pmu_cpu *p = &pmu_cpus[this_cpu()->index];

	if (p->lvtpc != APIC_LVT_DM_NMI)
		return 0;
	return poll_pmu(p, f, entry_tsc);
}

static u64 pmu_nmi_raised(u64 events)
{
	(void)events;
	return pmu_cpus[this_cpu()->index].raised;
}

DEFINE_NMI_SOURCE_RAISED(pmu, pmu_nmi_poll, pmu_nmi_raised);

static void pmi_vector_handler(struct trap_frame *f)
{
	u64 entry_tsc = rdtsc(), found;
	struct pmu_cpu *p = &pmu_cpus[this_cpu()->index];

	found = poll_pmu(p, f, entry_tsc);
	nmi_account(&p->vector_counts, &p->vector_last, found, 0, p->raised);
	apic_eoi();
}

void pmi_init(void)
{
	trap_set_handler(APIC_VECTOR_PMI, pmi_vector_handler);
}
