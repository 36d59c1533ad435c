// SPDX-License-Identifier: MIT
/*
 * pmi_stress: counters overflow into PMIs through LVTPC on every vCPU at
 * once, and every overflow is serviced.
 *
 * Experiment 2 (README, "Stressing PMI/NMI ordering"): the load under
 * which a host's ordering of PMI and NMI requests on the VM-entry path
 * matters (Linux 6.7, commit fad505b2cb83). Each CPU runs a workload of
 * known instruction count with several counters armed to overflow (at
 * co-prime periods from pmu.period=) for pmu.seconds=, LVTPC in NMI mode
 * (pmu.lvtpc=fixed: a fixed vector, the baseline), optionally sending
 * pmu.nmi_ipi= NMI IPIs a second to its neighbour so that PMIs coincide
 * with other NMIs. A pass means what the architecture promises: every
 * CPU took PMIs; no overflow is left unserviced once the counters stop;
 * on every CPU, each NMI that found nothing is explained by an earlier
 * one that serviced several events (SDM Vol 3A 6.7.1); every NMI IPI was
 * seen; LVTPC ends unmasked though each PMI masks it; stopped counters
 * neither count nor overflow. With no NMI IPIs, on a PMU that stops
 * while it is serviced (global control: strict), there is no NMI without
 * a source at all, and every counter counting instructions serviced at
 * least 98 % of the overflows its period predicts, so lost or throttled
 * PMIs fail. The figures a host is judged by (PMIs per
 * second, delivery gap, skid, cost per PMI) are DATA, and so is which
 * KVM behaviours the guest saw ("record": "kvm"). No PMU (TCG) is a
 * SKIP that says what CPUID showed.
 */
#include "apic/apic.h"
#include "kernel/lib/json.h"
#include "kernel/test/ktap.h"
#include "kernel/test/marker.h"
#include "kernel/test/test.h"
#include "kernel/test/watchdog.h"
#include "pmu/options.h"
#include "pmu/pmu.h"
#include "pmu/stress.h"

/* Gap and skid of the last PMIs of each CPU that the percentiles use. */
#define SAMPLES_PER_CPU 4096

static void data(const struct stress_config *c, const struct stress_totals *t, const char *skipped)
{
	char buf[KTAP_LINE_MAX];
	struct json j;

	report_data_begin(&j, buf, "pmi_stress");
	pmu_json(&j);
	if (skipped)
		json_string(&j, "skipped", skipped);
	else
		stress_json(&j, c, t);
	report_data_end(&j);
	if (skipped)
		return;
	report_data_begin(&j, buf, "pmi_stress");
	json_string(&j, "record", "kvm");
	stress_kvm_json(&j, t);
	report_data_end(&j);
	for (u32 k = 0; k < c->plan.narmed; k++) {
		report_data_begin(&j, buf, "pmi_stress");
		json_string(&j, "record", "counter");
		stress_counter_json(&j, c, t, k);
		report_data_end(&j);
	}
}

DEFINE_TEST(pmi_stress, "PMIs through LVTPC on every CPU, every overflow serviced", 0)
{
	struct stress_config c = {
		.period = pmu_options.period,
		.seconds = pmu_options.seconds,
		.nmi_ipi_rate = pmu_options.nmi_ipi,
		.lvtpc = pmu_options.lvtpc == PMU_LVTPC_NMI ? APIC_LVT_DM_NMI : APIC_VECTOR_PMI,
		.sample_cap = SAMPLES_PER_CPU,
		.counters = pmu_options.counters,
	};
	struct stress_totals t = { 0 };
	char why[KTAP_REASON_MAX];
	bool finished;

	if (!pmu_probe_counts()) {
		report_skip("%s", pmu.why);
		data(&c, &t, pmu.why);
		return;
	}
	if (!stress_prepare(&c, why, sizeof(why))) {
		report_skip("pmu.period=%llu cannot be armed: %s", c.period, why);
		data(&c, &t, why);
		return;
	}

	watchdog_extend(c.seconds);
	host_mark(HOST_MARK_BEGIN, "pmi_stress");
	finished = stress_run(&c);
	host_mark(HOST_MARK_END, "pmi_stress");
	stress_totals(&t, &c);
	stress_checks(&c, &t, finished);
	data(&c, &t, NULL);
}
