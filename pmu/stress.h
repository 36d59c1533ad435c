/* SPDX-License-Identifier: MIT */
/*
 * The PMI stress (README, "Stressing PMI/NMI ordering") on every online
 * CPU at once: the workload runs with counter 0 overflowing every period
 * events into a PMI through LVTPC, optionally while each CPU sends NMI
 * IPIs to the next, for a fixed time; then the counters stop and each
 * CPU says what it saw. Needs a PMU that counts (pmu_probe_counts()).
 */
#ifndef PMU_STRESS_H
#define PMU_STRESS_H

#include "kernel/x86/nmi_account.h"

struct stress_config {
	u64 period;	  /* events per overflow */
	u64 seconds;
	u64 nmi_ipi_rate; /* NMI IPIs per second each CPU sends its neighbour; 0: none */
	u32 lvtpc;	  /* APIC_LVT_DM_NMI, or APIC_VECTOR_PMI for the fixed baseline */
	u32 sample_cap;	  /* PMIs per CPU whose gap and skid are kept */
	u64 end_tsc;	  /* set by stress_run() */
};

struct stress_cpu {
	bool ran;
	u64 iterations;		/* of the workload, in the timed part */
	u64 reference_events;	/* counted by the free-running counter, or 0 */
	u64 unserviced;		/* overflow bits still set after the stop */
	bool lvtpc_unmasked;	/* at the end, as every handler leaves it */
	bool stopped_cleanly;	/* after the stop: no counting, no overflow */
	u64 cost_cycles_off;	/* COST_ITERATIONS of work without PMIs */
	u64 cost_cycles_on;	/* and with them */
	u64 cost_overflows;	/* overflows serviced during the latter */
	u64 ipis_sent;
	u64 pmis, overflows;	/* entries that found an overflow; status bits serviced */
	struct nmi_counts counts; /* NMI and PMI-vector entries during the stress */
};

/* The stress added up over the online CPUs. */
struct stress_totals {
	u32 cpus, ran, with_pmis, unmasked, clean;
	u64 unserviced, expected, iterations, ipis_sent, pmis, overflows;
	bool expected_from_reference;
	struct nmi_counts counts;
	u64 cost_per_pmi; /* median over CPUs */
};

struct json;

/* False if some CPU did not finish in time (its result has ran == false). */
bool stress_run(struct stress_config *c);
const struct stress_cpu *stress_result(u32 index);
void stress_totals(struct stress_totals *t, const struct stress_config *c);
/* What ran, what every CPU saw together, and the gap and skid percentiles. */
void stress_json(struct json *j, const struct stress_config *c, const struct stress_totals *t);

#endif
