/* SPDX-License-Identifier: MIT */
/*
 * Loops-per-jiffy arithmetic, pure so the host tests check it. On x86 with
 * the TSC delay loop, lpj is TSC cycles per jiffy (Linux tsc.c
 * get_loops_per_jiffy(): tsc_khz * 1000 / HZ).
 */
#ifndef KERNEL_TIME_LPJ_H
#define KERNEL_TIME_LPJ_H

#include "kernel/time/options.h"

/* Linux truncates to kHz first; so do we, so presets compare exactly. */
u64 lpj_from_tsc_hz(u64 tsc_hz, u32 hz);
/* TSC cycles for a delay of us microseconds at lpj and hz. */
u64 lpj_delay_cycles(u64 lpj, u32 hz, u64 us);
/*
 * How many microseconds udelay(us) lasts at lpj on a TSC running at
 * tsc_hz: us itself when lpj is the TSC's own, longer or shorter in
 * proportion when lpj= on the command line states another machine's.
 */
u64 lpj_delay_lasts_us(u64 lpj, u32 hz, u64 tsc_hz, u64 us);

/*
 * Linux's calibrate_delay_direct() verdict (init/calibrate.c): each sample
 * brackets a DCT-jiffy window by the last reading before and the first
 * after each tick edge, giving a lower and an upper cycle count. A sample
 * is good when upper - lower < upper / 8; the good ones' midpoints are
 * averaged, and while more than one remains and they spread by more than
 * 1/8 of the mean, the one farthest from it is dropped. Returns cycles per
 * jiffy, or 0 when no sample was good.
 */
#define LPJ_DIRECT_SAMPLES 5
u64 lpj_direct_combine(const u64 lower[], const u64 upper[], u32 n, u32 ticks);

/*
 * Ticks Linux's calibrate_delay_direct() spends, by its algorithm: five
 * samples, each waiting for jiffies to pass start + 1 (two tick edges)
 * and then DCT more (DELAY_CALIBRATION_TICKS: HZ/100, at least 1), so
 * 5 * (DCT + 2) edges. In time that is 5 * (DCT + 2) jiffies less the
 * first sample's phase (up to one jiffy).
 */
u32 lpj_direct_ticks(u32 hz);
u32 lpj_direct_dct(u32 hz);

/* What the command line and the hypervisor offer; 0 where nothing is. */
struct lpj_offers {
	u64 cmdline_lpj;
	u64 hyperv_tsc_hz;	/* HV_X64_MSR_TSC_FREQUENCY */
	u64 kvmclock_tsc_khz;	/* from kvmclock's mul and shift */
	u64 kvm_timing_tsc_khz;	/* the timing leaf at KVM's base + 0x10 */
	u64 cpuid_tsc_hz;	/* CPUID.15H */
};

/*
 * The preset every CPU takes for requested (an enum lpj_source), in the
 * order a modern Linux guest applies them under auto: lpj=, Hyper-V's
 * frequency MSR (hv_preset_lpj()), kvmclock (kvm_get_preset_lpj()), the
 * KVM timing leaf. CPUID.15H is a preset only when asked for by name: in
 * auto it gives the TSC frequency, hence only the BSP's lpj_fine. Returns
 * the source used, with *lpj set, or LPJ_SOURCE_AUTO and *lpj = 0 when
 * there is no preset (then the BSP uses lpj_fine, APs reuse or calibrate).
 */
u32 lpj_preset(u32 requested, const struct lpj_offers *o, u32 hz, u64 *lpj);

#endif
