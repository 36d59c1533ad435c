/* SPDX-License-Identifier: MIT */
/*
 * The PMU's side of a PMI. In NMI mode the PMU is one source of the NMI
 * entry, which polls every source on every NMI; with pmu.lvtpc=fixed the
 * PMU interrupts on APIC_VECTOR_PMI instead, through the same servicing
 * and its own accounting. Either way the handler unmasks LVTPC first
 * (each PMI masks it), services every overflow there is, and looks again
 * until none is left; it samples the delivery gap and counter 0's skid.
 */
#ifndef PMU_PMI_H
#define PMU_PMI_H

#include "kernel/x86/nmi_account.h"
#include "kernel/x86/percpu.h"
#include "pmu/pmu.h"

struct pmu_cpu {
	/* The workload's last TSC stamp, for the PMI delivery gap. */
	volatile u64 work_tsc;
	/* Entries that found an overflow, the overflows serviced, and per armed counter. */
	u64 pmis, overflows;
	u64 counter_overflows[PMU_ARMED_MAX];
	/* Looks at the PMU after the first (overflows while servicing). */
	u64 rereads;
	/* Entries that found an overflow with LVTPC masked (by the host), or not. */
	u64 lvtpc_masked, lvtpc_unmasked;
	/* PMIs the last entry's overflows may have raised (pmi_raised()). */
	u64 raised;
	/* Of all those, second deliveries in one VM exit credited (no 73554b29bd70). */
	u64 twice;
	/* pmu.lvtpc=fixed: the PMI vector's own, as an NMI may interrupt it. */
	struct nmi_counts vector_counts;
	u64 vector_last;
	/* Set around an armed PMU; the handler only touches the PMU then. */
	volatile bool pmu_armed;
	/* The LVTPC value that the handler writes back (SDM: masked on each PMI). */
	u32 lvtpc;
	/*
	 * The last sample_cap PMIs' delivery gap (TSC cycles, kept only when
	 * the PMI interrupted the workload loop: anything else, an IPI send or
	 * another handler, is not delivery time) and counter 0's skid (events).
	 */
	u64 *gap, *skid;
	u32 sample_cap;
	u64 gap_samples, skid_samples;
	u64 gap_outside; /* PMIs that interrupted something other than the loop */
} __attribute__((aligned(64)));

/*
 * The PMIs that one entry's overflows may have raised: LVTPC masked at
 * entry (by the host) or not, a PMU with global control or not, the
 * overflows found, those found after the first look, and those that can
 * have happened inside a VM exit (delivered twice where LVTPC is not
 * masked, before 73554b29bd70). Pure.
 */
u64 pmi_raised(bool masked, bool global_ctrl, u64 overflows, u64 late, u64 exit_overflows);
/* Install the fixed-vector handler (the NMI source is always registered). */
void pmi_init(void);
struct pmu_cpu *pmu_cpu(u32 index);

#endif
