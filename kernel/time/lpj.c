// SPDX-License-Identifier: MIT
/* Loops-per-jiffy arithmetic; see lpj.h. */
#include "kernel/time/lpj.h"
#include "kernel/lib/string.h"
#include "kernel/time/options.h"

#define US_PER_SECOND 1000000ULL

u64 lpj_from_tsc_hz(u64 tsc_hz, u32 hz)
{
	return hz ? tsc_hz / 1000 * 1000 / hz : 0;
}

u32 lpj_direct_dct(u32 hz)
{
	return hz < 100 ? 1 : hz / 100;
}

u32 lpj_direct_ticks(u32 hz)
{
	return LPJ_DIRECT_SAMPLES * (lpj_direct_dct(hz) + 2);
}

u64 lpj_delay_cycles(u64 lpj, u32 hz, u64 us)
{
	/* lpj * hz is cycles per second; split to keep us * that in range. */
	u64 per_second = lpj * hz;

	return per_second / US_PER_SECOND * us + per_second % US_PER_SECOND * us / US_PER_SECOND;
}

u64 lpj_delay_lasts_us(u64 lpj, u32 hz, u64 tsc_hz, u64 us)
{
	u64 cycles = lpj_delay_cycles(lpj, hz, us);

	if (!tsc_hz)
		return 0;
	if (cycles <= UINT64_MAX / US_PER_SECOND)
		return cycles * US_PER_SECOND / tsc_hz;
	return cycles / (tsc_hz / US_PER_SECOND ?: 1);
}

bool lpj_delay_within(u64 took_us, u64 read_cost_us, u64 expected_us, u32 pct)
{
	u64 low = expected_us * (100 - pct) / 100, high = expected_us * (100 + pct) / 100;

	return took_us >= low && took_us - MIN(took_us, read_cost_us) <= high;
}

/*
 * The mean once the samples agree within 1/8, dropping the one farthest
 * from the mean until they do; 0 unless at least two agree. A jiffy that
 * a late tick cut to microseconds gives a tight, plausible-looking sample
 * far off the truth: one sample alone, or one of two that disagree, may
 * be that one (soak: APs at 0.003x the BSP's lpj with hz=100).
 */
static u64 spread_dropping_outliers(u64 *good, u32 n)
{
	for (;;) {
		u64 sum = 0, mean, far = 0, lo = ~0ULL, hi = 0;
		u32 far_i = 0;

		for (u32 i = 0; i < n; i++) {
			sum += good[i];
			lo = MIN(lo, good[i]);
			hi = MAX(hi, good[i]);
		}
		mean = sum / n;
		if (n < 2)
			return 0;
		if (hi - lo <= mean / 8)
			return mean;
		for (u32 i = 0; i < n; i++) {
			u64 d = good[i] > mean ? good[i] - mean : mean - good[i];

			if (d > far) {
				far = d;
				far_i = i;
			}
		}
		good[far_i] = good[--n];
	}
}

u64 lpj_direct_combine(const u64 lower[], const u64 upper[], u32 n, u32 ticks)
{
	u64 good[LPJ_DIRECT_SAMPLES];
	u32 count = 0;

	if (!ticks)
		return 0;
	for (u32 i = 0; i < n && count < LPJ_DIRECT_SAMPLES; i++) {
		if (upper[i] < lower[i] || upper[i] - lower[i] >= upper[i] / 8)
			continue;
		good[count++] = (lower[i] + upper[i]) / 2 / ticks;
	}
	return count ? spread_dropping_outliers(good, count) : 0;
}

static u64 offered_lpj(const struct rate_source *s, u32 hz)
{
	return s->offer->lpj ? s->offer->lpj : lpj_from_tsc_hz(s->offer->tsc_hz, hz);
}

/*
 * Whether policy presets from s under auto: from a source with any of
 * its preset_flags (hvprobe's: every RATE_LPJ_HVPROBE source, the
 * fastest stated rate; Linux's: lpj_setup() and the interfaces whose
 * platform code presets lpj), and under a policy that runs Linux's
 * platform code, an interface's only where its platform is Linux's
 * x86_hyper (platform: that code alone runs). With any_platform, the
 * rule whatever the platform, as preset_rule lists it.
 */
static bool lpj_policy_takes(const struct lpj_policy *policy, const struct rate_source *s,
			     const struct rate_platform *platform, bool any_platform)
{
	u32 by = s->lpj_flags & policy->preset_flags;

	if (!by)
		return false;
	if (!policy->linux_platform || any_platform)
		return true;
	if (s->platform)
		return s->platform == platform;
	/* Taken by the patch alone: where Linux's platform code calls it. */
	return by != RATE_LPJ_HV_PRESET || (platform && platform->runs_hv_preset);
}

const struct rate_source *lpj_preset(const struct lpj_policy *policy,
				     const struct rate_source *requested, u32 hz, u64 *lpj)
{
	const struct rate_platform *platform = rate_linux_platform();
	const struct rate_source *s;

	*lpj = 0;
	if (requested) {
		*lpj = offered_lpj(requested, hz);
		return *lpj ? requested : NULL;
	}
	rate_for_each(s)
	{
		if (!lpj_policy_takes(policy, s, platform, false))
			continue;
		*lpj = offered_lpj(s, hz);
		if (*lpj)
			return s;
	}
	return NULL;
}

const struct rate_platform *lpj_platform_tsc(const struct lpj_policy *policy)
{
	const struct rate_platform *p = rate_linux_platform();

	return policy->linux_platform && p && p->tsc_init ? p : NULL;
}

void lpj_preset_rule(const struct lpj_policy *policy, char *buf, size_t len)
{
	const struct rate_source *s;
	bool first = true;

	str_copy(buf, policy->rule_prefix, len);
	rate_for_each(s)
	{
		if (!lpj_policy_takes(policy, s, NULL, true))
			continue;
		if (!first)
			str_append(buf, ", ", len);
		str_append(buf, s->listed_as ? s->listed_as : s->name, len);
		first = false;
	}
	if (policy->rule_suffix)
		str_append(buf, policy->rule_suffix, len);
}

const char *lpj_copy_rule_words(const struct lpj_policy *policy, u32 reuse, bool tsc_unstable)
{
	switch (policy->copy_rule) {
	case LPJ_COPY_PACKAGE: return "constant TSC: copy from a CPU of the same package";
	case LPJ_COPY_BOOT_CPU:
		return tsc_unstable ? "constant TSC, not synchronized: copy within the package"
				    : "constant, synchronized TSC: copy the boot CPU's";
	default: break;
	}
	switch (reuse) {
	case LPJ_REUSE_NODE: return "constant TSC: copy from a CPU of the same node";
	case LPJ_REUSE_PACKAGE: return "constant TSC: copy from a CPU of the same package";
	default: return "every AP calibrates";
	}
}

bool lpj_same_domain(const struct lpj_policy *policy, u32 reuse, bool tsc_unstable, u32 package_a,
		     u32 node_a, u32 package_b, u32 node_b)
{
	switch (policy->copy_rule) {
	case LPJ_COPY_BOOT_CPU:
		if (!tsc_unstable)
			return true;
		return package_a == package_b;
	case LPJ_COPY_PACKAGE: return package_a == package_b;
	default: break;
	}
	switch (reuse) {
	case LPJ_REUSE_NODE: return node_a == node_b;
	case LPJ_REUSE_PACKAGE: return package_a == package_b;
	default: return false;
	}
}

bool lpj_own_warp_counts(const struct lpj_policy *policy)
{
	return policy->warp_mark == LPJ_WARP_MARKS_AT_ONCE &&
	       policy->tsc_sync != LPJ_TSC_SYNC_AFTER_CALIBRATION;
}

u32 lpj_copy_source(const struct lpj_policy *policy, u32 reuse, bool constant_tsc,
		    bool tsc_unstable, lpj_sibling_fn sibling, void *ctx, u32 n, u32 self)
{
	struct lpj_sibling me, other;

	if (!constant_tsc || self >= n)
		return LPJ_NO_SOURCE;
	sibling(ctx, self, &me);
	/* CPU 0's value while the TSC is synchronized. */
	if (policy->copy_rule == LPJ_COPY_BOOT_CPU && self && !tsc_unstable)
		return 0;
	/*
	 * The package rule, and the boot-CPU rule once the TSC is unstable:
	 * any online CPU of the package but this one
	 * (cpumask_any_but(topology_core_cpumask())), the lowest-numbered;
	 * hvprobe's: the first with a value in the lpj_reuse= domain.
	 */
	for (u32 i = 0; i < n; i++) {
		if (i == self)
			continue;
		sibling(ctx, i, &other);
		if (other.has_lpj && lpj_same_domain(policy, reuse, true, other.package, other.node,
						     me.package, me.node))
			return i;
	}
	return LPJ_NO_SOURCE;
}

const char *const lpj_method_names[] = {
	[LPJ_METHOD_DIRECT] = "direct",
	[LPJ_METHOD_CONVERGE] = "converge",
	[LPJ_METHOD_FAST] = "fast",
};
_Static_assert(ARRAY_SIZE(lpj_method_names) == LPJ_METHOD_COUNT, "lpj_method_names");

/* calibrate_delay()'s last two branches: the direct method once, then converge. */
u32 lpj_calibration_methods(u32 calibrate, bool have_ref, bool delay_tsc, u32 *methods)
{
	u32 n = 0;

	if (calibrate == CALIBRATE_FAST && have_ref) {
		methods[n++] = LPJ_METHOD_FAST;
		return n;
	}
	if (delay_tsc)
		methods[n++] = LPJ_METHOD_DIRECT;
	methods[n++] = LPJ_METHOD_CONVERGE;
	return n;
}

/* jiffies, counting each change this CPU sees. */
static u64 read_jiffies(const struct lpj_timebase *t, u64 *seen, u32 *edges)
{
	u64 now = t->jiffies(t->ctx);

	if (now != *seen) {
		*seen = now;
		(*edges)++;
	}
	return now;
}

/* Spin until jiffies moves on from ticks; the new value. */
static u64 next_edge(const struct lpj_timebase *t, u64 ticks, u64 *seen, u32 *edges)
{
	u64 now;

	while ((now = read_jiffies(t, seen, edges)) == ticks)
		;
	return now;
}

/* __delay(loops), with the longest overrun of any delay kept in *stall. */
static void timed_delay(const struct lpj_timebase *t, u64 loops, u64 *stall)
{
	u64 start = t->cycles(t->ctx), took;

	t->delay(t->ctx, loops);
	took = t->cycles(t->ctx) - start;
	if (took > loops)
		*stall = MAX(*stall, took - loops);
}

bool lpj_stall_explains(u64 stall, u64 cycles_per_jiffy, u32 factor)
{
	return factor && stall * factor >= cycles_per_jiffy * (factor - 1);
}

/* Mirrors calibrate_delay_converge(): the same stages, bands and chop limit. */
u64 lpj_converge(const struct lpj_timebase *t, u32 *edges, u64 *stall)
{
	u64 seen = t->jiffies(t->ctx), ticks, lpj = 1 << 12, lpj_base, loopadd, loopadd_base,
	    chop_limit;
	u32 trials = 0, band = 0, trial_in_band = 0;

	/* Stage 1: from a tick edge, delays of growing bands until one tick passes. */
	ticks = next_edge(t, seen, &seen, edges);
	do {
		if (++trial_in_band == (1u << band)) {
			band++;
			trial_in_band = 0;
		}
		timed_delay(t, lpj * band, stall);
		trials += band;
	} while (read_jiffies(t, &seen, edges) == ticks);
	/* The last band overshot: back off to an underestimate, the band its bound. */
	trials -= band;
	loopadd_base = lpj * band;
	lpj_base = lpj * trials;

	for (;;) {
		lpj = lpj_base;
		loopadd = loopadd_base;
		chop_limit = lpj >> LPJ_PREC;
		/* Stage 2: binary chop, each trial a delay started on an edge. */
		while (loopadd > chop_limit) {
			lpj += loopadd;
			ticks = next_edge(t, read_jiffies(t, &seen, edges), &seen, edges);
			timed_delay(t, lpj, stall);
			if (read_jiffies(t, &seen, edges) != ticks)
				lpj -= loopadd;
			loopadd >>= 1;
		}
		/* Every step grew: the base was far too low; again, wider. */
		if (lpj + loopadd * 2 != lpj_base + loopadd_base * 2)
			return lpj;
		lpj_base = lpj;
		loopadd_base <<= 2;
	}
}
