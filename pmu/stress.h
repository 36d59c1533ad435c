/* SPDX-License-Identifier: MIT */
/*
 * The PMI stress (README, "Stressing PMI/NMI ordering") on every online
 * CPU at once: the workload runs with the plan's counters overflowing
 * into PMIs through LVTPC, optionally while each CPU sends NMI IPIs to
 * the next, for a fixed time; then the counters stop and each CPU says
 * what it saw. Needs a PMU that counts (pmu_probe_counts()).
 *
 * The CPUs move through the phases together: none arms or sends before
 * every one has taken its first snapshot, and none takes its last before
 * every one has stopped sending and drained what was sent to it, so no
 * NMI changes the counts while they are copied.
 */
#ifndef PMU_STRESS_H
#define PMU_STRESS_H

#include "kernel/x86/nmi_account.h"
#include "pmu/pmu.h"

struct stress_config {
	u64 period;	  /* events per overflow of the first armed counter */
	u64 seconds;
	u64 nmi_ipi_rate; /* NMI IPIs per second each CPU sends its neighbour; 0: none */
	u32 lvtpc;	  /* APIC_LVT_DM_NMI, or APIC_VECTOR_PMI for the fixed baseline */
	u32 sample_cap;	  /* PMIs per CPU whose gap and skid are kept */
	u64 cost_pmis;	  /* PMIs the cost phase takes, unbounded (0: COST_PMIS, bounded) */
	/* Set by stress_run(). */
	struct pmu_plan plan;
	u64 cost_iterations;
	u64 end_tsc;
};

struct stress_cpu {
	bool ran;
	bool in_step;		/* arrived at every phase in time */
	u64 iterations;		/* of the workload, in the timed part */
	u64 armed_iterations;	/* with the counters armed: the cost phase's and the timed part's */
	u64 reference_events;	/* counted by the free-running counter, or 0 */
	u64 unserviced;		/* overflows still set after the stop */
	bool mail_drained;	/* every NMI IPI sent here was seen */
	bool lvtpc_unmasked;	/* at the end, as every handler leaves it */
	bool stopped_cleanly;	/* after the stop: no counting, no overflow */
	u64 cost_cycles_off;	/* cost_iterations of work without PMIs */
	u64 cost_cycles_on;	/* and with them */
	u64 cost_overflows;	/* overflows serviced during the latter */
	u64 ipis_sent;
	u64 pmis, overflows;	/* entries that found an overflow; overflows serviced */
	u64 counter_overflows[PMU_ARMED_MAX];
	u64 rereads, gap_outside;
	struct nmi_counts counts; /* NMI and PMI-vector entries during the stress */
};

/* The stress added up over the online CPUs, and the checks it allows. */
struct stress_totals {
	u32 cpus, ran, with_pmis, unmasked, clean, in_step, drained;
	u64 unserviced, iterations, ipis_sent, pmis, overflows, rereads, gap_outside;
	struct nmi_counts counts;
	u64 cost_per_pmi; /* median over CPUs */
	/* Per armed counter: serviced, and expected from what was counted. */
	u64 counter_overflows[PMU_ARMED_MAX];
	u64 counter_expected[PMU_ARMED_MAX];
	bool expected_from_reference;
	/* CPUs whose NMIs with no source exceed what merging explains. */
	u32 unexplained_cpus;
	/*
	 * Strict mode (no NMI IPIs, a PMU with global control): CPUs that
	 * took an NMI with no source at all, and CPUs on which a counter
	 * counting instructions serviced fewer overflows than
	 * STRESS_STRICT_PERMILLE of its expected count.
	 */
	bool strict;
	u32 strict_unknown_cpus, strict_short_cpus;
};

/* Lost or throttled PMIs show as overflows below this share of expected. */
#define STRESS_STRICT_PERMILLE 980

struct json;

/*
 * Plan the counters for c->period; false with why when they cannot be
 * armed. Then run: false if some CPU did not finish in time (its result
 * has ran == false).
 */
bool stress_prepare(struct stress_config *c, char *why, size_t whylen);
bool stress_run(struct stress_config *c);
const struct stress_cpu *stress_result(u32 index);
void stress_totals(struct stress_totals *t, const struct stress_config *c);
/* What ran, what every CPU saw together, and the gap and skid percentiles. */
void stress_json(struct json *j, const struct stress_config *c, const struct stress_totals *t);
/* Armed counter k's period and overflows, for a DATA line of its own ("record": "counter"). */
void stress_counter_json(struct json *j, const struct stress_config *c,
			 const struct stress_totals *t, u32 k);

#endif
