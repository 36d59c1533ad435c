// SPDX-License-Identifier: MIT
/* Loops-per-jiffy arithmetic; see lpj.h. */
#include "kernel/time/options.h"
#include "kernel/time/lpj.h"

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

u32 lpj_preset(u32 requested, const struct lpj_offers *o, u32 hz, u64 *lpj)
{
	static const u32 auto_order[] = { LPJ_SOURCE_CMDLINE, LPJ_SOURCE_HYPERV,
					  LPJ_SOURCE_KVMCLOCK, LPJ_SOURCE_KVM };

	*lpj = 0;
	if (requested == LPJ_SOURCE_AUTO) {
		for (u32 i = 0; i < ARRAY_SIZE(auto_order); i++) {
			*lpj = offer(auto_order[i], o, hz);
			if (*lpj)
				return auto_order[i];
		}
		return LPJ_SOURCE_AUTO;
	}
	*lpj = offer(requested, o, hz);
	return *lpj ? requested : LPJ_SOURCE_AUTO;
}
