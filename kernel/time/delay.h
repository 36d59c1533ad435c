/* SPDX-License-Identifier: MIT */
/*
 * The delay loop and its calibration, in Linux's order of precedence
 * (init/calibrate.c calibrate_delay(), arch/x86/kernel/tsc.c): a preset
 * (lpj= or a hypervisor), the boot CPU's timer-derived lpj_fine, reuse
 * from a calibrated CPU on the same node or package when the TSC is
 * constant (calibrate_delay_is_known()), else calibration on this CPU.
 */
#ifndef KERNEL_TIME_DELAY_H
#define KERNEL_TIME_DELAY_H

#include "kernel/x86/percpu.h"

struct json;

/* On the BSP, after clock_init(). */
void delay_init_bsp(void);
/* On each AP, on itself, as Linux's smp_callin() does. */
void delay_calibrate_ap(void);
void udelay(u64 us);

/* The preset every CPU takes (lpj=, or a hypervisor's rate); 0 for none. */
u64 delay_preset_lpj(void);
/* Whether the TSC is constant (Linux's X86_FEATURE_CONSTANT_TSC), and why. */
bool delay_tsc_constant(const char **why);
/* A requested lpj source that could not be honoured, and why; "" for none. */
const char *delay_problem(void);
/* Whether lpj_reuse= lets a copy go from one of these CPUs to the other. */
bool delay_same_domain(const struct percpu *a, const struct percpu *b);
/* The BSP's lpj and where it came from, the rule's settings and the TSC's constancy. */
void delay_json(struct json *j);

/* The two measurements, on the calling CPU: TSC cycles per jiffy. */
u64 delay_calibrate_linux(void);
u64 delay_calibrate_fast(void);

#endif
