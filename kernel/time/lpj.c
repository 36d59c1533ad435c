// SPDX-License-Identifier: MIT
/* Loops-per-jiffy arithmetic; see lpj.h. */
#include "kernel/time/lpj.h"
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

static u64 offer(u32 source, const struct lpj_offers *o, u32 hz)
{
	switch (source) {
	case LPJ_SOURCE_CMDLINE: return o->cmdline_lpj;
	case LPJ_SOURCE_HYPERV: return lpj_from_tsc_hz(o->hyperv_tsc_hz, hz);
	case LPJ_SOURCE_KVMCLOCK: return lpj_from_tsc_hz(o->kvmclock_tsc_khz * 1000, hz);
	case LPJ_SOURCE_KVM: return lpj_from_tsc_hz(o->kvm_timing_tsc_khz * 1000, hz);
	case LPJ_SOURCE_CPUID: return lpj_from_tsc_hz(o->cpuid_tsc_hz, hz);
	default: return 0;
	}
}

u32 lpj_linux_platform(bool hyperv, bool kvm)
{
	if (kvm)
		return LPJ_PLATFORM_KVM;
	return hyperv ? LPJ_PLATFORM_HYPERV : LPJ_PLATFORM_NONE;
}

u32 lpj_preset(u32 policy, u32 requested, const struct lpj_offers *o, u32 hz, u64 *lpj)
{
	static const u32 hvprobe_order[] = { LPJ_SOURCE_CMDLINE, LPJ_SOURCE_HYPERV,
					     LPJ_SOURCE_KVMCLOCK, LPJ_SOURCE_KVM };
	u32 platform = lpj_linux_platform(o->hyperv, o->kvm);
	u32 order[ARRAY_SIZE(hvprobe_order)], n = 0;

	*lpj = 0;
	if (requested != LPJ_SOURCE_AUTO) {
		*lpj = offer(requested, o, hz);
		return *lpj ? requested : LPJ_SOURCE_AUTO;
	}
	if (policy == LPJ_POLICY_HVPROBE) {
		for (u32 i = 0; i < ARRAY_SIZE(hvprobe_order); i++)
			order[n++] = hvprobe_order[i];
	} else {
		order[n++] = LPJ_SOURCE_CMDLINE;
		if (policy == LPJ_POLICY_HV_PRESET && platform == LPJ_PLATFORM_HYPERV)
			order[n++] = LPJ_SOURCE_HYPERV;
		if (platform == LPJ_PLATFORM_KVM)
			order[n++] = LPJ_SOURCE_KVMCLOCK;
	}
	for (u32 i = 0; i < n; i++) {
		*lpj = offer(order[i], o, hz);
		if (*lpj)
			return order[i];
	}
	return LPJ_SOURCE_AUTO;
}

u32 lpj_hyperv_tsc(u32 policy, bool hyperv, bool kvm, bool access_tsc_invariant)
{
	if (policy == LPJ_POLICY_HVPROBE || lpj_linux_platform(hyperv, kvm) != LPJ_PLATFORM_HYPERV)
		return LPJ_HV_TSC_NONE;
	return access_tsc_invariant ? LPJ_HV_TSC_EXPOSE_INVARIANT : LPJ_HV_TSC_UNSTABLE;
}

static bool same_domain(u32 policy, u32 reuse, const struct lpj_sibling *a,
			const struct lpj_sibling *b)
{
	if (policy != LPJ_POLICY_HVPROBE)
		return a->package == b->package;
	switch (reuse) {
	case LPJ_REUSE_NODE: return a->node == b->node;
	case LPJ_REUSE_PACKAGE: return a->package == b->package;
	default: return false;
	}
}

u32 lpj_copy_source(u32 policy, u32 reuse, bool constant_tsc, bool tsc_unstable,
		    lpj_sibling_fn sibling, void *ctx, u32 n, u32 self)
{
	struct lpj_sibling me, other;

	if (!constant_tsc || self >= n)
		return LPJ_NO_SOURCE;
	sibling(ctx, self, &me);
	/* Linux 6.5+: CPU 0's value while the TSC is synchronized. */
	if ((policy == LPJ_POLICY_LINUX_6_5 || policy == LPJ_POLICY_HV_PRESET) && self &&
	    !tsc_unstable)
		return 0;
	/*
	 * Linux 6.1, and 6.5+ once the TSC is unstable: any online CPU of the
	 * package but this one (cpumask_any_but(topology_core_cpumask())),
	 * the lowest-numbered; hvprobe's: the first with a value in the
	 * lpj_reuse= domain.
	 */
	for (u32 i = 0; i < n; i++) {
		if (i == self)
			continue;
		sibling(ctx, i, &other);
		if (other.has_lpj && same_domain(policy, reuse, &other, &me))
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

/* Mirrors calibrate_delay_converge(): the same stages, bands and chop limit. */
u64 lpj_converge(const struct lpj_timebase *t, u32 *edges)
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
		t->delay(t->ctx, lpj * band);
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
			t->delay(t->ctx, lpj);
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
