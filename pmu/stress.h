/* SPDX-License-Identifier: MIT */
/*
 * The PMI stress (README, "Stressing PMI/NMI ordering") on every online
 * CPU at once: the workload runs with the plan's counters overflowing
 * into PMIs through LVTPC, optionally while each CPU sends NMI IPIs to
 * the next, for a fixed time; then the counters stop and each CPU says
 * what it saw. Needs a PMU that counts (pmu_probe_counts()).
 *
 * The CPUs move through the phases together: each takes its first
 * snapshot before it arrives at the start, so none can arm or send before
 * every one has taken it (a vCPU descheduled after the start would
 * otherwise count a neighbour's IPIs as before), and none takes its last
 * before every one has stopped sending and drained what was sent to it,
 * so no NMI changes the counts while they are copied.
 */
#ifndef PMU_STRESS_H
#define PMU_STRESS_H

#include "kernel/x86/nmi_account.h"
#include "pmu/pmu.h"

struct stress_config {
	u64 period; /* events per overflow of the first armed counter */
	u64 seconds;
	u64 nmi_ipi_rate; /* NMI IPIs per second each CPU sends its neighbour; 0: none */
	u32 lvtpc;	  /* APIC_LVT_DM_NMI, or APIC_VECTOR_PMI for the fixed baseline */
	u32 sample_cap;	  /* PMIs per CPU whose gap and skid are kept */
	u64 cost_pmis;	  /* PMIs the cost phase takes, unbounded (0: COST_PMIS, bounded) */
	u32 counters;	  /* the most counters armed (0: every one the plan can) */
	/* Set by stress_run(). */
	struct pmu_plan plan;
	u64 cost_iterations;
	u64 end_tsc;
};

struct stress_cpu {
	bool ran;
	bool in_step;	      /* arrived at every phase in time */
	u64 iterations;	      /* of the workload, in the timed part */
	u64 armed_iterations; /* with the counters armed: the cost phase's and the timed part's */
	u64 reference_events; /* counted by the free-running counter, or 0 */
	u64 unserviced;	      /* overflows still set after the stop */
	bool mail_drained;    /* every NMI IPI sent here was seen */
	bool lvtpc_unmasked;  /* at the end, as every handler leaves it */
	bool stopped_cleanly; /* after the stop: no counting, no overflow */
	u64 cost_cycles_off;  /* cost_iterations of work without PMIs */
	u64 cost_cycles_on;   /* and with them */
	u64 cost_pmis;	      /* PMIs (entries that found an overflow) during the latter */
	u64 armed_cycles;     /* TSC cycles from arming to the stop */
	u64 lost_counters;    /* armed counters (bit k) the host wrapped silently */
	u64 pmis_lvtpc_masked, pmis_lvtpc_unmasked; /* PMIs that found LVTPC masked, or not */
	u64 ipis_sent;
	u64 pmis, overflows; /* entries that found an overflow; overflows serviced */
	u64 counter_overflows[PMU_ARMED_MAX];
	u64 rereads, gap_outside;
	u64 twice;		  /* credit for second deliveries in one VM exit (pmi_raised()) */
	struct nmi_counts counts; /* NMI and PMI-vector entries during the stress */
};

/* The stress added up over the online CPUs, and the checks it allows. */
struct stress_totals {
	u32 cpus, ran, with_pmis, unmasked, clean, in_step, drained;
	u64 unserviced, iterations, ipis_sent, pmis, overflows, rereads, gap_outside;
	u64 armed_cycles, cost_pmis, lost, pmis_lvtpc_masked, pmis_lvtpc_unmasked;
	u64 twice;
	struct nmi_counts counts;
	u64 cost_per_pmi; /* median over CPUs */
	/* The counters counting instructions: serviced, and expected. */
	u64 instruction_overflows, instruction_expected;
	/* Per armed counter: serviced, and expected from what was counted. */
	u64 counter_overflows[PMU_ARMED_MAX];
	u64 counter_expected[PMU_ARMED_MAX];
	bool expected_from_reference;
	/* CPUs whose NMIs with no source exceed their credit (nmi_account()). */
	u32 unexplained_cpus;
	/*
	 * CPUs whose NMIs with no source are explained only with the second
	 * deliveries credited: one overflow in a VM exit delivered twice.
	 */
	u32 twice_needed_cpus;
	/*
	 * Strict mode (no NMI IPIs): CPUs on which a counter counting
	 * instructions, and not wrapped silently by the host, serviced fewer
	 * overflows than STRESS_STRICT_PERMILLE of its expected count.
	 */
	bool strict;
	u32 strict_short_cpus;
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
/*
 * The checks: what the architecture and every KVM host promise, and in
 * strict mode that every overflow is there. The test and the host model
 * run the same ones.
 */
void stress_checks(const struct stress_config *c, const struct stress_totals *t, bool finished);
/*
 * Which KVM behaviours this guest saw (LVTPC masked after a PMI, one
 * overflow giving two NMIs, several overflows giving several), and the
 * commits they say the host has, for a DATA line of its own ("record":
 * "kvm"): the main line has no room left under 1024 bytes.
 */
void stress_kvm_json(struct json *j, const struct stress_totals *t);
/* What ran, what every CPU saw together, and the gap and skid percentiles. */
void stress_json(struct json *j, const struct stress_config *c, const struct stress_totals *t);
/* Armed counter k's period and overflows, for a DATA line of its own ("record": "counter"). */
void stress_counter_json(struct json *j, const struct stress_config *c,
			 const struct stress_totals *t, u32 k);

#endif
