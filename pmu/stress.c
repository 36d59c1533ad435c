// SPDX-License-Identifier: MIT
/* The per-CPU PMI stress; see stress.h. */
#include "pmu/stress.h"
#include "apic/apic.h"
#include "apic/smp/smp.h"
#include "kernel/kernel.h"
#include "kernel/lib/json.h"
#include "kernel/lib/stats.h"
#include "kernel/test/ktap.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/x86.h"
#include "pmu/pmi.h"
#include "pmu/pmu.h"
#include "pmu/workload.h"

/*
 * The cost phase runs this many periods' worth of work (pmu.period events
 * each) with and without the counters armed: enough for a median of the
 * cost per PMI, bounded for long periods (at a period of 10^7 the bound
 * leaves about 54 periods); the DATA says how many PMIs it took.
 */
#define COST_PMIS 2000
#define COST_ITERATIONS_MIN 65536
#define COST_ITERATIONS_MAX (1ULL << 24)
/* Between deadline and IPI checks: 2048 instructions. */
#define CHUNK_ITERATIONS 64
/* NMI IPIs one chunk may send when behind; a slow vCPU drops the rest. */
#define IPI_BURST_MAX 8
/* PMIs in flight at the stop land within this, on any host worth testing. */
#define DRAIN_US 2000
#define MAIL_DRAIN_US 2000000
/* A CPU that does not reach a phase in this long is reported, not waited for. */
#define PHASE_TIMEOUT_US 10000000ULL
#define STRESS_SLACK_SECONDS 30

enum phase { PHASE_START, PHASE_SENT, PHASE_QUIET, PHASE_COUNT };

static struct stress_cpu results[MAX_CPUS];
static struct {
	volatile u32 arrived[PHASE_COUNT];
	u32 cpus; /* that run the stress */
} step;

const struct stress_cpu *stress_result(u32 index)
{
	return &results[index];
}

/* Wait for every CPU at phase p; false when one is late past the timeout. */
static bool phase(enum phase p)
{
	u64 limit = PHASE_TIMEOUT_US * (clock.tsc_hz / 1000000), start = rdtsc();

	__atomic_fetch_add(&step.arrived[p], 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&step.arrived[p], __ATOMIC_ACQUIRE) < step.cpus)
		if (rdtsc() - start > limit)
			return false;
		else
			pause();
	return true;
}

/* Only with every CPU quiet (phase()): nothing updates them meanwhile. */
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

/*
 * Programmed before armed, armed before counting: an NMI in between
 * finds the counters at their armed values (top bit set: no overflow),
 * never a probe's leftover value, and no overflow comes before the
 * handler is ready for it.
 */
static void arm(const struct stress_config *c, struct pmu_cpu *p)
{
	pmu_program(&c->plan);
	p->lvtpc = c->lvtpc;
	apic_write(APIC_LVT_PMC, c->lvtpc);
	p->pmu_armed = true;
	barrier();
	pmu_enable();
}

static bool mail_empty(void *arg)
{
	return !((struct nmi_cpu *)arg)->mail;
}

/*
 * Counting off; PMIs raised before that land while the handler is still
 * armed; the NMI IPIs sent here are seen. Then the handler is disarmed,
 * and made to see it, before what is left is read: an NMI that came
 * between the read and the disarm would service an overflow counted as
 * left over too. Counters the host wrapped without a status bit are
 * found before the status is cleared.
 */
static void stop(struct stress_cpu *r, struct pmu_cpu *p, struct nmi_cpu *n,
		 const struct stress_config *c)
{
	const struct pmu_counter *first = &c->plan.armed[0];
	u64 first_value, reference;

	pmu_disable();
	udelay(DRAIN_US);
	r->mail_drained = smp_wait(mail_empty, n, MAIL_DRAIN_US);
	p->pmu_armed = false;
	barrier();
	r->reference_events = pmu_read_reference();
	r->lost_counters = pmu_silent_wraps();
	r->unserviced = pmu_leftover();
	r->lvtpc_unmasked = !(apic_read(APIC_LVT_PMC) & APIC_LVT_MASKED);

	first_value = pmu_read(first);
	reference = pmu_read_reference();
	workload_run(&p->work_tsc, COST_ITERATIONS_MIN);
	r->stopped_cleanly = pmu_read(first) == first_value && pmu_read_reference() == reference &&
			     !pmu_leftover();
	apic_write(APIC_LVT_PMC, APIC_LVT_MASKED);
	p->lvtpc = 0;
}

static void send_due_ipis(const struct percpu *to, struct stress_cpu *r, u64 now, u64 interval,
			  u64 *next)
{
	for (u32 burst = 0; burst < IPI_BURST_MAX && now >= *next; burst++) {
		nmi_ipi_send(to);
		r->ipis_sent++;
		*next += interval;
	}
	if (now >= *next)
		*next = now + interval;
}

/* What a CPU's counters hold now, to subtract at the end. */
static void take_before(struct stress_cpu *before, const struct pmu_cpu *p)
{
	before->pmis = p->pmis;
	before->overflows = p->overflows;
	for (u32 i = 0; i < PMU_ARMED_MAX; i++)
		before->counter_overflows[i] = p->counter_overflows[i];
	before->rereads = p->rereads;
	before->gap_outside = p->gap_outside;
	before->pmis_lvtpc_masked = p->lvtpc_masked;
	before->pmis_lvtpc_unmasked = p->lvtpc_unmasked;
	before->twice = p->twice;
}

static void take_after(struct stress_cpu *r, const struct stress_cpu *before,
		       const struct pmu_cpu *p)
{
	r->pmis = p->pmis - before->pmis;
	r->overflows = p->overflows - before->overflows;
	for (u32 i = 0; i < PMU_ARMED_MAX; i++)
		r->counter_overflows[i] = p->counter_overflows[i] - before->counter_overflows[i];
	r->rereads = p->rereads - before->rereads;
	r->gap_outside = p->gap_outside - before->gap_outside;
	r->pmis_lvtpc_masked = p->lvtpc_masked - before->pmis_lvtpc_masked;
	r->pmis_lvtpc_unmasked = p->lvtpc_unmasked - before->pmis_lvtpc_unmasked;
	r->twice = p->twice - before->twice;
}

static void stress_cpu(void *arg)
{
	const struct stress_config *c = arg;
	struct percpu *cpu = this_cpu();
	struct nmi_cpu *n = nmi_cpu(cpu->index);
	struct pmu_cpu *p = pmu_cpu(cpu->index);
	struct stress_cpu *r = &results[cpu->index], was = { 0 };
	const struct percpu *to = neighbour(cpu);
	u64 t, armed_at, interval = c->nmi_ipi_rate ? clock.tsc_hz / c->nmi_ipi_rate : 0;
	u64 next_ipi;
	struct nmi_counts before, after;
	bool in_step;

	*r = (struct stress_cpu){ 0 };
	/* Before the start: no CPU arms or sends until every one has this. */
	before = snapshot(n, p);
	take_before(&was, p);
	in_step = phase(PHASE_START);

	t = rdtsc();
	workload_run(&p->work_tsc, c->cost_iterations);
	r->cost_cycles_off = rdtsc() - t;

	arm(c, p);
	t = armed_at = rdtsc();
	workload_run(&p->work_tsc, c->cost_iterations);
	r->cost_cycles_on = rdtsc() - t;
	r->cost_pmis = p->pmis - was.pmis;

	next_ipi = rdtsc();
	while ((t = rdtsc()) < c->end_tsc) {
		workload_run(&p->work_tsc, CHUNK_ITERATIONS);
		r->iterations += CHUNK_ITERATIONS;
		if (interval && to)
			send_due_ipis(to, r, t, interval, &next_ipi);
	}
	r->armed_iterations = c->cost_iterations + r->iterations;
	r->armed_cycles = rdtsc() - armed_at;
	in_step &= phase(PHASE_SENT);
	stop(r, p, n, c);
	in_step &= phase(PHASE_QUIET);

	after = snapshot(n, p);
	nmi_counts_sub(&r->counts, &after, &before);
	take_after(r, &was, p);
	r->in_step = in_step;
	r->ran = true;
}

static void prepare_samples(u32 cap)
{
	for (u32 i = 0; i < cpu_count(); i++) {
		struct pmu_cpu *p = pmu_cpu(i);

		p->gap_samples = p->skid_samples = 0;
		if (p->sample_cap >= cap)
			continue;
		p->gap = boot_alloc(cap * sizeof(u64), sizeof(u64));
		p->skid = boot_alloc(cap * sizeof(u64), sizeof(u64));
		p->sample_cap = p->gap && p->skid ? cap : 0;
	}
}

bool stress_prepare(struct stress_config *c, char *why, size_t whylen)
{
	u64 iterations = COST_PMIS * c->period / WORKLOAD_INSNS_PER_ITERATION;

	c->cost_iterations = MIN(MAX(iterations, (u64)COST_ITERATIONS_MIN), COST_ITERATIONS_MAX);
	if (c->cost_pmis)
		c->cost_iterations = c->cost_pmis * c->period / WORKLOAD_INSNS_PER_ITERATION;
	if (!pmu_plan(&pmu, c->period, c->counters ? c->counters : PMU_ARMED_MAX, &c->plan, why,
		      whylen))
		return false;
	/*
	 * The lean form (pmu_lean()) only where every NMI is a PMI: with
	 * nothing paused, an NMI IPI's entry can find the counter a few
	 * instructions from its wrap, which then lands between the handler's
	 * reads and its LVTPC write and takes the host's mask with it
	 * (unit_pmi_model_lean_race).
	 */
	c->plan.lean = c->counters == 1 && pmu.global_ctrl && !c->nmi_ipi_rate;
	return true;
}

bool stress_run(struct stress_config *c)
{
	prepare_samples(c->sample_cap);
	step = (typeof(step)){ 0 };
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *cpu = cpu_at(i);

		results[i] = (struct stress_cpu){ 0 };
		/* smp_run_all() leaves an AP still busy with earlier work alone. */
		step.cpus += cpu->state == CPU_ONLINE && (!i || !cpu->work);
	}
	c->end_tsc = rdtsc() + c->seconds * clock.tsc_hz;
	return smp_run_all(stress_cpu, c, (c->seconds + STRESS_SLACK_SECONDS) * 1000000);
}

/* One CPU's armed counters: expected overflows, and whether one fell short. */
static bool add_counters(struct stress_totals *t, const struct stress_config *c,
			 const struct stress_cpu *r)
{
	/*
	 * What this CPU counted, armed: the reference counter, or the
	 * workload's own instructions, a floor without one (the handler's
	 * instructions count too).
	 */
	u64 events = t->expected_from_reference
			     ? r->reference_events
			     : r->armed_iterations * WORKLOAD_INSNS_PER_ITERATION;
	bool short_counter = false;

	for (u32 k = 0; k < c->plan.narmed; k++) {
		const struct pmu_counter *pc = &c->plan.armed[k];
		u64 expected = events / pc->period;

		t->counter_overflows[k] += r->counter_overflows[k];
		if (!pc->counts_instructions)
			continue;
		t->counter_expected[k] += expected;
		t->instruction_overflows += r->counter_overflows[k];
		t->instruction_expected += expected;
		/* A counter the host wrapped silently counts on from 0: explained. */
		short_counter |= !(r->lost_counters & BIT(k)) &&
				 r->counter_overflows[k] * 1000 < expected * STRESS_STRICT_PERMILLE;
	}
	return short_counter;
}

static u32 bits_set(u64 v)
{
	u32 n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

void stress_totals(struct stress_totals *t, const struct stress_config *c)
{
	static u64 costs[MAX_CPUS];
	u32 ncost = 0;

	*t = (struct stress_totals){ 0 };
	t->expected_from_reference = c->plan.has_reference;
	/*
	 * Strict needs NMIs from nowhere but the PMU. A PMU without global
	 * control counts on while it is serviced, and an overflow there
	 * raises a PMI that waits for an NMI that finds it serviced: that
	 * NMI is credited (pmi_raised()), so strict holds there too.
	 */
	t->strict = !c->nmi_ipi_rate;
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct stress_cpu *r = stress_result(i);

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
		t->in_step += r->in_step;
		t->drained += r->mail_drained;
		t->unserviced += r->unserviced;
		t->iterations += r->iterations;
		t->ipis_sent += r->ipis_sent;
		t->rereads += r->rereads;
		t->gap_outside += r->gap_outside;
		t->armed_cycles += r->armed_cycles;
		t->cost_pmis += r->cost_pmis;
		t->lost += bits_set(r->lost_counters);
		t->pmis_lvtpc_masked += r->pmis_lvtpc_masked;
		t->pmis_lvtpc_unmasked += r->pmis_lvtpc_unmasked;
		t->twice += r->twice;
		nmi_counts_add(&t->counts, &r->counts);
		/* Credit explains NMIs with no source only on the CPU it was earned on. */
		t->unexplained_cpus += !nmi_counts_explained(&r->counts);
		t->twice_needed_cpus += nmi_counts_explained(&r->counts) &&
					r->counts.unknown + r->twice > r->counts.credit;
		t->strict_short_cpus += add_counters(t, c, r);
		/* Per PMI, not per overflow: one PMI may service several. */
		if (r->cost_pmis && r->cost_cycles_on > r->cost_cycles_off)
			costs[ncost++] = (r->cost_cycles_on - r->cost_cycles_off) / r->cost_pmis;
	}
	sort_u64(costs, ncost);
	t->cost_per_pmi = ncost ? percentile_u64(costs, ncost, 50) : 0;
}

/* With no NMI IPIs every NMI is a PMI, and every overflow must be there. */
static void strict_checks(const struct stress_config *c, const struct stress_totals *t)
{
	report_prefix_push("strict");
	report(c->plan.narmed > 1 || !t->counts.multi,
	       "NMIs that found several overflows (%llu) come from several armed counters (%u)",
	       t->counts.multi, c->plan.narmed);
	report_eq(t->strict_short_cpus, 0,
		  "CPUs on which a counter serviced fewer than 98 % of the overflows expected");
	report_prefix_pop();
}

void stress_checks(const struct stress_config *c, const struct stress_totals *t, bool finished)
{
	report(finished && t->ran == t->cpus, "every CPU finished the stress (%u of %u)", t->ran,
	       t->cpus);
	report_eq(t->in_step, t->ran, "CPUs that reached every phase in step");
	report_eq(t->with_pmis, t->cpus, "CPUs that took PMIs");
	report_eq(t->unserviced, 0, "overflows left unserviced after the stop");
	report_eq(t->unexplained_cpus, 0,
		  "CPUs whose NMIs with no source exceed what their events may have raised");
	/*
	 * Only the counters counting instructions have an expected count:
	 * the fixed cycle counters KVM gives every Intel guest overflow too.
	 */
	if (t->expected_from_reference)
		report(t->instruction_overflows <=
			       t->instruction_expected + t->cpus * c->plan.narmed,
		       "overflows of instruction counters (%llu) do not exceed what the reference "
		       "counted (%llu)",
		       t->instruction_overflows, t->instruction_expected);
	report_eq(t->drained, t->ran, "CPUs that saw every NMI IPI sent to them");
	report_eq(t->counts.ipis, t->ipis_sent, "NMI IPIs seen by a handler");
	report_eq(t->unmasked, t->cpus, "CPUs whose LVTPC ends unmasked");
	report_eq(t->clean, t->cpus, "CPUs whose counters stopped cleanly");
	report_eq(t->counts.nested, 0, "nested NMI handler entries");
	if (t->strict)
		strict_checks(c, t);
}

/* Every CPU's kept samples of one kind, sorted, in one array. */
static u32 gather(u64 **out, bool skid)
{
	static u64 *all;
	static u32 all_cap;
	u32 n = 0, need = 0;

	for (u32 i = 0; i < cpu_count(); i++) {
		const struct pmu_cpu *p = pmu_cpu(i);

		need += MIN(skid ? p->skid_samples : p->gap_samples, (u64)p->sample_cap);
	}
	if (need > all_cap) {
		all = boot_alloc(need * sizeof(u64), sizeof(u64));
		all_cap = all ? need : 0;
	}
	for (u32 i = 0; i < cpu_count() && all; i++) {
		const struct pmu_cpu *p = pmu_cpu(i);
		u32 kept = MIN(skid ? p->skid_samples : p->gap_samples, (u64)p->sample_cap);

		for (u32 k = 0; k < kept; k++)
			all[n++] = skid ? p->skid[k] : p->gap[k];
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

/* "yes", "no", or what the guest cannot tell apart. */
static const char *seen(bool yes, bool no, const char *otherwise)
{
	return yes ? "yes" : no ? "no" : otherwise;
}

/*
 * LVTPC masked at a PMI's entry is a16eb25b09c0 (6.6); on AMD its absence
 * is either no a16eb25b09c0 or a16eb25b09c0 with 49ff3b4aec51 (6.9), which
 * stops masking for AMD guests only. Where the host masks, a second
 * delivery in one VM exit finds LVTPC masked and is dropped: the guest
 * cannot see 73554b29bd70 at all. Where it does not, an NMI with no
 * source after one that found a single overflow is no sign of a double
 * delivery (an overflow while the handler ran leaves its own NMI with
 * nothing to find); only NMIs with no source that the single deliveries
 * do not explain are, and only while the second deliveries credited
 * explain them (a CPU still unexplained is something else). Anything
 * less is "unseen". fad505b2cb83 changes when KVM injects the NMI, never
 * what the guest sees: pmi-verdict tells it from the host.
 */
void stress_kvm_json(struct json *j, const struct stress_totals *t)
{
	bool masks = t->pmis_lvtpc_masked && !t->pmis_lvtpc_unmasked;
	bool never = t->pmis_lvtpc_unmasked && !t->pmis_lvtpc_masked;
	bool amd = pmu.vendor == PMU_AMD;

	json_u64(j, "lvtpc_masked_pmis", t->pmis_lvtpc_masked);
	json_u64(j, "lvtpc_unmasked_pmis", t->pmis_lvtpc_unmasked);
	json_u64(j, "unknown_after_one", t->counts.unknown_after_one);
	json_u64(j, "unknown_after_several", t->counts.unknown_after_several);
	json_u64(j, "credit_twice", t->twice);
	json_u64(j, "twice_needed_cpus", t->twice_needed_cpus);
	json_u64(j, "lost_overflows", t->lost);
	json_string(j, "a16eb25b09c0", seen(masks, never && !amd, "either"));
	json_string(j, "49ff3b4aec51", amd ? seen(false, masks, "either") : "unseen");
	json_string(j, "73554b29bd70", seen(false, never && t->twice_needed_cpus, "unseen"));
	json_string(j, "fad505b2cb83", "unseen");
}

void stress_json(struct json *j, const struct stress_config *c, const struct stress_totals *t)
{
	json_string(j, "lvtpc", c->lvtpc == APIC_LVT_DM_NMI ? "nmi" : "fixed");
	json_u64(j, "period", c->period);
	json_u64(j, "counters_armed", c->plan.narmed);
	json_u64(j, "seconds", c->seconds);
	json_u64(j, "nmi_ipi_rate", c->nmi_ipi_rate);
	json_bool(j, "strict", t->strict);
	json_u64(j, "cpus", t->ran);
	json_u64(j, "pmis", t->pmis);
	/* Over the armed time only: the unarmed cost phase takes none. */
	json_u64(j, "pmis_per_s_per_cpu",
		 t->armed_cycles ? t->pmis * clock.tsc_hz / t->armed_cycles : 0);
	json_u64(j, "overflows", t->overflows);
	json_u64(j, "instruction_overflows", t->instruction_overflows);
	json_u64(j, "overflows_expected", t->instruction_expected);
	json_string(j, "expected_from",
		    t->expected_from_reference ? "reference counter" : "workload instructions");
	json_u64(j, "nmis", t->counts.nmis);
	json_u64(j, "nmi_ipis_sent", t->ipis_sent);
	json_u64(j, "nmi_ipis_seen", t->counts.ipis);
	json_u64(j, "unknown_nmis", t->counts.unknown);
	json_u64(j, "multi", t->counts.multi);
	json_u64(j, "merged", t->counts.merged);
	json_u64(j, "credit", t->counts.credit);
	json_u64(j, "rereads", t->rereads);
	json_u64(j, "unserviced", t->unserviced);
	json_percentiles(j, "skid", true);
	json_percentiles(j, "gap_cycles", false);
	json_u64(j, "gap_outside_loop", t->gap_outside);
	json_u64(j, "cost_per_pmi_cycles", t->cost_per_pmi);
	json_u64(j, "cost_iterations", c->cost_iterations);
	json_u64(j, "cost_pmis", t->cost_pmis);
	json_u64(j, "tsc_hz", clock.tsc_hz);
}

void stress_counter_json(struct json *j, const struct stress_config *c,
			 const struct stress_totals *t, u32 k)
{
	const struct pmu_counter *pc = &c->plan.armed[k];

	json_u64(j, "counter", k);
	json_string(j, "kind", pc->fixed ? "fixed" : "gp");
	json_u64(j, "index", pc->index);
	json_string(j, "event", pc->event.name);
	json_u64(j, "period", pc->period);
	json_u64(j, "overflows", t->counter_overflows[k]);
	if (pc->counts_instructions)
		json_u64(j, "overflows_expected", t->counter_expected[k]);
}
