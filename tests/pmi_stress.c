// SPDX-License-Identifier: MIT
/*
 * pmi_stress: counters overflow into PMIs through LVTPC on every vCPU at
 * once, and every overflow is serviced.
 *
 * Experiment 2 (DESIGN.md): the load under which a host's ordering of
 * PMI and NMI requests on the VM-entry path matters (Linux 6.7, commit
 * fad505b2cb83). Each CPU runs a workload of known instruction count with
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
#include "apic/smp.h"
#include "kernel/x86/alloc.h"
#include "kernel/time/clock.h"
#include "kernel/lib/json.h"
#include "kernel/kernel.h"
#include "kernel/lib/stats.h"
#include "kernel/test/test.h"
#include "kernel/test/watchdog.h"
#include "pmu/pmi.h"
#include "pmu/options.h"
#include "pmu/pmu.h"
#include "pmu/stress.h"
#include "pmu/workload.h"

/* Gap and skid of the last PMIs of each CPU that the percentiles use. */
#define SAMPLES_PER_CPU 4096

static const char *vendor_name(enum pmu_vendor v)
{
	return v == PMU_INTEL ? "intel" : v == PMU_AMD ? "amd" : "none";
}

struct totals {
	u32 cpus, ran, with_pmis, unmasked, clean;
	u64 unserviced, expected, iterations, ipis_sent, pmis, overflows;
	bool expected_from_reference;
	struct nmi_counts counts;
	u64 cost_per_pmi; /* median over CPUs */
};

static void add_up(struct totals *t)
{
	static u64 costs[MAX_CPUS];
	u32 ncost = 0;

	t->expected_from_reference = pmu_has_reference();
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct stress_cpu *r = stress_result(i);
		u64 events;

		if (cpu_at(i)->state != CPU_ONLINE)
			continue;
		t->cpus++;
		if (!r->ran)
			continue;
		t->ran++;
		t->with_pmis += r->pmis > 0;
		t->pmis += r->pmis;
		t->overflows += r->overflows;
		t->unmasked += r->lvtpc_unmasked;
		t->clean += r->stopped_cleanly;
		t->unserviced += r->unserviced;
		t->iterations += r->iterations;
		t->ipis_sent += r->ipis_sent;
		/* Without a reference counter, the workload's own count is a floor. */
		events = t->expected_from_reference
				 ? r->reference_events
				 : r->iterations * WORKLOAD_INSNS_PER_ITERATION;
		t->expected += events / pmu_options.period;
		nmi_counts_add(&t->counts, &r->counts);
		if (r->cost_overflows && r->cost_cycles_on > r->cost_cycles_off)
			costs[ncost++] = (r->cost_cycles_on - r->cost_cycles_off) / r->cost_overflows;
	}
	sort_u64(costs, ncost);
	t->cost_per_pmi = ncost ? percentile_u64(costs, ncost, 50) : 0;
}

/* Every CPU's kept samples of one kind, sorted, in one array. */
static u32 gather(u64 **out, bool skid)
{
	static u64 *all;
	static u32 all_cap;
	u32 n = 0, need = 0;

	for (u32 i = 0; i < cpu_count(); i++)
		need += MIN(pmu_cpu(i)->samples, (u64)pmu_cpu(i)->sample_cap);
	if (need > all_cap) {
		all = boot_alloc(need * sizeof(u64), sizeof(u64));
		all_cap = all ? need : 0;
	}
	for (u32 i = 0; i < cpu_count() && all; i++) {
		const struct pmu_cpu *c = pmu_cpu(i);
		u32 kept = MIN(c->samples, (u64)c->sample_cap);

		for (u32 k = 0; k < kept; k++)
			all[n++] = skid ? c->skid[k] : c->gap[k];
	}
	sort_u64(all, n);
	*out = all;
	return n;
}

static void json_percentiles(struct json *j, const char *key, bool skid)
{
	u64 *v;
	u32 n = gather(&v, skid);

	json_object_begin(j, key);
	json_u64(j, "samples", n);
	json_u64(j, skid ? "median" : "p50", n ? percentile_u64(v, n, 50) : 0);
	if (!skid)
		json_u64(j, "p99", n ? percentile_u64(v, n, 99) : 0);
	json_u64(j, "max", n ? v[n - 1] : 0);
	json_object_end(j);
}

static void data(const struct totals *t, const char *skipped)
{
	char buf[1536];
	struct json j;
	u64 seconds = pmu_options.seconds;

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "test", "pmi_stress");
	json_string(&j, "vendor", vendor_name(pmu.vendor));
	json_u64(&j, "pmu_version", pmu.version);
	if (skipped) {
		json_string(&j, "skipped", skipped);
		json_object_end(&j);
		report_json(&j);
		return;
	}
	json_string(&j, "event", pmu.event.name);
	json_u64(&j, "gp_counters", pmu.gp_counters);
	json_u64(&j, "counter_width", pmu.gp_width);
	json_u64(&j, "fixed_counters", pmu.fixed_counters);
	json_bool(&j, "full_width_writes", pmu.full_width_writes);
	json_string(&j, "lvtpc", pmu_lvtpc_names[pmu_options.lvtpc]);
	json_u64(&j, "period", pmu_options.period);
	json_u64(&j, "seconds", seconds);
	json_u64(&j, "nmi_ipi_rate", pmu_options.nmi_ipi);
	json_u64(&j, "cpus", t->ran);
	json_u64(&j, "pmis", t->pmis);
	json_u64(&j, "pmis_per_s_per_cpu", t->ran ? t->pmis / seconds / t->ran : 0);
	json_u64(&j, "overflows", t->overflows);
	json_u64(&j, "overflows_expected", t->expected);
	json_string(&j, "expected_from", t->expected_from_reference ? "reference counter"
								     : "workload instructions");
	json_u64(&j, "nmis", t->counts.nmis);
	json_u64(&j, "nmi_ipis_sent", t->ipis_sent);
	json_u64(&j, "nmi_ipis_seen", t->counts.ipis);
	json_u64(&j, "unknown_nmis", t->counts.unknown);
	json_u64(&j, "multi", t->counts.multi);
	json_u64(&j, "merged", t->counts.merged);
	json_u64(&j, "unserviced", t->unserviced);
	json_percentiles(&j, "skid", true);
	json_percentiles(&j, "gap_cycles", false);
	json_u64(&j, "cost_per_pmi_cycles", t->cost_per_pmi);
	json_u64(&j, "tsc_hz", clock.tsc_hz);
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
	struct totals t = { 0 };
	u64 armed;
	bool finished;

	if (!pmu_probe_counts()) {
		report_skip("%s", pmu.why);
		data(&t, pmu.why);
		return;
	}
	if (!pmu_arm_value(c.period, pmu.gp_width, pmu.full_width_writes, &armed)) {
		report_skip("pmu.period=%llu cannot be armed on %u-bit counters",
			    (unsigned long long)c.period, pmu.gp_width);
		data(&t, "period cannot be armed");
		return;
	}

	watchdog_extend(c.seconds);
	finished = stress_run(&c);
	add_up(&t);

	report(finished && t.ran == t.cpus, "every CPU finished the stress (%u of %u)", t.ran,
	       t.cpus);
	report_eq(t.with_pmis, t.cpus, "CPUs that took PMIs");
	report_eq(t.unserviced, 0, "overflows left unserviced after the stop");
	report(nmi_counts_explained(&t.counts),
	       "interrupts with no source (%llu) are explained by merged events (%llu)",
	       (unsigned long long)t.counts.unknown, (unsigned long long)t.counts.merged);
	/* The workload's count is only a floor: the handler's own instructions count too. */
	if (t.expected_from_reference)
		report(t.overflows <= t.expected + t.cpus,
		       "overflows serviced (%llu) do not exceed what the reference counted (%llu)",
		       (unsigned long long)t.overflows, (unsigned long long)t.expected);
	report_eq(t.unmasked, t.cpus, "CPUs whose LVTPC ends unmasked");
	report_eq(t.clean, t.cpus, "CPUs whose counters stopped cleanly");
	report_eq(t.counts.nested, 0, "nested NMI handler entries");
	data(&t, NULL);
}
