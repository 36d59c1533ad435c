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

struct delay_state {
	bool tsc_constant;
	const char *tsc_constant_why;
	/* The preset every CPU takes (0: none), and its lpj_source name. */
	u64 preset_lpj;
	const char *preset_source;
	/* A requested lpj source that could not be honoured, and why. */
	char problem[128];
};

extern struct delay_state delay;

/* On the BSP, after clock_init(). */
void delay_init_bsp(void);
/* On each AP, on itself, as Linux's smp_callin() does. */
void delay_calibrate_ap(void);
void udelay(u64 us);

/* The two measurements, on the calling CPU: TSC cycles per jiffy. */
u64 delay_calibrate_linux(void);
u64 delay_calibrate_fast(void);

#endif
