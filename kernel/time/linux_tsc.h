/* SPDX-License-Identifier: MIT */
/*
 * Whether Linux would learn tsc_khz from the timers, when nothing states
 * the TSC's rate: the checks of arch/x86/kernel/tsc.c (v6.1 to v6.12),
 * pure so the host tests drive them with made-up reads.
 *
 * Without a stated rate (kvmclock, Hyper-V's frequency MSRs, CPUID.15H
 * or 16H on Intel), tsc_early_init()'s native_calibrate_cpu_early() has
 * only quick_pit_calibrate(), and tsc_init() then tries once more with
 * pit_hpet_ptimer_calibrate_cpu(): three rounds, each a PIT window
 * (pit_calibrate_tsc()) bracketed by two tsc_read_refs() of the HPET, or
 * the PM timer where is_hpet_enabled() is false. It gets a rate when
 * some PIT window passes its checks, or else when some round's two
 * reference reads both passed. When neither, it prints "Unable to
 * calibrate against PIT" and "HPET/PMTIMER calibration failed" (or "No
 * reference (HPET/PMTIMER) available"), returns 0, and tsc_init() calls
 * mark_tsc_unstable("could not calculate TSC khz") and returns before
 * lpj_fine = get_loops_per_jiffy() and use_tsc_delay(): delay_fn stays
 * delay_loop, so calibrate_delay() (init/calibrate.c) has no lpj_fine on
 * the boot CPU and no read_current_timer(), no direct method, anywhere.
 *
 * quick_pit_calibrate(), tried first, is not modelled: where it passes
 * and both of these fail, this says Linux fails where it does not. Its
 * error bound needs PIT reads of a few microseconds each; under TCG it
 * passes (and so does the HPET reference here: reads of ~10000-30000
 * cycles), nested under TCG its reads are exits as slow as the HPET's.
 */
#ifndef KERNEL_TIME_LINUX_TSC_H
#define KERNEL_TIME_LINUX_TSC_H

#include "kernel/lib/types.h"
#include "kernel/x86/cpuid.h"

/* tsc_read_refs(): MAX_RETRIES, and TSC_DEFAULT_THRESHOLD since tsc_khz is still 0. */
#define LINUX_READ_REFS_TRIES 5
#define LINUX_READ_REFS_THRESHOLD 0x20000ULL
/* pit_hpet_ptimer_calibrate_cpu(): rounds; CAL_MS/CAL_PIT_LOOPS, then CAL2_*. */
#define LINUX_PIT_ROUNDS 3
#define LINUX_CAL_MS 10
#define LINUX_CAL_PIT_LOOPS 1000
#define LINUX_CAL2_MS 50
#define LINUX_CAL2_PIT_LOOPS 5000

/* One pit_calibrate_tsc() window: how often it read port 0x61, and the TSC steps between. */
struct linux_pit_window {
	u32 reads;
	u64 step_min, step_max;
};

/*
 * pit_calibrate_tsc()'s sanity checks: at least loopmin reads (fewer: "a
 * massive SMI"), and no step over ten times the shortest.
 */
bool linux_pit_window_ok(const struct linux_pit_window *w, u32 loopmin);

/*
 * What the calibration reads, done for real by the guest or made up by
 * the tests. read_ref: one try of tsc_read_refs() (TSC, reference, TSC),
 * returning the TSC cycles it spanned. pit_window: one pit_calibrate_tsc()
 * window of ms milliseconds (CAL_MS or CAL2_MS).
 */
struct linux_tsc_reads {
	bool have_pit;	 /* has_legacy_pic(): else pit_calibrate_tsc() only waits */
	const char *ref; /* "HPET" or "PMTIMER", NULL for neither */
	u64 (*read_ref)(void *ctx);
	void (*pit_window)(void *ctx, u32 ms, struct linux_pit_window *w);
	void *ctx;
};

struct linux_tsc_verdict {
	bool ok;	      /* Linux gets tsc_khz */
	char why[160];	      /* where from, or why not, in Linux's words and the numbers */
	u64 fastest_ref_read; /* the quickest tsc_read_refs() try, in TSC cycles */
	u32 pit_windows_ok;
};

/*
 * pit_hpet_ptimer_calibrate_cpu()'s rounds over reads, in Linux's order
 * (the 50 ms window once two 10 ms ones failed), stopping where Linux's
 * result is settled.
 */
void linux_tsc_calibrate(const struct linux_tsc_reads *r, struct linux_tsc_verdict *v);

/*
 * native_calibrate_tsc() (tsc.c v6.1 to v6.12), x86_platform.calibrate_tsc
 * wherever Linux's x86_hyper installed no hook of its own: Intel only,
 * CPUID.15H's crystal * EBX / EAX, with the crystal from CPUID.16H's base
 * MHz where 15H states none. Denverton's fixed 25 MHz crystal is not
 * modelled.
 */
struct linux_native_tsc {
	bool intel;
	u32 max_leaf; /* CPUID.0:EAX */
	struct cpuid_regs leaf_15, leaf_16;
};

/* Its TSC rate in Hz, as Linux's kHz times 1000; 0 where it states none. */
u64 linux_native_tsc_hz(const struct linux_native_tsc *c);

#endif
