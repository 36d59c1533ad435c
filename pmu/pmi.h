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
	/* Entries whose PMU servicing needed more than one look (an overflow while in it). */
	u64 rereads;
	/* pmu.lvtpc=fixed: the PMI vector's own, as an NMI may interrupt it. */
	struct nmi_counts vector_counts;
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

/* Install the fixed-vector handler (the NMI source is always registered). */
void pmi_init(void);
struct pmu_cpu *pmu_cpu(u32 index);

#endif
