/* SPDX-License-Identifier: MIT */
/*
 * Loops-per-jiffy arithmetic, pure so the host tests check it. On x86 with
 * the TSC delay loop, lpj is TSC cycles per jiffy (Linux tsc.c
 * get_loops_per_jiffy(): tsc_khz * 1000 / HZ).
 */
#ifndef KERNEL_TIME_LPJ_H
#define KERNEL_TIME_LPJ_H

#include "kernel/time/options.h"
#include "kernel/time/policy.h"
#include "kernel/time/rates.h"

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
 * Whether a delay timed at took_us against a reference, one read of
 * which costs read_cost_us, lasted expected_us within pct: reading only
 * ever adds time, so the raw time judges a short delay and the time less
 * one read a long one.
 */
bool lpj_delay_within(u64 took_us, u64 read_cost_us, u64 expected_us, u32 pct);

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

/*
 * The methods calibrate_delay() tries in turn on a CPU that must measure
 * its own lpj, for calibrate= (an enum calibrate_method): Linux runs
 * calibrate_delay_direct() once, and calibrate_delay_converge() when it
 * gives no value; it has no direct method at all unless delay_fn is
 * delay_tsc (read_current_timer() fails under TPAUSE's or MWAITX's
 * delay). calibrate=fast is hvprobe's one window against the reference
 * timer, the Linux methods where there is none. Fills methods (at most
 * LPJ_METHODS_MAX) and returns how many.
 */
enum lpj_method { LPJ_METHOD_DIRECT, LPJ_METHOD_CONVERGE, LPJ_METHOD_FAST, LPJ_METHOD_COUNT };
extern const char *const lpj_method_names[LPJ_METHOD_COUNT];
#define LPJ_METHODS_MAX 4
u32 lpj_calibration_methods(u32 calibrate, bool have_ref, bool delay_tsc, u32 *methods);

/*
 * Linux's calibrate_delay_converge() (init/calibrate.c) against a time
 * base: wait for a tick edge, then grow the delay in bands of 4096 loops
 * until a tick passes during it, back off to the last underestimate, and
 * binary-chop, each step a delay started just after an edge, until the
 * step is below the base's lpj >> LPJ_PREC; if every step grew, start again from a
 * larger base. Each change of jiffies it saw is added to *edges, and the
 * longest a delay overran its loops, by the TSC, goes in *stall: a vCPU
 * the host descheduled in a delay sees the tick pass and drops that step.
 */
#define LPJ_PREC 8 /* Linux's LPS_PREC */
struct lpj_timebase {
	u64 (*jiffies)(void *ctx);
	void (*delay)(void *ctx, u64 loops); /* __delay(): loops TSC cycles */
	u64 (*cycles)(void *ctx);	     /* the TSC */
	void *ctx;
};
u64 lpj_converge(const struct lpj_timebase *t, u32 *edges, u64 *stall);
/*
 * Whether a delay that overran by stall cycles, at cycles_per_jiffy, can
 * explain a converge value factor times too low: a step is dropped when
 * its delay ends after the tick, so an overrun of (factor - 1) / factor
 * of a jiffy or more can cut the value to 1 / factor of the truth.
 */
bool lpj_stall_explains(u64 stall, u64 cycles_per_jiffy, u32 factor);

/*
 * The preset every CPU takes for requested (a registered source, or NULL
 * for lpj_source=auto) under policy, from the offers in the table
 * (rates.h). A source named on the command line is taken wherever it
 * offers a value. Under auto each policy takes, in rank order, the first
 * source whose lpj_flags it follows (lpj_policy_takes()). Returns the
 * source used, with *lpj set, or NULL and *lpj = 0 when there is no
 * preset (then the BSP uses lpj_fine, APs copy or calibrate).
 */
const struct rate_source *lpj_preset(const struct lpj_policy *policy,
				     const struct rate_source *requested, u32 hz, u64 *lpj);
/*
 * The platform whose code changes the TSC before any calibrate_delay()
 * under policy (its tsc_init), or NULL: Linux's x86_hyper's where the
 * policy runs Linux's platform code.
 */
const struct rate_platform *lpj_platform_tsc(const struct lpj_policy *policy);
/* The preset_rule line: whose rule policy is and its sources, in rank order. */
void lpj_preset_rule(const struct lpj_policy *policy, char *buf, size_t len);
/*
 * The policy's copy rule in words (lpj_policy_rule in the DATA), with
 * reuse (an enum lpj_reuse) for hvprobe's and tsc_unstable whether a
 * warp has been seen.
 */
const char *lpj_copy_rule_words(const struct lpj_policy *policy, u32 reuse, bool tsc_unstable);
/*
 * Whether the policy (and reuse, under LPJ_COPY_REUSE) lets a copy go
 * between CPUs of these packages and nodes, the TSC's constancy aside.
 */
bool lpj_same_domain(const struct lpj_policy *policy, u32 reuse, bool tsc_unstable, u32 package_a,
		     u32 node_a, u32 package_b, u32 node_b);

/*
 * Whether the warp an AP's own TSC-sync check saw is in tsc_unstable by
 * the time that AP's calibrate_delay_is_known() reads it: where the check
 * runs before calibration and the warp marks the TSC unstable at once.
 */
bool lpj_own_warp_counts(const struct lpj_policy *policy);

/* What calibrate_delay_is_known() reads of another CPU. */
struct lpj_sibling {
	u32 package;
	u32 node;
	/* Online with its lpj set: in Linux's topology masks, with a value to copy. */
	bool has_lpj;
};

#define LPJ_NO_SOURCE (~0u)

/* Fills *out with what CPU i looks like to the rule; ctx is the caller's. */
typedef void (*lpj_sibling_fn)(void *ctx, u32 i, struct lpj_sibling *out);

/*
 * The CPU whose lpj CPU `self` of CPUs [0, n) (read through sibling) copies, or LPJ_NO_SOURCE
 * when it must calibrate, under policy's copy_rule and reuse (an enum
 * lpj_reuse, for LPJ_COPY_REUSE). constant_tsc is self's own
 * X86_FEATURE_CONSTANT_TSC, tsc_unstable whether a TSC warp has been seen
 * (Linux's tsc_unstable). See lpj.c for each policy's rule.
 */
u32 lpj_copy_source(const struct lpj_policy *policy, u32 reuse, bool constant_tsc,
		    bool tsc_unstable, lpj_sibling_fn sibling, void *ctx, u32 n, u32 self);

#endif
