// SPDX-License-Identifier: MIT
/* The per-CPU PMI stress; see stress.h. */
#include "apic/apic.h"
#include "apic/smp.h"
#include "kernel/lib/json.h"
#include "kernel/lib/stats.h"
#include "kernel/x86/alloc.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/kernel.h"
#include "kernel/x86/x86.h"
#include "kernel/x86/nmi.h"
#include "pmu/pmi.h"
#include "pmu/pmu.h"
#include "pmu/stress.h"
#include "pmu/workload.h"

/* About 2 M instructions: thousands of PMIs at the default period. */
#define COST_ITERATIONS 65536
/* Between deadline and IPI checks: 2048 instructions. */
#define CHUNK_ITERATIONS 64
/* NMI IPIs one chunk may send when behind; a slow vCPU drops the rest. */
#define IPI_BURST_MAX 8
/* PMIs in flight at the stop land within this, on any host worth testing. */
#define DRAIN_US 2000
#define STRESS_SLACK_SECONDS 10

static struct stress_cpu results[MAX_CPUS];

const struct stress_cpu *stress_result(u32 index)
{
	return &results[index];
}

static struct nmi_counts snapshot(const struct nmi_cpu *n, const struct pmu_cpu *p)
{
	struct nmi_counts c = n->counts;

	nmi_counts_add(&c, &p->vector_counts);
	return c;
}

/* The next online CPU after cpu, wrapping; NULL when cpu is alone. */
static const struct percpu *neighbour(const struct percpu *cpu)
{
	u32 count = cpu_count();

	for (u32 step = 1; step < count; step++) {
		const struct percpu *o = cpu_at((cpu->index + step) % count);

		if (o->state == CPU_ONLINE)
			return o;
	}
	return NULL;
}

static void arm(const struct stress_config *c, struct pmu_cpu *n)
{
	n->lvtpc = c->lvtpc;
	apic_write(APIC_LVT_PMC, c->lvtpc);
	n->pmu_armed = true;
	barrier();
	pmu_arm(c->period);
}

static void stop(struct stress_cpu *r, struct pmu_cpu *n)
{
	u64 c0, c1;

	pmu_disable();
	/* A PMI still on its way finds its status bit, as it would have. */
	udelay(DRAIN_US);
	r->reference_events = pmu_has_reference() ? pmu_read(1) : 0;
	r->unserviced = pmu_stop();
	r->lvtpc_unmasked = !(apic_read(APIC_LVT_PMC) & APIC_LVT_MASKED);
	n->pmu_armed = false;
	barrier();

	c0 = pmu_read(0);
	c1 = pmu_has_reference() ? pmu_read(1) : 0;
	workload_run(&n->work_tsc, COST_ITERATIONS);
	r->stopped_cleanly = pmu_read(0) == c0 && (!pmu_has_reference() || pmu_read(1) == c1) &&
			     !pmu_stop();
	apic_write(APIC_LVT_PMC, APIC_LVT_MASKED);
	n->lvtpc = 0;
}

static void send_due_ipis(const struct percpu *to, struct stress_cpu *r, u64 now,
			  u64 interval, u64 *next)
{
	for (u32 burst = 0; burst < IPI_BURST_MAX && now >= *next; burst++) {
		nmi_ipi_send(to);
		r->ipis_sent++;
		*next += interval;
	}
	if (now >= *next)
		*next = now + interval;
}

static void stress_cpu(void *arg)
{
	const struct stress_config *c = arg;
	struct percpu *cpu = this_cpu();
	struct nmi_cpu *nmi = nmi_cpu(cpu->index);
	struct pmu_cpu *n = pmu_cpu(cpu->index);
	struct stress_cpu *r = &results[cpu->index];
	const struct percpu *to = neighbour(cpu);
	u64 t, interval = c->nmi_ipi_rate ? clock.tsc_hz / c->nmi_ipi_rate : 0, next_ipi;
	struct nmi_counts before = snapshot(nmi, n), after;
	u64 pmis_before = n->pmis, overflows_before = n->overflows;

	*r = (struct stress_cpu){ 0 };
	t = rdtsc();
	workload_run(&n->work_tsc, COST_ITERATIONS);
	r->cost_cycles_off = rdtsc() - t;

	arm(c, n);
	t = rdtsc();
	workload_run(&n->work_tsc, COST_ITERATIONS);
	r->cost_cycles_on = rdtsc() - t;
	r->cost_overflows = n->overflows - overflows_before;

	next_ipi = rdtsc();
	while ((t = rdtsc()) < c->end_tsc) {
		workload_run(&n->work_tsc, CHUNK_ITERATIONS);
		r->iterations += CHUNK_ITERATIONS;
		if (interval && to)
			send_due_ipis(to, r, t, interval, &next_ipi);
	}
	stop(r, n);

	after = snapshot(nmi, n);
	nmi_counts_sub(&r->counts, &after, &before);
	r->pmis = n->pmis - pmis_before;
	r->overflows = n->overflows - overflows_before;
	r->ran = true;
}

static void prepare_samples(u32 cap)
{
	for (u32 i = 0; i < cpu_count(); i++) {
		struct pmu_cpu *n = pmu_cpu(i);

		n->samples = 0;
		if (n->sample_cap >= cap)
			continue;
		n->gap = boot_alloc(cap * sizeof(u64), sizeof(u64));
		n->skid = boot_alloc(cap * sizeof(u64), sizeof(u64));
		n->sample_cap = n->gap && n->skid ? cap : 0;
	}
}

bool stress_run(struct stress_config *c)
{
	prepare_samples(c->sample_cap);
	for (u32 i = 0; i < cpu_count(); i++)
		results[i] = (struct stress_cpu){ 0 };
	c->end_tsc = rdtsc() + c->seconds * clock.tsc_hz;
	return smp_run_all(stress_cpu, c, (c->seconds + STRESS_SLACK_SECONDS) * 1000000);
}

void stress_totals(struct stress_totals *t, const struct stress_config *c)
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
		t->expected += events / c->period;
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

void stress_json(struct json *j, const struct stress_config *c, const struct stress_totals *t)
{
	json_string(j, "lvtpc", c->lvtpc == APIC_LVT_DM_NMI ? "nmi" : "fixed");
	json_u64(j, "period", c->period);
	json_u64(j, "seconds", c->seconds);
	json_u64(j, "nmi_ipi_rate", c->nmi_ipi_rate);
	json_u64(j, "cpus", t->ran);
	json_u64(j, "pmis", t->pmis);
	json_u64(j, "pmis_per_s_per_cpu", t->ran ? t->pmis / c->seconds / t->ran : 0);
	json_u64(j, "overflows", t->overflows);
	json_u64(j, "overflows_expected", t->expected);
	json_string(j, "expected_from", t->expected_from_reference ? "reference counter"
								     : "workload instructions");
	json_u64(j, "nmis", t->counts.nmis);
	json_u64(j, "nmi_ipis_sent", t->ipis_sent);
	json_u64(j, "nmi_ipis_seen", t->counts.ipis);
	json_u64(j, "unknown_nmis", t->counts.unknown);
	json_u64(j, "multi", t->counts.multi);
	json_u64(j, "merged", t->counts.merged);
	json_u64(j, "unserviced", t->unserviced);
	json_percentiles(j, "skid", true);
	json_percentiles(j, "gap_cycles", false);
	json_u64(j, "cost_per_pmi_cycles", t->cost_per_pmi);
	json_u64(j, "tsc_hz", clock.tsc_hz);
}
