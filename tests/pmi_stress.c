// SPDX-License-Identifier: MIT
/*
 * pmi_stress: counters overflow into PMIs through LVTPC on every vCPU at
 * once, and every overflow is serviced.
 *
 * Experiment 2 (README, "Stressing PMI/NMI ordering"): the load under
 * which a host's ordering of PMI and NMI requests on the VM-entry path
 * matters (Linux 6.7, commit fad505b2cb83). Each CPU runs a workload of known instruction count with
 * counter 0 overflowing every pmu.period= events for pmu.seconds=, LVTPC
 * in NMI mode (pmu.lvtpc=fixed: a fixed vector, the baseline), optionally
 * sending pmu.nmi_ipi= NMI IPIs a second to its neighbour so that PMIs
 * coincide with other NMIs. A pass means what the architecture promises:
 * every CPU took PMIs; no overflow is left unserviced once the counters
 * stop; every NMI that found nothing is explained by an earlier one that
 * serviced several events (SDM Vol 3A 6.7.1); LVTPC ends unmasked though
 * each PMI masks it; stopped counters neither count nor overflow. The
 * figures a host is judged by (PMIs per second, delivery gap, skid, cost
 * per PMI) are DATA. No PMU (TCG) is a SKIP that says what CPUID showed.
 */
#include "apic/apic.h"
#include "kernel/lib/json.h"
#include "kernel/test/test.h"
#include "kernel/test/watchdog.h"
#include "pmu/options.h"
#include "pmu/pmu.h"
#include "pmu/stress.h"

/* Gap and skid of the last PMIs of each CPU that the percentiles use. */
#define SAMPLES_PER_CPU 4096

static void data(const struct stress_config *c, const struct stress_totals *t,
		 const char *skipped)
{
	char buf[1536];
	struct json j;

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "test", "pmi_stress");
	pmu_json(&j);
	if (skipped)
		json_string(&j, "skipped", skipped);
	else
		stress_json(&j, c, t);
	json_object_end(&j);
	report_json(&j);
}

DEFINE_TEST(pmi_stress, "PMIs through LVTPC on every CPU, every overflow serviced", 0)
{
	struct stress_config c = {
		.period = pmu_options.period,
		.seconds = pmu_options.seconds,
		.nmi_ipi_rate = pmu_options.nmi_ipi,
		.lvtpc = pmu_options.lvtpc == PMU_LVTPC_NMI ? APIC_LVT_DM_NMI : APIC_VECTOR_PMI,
		.sample_cap = SAMPLES_PER_CPU,
	};
	struct stress_totals t = { 0 };
	u64 armed;
	bool finished;

	if (!pmu_probe_counts()) {
		report_skip("%s", pmu.why);
		data(&c, &t, pmu.why);
		return;
	}
	if (!pmu_arm_value(c.period, pmu.gp_width, pmu.full_width_writes, &armed)) {
		report_skip("pmu.period=%llu cannot be armed on %u-bit counters",
			    c.period, pmu.gp_width);
		data(&c, &t, "period cannot be armed");
		return;
	}

	watchdog_extend(c.seconds);
	finished = stress_run(&c);
	stress_totals(&t, &c);

	report(finished && t.ran == t.cpus, "every CPU finished the stress (%u of %u)", t.ran,
	       t.cpus);
	report_eq(t.with_pmis, t.cpus, "CPUs that took PMIs");
	report_eq(t.unserviced, 0, "overflows left unserviced after the stop");
	report(nmi_counts_explained(&t.counts),
	       "interrupts with no source (%llu) are explained by merged events (%llu)",
	       t.counts.unknown, t.counts.merged);
	/* The workload's count is only a floor: the handler's own instructions count too. */
	if (t.expected_from_reference)
		report(t.overflows <= t.expected + t.cpus,
		       "overflows serviced (%llu) do not exceed what the reference counted (%llu)",
		       t.overflows, t.expected);
	report_eq(t.unmasked, t.cpus, "CPUs whose LVTPC ends unmasked");
	report_eq(t.clean, t.cpus, "CPUs whose counters stopped cleanly");
	report_eq(t.counts.nested, 0, "nested NMI handler entries");
	data(&c, &t, NULL);
}
