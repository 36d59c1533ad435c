/* SPDX-License-Identifier: MIT */
/*
 * The PMU's side of a PMI. In NMI mode the PMU is one source of the NMI
 * entry (kernel/'s, which polls every source on every NMI); with
 * pmu.lvtpc=fixed the PMU interrupts on APIC_VECTOR_PMI instead, through
 * the same servicing and its own accounting. Either way the handler
 * services every overflow status bit, samples the delivery gap and skid,
 * and writes LVTPC back, since each PMI masks it.
 */
#ifndef PMU_PMI_H
#define PMU_PMI_H

#include "kernel/x86/nmi_account.h"
#include "kernel/x86/percpu.h"

struct pmu_cpu {
	/* The workload's last TSC stamp, for the PMI delivery gap. */
	volatile u64 work_tsc;
	/* Entries that found an overflow, and the status bits serviced. */
	u64 pmis, overflows;
	/* pmu.lvtpc=fixed: the PMI vector's own, as an NMI may interrupt it. */
	struct nmi_counts vector_counts;
	/* Set around an armed PMU; the handler only touches the PMU then. */
	volatile bool pmu_armed;
	/* The LVTPC value that the handler writes back (SDM: masked on each PMI). */
	u32 lvtpc;
	/* The last sample_cap PMIs: delivery gap (TSC cycles) and skid (events). */
	u64 *gap, *skid;
	u32 sample_cap;
	u64 samples; /* taken; only the last sample_cap are kept */
} __attribute__((aligned(64)));

/* Install the fixed-vector handler (the NMI source is always registered). */
void pmi_init(void);
struct pmu_cpu *pmu_cpu(u32 index);

#endif
