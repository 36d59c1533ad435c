// SPDX-License-Identifier: MIT
/*
 * The VM exits the guest's PMI handler costs a KVM host, per PMI and per
 * PMU, measured on the host model (tests/unit/model.h): each MSR or APIC
 * access the handler makes is one exit under KVM's emulated vPMU, and
 * each exit is a kvm_exit and a kvm_entry record for the host probe that
 * tools/pmi-verdict attaches. A figure, not a test: the unit tests hold
 * the handler's behaviour, this prints what it costs (docs/figures.md).
 *
 *	make bench-pmi-exits
 */
#include <stdio.h>
#include <stdlib.h>

#include "apic/apic.h"
#include "kernel/test/test.h"
#include "pmu/pmu.h"
#include "pmu/stress.h"
#include "tests/unit/model.h"

#define PERIOD 997 /* events: a few hundred PMIs per CPU in a model second */

static void quiet(const char *line)
{
	(void)line;
}

static __noreturn void end(enum result r)
{
	exit(r > RESULT_SKIP);
}

/*
 * One CPU's stress on PMU k under host h, with at most counters armed
 * (0: all): its handler's exits per PMI.
 */
static bool exits_per_pmi(enum model_pmu k, enum model_host_id h, u32 lvtpc, u32 counters,
			  double *per_pmi)
{
	struct model_config m = model_pmu(k, h, 1, 7);
	struct stress_config c = {
		.period = PERIOD,
		.seconds = 1,
		.lvtpc = lvtpc,
		.sample_cap = 64,
		.cost_pmis = 20,
		.counters = counters,
	};
	struct stress_totals t = { 0 };
	char why[160];

	model_start(&m);
	if (!pmu_probe_counts() || !stress_prepare(&c, why, sizeof(why)))
		return false;
	if (!stress_run(&c))
		return false;
	stress_totals(&t, &c);
	if (!t.pmis)
		return false;
	*per_pmi = (double)model_truth(0)->handler_exits / (double)t.pmis;
	return true;
}

int main(void)
{
	static const enum model_host_id hosts[] = { MODEL_HOST_6_1_0, MODEL_HOST_6_9 };
	double nmi, fixed, one;

	tests_init(quiet, end);
	printf("%-14s %-8s %10s %12s %20s\n", "PMU", "host", "LVTPC=nmi", "LVTPC=fixed",
	       "nmi, pmu.counters=1");
	for (u32 k = 0; k < MODEL_PMUS; k++)
		for (u32 i = 0; i < ARRAY_SIZE(hosts); i++) {
			if (!exits_per_pmi(k, hosts[i], APIC_LVT_DM_NMI, 0, &nmi) ||
			    !exits_per_pmi(k, hosts[i], APIC_VECTOR_PMI, 0, &fixed) ||
			    !exits_per_pmi(k, hosts[i], APIC_LVT_DM_NMI, 1, &one)) {
				fprintf(stderr, "%s on %s: the stress did not run\n",
					model_pmu_names[k], model_hosts[hosts[i]].name);
				return 1;
			}
			printf("%-14s %-8s %10.2f %12.2f %20.2f\n", model_pmu_names[k],
			       model_hosts[hosts[i]].name, nmi, fixed, one);
		}
	return 0;
}
