/* SPDX-License-Identifier: MIT */
/*
 * The one NMI handler. Every NMI polls every source: the PMU's overflow
 * status (when this CPU has the PMU armed with LVTPC in NMI mode) and the
 * CPU's NMI-IPI mailbox, and is accounted per CPU with no locks (pmu/
 * nmi_account.h). With pmu.lvtpc=fixed the PMU interrupts on
 * APIC_VECTOR_PMI instead, through the same accounting.
 */
#ifndef PMU_NMI_H
#define PMU_NMI_H

#include "kernel/x86/percpu.h"
#include "pmu/nmi_account.h"

struct nmi_cpu {
	/* NMI IPIs posted to this CPU and not yet seen; other CPUs add. */
	volatile u64 mail;
	/* The workload's last TSC stamp, for the PMI delivery gap. */
	volatile u64 work_tsc;
	struct nmi_counts counts;
	/* pmu.lvtpc=fixed: the PMI vector's own, as an NMI may interrupt it. */
	struct nmi_counts vector_counts;
	u64 ipis_sent;
	bool in_handler;
	/* Set around an armed PMU; the handler only touches the PMU then. */
	volatile bool pmu_armed;
	/* The LVTPC value that the handler writes back (SDM: masked on each PMI). */
	u32 lvtpc;
	/* The last sample_cap PMIs: delivery gap (TSC cycles) and skid (events). */
	u64 *gap, *skid;
	u32 sample_cap;
	u64 samples; /* taken; only the last sample_cap are kept */
} __attribute__((aligned(64)));

/* Install the handlers; from the start, so an early NMI is counted, not fatal. */
void nmi_init(void);
struct nmi_cpu *nmi_cpu(u32 index);
/* Post mail and send an NMI IPI to target. */
void nmi_ipi_send(const struct percpu *target);

#endif
