// SPDX-License-Identifier: MIT
/*
 * Loops-per-jiffy arithmetic: Linux's lpj from a TSC frequency (kHz
 * truncation included, so presets compare exactly with Linux's), delay
 * lengths, and the direct method's verdict on its samples (bracket width
 * under 1/8, outliers dropped until the spread is under 1/8 of the mean).
 */
#include "kernel/test/test.h"
#include "kernel/time/lpj.h"

DEFINE_TEST(unit_lpj_from_hz, "lpj from the TSC frequency as Linux computes it", 0)
{
	/* 2.4 GHz at HZ=250: 9.6 M cycles per jiffy. */
	report_eq(lpj_from_tsc_hz(2400000000ULL, 250), 9600000, "2.4 GHz, HZ=250");
	/* Linux keeps tsc_khz: the 999 Hz below a kHz are dropped first. */
	report_eq(lpj_from_tsc_hz(2445369527ULL, 250), 9781476, "2445369527 Hz -> kHz first");
	report_eq(lpj_from_tsc_hz(2445369527ULL, 1000), 2445369, "HZ=1000");
	report_eq(lpj_from_tsc_hz(2445369527ULL, 100), 24453690, "HZ=100");
	report_eq(lpj_from_tsc_hz(999, 250), 0, "below 1 kHz there is nothing left");
	report_eq(lpj_from_tsc_hz(2400000000ULL, 0), 0, "HZ=0 is refused, not a division by 0");
	/* A 64-bit frequency must not overflow on the way. */
	report_eq(lpj_from_tsc_hz(UINT64_MAX, 10), UINT64_MAX / 1000 * 1000 / 10, "u64 max");
}

DEFINE_TEST(unit_lpj_delay, "delay lengths in TSC cycles", 0)
{
	/* 9.6 M cycles per jiffy at 250 Hz is 2.4 GHz: 10 ms is 24 M cycles. */
	report_eq(lpj_delay_cycles(9600000, 250, 10000), 24000000, "10 ms at 2.4 GHz");
	report_eq(lpj_delay_cycles(9600000, 250, 1), 2400, "1 us at 2.4 GHz");
	report_eq(lpj_delay_cycles(9600000, 250, 0), 0, "0 us");
	/* Non-round rates keep their fraction of a cycle per microsecond. */
	report_eq(lpj_delay_cycles(9781476, 250, 1000000), 2445369000, "1 s at 2445369 kHz");
	/* An hour at 5 GHz stays in range. */
	report_eq(lpj_delay_cycles(20000000, 250, 3600000000ULL), 18000000000000ULL,
		  "an hour at 5 GHz");
}

/*
 * The lpj test's udelay check under lpj=: the delay lasts what the preset
 * implies on the TSC at hand, whatever machine the preset was written on.
 * A preset of 9800000 (a 2.45 GHz host at HZ=250) on the TSC rates seen
 * on this project's machines.
 */
DEFINE_TEST(unit_lpj_delay_lasts, "how long udelay lasts under an lpj= preset", 0)
{
	report_eq(lpj_delay_lasts_us(9800000, 250, 2450000000ULL, 2000), 2000,
		  "the preset is this TSC's own: as asked");
	report_eq(lpj_delay_lasts_us(9800000, 250, 2096015000ULL, 2000), 2337,
		  "a 2.45 GHz preset on a 2.096 GHz TSC: 17 % long");
	report_eq(lpj_delay_lasts_us(8384060, 250, 2096015000ULL, 2000), 2000,
		  "the 2.096 GHz TSC's own lpj: as asked");
	report_eq(lpj_delay_lasts_us(8384060, 250, 2450000000ULL, 2000), 1711,
		  "a 2.096 GHz preset on a 2.45 GHz TSC: short");
	report_eq(lpj_delay_lasts_us(2450000, 1000, 2450000000ULL, 2000), 2000, "HZ=1000");
	report_eq(lpj_delay_lasts_us(9800000, 250, 0, 2000), 0, "no TSC rate, no answer");
	report_eq(lpj_delay_lasts_us(9800000, 250, 2450000000ULL, 36000000000ULL), 36000000000ULL,
		  "ten hours: cycles times 10^6 would pass 64 bits");
}

/*
 * The udelay check against a reference that is slow to read (an HPET
 * read is a VM exit, up to a millisecond inside an L1 nested under
 * TCG): the read's cost may excuse a long time, never a short one.
 */
DEFINE_TEST(unit_lpj_delay_within, "a delay judged against a slow reference", 0)
{
	report(lpj_delay_within(2001, 5, 2000, 10), "on time, a cheap read");
	report(lpj_delay_within(2379, 990, 2000, 10),
	       "long by about one read: a nested host's HPET (seen in make check)");
	report(lpj_delay_within(2150, 990, 2000, 10),
	       "a read dearer than the delay's excess does not make it short");
	report(!lpj_delay_within(1799, 0, 2000, 10), "short: a real defect");
	report(!lpj_delay_within(1799, 990, 2000, 10), "short whatever a read costs");
	report(!lpj_delay_within(2600, 100, 2000, 10), "long beyond what a read costs");
	report(lpj_delay_within(2337, 0, 2337, 10), "as a foreign preset implies");
}

DEFINE_TEST(unit_lpj_direct, "the direct method's verdict on its samples", 0)
{
	/*
	 * Two ticks of 9.6 M: tight brackets around 19.2 M, whose midpoints per
	 * tick are 9600000, 9600000, 9601000, 9600250 and 9602500.
	 */
	const u64 lo[] = { 19190000, 19195000, 19200000, 19198000, 19201000 };
	const u64 hi[] = { 19210000, 19205000, 19204000, 19203000, 19209000 };
	u64 lo2[5], hi2[5];

	report_eq(lpj_direct_combine(lo, hi, 5, 2), 9600750, "five good samples averaged");
	report_eq(lpj_direct_combine(lo, hi, 5, 0), 0, "zero ticks is no measurement");
	report_eq(lpj_direct_combine(lo, hi, 0, 2), 0, "no samples, no value");

	/* A bracket of 1/8 or more of the upper bound is not a sample. */
	for (int i = 0; i < 5; i++) {
		lo2[i] = lo[i];
		hi2[i] = hi[i];
	}
	lo2[0] = 10000000;
	hi2[0] = 30000000;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600937, "a wide bracket is ignored");

	/* A void sample (lower above upper) is ignored too. */
	lo2[0] = 1;
	hi2[0] = 0;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600937, "a void sample is ignored");

	/* One tight but wrong sample (a late tick) is dropped as an outlier. */
	lo2[0] = 12290000;
	hi2[0] = 12300000;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600937, "an outlier is dropped");

	/* One good sample alone proves nothing: it may be a cut-short jiffy. */
	for (int i = 1; i < 5; i++) {
		lo2[i] = 1;
		hi2[i] = 0;
	}
	lo2[0] = lo[0];
	hi2[0] = hi[0];
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 0, "a single good sample gives 0");
	/* Two that disagree: either may be the cut-short one. */
	lo2[1] = 120000;
	hi2[1] = 121000;
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 0, "two that disagree give 0");
	/* Two that agree are enough. */
	lo2[1] = lo[1];
	hi2[1] = hi[1];
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 9600000, "two that agree are enough");

	/* All void: no value, and the caller must try again. */
	for (int i = 0; i < 5; i++) {
		lo2[i] = 1;
		hi2[i] = 0;
	}
	report_eq(lpj_direct_combine(lo2, hi2, 5, 2), 0, "no good sample gives 0");
}

/*
 * calibrate_delay_is_known() in a serial bring-up of 8 CPUs, CPUs 0-3 in
 * package 0 (node 0) and 4-7 in package 1 (node 1): each CPU decides in
 * turn, with every CPU before it online with a value. warp_from is the
 * CPU whose TSC-sync check saw a warp (n for none): tsc_unstable holds
 * for the CPUs after it, and for itself where its own warp counts. Returns the
 * APs that calibrate; sources[i] is each AP's source.
 */
struct bringup_sim {
	u32 n, online;
};

static void sim_sibling(void *ctx, u32 i, struct lpj_sibling *out)
{
	const struct bringup_sim *sim = ctx;

	*out = (struct lpj_sibling){ .package = i / 4, .node = i / 4, .has_lpj = i < sim->online };
}

static u32 sim_bringup(const struct lpj_policy *policy, u32 reuse, bool constant_tsc, u32 warp_from,
		       u32 *sources)
{
	struct bringup_sim sim = { .n = 8 };
	u32 calibrations = 0;

	for (u32 cpu = 1; cpu < sim.n; cpu++) {
		sim.online = cpu;
		sources[cpu] = lpj_copy_source(
			policy, reuse, constant_tsc,
			cpu > warp_from || (cpu == warp_from && lpj_own_warp_counts(policy)),
			sim_sibling, &sim, sim.n, cpu);
		calibrations += sources[cpu] == LPJ_NO_SOURCE;
	}
	return calibrations;
}

/* 6.5's rules with the warp's mark deferred; no policy of the table. */
static const struct lpj_policy deferred = { .name = "deferred",
					    .copy_rule = LPJ_COPY_BOOT_CPU,
					    .tsc_sync = LPJ_TSC_SYNC_BEFORE_CALIBRATION,
					    .warp_mark = LPJ_WARP_MARKS_DEFERRED };

DEFINE_TEST(unit_lpj_copy_source, "calibrate_delay_is_known() under each policy", 0)
{
	static const u32 by_package[8] = { 0, 0, 0, 0, LPJ_NO_SOURCE, 4, 4, 4 };
	u32 src[8];
	bool same;

	/* 6.5, TSC constant and synchronized: everyone copies CPU 0. */
	report_eq(sim_bringup(lpj_policy_named("linux-6.5"), LPJ_REUSE_NODE, true, 8, src), 0,
		  "linux-6.5, synchronized: no AP calibrates");
	report_eq(src[7], 0, "linux-6.5, synchronized: CPU 7 copies CPU 0 across packages");

	/*
	 * 6.5 after a warp seen at CPU 1: the package rule, copying from an
	 * online CPU of the package (tsc.c), so the first CPU of package 1
	 * calibrates and its siblings copy it: 1 calibration, not 4.
	 */
	report_eq(sim_bringup(lpj_policy_named("linux-6.5"), LPJ_REUSE_NODE, true, 1, src), 1,
		  "linux-6.5 after a warp: only package 1's first CPU calibrates");
	same = true;
	for (u32 i = 1; i < 8; i++)
		same &= src[i] == by_package[i];
	report(same, "linux-6.5 after a warp: CPUs 1-3 copy CPU 0, 5-7 copy CPU 4");
	/* A warp seen late: the CPUs before it already copied CPU 0. */
	report_eq(sim_bringup(lpj_policy_named("linux-6.5"), LPJ_REUSE_NODE, true, 6, src), 0,
		  "linux-6.5, warp at CPU 6: CPU 6 copies CPU 4, which copied CPU 0");
	report_eq(src[6], 4, "linux-6.5, warp at CPU 6: its source is CPU 4");

	/*
	 * A mark deferred to a work item the control CPU runs later: the CPU
	 * whose check warped still copies CPU 0, and the mark reaches the
	 * CPUs after it.
	 */
	report_eq(sim_bringup(&deferred, LPJ_REUSE_NODE, true, 4, src), 0,
		  "a deferred mark, warp at CPU 4: no AP calibrates");
	report_eq(src[4], 0, "a deferred mark, warp at CPU 4: CPU 4 still copies CPU 0");
	report_eq(src[5], 4, "a deferred mark, warp at CPU 4: CPU 5 copies within its package");
	report_eq(sim_bringup(lpj_policy_named("linux-6.5"), LPJ_REUSE_NODE, true, 4, src), 1,
		  "linux-6.5, warp at CPU 4: marked at once, CPU 4 calibrates");
	report_eq(src[4], LPJ_NO_SOURCE, "linux-6.5, warp at CPU 4: its own warp counts");

	/* linux-6.12 is such a policy. */
	report_eq(sim_bringup(lpj_policy_named("linux-6.12"), LPJ_REUSE_NODE, true, 4, src), 0,
		  "linux-6.12, warp at CPU 4: no AP calibrates");
	report_eq(src[4], 0, "linux-6.12, warp at CPU 4: CPU 4 still copies CPU 0");
	report_eq(sim_bringup(lpj_policy_named("linux-6.12"), LPJ_REUSE_NODE, true, 8, src), 0,
		  "linux-6.12, synchronized: no AP calibrates");

	/* 6.1: the package rule from the start. */
	report_eq(sim_bringup(lpj_policy_named("linux-6.1"), LPJ_REUSE_NODE, true, 8, src), 1,
		  "linux-6.1: one calibration, package 1's first CPU");
	same = true;
	for (u32 i = 1; i < 8; i++)
		same &= src[i] == by_package[i];
	report(same, "linux-6.1: CPUs 1-3 copy CPU 0, 5-7 copy CPU 4");

	/* Without a constant TSC on the deciding CPU every policy calibrates. */
	report_eq(sim_bringup(lpj_policy_named("linux-6.5"), LPJ_REUSE_NODE, false, 8, src), 7,
		  "linux-6.5 without a constant TSC: every AP calibrates");
	report_eq(sim_bringup(lpj_policy_named("linux-6.1"), LPJ_REUSE_NODE, false, 8, src), 7,
		  "linux-6.1 without a constant TSC: every AP calibrates");

	/* hvprobe's own: lpj_reuse= decides. */
	report_eq(sim_bringup(lpj_policy_named("hvprobe"), LPJ_REUSE_NODE, true, 8, src), 1,
		  "hvprobe, lpj_reuse=node: one calibration on node 1");
	report_eq(sim_bringup(lpj_policy_named("hvprobe"), LPJ_REUSE_NONE, true, 8, src), 7,
		  "hvprobe, lpj_reuse=none: every AP calibrates");
}

/*
 * A CPU whose TSC runs cpj cycles per jiffy: reading jiffies costs
 * read_cost cycles, a delay of n loops n cycles plus call_cost.
 */
struct sim_clock {
	u64 now, cpj, read_cost, call_cost;
	/* The delay number stall_at (from 1) overruns by stall cycles. */
	u32 delays, stall_at;
	u64 stall;
};

static u64 sim_jiffies(void *ctx)
{
	struct sim_clock *c = ctx;

	c->now += c->read_cost;
	return c->now / c->cpj;
}

static void sim_delay(void *ctx, u64 loops)
{
	struct sim_clock *c = ctx;

	c->now += loops + c->call_cost + (++c->delays == c->stall_at ? c->stall : 0);
}

static u64 sim_cycles(void *ctx)
{
	return ((struct sim_clock *)ctx)->now;
}

static u64 sim_converge_stalled(u64 cpj, u64 phase, u32 stall_at, u64 stall, u32 *edges,
				u64 *jiffies_spent, u64 *longest)
{
	struct sim_clock c = { .now = phase,
			       .cpj = cpj,
			       .read_cost = 40,
			       .call_cost = 200,
			       .stall_at = stall_at,
			       .stall = stall };
	struct lpj_timebase t = {
		.jiffies = sim_jiffies, .delay = sim_delay, .cycles = sim_cycles, .ctx = &c
	};
	u64 start = phase / cpj, lpj;

	*edges = 0;
	*longest = 0;
	lpj = lpj_converge(&t, edges, longest);
	*jiffies_spent = c.now / cpj - start;
	return lpj;
}

static u64 sim_converge(u64 cpj, u64 phase, u32 *edges, u64 *jiffies_spent)
{
	u64 longest;

	return sim_converge_stalled(cpj, phase, 0, 0, edges, jiffies_spent, &longest);
}

DEFINE_TEST(unit_lpj_converge, "calibrate_delay_converge(): its value and its cost in ticks", 0)
{
	u32 edges;
	u64 spent, lpj;

	/* 2.45 GHz at HZ=250: 9.8 M cycles a jiffy. */
	lpj = sim_converge(9800000, 1234567, &edges, &spent);
	report(lpj <= 9800000 && lpj >= 9800000 - (9800000 >> LPJ_PREC),
	       "lpj %llu is within 1/256 below the jiffy's 9800000 cycles", lpj);
	report(spent >= 4 && spent <= 7, "it takes %llu jiffies (Linux: 5-6 at this lpj)", spent);
	report(edges >= 4 && edges <= 7, "and waits through %u tick edges", edges);
	/* HZ=1000 at the same TSC: 2.45 M cycles a jiffy. */
	lpj = sim_converge(2450000, 0, &edges, &spent);
	report(lpj <= 2450000 && lpj >= 2450000 - (2450000 >> LPJ_PREC),
	       "HZ=1000: lpj %llu within 1/256 below 2450000", lpj);
}

DEFINE_TEST(unit_lpj_converge_stall, "a host stall in a converge delay, seen and judged", 0)
{
	u64 cpj = 9800000, spent, lpj, longest, first_chop = 0;
	u32 edges;

	lpj = sim_converge_stalled(cpj, 1234567, 0, 0, &edges, &spent, &longest);
	report(longest == 200, "undisturbed, a delay overruns by its call cost alone (%llu)",
	       longest);
	report(!lpj_stall_explains(longest, cpj, 4), "which explains nothing");
	/*
	 * One delay stalled by a jiffy makes the tick pass inside it; the
	 * first delay where that cuts the value below a quarter.
	 */
	for (u32 at = 1; at < 64 && !first_chop; at++) {
		lpj = sim_converge_stalled(cpj, 1234567, at, cpj, &edges, &spent, &longest);
		if (lpj < cpj / 4)
			first_chop = at;
	}
	report(first_chop, "one stall of a jiffy can cut the value below a quarter (delay %llu)",
	       first_chop);
	report(longest >= cpj, "the stall is seen: %llu cycles over", longest);
	report(lpj_stall_explains(longest, cpj, 4), "and explains a value 4x too low");
	report(!lpj_stall_explains(cpj / 2, cpj, 4) && lpj_stall_explains(cpj * 3 / 4, cpj, 4),
	       "half a jiffy does not explain 4x; three quarters do");
	report(!lpj_stall_explains(cpj * 10, cpj, 0), "no factor, no excuse");
}

DEFINE_TEST(unit_lpj_methods, "calibrate_delay(): the direct method once, then converge", 0)
{
	u32 m[LPJ_METHODS_MAX];
	u32 n;

	n = lpj_calibration_methods(CALIBRATE_LINUX, true, true, m);
	report(n == 2 && m[0] == LPJ_METHOD_DIRECT && m[1] == LPJ_METHOD_CONVERGE,
	       "delay_tsc: direct once, then converge (%u methods)", n);
	n = lpj_calibration_methods(CALIBRATE_LINUX, true, false, m);
	report(n == 1 && m[0] == LPJ_METHOD_CONVERGE,
	       "TPAUSE or MWAITX delay: no direct method, converge only (%u methods)", n);
	n = lpj_calibration_methods(CALIBRATE_FAST, true, true, m);
	report(n == 1 && m[0] == LPJ_METHOD_FAST, "calibrate=fast with a reference: its window");
	n = lpj_calibration_methods(CALIBRATE_FAST, false, true, m);
	report(n == 2 && m[0] == LPJ_METHOD_DIRECT,
	       "calibrate=fast without a reference: Linux's methods");
}
