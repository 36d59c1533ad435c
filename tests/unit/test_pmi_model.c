// SPDX-License-Identifier: MIT
/*
 * The PMI stress and the NMI path, run unchanged on the host model of a
 * KVM guest (tests/unit/model.h), and held against what really happened
 * there. No vPMU is to be had on the machines the project runs on, so
 * this is where the NMI path's ordering is tested: each case below is
 * one defect a review found, arranged so that it shows when the fix is
 * reverted (the case says how), and seeded, so that a failure repeats.
 *
 * The invariants: every overflow that happened is serviced or reported
 * as left over, never both and never neither; no PMI is lost for good;
 * each CPU's NMIs with no source are explained by its own merged events;
 * every NMI IPI sent is seen; and the figures the stress reports equal
 * the model's truth.
 */
#include <stdlib.h>
#include <string.h>

#include "apic/apic.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/test/ktap.h"
#include "kernel/test/test.h"
#include "kernel/time/clock.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"
#include "pmu/pmi.h"
#include "pmu/pmu.h"
#include "pmu/stress.h"
#include "pmu/workload.h"
#include "tests/unit/model.h"

#define PERIOD 997 /* events: a few hundred PMIs per CPU in a model second */

static struct stress_config config(u64 period, u64 nmi_ipi_rate)
{
	return (struct stress_config){
		.period = period,
		.seconds = 1,
		.nmi_ipi_rate = nmi_ipi_rate,
		.lvtpc = APIC_LVT_DM_NMI,
		.sample_cap = 64,
		.cost_pmis = 20,
	};
}

/* Probe, plan and run the stress on the model; false (reported) if any step failed. */
static bool stress(const struct model_config *m, struct stress_config *c, struct stress_totals *t,
		   void (*before_run)(void))
{
	char why[160];

	model_start(m);
	if (!pmu_probe_counts()) {
		report_error("the model's PMU does not count: %s", pmu.why);
		return false;
	}
	if (!stress_prepare(c, why, sizeof(why))) {
		report_error("the counters cannot be armed: %s", why);
		return false;
	}
	if (before_run)
		before_run();
	report(stress_run(c), "the stress ran on every model CPU");
	*t = (struct stress_totals){ 0 };
	stress_totals(t, c);
	return true;
}

/* Start the model, probe and plan; false (reported) when that fails. */
static bool ready(const struct model_config *m, struct stress_config *c)
{
	char why[160];

	model_start(m);
	if (!pmu_probe_counts() || !stress_prepare(c, why, sizeof(why))) {
		report_error("the model's PMU is not ready: %s", pmu.why[0] ? pmu.why : why);
		return false;
	}
	return true;
}

/* Overflows the model saw on cpu, over the armed counters. */
static u64 truth_overflows(u32 cpu, const struct stress_config *c)
{
	u64 n = 0;

	for (u32 k = 0; k < c->plan.narmed; k++)
		n += model_truth(cpu)->overflows[c->plan.armed[k].status_bit];
	return n;
}

/* Serviced plus left over equals what happened, on every CPU. */
static bool every_overflow_once(u32 cpus, const struct stress_config *c, const char *what)
{
	u32 wrong = 0;

	for (u32 i = 0; i < cpus; i++) {
		const struct stress_cpu *r = stress_result(i);

		if (r->overflows + r->unserviced != truth_overflows(i, c)) {
			report_info("CPU %u: %llu serviced + %llu left over, %llu happened", i,
				    r->overflows, r->unserviced, truth_overflows(i, c));
			wrong++;
		}
	}
	return report(!wrong, "%s: every overflow serviced or left over, exactly once", what);
}

DEFINE_TEST(unit_pmi_model_truth, "the stress on the model reports what happened", 0)
{
	struct model_config m = model_intel_v2(2, 1);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	if (!stress(&m, &c, &t, NULL))
		return;
	report_eq(c.plan.narmed, 6, "three GP counters and three fixed ones armed");
	report_eq(t.ran, 2, "both model CPUs ran the stress");
	report_eq(t.in_step, 2, "and reached every phase in step");
	every_overflow_once(2, &c, "no injections");
	report_eq(t.unserviced, 0, "nothing left over");
	report_eq(t.unexplained_cpus + t.counts.unknown, 0, "no NMI without a source");
	/* A PMI that finds LVTPC masked (another one's, on its way) is dropped, its bit kept. */
	report(t.counts.merged >= model_truth(0)->pmis_dropped + model_truth(1)->pmis_dropped,
	       "every PMI that found LVTPC masked was serviced with another (%llu merged, %llu "
	       "dropped)",
	       t.counts.merged, model_truth(0)->pmis_dropped + model_truth(1)->pmis_dropped);
	report_eq(t.strict_short_cpus, 0, "every counter within 2 % of its expected overflows");
	report_eq(t.unmasked, 2, "LVTPC ends unmasked");
	report_eq(t.clean, 2, "the counters stop cleanly");
}

/*
 * Defect 11: with one counter armed, a status register never held two
 * bits and merging was only claimed. With six at co-prime periods,
 * several overflows fall into one NMI now and then, and each counter's
 * are accounted as the model counted them. Reverting to one armed
 * counter fails the first check.
 */
DEFINE_TEST(unit_pmi_model_merging, "several counters armed: merged overflows are exercised", 0)
{
	struct model_config m = model_intel_v2(1, 7);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;
	u32 wrong = 0;

	if (!stress(&m, &c, &t, NULL))
		return;
	report(t.counts.multi > 0, "NMIs that found several overflows: %llu", t.counts.multi);
	report(t.pmis < t.overflows, "fewer PMIs (%llu) than overflows (%llu)", t.pmis,
	       t.overflows);
	for (u32 k = 0; k < c.plan.narmed; k++)
		wrong += t.counter_overflows[k] !=
			 model_truth(0)->overflows[c.plan.armed[k].status_bit];
	report_eq(wrong, 0, "counters whose serviced overflows differ from what happened");
	for (u32 a = 0; a < c.plan.narmed; a++)
		for (u32 b = a + 1; b < c.plan.narmed; b++)
			wrong += c.plan.armed[a].period == c.plan.armed[b].period;
	report_eq(wrong, 0, "counters sharing a period");
}

/*
 * Defect 2: the stop read the leftover status while the handler was
 * still armed, and an NMI landing right after that read (a neighbour's
 * IPI, at the VM-entry after the RDMSR exit) serviced the same bit.
 * Reading before disarming counts it twice.
 */
DEFINE_TEST(unit_pmi_model_stop_race, "an NMI right after the stop's status read", 0)
{
	struct model_config m = model_intel_v2(1, 3);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	m.gp_counters = 2;
	m.fixed_counters = 0;
	if (!ready(&m, &c))
		return;
	model_overflow_at_stop(0);
	model_inject(&(struct model_injection){ .on = MODEL_AFTER_READ,
						.cpu = 0,
						.target = 0,
						.msr = MSR_IA32_PERF_GLOBAL_STATUS,
						.counters_off = true,
						.times = 1 });
	stress_run(&c);
	stress_totals(&t, &c);
	report_eq(model_truth(0)->injected, 1, "the NMI came right after the status read");
	report_eq(t.unserviced, 1, "the overflow at the stop is left over");
	every_overflow_once(1, &c, "an NMI after the leftover read");
}

/*
 * Defect 3: the handler restored counting and unmasked LVTPC last, so an
 * overflow in between found LVTPC masked; KVM drops such a PMI and the
 * counter, counting on from 0, never overflows again: the CPU takes no
 * more PMIs. Here the counters count in the handler (Intel v1) and the
 * period is short: a re-armed counter (at half a period, what counted
 * since the wrap carried over) overflows again within the 10 events of
 * the APIC write that unmasked last, but not within the 5 of the status
 * read after it, where LVTPC is already unmasked and the overflow is a
 * PMI that waits behind this NMI.
 */
DEFINE_TEST(unit_pmi_model_no_lost_pmi, "an overflow inside the handler is not lost", 0)
{
	struct model_config m = model_intel_v2(1, 5);
	struct stress_config c = config(13, 0);
	struct stress_totals t;

	m.apic_events = 10;
	m.version = 1;
	m.gp_counters = 1;
	m.fixed_counters = 0;
	m.fw_write = false;
	if (!stress(&m, &c, &t, NULL))
		return;
	report_eq(model_truth(0)->pmis_dropped, 0, "PMIs that found LVTPC masked");
	report(t.pmis > 100, "the CPU kept taking PMIs (%llu)", t.pmis);
	every_overflow_once(1, &c, "a period shorter than the handler's tail");
}

static void overflow_counter_1(void)
{
	model_overflow_now(0, 1);
}

/*
 * The second review's finding 14: looking at the PMU once, not again
 * after servicing, passed every test. On a PMU that counts on while it
 * is serviced (AMD legacy), counter 1 overflows right after the first
 * look re-armed counter 0: a second look services it in the same NMI,
 * and its PMI's NMI then finds nothing, covered by the credit that
 * late overflow earned.
 */
DEFINE_TEST(unit_pmi_model_second_look, "an overflow while servicing, in the same NMI", 0)
{
	struct model_config m = model_pmu(MODEL_AMD_LEGACY, MODEL_HOST_6_9, 1, 73);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	if (!ready(&m, &c))
		return;
	model_inject(&(struct model_injection){ .on = MODEL_AFTER_WRITE,
						.cpu = 0,
						.target = 0,
						.msr = MSR_K7_PERFCTR0,
						.hook = overflow_counter_1,
						.hook_only = true,
						.skip = 200,
						.times = 1 });
	stress_run(&c);
	stress_totals(&t, &c);
	report(t.rereads > 0, "looks that found an overflow after the first: %llu", t.rereads);
	report_eq(t.unexplained_cpus, 0, "the NMI its PMI left with nothing to find is credited");
	every_overflow_once(1, &c, "an overflow while servicing");
}

static volatile bool asked;
static u64 question_nmi, answers, answered_late;

/* A watchdog's question, as the watchdog asks it: one more NMI source. */
static u64 watchdog_like(const struct trap_frame *f, u64 entry_tsc)
{
	(void)f;
	(void)entry_tsc;
	if (!asked)
		return 0;
	asked = false;
	answers++;
	answered_late += model_truth(0)->nmis_taken != question_nmi;
	return 1;
}

DEFINE_NMI_SOURCE(unit_watchdog_like, watchdog_like);

/* Asked as a PMI is raised: both are for the NMI CPU 0 takes next. */
static void ask(void)
{
	asked = true;
	question_nmi = model_truth(0)->nmis_taken + 1;
}

/*
 * Defect 4: the NMI handler returned when the watchdog claimed an NMI,
 * before polling the PMU: a PMI merged into it left LVTPC masked and the
 * CPU's PMIs stopped. Here the question comes with five PMIs, in the
 * same NMI: the PMU must be serviced and the question answered in that
 * one NMI, whichever source the entry polls first.
 */
DEFINE_TEST(unit_pmi_model_every_source, "a watchdog NMI merged with a PMI", 0)
{
	struct model_config m = model_intel_v2(1, 9);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	m.gp_counters = 2;
	m.fixed_counters = 0;
	if (!ready(&m, &c))
		return;
	model_inject(&(struct model_injection){ .on = MODEL_AFTER_PMI,
						.cpu = 0,
						.target = 0,
						.spurious = true,
						.hook = ask,
						.skip = 10,
						.times = 5 });
	answers = answered_late = 0;
	stress_run(&c);
	stress_totals(&t, &c);
	asked = false;
	report_eq(model_truth(0)->injected, 5, "five questions came with a PMI");
	report_eq(answers, 5, "every question answered");
	report_eq(answered_late, 0, "questions answered after the NMI that carried them");
	report_eq(t.unserviced, 0, "no overflow left over");
	report_eq(model_truth(0)->pmis_dropped, 0, "no PMI found LVTPC masked");
	report_eq(t.unmasked, 1, "LVTPC ends unmasked");
	every_overflow_once(1, &c, "questions merged with PMIs");
}

static volatile u64 seen_resume;
static volatile s32 seen_vector;
static volatile bool faulting;

/* A source that faults (a wrmsr_safe of an MSR nobody has), as a buggy one might. */
static u64 faulting_source(const struct trap_frame *f, u64 entry_tsc)
{
	(void)f;
	(void)entry_tsc;
	if (!faulting)
		return 0;
	faulting = false;
	seen_resume = this_cpu()->fault_resume;
	wrmsr_safe(0x12345678, 0);
	seen_vector = this_cpu()->fault_vector;
	return 1;
}

DEFINE_NMI_SOURCE(unit_faulting, faulting_source);

/*
 * Defect 5: an NMI inherited the interrupted code's recovery point, so a
 * fault in a source resumed the interrupted ASM_TRY on the NMI's stack,
 * and a source's own ASM_TRY left a vector the interrupted code took for
 * its own. Without saving, clearing and giving back, the first check
 * sees the interrupted code's recovery point.
 */
DEFINE_TEST(unit_pmi_model_fault_state, "an NMI inside an ASM_TRY", 0)
{
	struct model_config m = model_intel_v2(1, 11);
	struct percpu *cpu;

	model_start(&m);
	cpu = this_cpu();
	cpu->fault_resume = 0x1234;
	cpu->fault_vector = -1;
	faulting = true;
	model_spurious_nmi(0);
	model_run(1);
	report_eq(seen_resume, 0, "inside the NMI, no recovery point is armed");
	report_eq(seen_vector, X86_TRAP_GP, "the source's own fault is recorded for it");
	report_eq(cpu->fault_resume, 0x1234, "the interrupted code's recovery point is back");
	report_eq(cpu->fault_vector, -1, "and so is its vector: no fault of its own");
	cpu->fault_resume = 0;
}

/*
 * Defect 6: arm() set the handler armed before the counters were
 * written, so on a PMU with no status register an NMI in between took
 * the probe's leftover value (top bit clear) for an overflow. The NMI
 * comes right after the first event-select write of the arming.
 */
DEFINE_TEST(unit_pmi_model_armed_last, "an NMI while the counters are programmed", 0)
{
	struct model_config m = model_intel_v2(1, 13);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	m.vendor = PMU_AMD;
	m.version = 0;
	m.fixed_counters = 0;
	if (!ready(&m, &c))
		return;
	report(pmu_counter_overflowed(rdmsr(MSR_K7_PERFCTR0), 48),
	       "the probe leaves counter 0 looking overflowed");
	model_inject(&(struct model_injection){ .on = MODEL_AFTER_WRITE,
						.cpu = 0,
						.target = 0,
						.msr = MSR_K7_EVNTSEL0,
						.times = 1 });
	stress_run(&c);
	stress_totals(&t, &c);
	report_eq(model_truth(0)->injected, 1, "the NMI came while the counters were programmed");
	every_overflow_once(1, &c, "an NMI before the counters are armed");
}

/*
 * Defect 1: NMIs with no source were judged on counts summed over all
 * CPUs, where one CPU's credit hid another's spurious NMIs. CPU 0 takes
 * three NMI IPIs with one PMI: one NMI finds them all (KVM holds two
 * pending, the third merges), credit for three, one NMI left to find
 * nothing; CPU 1 takes two NMIs from nowhere. Also the second review's
 * finding 14: with no IPIs of its own (strict mode), counting CPU 0
 * only would miss CPU 1.
 */
DEFINE_TEST(unit_pmi_model_per_cpu, "spurious NMIs on one CPU, merges on another", 0)
{
	struct model_config m = model_intel_v2(2, 17);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	m.gp_counters = 2;
	m.fixed_counters = 0;
	if (!ready(&m, &c))
		return;
	for (u32 k = 0; k < 3; k++)
		model_inject(&(struct model_injection){
			.on = MODEL_AFTER_PMI, .cpu = 0, .target = 0, .skip = 5, .times = 1 });
	/* Two, in different handlers: in one they would merge into one NMI. */
	for (u32 k = 0; k < 2; k++)
		model_inject(&(struct model_injection){ .on = MODEL_AFTER_READ,
							.cpu = 1,
							.target = 1,
							.msr = MSR_IA32_PERF_GLOBAL_STATUS,
							.spurious = true,
							.skip = 20 + 40 * k,
							.times = 1 });
	stress_run(&c);
	stress_totals(&t, &c);
	report(t.strict, "no IPIs of the stress's own: strict mode");
	report(nmi_counts_explained(&t.counts),
	       "summed over the CPUs, %llu unknown look explained by %llu credit", t.counts.unknown,
	       t.counts.credit);
	report_eq(t.unexplained_cpus, 1, "CPUs whose own NMIs with no source are unexplained");
	report_eq(stress_result(1)->counts.unknown, 2, "CPU 1's two NMIs from nowhere");
}

/*
 * Defect 7: the last snapshot of a CPU's counts was copied while its
 * neighbours still sent it NMI IPIs. With every CPU stopping before any
 * takes its last snapshot, each IPI sent is seen in the counts, and each
 * CPU's counts add up. Here CPU 2 is descheduled from just before the
 * end of the timed part until well after the others have stopped: when
 * it runs again it finishes its last chunk of work and sends once more.
 */
static struct stress_config *quiet_config;

/* CPU 2 goes away a little before the timed part ends, for long. */
static void stall_late(void)
{
	model_stall(2, model_now() + quiet_config->seconds * 1000000 - 3000, 8000000);
}

DEFINE_TEST(unit_pmi_model_quiet_snapshot, "NMI IPIs until the end of the stress", 0)
{
	struct model_config m = model_intel_v2(3, 19);
	struct stress_config c = config(PERIOD, 2000);
	struct stress_totals t;
	u32 inconsistent = 0;

	quiet_config = &c;
	m.gp_counters = 2;
	if (!stress(&m, &c, &t, stall_late))
		return;
	report(t.ipis_sent > 100, "NMI IPIs sent: %llu", t.ipis_sent);
	report_eq(t.counts.ipis, t.ipis_sent, "NMI IPIs seen in the counts");
	report_eq(t.drained, 3, "CPUs that saw all their mail before the end");
	for (u32 i = 0; i < 3; i++) {
		const struct nmi_counts *n = &stress_result(i)->counts;

		/* Each entry that found something found one event plus its merged ones. */
		inconsistent += n->events + n->ipis - n->merged != n->entries - n->unknown;
	}
	report_eq(inconsistent, 0, "CPUs whose counts do not add up");
	every_overflow_once(3, &c, "IPIs between all CPUs");
	report_eq(t.unexplained_cpus, 0, "CPUs with unexplained NMIs");
}

/*
 * Defect 8: without a reference counter, the expected overflows left out
 * the cost phase that the serviced ones included. Both now cover every
 * armed iteration: expected is the workload's instructions over the
 * period, a floor, since the handler's own count too.
 */
DEFINE_TEST(unit_pmi_model_expected, "expected overflows without a reference counter", 0)
{
	struct model_config m = model_intel_v2(1, 23);
	struct stress_config c = config(PERIOD, 0);
	const struct stress_cpu *r = stress_result(0);
	struct stress_totals t;

	m.gp_counters = 1;
	m.fixed_counters = 0;
	c.cost_pmis = 200;
	if (!stress(&m, &c, &t, NULL))
		return;
	report(!c.plan.has_reference, "one GP counter: no reference");
	report_eq(r->armed_iterations, c.cost_iterations + r->iterations,
		  "the cost phase's iterations count as armed");
	report_eq(t.counter_expected[0],
		  r->armed_iterations * WORKLOAD_INSNS_PER_ITERATION / c.plan.armed[0].period,
		  "expected overflows are the armed iterations' instructions over the period");
	report(t.counter_overflows[0] >= t.counter_expected[0],
	       "serviced (%llu) reach expected (%llu), a floor", t.counter_overflows[0],
	       t.counter_expected[0]);
}

/*
 * Many seeds, IPIs and injected NMIs at random points: the invariants hold
 * whatever the interleaving. A failure names its seed.
 */
DEFINE_TEST(unit_pmi_model_seeds, "the invariants under random interleavings", 0)
{
	u32 failed = 0;

	for (u64 seed = 100; seed < 108; seed++) {
		struct model_config m = model_intel_v2(2 + seed % 3, seed);
		struct stress_config c = config(PERIOD + 2 * (seed % 5), 5000 * (seed % 2));
		struct stress_totals t = { 0 };
		char why[160];
		bool ok = true;

		m.switch_permille = 20 + 40 * (seed % 4);
		model_start(&m);
		model_inject(&(struct model_injection){ .on = MODEL_AFTER_PMI,
							.cpu = 1,
							.target = 1,
							.skip = seed % 7,
							.times = 3 });
		if (!pmu_probe_counts() || !stress_prepare(&c, why, sizeof(why)) ||
		    !stress_run(&c)) {
			failed++;
			continue;
		}
		stress_totals(&t, &c);
		for (u32 i = 0; i < m.cpus; i++) {
			const struct stress_cpu *r = stress_result(i);

			ok &= r->overflows + r->unserviced == truth_overflows(i, &c);
		}
		ok &= t.counts.ipis == t.ipis_sent + 3 && !t.unexplained_cpus &&
		      t.in_step == m.cpus;
		if (!ok)
			report_info("seed %llu: an invariant failed", seed);
		failed += !ok;
	}
	report_eq(failed, 0, "seeds for which an invariant failed, of 8");
}

/*
 * The second review's findings, each on the host profiles where it
 * matters (model.h: a KVM kernel by the commits it has).
 */

/* Start the model on m and run the strict stress; false (reported) if it could not. */
/*
 * pmu.counters=1, tools/pmi-verdict --quick's: GP counter 0 alone armed
 * (the reference still counting freely), every overflow its own PMI,
 * serviced once, and the counter's count right.
 */
DEFINE_TEST(unit_pmi_model_one_counter, "pmu.counters=1 arms GP counter 0 alone", 0)
{
	struct model_config m = model_intel_v2(2, 17);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	c.counters = 1;
	if (!stress(&m, &c, &t, NULL))
		return;
	report_eq(c.plan.narmed, 1, "counters armed");
	report(!c.plan.armed[0].fixed && c.plan.armed[0].index == 0,
	       "the one armed is GP counter 0");
	report(c.plan.has_reference, "the reference counter still counts");
	report(t.pmis > 500, "PMIs taken: %llu", t.pmis);
	report_eq(t.overflows, t.pmis, "one overflow per PMI");
	every_overflow_once(2, &c, "one counter");
	report_eq(t.strict_short_cpus, 0, "the counter within 2 % of its expected overflows");
}

/*
 * The mediated vPMU passes the counters and the global MSRs through but
 * intercepts the event selects (vmx_recalc_pmu_msr_intercepts(), the
 * kvm-x86-pmu-6.20 pull) and emulates the APIC: of one counter's PMI
 * (the lean form) only the LVTPC read and write exit there, all four
 * accesses under the emulated vPMU; and arming the counter, an event
 * select write, exits under both.
 */
DEFINE_TEST(unit_pmi_model_mediated_exits, "the mediated vPMU exits on the LVTPC and event selects",
	    0)
{
	static const struct {
		enum model_host_id host;
		u64 handler_exits_per_pmi;
		bool passes_through;
	} rows[] = { { MODEL_HOST_MEDIATED, 2, true }, { MODEL_HOST_6_9, 4, false } };

	for (u32 i = 0; i < ARRAY_SIZE(rows); i++) {
		struct model_config m = model_pmu(MODEL_INTEL_V2, rows[i].host, 1, 131);
		struct stress_config c = config(PERIOD, 0);
		struct stress_totals t;
		const struct model_truth *tr = model_truth(0);
		const char *name = model_hosts[rows[i].host].name;

		c.counters = 1;
		if (!stress(&m, &c, &t, NULL))
			return;
		report(t.pmis > 500, "%s: PMIs taken: %llu", name, t.pmis);
		report(tr->handler_exits == rows[i].handler_exits_per_pmi * t.pmis,
		       "%s: the handler's exits: %llu for %llu PMIs, %llu each", name,
		       tr->handler_exits, t.pmis, rows[i].handler_exits_per_pmi);
		report(model_msr_exits(0, MSR_IA32_PERFEVTSEL0) &&
			       model_msr_exits(0, MSR_IA32_FIXED_CTR_CTRL),
		       "%s: the event selects exit", name);
		report(model_msr_exits(0, MSR_IA32_PMC0) != rows[i].passes_through &&
			       model_msr_exits(0, MSR_IA32_PERF_GLOBAL_STATUS) !=
				       rows[i].passes_through &&
			       model_msr_exits(0, MSR_IA32_PERF_GLOBAL_CTRL) !=
				       rows[i].passes_through,
		       "%s: the counter, GLOBAL_STATUS and GLOBAL_CTRL %s", name,
		       rows[i].passes_through ? "pass through" : "exit");
	}
}

/*
 * The lean form's race: with nothing paused, a counter can wrap between
 * the handler's LVTPC read and write in an entry for an NMI IPI; the
 * write then takes the host's mask for that PMI, and the entry that
 * services it finds LVTPC unmasked, so a masking host reads as one that
 * does not mask. Hence no lean form with NMI IPIs: the same stress with
 * them keeps the pause, and every PMI finds the host's mask.
 */
DEFINE_TEST(unit_pmi_model_lean_race, "no lean form beside NMI IPIs", 0)
{
	static const enum model_host_id hosts[] = { MODEL_HOST_6_6, MODEL_HOST_6_9 };
	char prefix[64];

	for (u32 h = 0; h < ARRAY_SIZE(hosts); h++)
		for (u32 ipis = 0; ipis < 2; ipis++) {
			struct model_config m =
				model_pmu(MODEL_INTEL_V2, hosts[h], 2, 701 + 2 * h + ipis);
			struct stress_config c = config(PERIOD, ipis ? 20000 : 0);
			struct stress_totals t;

			c.counters = 1;
			snprintf(prefix, sizeof(prefix), "%s, %s NMI IPIs",
				 model_hosts[hosts[h]].name, ipis ? "with" : "no");
			report_prefix_push(prefix);
			if (stress(&m, &c, &t, NULL)) {
				report_eq(c.plan.lean, !ipis, "the lean form");
				report(t.pmis_lvtpc_masked > 500 && !t.pmis_lvtpc_unmasked,
				       "PMIs that found LVTPC masked: %llu, unmasked: %llu",
				       t.pmis_lvtpc_masked, t.pmis_lvtpc_unmasked);
				report_eq(t.unexplained_cpus, 0, "CPUs with unexplained NMIs");
			}
			report_prefix_pop();
		}
}

static u64 ctrl_reads, status_reads;

static void count_ctrl_read(void)
{
	ctrl_reads++;
}

static void count_status_read(void)
{
	status_reads++;
}

/*
 * Issue 26's cheaper guest: under KVM's emulated vPMU each PMU MSR
 * access is a VM exit the host probe records. Where there is global
 * control the handler stops counting before it reads the status, so one
 * look finds every overflow there is (SDM Vol 3B 21.2.2, APM Vol 2
 * 13.2.2), and GLOBAL_CTRL is what the guest last wrote, never read back.
 * Held here by behaviour (every overflow serviced once, none unexplained,
 * the counts right), and by the accesses themselves: no GLOBAL_CTRL read,
 * one status read per NMI. make bench-pmi-exits prints what it saves.
 */
DEFINE_TEST(unit_pmi_model_one_look, "with global control, one status read per PMI", 0)
{
	static const enum model_pmu pmus[] = { MODEL_INTEL_V2, MODEL_AMD_V2 };
	char prefix[64];

	for (u32 i = 0; i < ARRAY_SIZE(pmus); i++) {
		struct model_config m = model_pmu(pmus[i], MODEL_HOST_6_9, 1, 211 + i);
		struct stress_config c = config(PERIOD, 0);
		struct stress_totals t;
		const struct model_truth *truth = model_truth(0);

		snprintf(prefix, sizeof(prefix), "%s", model_pmu_names[pmus[i]]);
		report_prefix_push(prefix);
		if (!ready(&m, &c)) {
			report_prefix_pop();
			continue;
		}
		ctrl_reads = status_reads = 0;
		model_inject(&(struct model_injection){
			.on = MODEL_AFTER_READ,
			.msr = m.vendor == PMU_AMD ? MSR_AMD_PERF_CNTR_GLOBAL_CTL
						   : MSR_IA32_PERF_GLOBAL_CTRL,
			.hook = count_ctrl_read,
			.hook_only = true,
			.times = ~0U });
		model_inject(&(struct model_injection){
			.on = MODEL_AFTER_READ,
			.msr = m.vendor == PMU_AMD ? MSR_AMD_PERF_CNTR_GLOBAL_STATUS
						   : MSR_IA32_PERF_GLOBAL_STATUS,
			.hook = count_status_read,
			.hook_only = true,
			.times = ~0U });
		report(stress_run(&c), "the stress ran");
		t = (struct stress_totals){ 0 };
		stress_totals(&t, &c);
		report(t.pmis > 500, "PMIs taken: %llu", t.pmis);
		every_overflow_once(1, &c, "one look");
		report_eq(t.rereads, 0, "looks after the first");
		/* AMD's LVTPC is not masked from 49ff3b4aec51: NMIs from nowhere, credited. */
		report_eq(t.unexplained_cpus, 0, "NMIs without a source explained");
		report_eq(t.strict_short_cpus, 0,
			  "every counter within 2 % of its expected overflows");
		report_eq(ctrl_reads, 0, "GLOBAL_CTRL reads");
		/* Beyond the handler's: pmu_leftover() after the cost phase and at
		 * the stop, and pmu_silent_wraps() there. */
		report(status_reads <= truth->nmis_taken + 3,
		       "status reads (%llu) at most one per NMI taken (%llu), and the stops' three",
		       status_reads, truth->nmis_taken);
		report_prefix_pop();
	}
}

static bool strict_run(const struct model_config *m, struct stress_config *c,
		       struct stress_totals *t, u32 counters)
{
	*c = config(PERIOD, 0);
	c->counters = counters;
	return stress(m, c, t, NULL);
}

/* Every counter the plan arms, and pmu.counters=1 (the quick form, lean with global control). */
static const struct {
	u32 counters;
	const char *label;
} armed_counters[] = { { 0, "" }, { 1, ", pmu.counters=1" } };

/*
 * Findings 1, 2, 3 and 15: pmi_stress's own checks (stress_checks(), the
 * ones the guest test runs), strict, under every profile and PMU. An
 * Intel guest's fixed cycle counters overflow with no expected count
 * (finding 1: serviced against expected over every armed counter fails
 * on every Intel PMU); where LVTPC is not masked (before a16eb25b09c0,
 * and for AMD from 49ff3b4aec51) an overflow between the NMI's injection
 * and the handler's pause, or one delivered twice before 73554b29bd70,
 * leaves an NMI with nothing to find: credited, not failed (findings 2
 * and 3: without the credit such CPUs are unexplained).
 */
DEFINE_TEST(unit_pmi_model_every_host, "strict pmi_stress checks hold under every KVM profile", 0)
{
	u64 unmasked_unknown = 0, twice = 0;
	char prefix[64];

	for (u32 n = 0; n < ARRAY_SIZE(armed_counters); n++)
		for (u32 h = 0; h < MODEL_HOSTS; h++)
			for (u32 k = 0; k < MODEL_PMUS; k++) {
				struct model_config m = model_pmu(k, h, 2, 31 + 4 * h + k + 97 * n);
				struct stress_config c;
				struct stress_totals t;

				snprintf(prefix, sizeof(prefix), "%s %s%s", model_hosts[h].name,
					 model_pmu_names[k], armed_counters[n].label);
				report_prefix_push(prefix);
				if (strict_run(&m, &c, &t, armed_counters[n].counters)) {
					stress_checks(&c, &t, true);
					if (t.pmis_lvtpc_unmasked)
						unmasked_unknown += t.counts.unknown;
					twice += model_truth(0)->pmis_twice +
						 model_truth(1)->pmis_twice;
				}
				report_prefix_pop();
			}
	report(unmasked_unknown > 0,
	       "where LVTPC is not masked, NMIs with no source happened (%llu) and were explained",
	       unmasked_unknown);
	report(twice > 0, "overflows delivered twice in one exit before 73554b29bd70: %llu", twice);
}

/*
 * Finding 4: the first snapshot was taken after the start, so a vCPU
 * descheduled there counted its neighbour's IPIs as before. CPU 0 is
 * descheduled while it waits at the start, until CPU 1 has sent it
 * hundreds of NMI IPIs.
 */
static void stall_at_start(void)
{
	model_stall(0, model_now() + 10, 400000);
}

DEFINE_TEST(unit_pmi_model_first_snapshot, "a vCPU descheduled at the start", 0)
{
	struct model_config m = model_intel_v2(2, 37);
	struct stress_config c = config(PERIOD, 2000);
	struct stress_totals t;

	m.gp_counters = 2;
	m.fixed_counters = 0;
	if (!stress(&m, &c, &t, stall_at_start))
		return;
	report(stress_result(1)->ipis_sent > 100, "CPU 1 sent %llu NMI IPIs",
	       stress_result(1)->ipis_sent);
	report_eq(t.counts.ipis, t.ipis_sent, "NMI IPIs seen in the counts");
	report_eq(t.in_step, 2, "both CPUs in step");
}

/*
 * Finding 5: every overflow bit beyond the first counted as merged, so
 * with six counters armed four NMIs injected from nowhere hid among the
 * merges. Under a host that masks LVTPC the bits of one PMI raised one
 * NMI; each spurious one is now unexplained.
 */
DEFINE_TEST(unit_pmi_model_spurious_among_merges, "NMIs from nowhere among merged overflows", 0)
{
	struct model_config m = model_intel_v2(1, 41);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	if (!ready(&m, &c))
		return;
	for (u32 k = 0; k < 4; k++)
		model_inject(&(struct model_injection){ .on = MODEL_AFTER_READ,
							.cpu = 0,
							.target = 0,
							.msr = MSR_IA32_PERF_GLOBAL_STATUS,
							.spurious = true,
							.skip = 50 + 300 * k,
							.times = 1 });
	stress_run(&c);
	stress_totals(&t, &c);
	report(t.counts.merged > 100, "merged overflows: %llu", t.counts.merged);
	report_eq(model_truth(0)->injected, 4, "four NMIs from nowhere");
	report_eq(t.unexplained_cpus, 1, "the CPU that took them is unexplained");
}

/*
 * Finding 7: the NMI stub's RDPMC read counter 0 before its wrap when the
 * wrap came between the stub and the pause (an NMI raised by another of
 * the six counters), and a skid of 0 was kept.
 * Read in the servicing, after the pause, every sample is at or past the
 * wrap, in both LVTPC modes alike.
 */
DEFINE_TEST(unit_pmi_model_skid, "skid read after the wrap", 0)
{
	struct model_config m = model_intel_v2(1, 43);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;
	const struct pmu_cpu *p = pmu_cpu(0);
	u32 zero = 0, kept;

	c.sample_cap = 4096;
	if (!stress(&m, &c, &t, NULL))
		return;
	kept = MIN(p->skid_samples, (u64)p->sample_cap);
	for (u32 k = 0; k < kept; k++)
		zero += !p->skid[k];
	report(kept > 0, "skid samples kept: %u", kept);
	/*
	 * A wrap on the very instruction before the pause is a true 0; a
	 * counter read before its wrap gave one in six (the review's 136 of
	 * 831) and one in twelve here.
	 */
	report(zero * 50 < kept, "samples of 0: %u of %u, under 2 %%", zero, kept);
}

static volatile bool fault_with_pending;

/* A source that faults with another NMI already pending behind this one. */
static u64 faulting_with_pending(const struct trap_frame *f, u64 entry_tsc)
{
	(void)f;
	(void)entry_tsc;
	if (!fault_with_pending)
		return 0;
	fault_with_pending = false;
	model_spurious_nmi(0);
	wrmsr_safe(0x12345678, 0);
	return 1;
}

DEFINE_NMI_SOURCE(unit_faulting_pending, faulting_with_pending);

/*
 * Finding 10: a fault in an NMI source returned through IRET, which ends
 * NMI blocking while the handler still runs on the NMI's stack: the NMI
 * held pending came in on top of it. Exceptions return without IRET.
 */
DEFINE_TEST(unit_pmi_model_fault_in_nmi, "a fault inside the NMI handler keeps NMIs blocked", 0)
{
	struct model_config m = model_intel_v2(1, 47);
	u64 nested;

	model_start(&m);
	nested = nmi_cpu(0)->counts.nested;
	fault_with_pending = true;
	model_spurious_nmi(0);
	model_run(1);
	report(!fault_with_pending, "the source faulted with an NMI pending");
	report_eq(model_truth(0)->nmis_taken, 2, "both NMIs were taken");
	report_eq(nmi_cpu(0)->counts.nested - nested, 0, "none of them inside the other");
}

/*
 * Finding 15: the model is KVM by version. Each profile's LVTPC after a
 * PMI, for each vendor, as its commits say; two NMIs pending outside an
 * NMI and one inside (process_nmi()); one overflow delivered twice in an
 * exit only without 73554b29bd70.
 */
static bool lvtpc_masked_after_pmi(enum model_pmu k, u32 h)
{
	struct model_config m = model_pmu(k, h, 1, 53);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	m.gp_counters = 2;
	if (!stress(&m, &c, &t, NULL))
		return false;
	return t.pmis_lvtpc_masked && !t.pmis_lvtpc_unmasked;
}

DEFINE_TEST(unit_pmi_model_hosts, "the model's KVM profiles behave as their commits", 0)
{
	static const bool masks[MODEL_HOSTS][2] = {
		/* Intel, AMD */
		[MODEL_HOST_6_1_0] = { false, false },	[MODEL_HOST_6_1_60] = { true, true },
		[MODEL_HOST_6_1_141] = { true, false }, [MODEL_HOST_6_6] = { true, true },
		[MODEL_HOST_6_6_Y] = { true, false },	[MODEL_HOST_6_7] = { true, true },
		[MODEL_HOST_6_9] = { true, false },	[MODEL_HOST_MEDIATED] = { true, false },
	};
	struct model_config m;

	for (u32 h = 0; h < MODEL_HOSTS; h++) {
		report_eq(lvtpc_masked_after_pmi(MODEL_INTEL_V2, h), masks[h][0],
			  model_hosts[h].name);
		report_eq(lvtpc_masked_after_pmi(MODEL_AMD_V2, h), masks[h][1],
			  model_hosts[h].commits);
	}

	m = model_intel_v2(1, 59);
	model_start(&m);
	model_spurious_nmi(0);
	model_spurious_nmi(0);
	model_spurious_nmi(0);
	model_run(1);
	report_eq(model_truth(0)->nmis_taken, 2, "three NMIs outside an NMI: two taken");
	report_eq(model_truth(0)->nmis_merged, 1, "the third merged");
}

/*
 * Before 73554b29bd70 an exit can deliver two PMIs, by the irq_work
 * (kvm_pmi_trigger_fn()) and by KVM_REQ_PMI at the VM-entry; the model
 * does so for every overflow in an exit (model.h): some exit must
 * deliver two PMIs on 6.1.y, none from 6.6. AMD without PerfMonV2 counts its handler's
 * own MSR accesses, so overflows land in exits there. Stated here, not
 * read from the profiles, so that dropping either delivery fails.
 */
DEFINE_TEST(unit_pmi_model_two_deliveries, "an emulated overflow is delivered twice before 6.6", 0)
{
	static const bool twice[MODEL_HOSTS] = {
		[MODEL_HOST_6_1_0] = true, [MODEL_HOST_6_1_60] = true, [MODEL_HOST_6_1_141] = true
	};

	for (u32 h = 0; h < MODEL_HOSTS; h++) {
		struct model_config m = model_pmu(MODEL_AMD_LEGACY, h, 1, 83);
		struct stress_config c = config(PERIOD, 0);
		struct stress_totals t;

		if (!stress(&m, &c, &t, NULL))
			return;
		report(twice[h] ? model_truth(0)->exits_delivering_twice > 10
				: !model_truth(0)->exits_delivering_twice,
		       "%s: %llu exits delivered two PMIs", model_hosts[h].name,
		       model_truth(0)->exits_delivering_twice);
	}
}

/*
 * Finding 15, and what the guest makes of it: an overflow the host
 * loses racing a counter's reprogramming (kvm_perf_overflow() ignores
 * the PMI) leaves the counter wrapped with no status bit, counting on
 * from 0; the guest finds it at the stop, says so, and does not fail
 * the counter for the overflows it then could not have.
 */
DEFINE_TEST(unit_pmi_model_lost_overflow, "an overflow KVM loses to a reprogram", 0)
{
	struct model_config m = model_intel_v2(1, 61);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	if (!ready(&m, &c))
		return;
	model_lose_overflow(0, c.plan.armed[0].status_bit, 100);
	stress_run(&c);
	stress_totals(&t, &c);
	report_eq(model_truth(0)->lost[c.plan.armed[0].status_bit], 1, "the host lost one");
	report_eq(t.lost, 1, "the guest found one counter wrapped silently");
	report(t.counter_overflows[0] * 10 < t.counter_expected[0],
	       "that counter fell far short (%llu of %llu)", t.counter_overflows[0],
	       t.counter_expected[0]);
	report_eq(t.strict_short_cpus, 0, "strict does not fail it");
}

/*
 * Item 3: the DATA says which of the four commits the host behaves as
 * having, from what the guest saw.
 */
static void kvm_seen(enum model_pmu k, u32 h, const char *expect)
{
	struct model_config m = model_pmu(k, h, 1, 67);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;
	char buf[KTAP_LINE_MAX];
	struct json j;
	const char *doc;

	if (!stress(&m, &c, &t, NULL))
		return;
	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	stress_kvm_json(&j, &t);
	json_object_end(&j);
	doc = json_finish(&j);
	report(doc && strstr(doc, expect), "%s %s: %s", model_hosts[h].name, model_pmu_names[k],
	       doc ? doc : "(did not fit)");
}

DEFINE_TEST(unit_pmi_model_kvm_seen, "the guest tells which KVM it is on", 0)
{
	kvm_seen(MODEL_INTEL_V2, MODEL_HOST_6_1_0, "\"a16eb25b09c0\":\"no\"");
	kvm_seen(MODEL_INTEL_V2, MODEL_HOST_6_1_0, "\"73554b29bd70\":\"unseen\"");
	kvm_seen(MODEL_INTEL_V2, MODEL_HOST_6_9, "\"a16eb25b09c0\":\"yes\"");
	kvm_seen(MODEL_AMD_V2, MODEL_HOST_6_6, "\"49ff3b4aec51\":\"no\"");
	kvm_seen(MODEL_AMD_V2, MODEL_HOST_6_9, "\"49ff3b4aec51\":\"either\"");
}

/*
 * The DATA line fits 1024 bytes with every option at its maximum and
 * every count at ten digits (64 vCPUs taking 10^6 PMIs a second for an
 * hour stay below that).
 */
DEFINE_TEST(unit_pmi_model_data_size, "the pmi_stress DATA line fits", 0)
{
	struct model_config m = model_intel_v2(2, 71);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;
	char buf[4 * KTAP_LINE_MAX];
	const u64 big = 9999999999ULL;
	struct json j;
	const char *doc;
	u64 *counts = (u64 *)&t.counts;

	if (!stress(&m, &c, &t, NULL))
		return;
	for (size_t i = 0; i < sizeof(t.counts) / sizeof(u64); i++)
		counts[i] = big;
	t.pmis = t.overflows = t.instruction_overflows = t.instruction_expected = big;
	t.ipis_sent = t.rereads = t.unserviced = t.gap_outside = t.cost_per_pmi = big;
	t.cost_pmis = t.lost = t.pmis_lvtpc_masked = t.pmis_lvtpc_unmasked = big;
	t.armed_cycles = clock.tsc_hz;
	c.period = 0x7fffffff;
	c.seconds = 3600;
	c.nmi_ipi_rate = 1000000;
	c.cost_iterations = 1 << 24;
	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "test", "pmi_stress");
	pmu_json(&j);
	stress_json(&j, &c, &t);
	json_object_end(&j);
	doc = json_finish(&j);
	report(doc && strlen(doc) + sizeof("# DATA ") <= KTAP_LINE_MAX,
	       "the main line: %zu bytes with its prefix",
	       doc ? strlen(doc) + sizeof("# DATA ") : 0);

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "test", "pmi_stress");
	json_string(&j, "record", "kvm");
	stress_kvm_json(&j, &t);
	json_object_end(&j);
	doc = json_finish(&j);
	report(doc && strlen(doc) + sizeof("# DATA ") <= KTAP_LINE_MAX,
	       "the kvm record: %zu bytes with its prefix",
	       doc ? strlen(doc) + sizeof("# DATA ") : 0);
}

/*
 * The third review's finding 4: any NMI with no source after one that
 * found a single overflow read as a double delivery, and the record said
 * "no" for 73554b29bd70 on every AMD host from 6.9, which has it (16 of
 * 16 runs). Where LVTPC is not masked such an NMI is an overflow's own,
 * left with nothing to find; the rule says "unseen" there.
 */
DEFINE_TEST(unit_pmi_model_kvm_unseen, "no double delivery read into an unmasked host", 0)
{
	u32 said_no = 0, runs = 0;

	for (u32 k = MODEL_AMD_LEGACY; k <= MODEL_AMD_V2; k++)
		for (u64 seed = 0; seed < 8; seed++) {
			struct model_config m = model_pmu(k, MODEL_HOST_6_9, 1, 300 + seed);
			struct stress_config c = config(PERIOD, 0);
			struct stress_totals t;
			char buf[KTAP_LINE_MAX];
			struct json j;
			const char *doc;

			if (!stress(&m, &c, &t, NULL))
				return;
			json_init(&j, buf, sizeof(buf));
			json_object_begin(&j, NULL);
			stress_kvm_json(&j, &t);
			json_object_end(&j);
			doc = json_finish(&j);
			runs++;
			said_no += !doc || strstr(doc, "\"73554b29bd70\":\"no\"") != NULL;
		}
	report(!said_no, "runs of 6.9 on AMD that say 73554b29bd70 is missing: %u of %u", said_no,
	       runs);
}

/* Whether profile h masks LVTPC for PMU k's vendor. */
static bool masks(enum model_pmu k, u32 h)
{
	bool amd = k == MODEL_AMD_LEGACY || k == MODEL_AMD_V2;

	return amd ? model_hosts[h].mask_amd : model_hosts[h].mask_intel;
}

/*
 * The third review's finding 1: the credit gave every single overflow a
 * second NMI where LVTPC is not masked, so a host that raises an NMI
 * from nowhere after every PMI passed pmi_stress on AMD from 6.9 and on
 * every PMU of 6.1.0. Only an overflow that can have come in a VM exit
 * earns a second delivery now: the doubling host leaves every CPU
 * unexplained under every profile, masked or not, while the same runs
 * without doubling are explained (unit_pmi_model_every_host).
 */
DEFINE_TEST(unit_pmi_model_doubling, "a host that doubles every PMI fails pmi_stress", 0)
{
	u32 unmasked = 0;
	char prefix[64];

	for (u32 n = 0; n < ARRAY_SIZE(armed_counters); n++)
		for (u32 h = 0; h < MODEL_HOSTS; h++)
			for (u32 k = 0; k < MODEL_PMUS; k++) {
				struct model_config m =
					model_pmu(k, h, 2, 131 + 4 * h + k + 97 * n);
				struct stress_config c = config(PERIOD, 0);
				struct stress_totals t;

				m.doubling = true;
				c.counters = armed_counters[n].counters;
				snprintf(prefix, sizeof(prefix), "%s %s%s", model_hosts[h].name,
					 model_pmu_names[k], armed_counters[n].label);
				report_prefix_push(prefix);
				if (stress(&m, &c, &t, NULL)) {
					report(model_truth(0)->doubled > 100,
					       "the host doubled %llu PMIs",
					       model_truth(0)->doubled);
					report_eq(t.unexplained_cpus, 2,
						  "CPUs whose NMIs from nowhere are "
						  "unexplained");
					unmasked += !masks(k, h);
				}
				report_prefix_pop();
			}
	report(unmasked >= 16, "profiles and PMUs where LVTPC is not masked: %u", unmasked);
}

/*
 * Build item 1: KVM's request loop. Before fad505b2cb83 the NMI a PMI's
 * delivery queues is seen only at the last check, and the entry is
 * cancelled once per PMI; after it, never. Per profile, the cancels per
 * PMI whose NMI an entry injected, and the model time from the delivery
 * to that entry: one cancel longer before the fix.
 */
static void pmi_entry(enum model_pmu k, u32 h, u64 *pmis, u64 *cancels, u64 *cycles)
{
	struct model_config m = model_pmu(k, h, 1, 71);
	struct stress_config c = config(PERIOD, 0);
	struct stress_totals t;

	*pmis = *cancels = *cycles = 0;
	if (!stress(&m, &c, &t, NULL))
		return;
	*pmis = model_truth(0)->pmi_nmis;
	*cancels = model_truth(0)->pmi_cancels;
	*cycles = model_truth(0)->pmi_to_entry;
}

DEFINE_TEST(unit_pmi_model_request_order, "cancelled VM-entries per PMI follow the request order",
	    0)
{
	char what[96];

	for (u32 h = 0; h < MODEL_HOSTS; h++)
		for (u32 k = 0; k < MODEL_PMUS; k++) {
			u64 pmis, cancels, cycles;

			pmi_entry(k, h, &pmis, &cancels, &cycles);
			snprintf(what, sizeof(what), "%s %s: %llu PMIs, %llu cancels, %llu cycles",
				 model_hosts[h].name, model_pmu_names[k], pmis, cancels, cycles);
			if (model_hosts[h].pmi_before_nmi)
				report(pmis > 100 && cancels == 0, "%s: none cancelled", what);
			else
				report(pmis > 100 && cancels * 10 >= pmis * 9 &&
					       cancels * 10 <= pmis * 11,
				       "%s: about one cancel each", what);
		}
}

/*
 * The reprogram of an emulated instruction's count: in the exit before
 * 6.2 (kvm_pmu_incr_counter()), at the VM-entry after it
 * (kvm_pmu_handle_event()).
 */
DEFINE_TEST(unit_pmi_model_reprogram, "emulated counts reprogram where the profile says", 0)
{
	for (u32 h = 0; h < MODEL_HOSTS; h++) {
		struct model_config m = model_pmu(MODEL_INTEL_V2, h, 1, 79);
		struct stress_config c = config(PERIOD, 0);
		struct stress_totals t;
		const struct model_truth *tr = model_truth(0);

		if (!stress(&m, &c, &t, NULL))
			return;
		report(model_hosts[h].deferred_reprogram
			       ? tr->reprograms_at_entry > 0 && !tr->reprograms_in_exit
			       : tr->reprograms_in_exit > 0 && !tr->reprograms_at_entry,
		       "%s: %llu in the exit, %llu at the entry", model_hosts[h].name,
		       tr->reprograms_in_exit, tr->reprograms_at_entry);
	}
}

/*
 * Build item 1's end-to-end half: what a host probe would record of one
 * pmi_stress window (model_record(): the tracepoints and kprobes, as
 * perf script prints them), with the guest's DATA line, its window marks
 * and perf's LOST count as notes. Run with HVPROBE_MODEL_PROBE naming a
 * folder, each run lands there, for tools/tests/test_pmi_model_verdict.py
 * to read through tools/pmi-verdict's own parsing, cause count and
 * verdict; here, each recording must hold the window and, with
 * lose_every, lose records.
 */
/*
 * The profile, in docs/pmi.md's words for each column of its table, for
 * the end-to-end test to hold that table against what the model ran.
 */
static void model_record_header(void *out, const struct model_host *host)
{
	model_record_note(out, "model host: %s", host->name);
	model_record_note(out, "model commits: %s", host->commits);
	model_record_note(out, "model LVTPC masked on a PMI: %s",
			  host->mask_amd     ? "every vendor"
			  : host->mask_intel ? "Intel-compatible only"
					     : "never");
	model_record_note(out, "model PMIs per VM exit: %s",
			  host->one_pmi_per_exit ? "one" : "two");
	model_record_note(out, "model NMI vs PMI request: %s",
			  host->pmi_before_nmi ? "PMI first" : "NMI first");
	model_record_note(out, "model counter reprogramming: %s",
			  host->deferred_reprogram ? "at VM-entry" : "in the exit");
	model_record_note(out, "model PMU model: %s", host->mediated ? "mediated" : "emulated");
}

static void record_window(enum model_pmu k, u32 h, bool nmi, u32 lose_every)
{
	struct model_config m = model_pmu(k, h, 2, 500 + 8 * h + k);
	struct stress_config c = config(PERIOD, 0);
	char name[96], buf[4 * KTAP_LINE_MAX];
	struct stress_totals t;
	struct json j;
	const char *doc;
	bool finished;
	void *out;
	u64 lost;

	snprintf(name, sizeof(name), "%s-%u-%s%s.txt", model_hosts[h].name, k,
		 nmi ? "nmi" : "fixed", lose_every ? "-lost" : "");
	out = model_record_file(name);
	if (!out) {
		report_error("%s: cannot make the recording", name);
		return;
	}
	c.lvtpc = nmi ? APIC_LVT_DM_NMI : APIC_VECTOR_PMI;
	/* What tools/pmi-verdict --quick boots, and the end-to-end tests judge. */
	c.counters = 1;
	c.seconds = 2;
	if (!ready(&m, &c)) {
		model_record_close(out);
		return;
	}
	model_record_header(out, &model_hosts[h]);
	model_record_note(out, "model pmu: %s", model_pmu_names[k]);
	model_record_note(out, "model lvtpc: %s", nmi ? "nmi" : "fixed");
	model_record(out, lose_every);
	model_mark(0xb0);
	finished = stress_run(&c);
	model_mark(0xb1);
	lost = model_record(NULL, 0);
	t = (struct stress_totals){ 0 };
	stress_totals(&t, &c);
	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "test", "pmi_stress");
	stress_json(&j, &c, &t);
	json_object_end(&j);
	doc = json_finish(&j);
	model_record_note(out, "host mark 0xb0 (pmi_stress begins)");
	model_record_note(out, "host mark 0xb1 (pmi_stress ends)");
	model_record_note(out, "DATA %s", doc ? doc : "{}");
	model_record_note(out, "stats:            LOST events: %llu", lost);
	for (u32 cpu = 0; cpu < m.cpus; cpu++)
		model_record_note(out, "model cpu %u PMI to entry: %llu us over %llu PMIs", cpu,
				  model_truth(cpu)->pmi_to_entry * 1000000 / m.tsc_hz,
				  model_truth(cpu)->pmi_nmis);
	report(finished && doc && model_record_close(out) > 10000 && !lose_every == !lost,
	       "%s: %llu PMIs, %llu records lost", name, t.pmis, lost);
}

/*
 * Every profile on an Intel PMU, which LVTPC masks on every profile but
 * 6.1.0, and on AMD PerfMonV2, which only 6.6 and 6.7 mask: with the
 * recordings asked for; else one of each kind, for the recording itself
 * (a recording is a few megabytes).
 */
DEFINE_TEST(unit_pmi_model_probe_record, "what a host probe records of each profile", 0)
{
	static const enum model_pmu pmus[] = { MODEL_INTEL_V2, MODEL_AMD_V2 };
	bool all = getenv("HVPROBE_MODEL_PROBE") != NULL;

	for (u32 h = 0; h < MODEL_HOSTS; h++)
		for (u32 k = 0; k < ARRAY_SIZE(pmus); k++) {
			if (!all && (h != MODEL_HOST_6_1_0 || k))
				continue;
			record_window(pmus[k], h, true, 0);
			record_window(pmus[k], h, false, 0);
		}
	record_window(MODEL_INTEL_V2, MODEL_HOST_6_1_141, true, 40);
	if (all)
		record_window(MODEL_INTEL_V2, MODEL_HOST_6_9, true, 40);
}
