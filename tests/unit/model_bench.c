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

/* One CPU's stress on PMU k under host h: its handler's exits per PMI. */
static bool exits_per_pmi(enum model_pmu k, enum model_host_id h, u32 lvtpc, double *per_pmi)
{
	struct model_config m = model_pmu(k, h, 1, 7);
	struct stress_config c = {
		.period = PERIOD,
		.seconds = 1,
		.lvtpc = lvtpc,
		.sample_cap = 64,
		.cost_pmis = 20,
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
	double nmi, fixed;

	tests_init(quiet, end);
	printf("%-12s %-8s %12s %12s\n", "PMU", "host", "LVTPC=nmi", "LVTPC=fixed");
	for (u32 k = 0; k < MODEL_PMUS; k++)
		for (u32 i = 0; i < ARRAY_SIZE(hosts); i++) {
			if (!exits_per_pmi(k, hosts[i], APIC_LVT_DM_NMI, &nmi) ||
			    !exits_per_pmi(k, hosts[i], APIC_VECTOR_PMI, &fixed)) {
				fprintf(stderr, "%s on %s: the stress did not run\n",
					model_pmu_names[k], model_hosts[hosts[i]].name);
				return 1;
			}
			printf("%-12s %-8s %12.2f %12.2f\n", model_pmu_names[k],
			       model_hosts[hosts[i]].name, nmi, fixed);
		}
	return 0;
}
