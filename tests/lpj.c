// SPDX-License-Identifier: MIT
/*
 * lpj: loops-per-jiffy comes from where Linux would take it, and delays
 * built on it are as long as they claim.
 *
 * The other half of experiment 1. The seed threads measured 1300 ms vs
 * 130 ms (16 vCPUs) and 210 ms vs 32 ms (4 nodes) depending on whether
 * each AP calibrates, reuses a sibling's value or takes a preset. A pass
 * means the count of timer-derived values is exactly what the rule
 * predicts: none with lpj=, one per node (or package) with reuse and a
 * constant TSC, one per CPU without; reused and preset values are copied
 * exactly; most APs' own calibrations are plausible (with calibrate=fast,
 * their median agrees with the BSP's value within 10 %); and udelay(2000)
 * on the BSP lasts 2 ms +-10 % by the reference timer (a short delay
 * fails at once; a long one is retried, since a loaded host stretches it).
 * An lpj= preset states some machine's rate, not necessarily this one's:
 * then the delay must last what the preset implies on this TSC, so that
 * the check holds on any host and still catches a delay loop that
 * ignores the preset.
 */
#include "kernel/time/lpj.h"
#include "apic/options.h"
#include "apic/smp/smp.h"
#include "kernel/kernel.h"
#include "kernel/lib/json.h"
#include "kernel/lib/stats.h"
#include "kernel/lib/string.h"
#include "kernel/test/test.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/time/options.h"
#include "kernel/time/rates.h"

/* Short enough that a loaded host still runs a vCPU that long at a stretch. */
#define UDELAY_TEST_US 2000
#define UDELAY_TOLERANCE_PCT 10
#define UDELAY_TRIES 50
/*
 * calibrate=fast measures against the reference timer: its median must
 * agree with the BSP's value. calibrate=linux counts jiffies, and a vCPU
 * whose tick arrives late sees short or long jiffies, as Linux does: on a
 * loaded TCG host single values are off by 2x (a 2-tick window seen as 1
 * or 3), so only plausibility is checked, within a factor of 4, for the
 * majority of APs, which still catches a failed or mis-scaled method.
 */
#define LPJ_FAST_AGREEMENT_PCT 10
#define LPJ_LINUX_PLAUSIBLE_FACTOR 4

/* Distinct nodes (or packages) among online CPUs: the reuse prediction. */
static u32 domains_online(void)
{
	u32 count = 0;

	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);
		bool seen = false;

		if (c->state != CPU_ONLINE)
			continue;
		for (u32 k = 0; k < i && !seen; k++) {
			const struct percpu *o = cpu_at(k);

			seen = o->state == CPU_ONLINE && delay_same_domain(o, c);
		}
		count += !seen;
	}
	return count;
}

/* A reused value is a copy of some other online CPU's in the same domain. */
static bool reused_exactly(const struct percpu *c)
{
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *o = cpu_at(i);

		/* The boot CPU's lpj_fine counts as a source even where it was stated. */
		if (o != c && delay_same_domain(o, c) && (delay_cpu(i)->calibrated || !o->index) &&
		    delay_cpu(i)->lpj == delay_cpu(c->index)->lpj)
			return true;
	}
	return false;
}

/*
 * The first try within tolerance, else the shortest of UDELAY_TRIES. A
 * vCPU descheduled during the delay adds time that is not the delay's
 * (milliseconds on a loaded host), never subtracts any: a short delay is
 * a real defect and ends the tries, a long one may be the host's doing.
 */
static void delay_under_test(void *arg)
{
	(void)arg;
	udelay(UDELAY_TEST_US);
}

static void nothing(void *arg)
{
	(void)arg;
}

/*
 * What bracketing a call with two reads of the reference costs by
 * itself: about one read. An emulated HPET or PM timer read is a VM
 * exit, tens of microseconds when the host is itself a guest (a nested
 * L1 under TCG), and would be counted as delay.
 */
static u64 reference_read_cost_us(void)
{
	u64 best = ~0ULL;

	for (int i = 0; i < UDELAY_TRIES / 5; i++)
		best = MIN(best, refclock_time_us(clock_reference(), nothing, NULL));
	return best;
}

/* The shortest of the tries, stopping at one that is not too long. */
static u64 measure_udelay_us(u64 expected_us, u64 read_cost_us)
{
	u64 best = ~0ULL;

	for (int i = 0; i < UDELAY_TRIES; i++) {
		best = MIN(best, refclock_time_us(clock_reference(), delay_under_test, NULL));
		if (best - MIN(best, read_cost_us) <=
		    expected_us * (100 + UDELAY_TOLERANCE_PCT) / 100)
			break;
	}
	return best;
}

/*
 * How long udelay(UDELAY_TEST_US) should last: as asked, unless lpj= gave
 * the BSP a value of its own, which the TSC's measured rate turns into
 * time. A hypervisor's preset claims to be this machine's rate and is
 * held to it.
 */
static u64 udelay_expected_us(const struct delay_cpu *bsp)
{
	u64 own;

	if (!bsp->lpj_source || strcmp(bsp->lpj_source, "cmdline") || !clock.tsc_hz)
		return UDELAY_TEST_US;
	own = lpj_from_tsc_hz(clock.tsc_hz, clock.hz);
	report_info("lpj=%llu on a TSC of %llu Hz (whose own lpj is %llu): "
		    "udelay(%d) should last %llu us",
		    bsp->lpj, clock.tsc_hz, own, UDELAY_TEST_US,
		    lpj_delay_lasts_us(bsp->lpj, clock.hz, clock.tsc_hz, UDELAY_TEST_US));
	return lpj_delay_lasts_us(bsp->lpj, clock.hz, clock.tsc_hz, UDELAY_TEST_US);
}

/* Values the APs measured themselves, against the BSP's. */
static void check_calibrated(const struct delay_cpu *bsp)
{
	static u64 values[MAX_CPUS];
	u64 lo = bsp->lpj / LPJ_LINUX_PLAUSIBLE_FACTOR, hi = bsp->lpj * LPJ_LINUX_PLAUSIBLE_FACTOR;
	u32 n = 0, plausible = 0, stalled = 0;

	for (u32 i = 1; i < cpu_count(); i++) {
		const struct delay_cpu *c = delay_cpu(i);

		if (cpu_at(i)->state != CPU_ONLINE || !c->calibrated)
			continue;
		values[n++] = c->lpj;
		plausible += c->lpj >= lo && c->lpj <= hi;
		/*
		 * Too low, and a delay of its own overran by enough to explain
		 * it: the host descheduled the vCPU mid-step, which would cut
		 * Linux's value the same way. The host's, not the method's.
		 */
		if (c->lpj < lo &&
		    lpj_stall_explains(c->cal_stall, bsp->lpj, LPJ_LINUX_PLAUSIBLE_FACTOR)) {
			stalled++;
			report_info("CPU %u's lpj %llu: a delay overran by %llu us, a host stall",
				    i, c->lpj, tsc_to_us(c->cal_stall));
		}
	}
	if (!n)
		return;
	sort_u64(values, n);
	report_info("APs' own lpj: min %llu, median %llu, max %llu (BSP %llu)", values[0],
		    percentile_u64(values, n, 50), values[n - 1], bsp->lpj);
	if (time_options.calibrate == CALIBRATE_FAST)
		report(within_pct(percentile_u64(values, n, 50), bsp->lpj, LPJ_FAST_AGREEMENT_PCT),
		       "the median of %u AP calibrations is within %d %% of the BSP's lpj", n,
		       LPJ_FAST_AGREEMENT_PCT);
	/*
	 * A loaded host makes a jiffy short or long by stalling the tick, for
	 * Linux as here (soak: one AP of 58 at 0.18x): the method is judged by
	 * the majority of the calibrations no stall of their own explains.
	 */
	else if (stalled == n)
		report_skip("all %u AP calibrations were cut short by host stalls: none to judge",
			    n);
	else
		report(plausible * 2 >= n - stalled,
		       "%u of %u AP calibrations are within %dx of the BSP's lpj (a majority; "
		       "%u cut short by host stalls left out)",
		       plausible, n - stalled, LPJ_LINUX_PLAUSIBLE_FACTOR, stalled);
}

static void check_counts(u32 online, u32 calibrations)
{
	const char *why, *constant_why;
	u32 expected;

	if (delay_preset_lpj()) {
		expected = 0;
		why = "a preset applies to every CPU";
	} else if (time_options.lpj_source == LPJ_SOURCE_CALIBRATE ||
		   (lpj_policy_chosen()->copy_rule == LPJ_COPY_REUSE &&
		    time_options.lpj_reuse == LPJ_REUSE_NONE) ||
		   !delay_tsc_constant(&constant_why)) {
		/* The BSP's lpj_fine is timer-derived only if it measured the TSC. */
		expected = online - !delay_cpu(0)->calibrated;
		why = !delay_tsc_constant(&constant_why) ? constant_why : "every CPU calibrates";
	} else {
		expected = domains_online() - !delay_cpu(0)->calibrated;
		why = delay_policy_rule();
	}
	report_info("expecting %u timer-derived values: %s", expected, why);
	report_eq(calibrations, expected, "number of CPUs that derived lpj from a timer");
}

/* Where the online CPUs' lpj came from. */
struct lpj_tally {
	u32 online, calibrations, copied, copied_ok, preset_ok;
};

/* The udelay check's figures, in us. */
struct udelay_result {
	u64 expected_us, slept, read_cost_us;
};

/* A source the platform lacks is a SKIP; lpj_source=cmdline without lpj= is ours. */
static void report_source_problem(void)
{
	if (!delay_problem()[0])
		return;
	report_prefix_push("lpj_source");
	if (lpj_source_rate() == rate_source_named("cmdline"))
		report_error("%s", delay_problem());
	else
		report_skip("%s", delay_problem());
	report_prefix_pop();
}

static void tally_sources(struct lpj_tally *t)
{
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);
		const struct delay_cpu *d = delay_cpu(i);

		if (c->state != CPU_ONLINE)
			continue;
		t->online++;
		t->calibrations += d->calibrated;
		t->preset_ok += d->lpj == delay_preset_lpj() && !d->calibrated;
		if (d->lpj_source && !strcmp(d->lpj_source, "reuse")) {
			t->copied++;
			t->copied_ok += reused_exactly(c);
		}
	}
}

/* Preset and reused values are copied exactly. */
static void check_copies(const struct lpj_tally *t)
{
	if (delay_preset_lpj())
		report_eq(t->preset_ok, t->online, "every CPU uses the preset value exactly");
	if (t->copied)
		report_eq(t->copied_ok, t->copied, "every reused lpj equals a same-domain CPU's");
}

static void check_udelay(struct udelay_result *u)
{
	report_prefix_push("udelay");
	if (!clock_have_ref()) {
		report_skip("no reference timer to measure a delay against (%s)", clock.ref_why);
	} else {
		u->read_cost_us = reference_read_cost_us();
		u->slept = measure_udelay_us(u->expected_us, u->read_cost_us);
		report(lpj_delay_within(u->slept, u->read_cost_us, u->expected_us,
					UDELAY_TOLERANCE_PCT),
		       "udelay(%d) lasts %llu us by the %s, one read of which costs %llu us "
		       "(%llu within %d %%)",
		       UDELAY_TEST_US, u->slept, clock_reference()->name, u->read_cost_us,
		       u->expected_us, UDELAY_TOLERANCE_PCT);
	}
	report_prefix_pop();
}

static void lpj_data(const struct lpj_tally *t, const struct udelay_result *u)
{
	char buf[1024];
	struct json j;

	report_data_begin(&j, buf, "lpj");
	delay_json(&j);
	clock_json(&j);
	json_u64(&j, "cpus", t->online);
	json_u64(&j, "calibrations", t->calibrations);
	json_u64(&j, "udelay_requested_us", UDELAY_TEST_US);
	json_u64(&j, "udelay_expected_us", u->expected_us);
	json_u64(&j, "udelay_us", u->slept);
	json_u64(&j, "udelay_read_cost_us", u->read_cost_us);
	report_data_end(&j);
}

DEFINE_TEST(lpj, "loops-per-jiffy comes from the right source and delays are right", 0)
{
	const struct delay_cpu *bsp = delay_cpu(0);
	struct lpj_tally t = { 0 };
	struct udelay_result u = { .expected_us = udelay_expected_us(bsp) };

	report_source_problem();
	tally_sources(&t);
	check_counts(t.online, t.calibrations);
	check_copies(&t);
	check_calibrated(bsp);
	check_udelay(&u);
	lpj_data(&t, &u);
}
