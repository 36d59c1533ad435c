/* SPDX-License-Identifier: MIT */
/*
 * The delay loop and its calibration, in Linux's order of precedence
 * (init/calibrate.c calibrate_delay(), arch/x86/kernel/tsc.c): a preset
 * (lpj= or a stated rate), the boot CPU's timer-derived lpj_fine, reuse
 * from a calibrated CPU on the same node or package when the TSC is
 * constant (calibrate_delay_is_known()), else calibration on this CPU.
 */
#ifndef KERNEL_TIME_DELAY_H
#define KERNEL_TIME_DELAY_H

#include "kernel/x86/percpu.h"

struct json;

/* On the BSP, after clock_init(). */
void delay_init_bsp(void);

/*
 * How an AP will get its lpj, decided on the BSP before the AP starts, in
 * calibrate_delay()'s order: a preset; a copy from a CPU whose value the
 * policy lets it take (lpj_from: the boot CPU, or the first CPU of its
 * node or package, which calibrates); else its own calibration. Bring-up
 * uses the plan to order the APs: a copier waits for its source, and
 * calibrating APs take turns where the host cannot run them all at once.
 */
enum lpj_plan { LPJ_PLAN_PRESET, LPJ_PLAN_COPY, LPJ_PLAN_CALIBRATE, LPJ_PLAN_COUNT };
extern const char *const lpj_plan_names[LPJ_PLAN_COUNT];

/* Each CPU's delay loop, kept here beside the code that sets it. */
struct delay_cpu {
	/* TSC cycles per jiffy, and where the value came from. */
	volatile u64 lpj;
	const char *lpj_source;
	bool calibrated; /* lpj came from a timer measurement on this CPU */
	u8 cal_method;	 /* an enum lpj_method, when calibrated */
	/*
	 * Its own calibration: when it began, its cost by the TSC, in
	 * jiffies elapsed, and in tick edges it waited through (the method's
	 * own steps, which a host that descheduled the vCPU does not add to).
	 */
	u64 cal_start, cal_tsc, cal_jiffies, cal_edges;
	/* The longest a converge delay overran its loops, in TSC cycles. */
	u64 cal_stall;
	/*
	 * The plan delay_plan_ap() made before the AP started (an enum
	 * lpj_plan), the CPU it copies from, and lpj_ready once its lpj may
	 * be copied.
	 */
	u32 lpj_plan;
	volatile u32 lpj_ready;
	struct percpu *lpj_from;
};

/* The delay record of the CPU at index (< MAX_CPUS). */
struct delay_cpu *delay_cpu(u32 index);
void delay_plan_ap(struct percpu *cpu);
/*
 * On each AP, on itself, as Linux's smp_callin() does: carry out the plan
 * (a copy whose source never became ready calibrates instead), then set
 * lpj_ready.
 */
void delay_calibrate_ap(void);
/*
 * On an AP, from bring-up, before its lpj is decided: whether its TSC is
 * in step with the control CPU's (Linux's check_tsc_sync_target()). One
 * AP out of step marks the TSC unstable for every CPU afterwards, as
 * mark_tsc_unstable() does, and reuse then stays within a package.
 */
void delay_tsc_sync(bool in_step);
/*
 * On an AP, before delay_calibrate_ap(): whether, as things stand, it
 * will calibrate (no preset, no source it may copy from now).
 */
bool delay_ap_must_calibrate(void);
void udelay(u64 us);

/* The preset every CPU takes (lpj=, or a stated rate's); 0 for none. */
u64 delay_preset_lpj(void);
/* Whether the TSC is constant (Linux's X86_FEATURE_CONSTANT_TSC), and why. */
bool delay_tsc_constant(const char **why);
/* A requested lpj source that could not be honoured, and why; "" for none. */
const char *delay_problem(void);
/*
 * Whether the policy (lpj_policy=, and lpj_reuse= under hvprobe's) lets a
 * copy go from one of these CPUs to the other, the TSC's constancy aside.
 */
bool delay_same_domain(const struct percpu *a, const struct percpu *b);
/* Whether the TSC counts as synchronized (no AP saw it behind the BSP's). */
bool delay_tsc_synchronized(void);
/*
 * Whether the TSC counts as reliable (Linux's X86_FEATURE_TSC_RELIABLE,
 * which a platform's TSC step may set; see struct rate_platform).
 */
bool delay_tsc_reliable(void);
/* The policy's name and what it does here, for the DATA. */
const char *delay_policy_rule(void);
/* The method cpu's own calibration took its value from ("direct", "converge", "fast"), or NULL. */
const char *delay_cal_method(const struct percpu *cpu);
/* The BSP's lpj and where it came from, the rule's settings and the TSC's constancy. */
void delay_json(struct json *j);

/*
 * The two measurements, on the calling CPU: TSC cycles per jiffy. The
 * direct method adds the tick edges it waited through to *edges.
 */
u64 delay_calibrate_linux(u32 *edges);
u64 delay_calibrate_fast(void);

#endif
