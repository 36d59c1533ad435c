/* SPDX-License-Identifier: MIT */
/*
 * The reads Linux's TSC calibration makes (linux_tsc.h), done on this
 * machine: the timers' real costs decide, as they do for Linux.
 */
#ifndef KERNEL_TIME_LINUX_TSC_READS_H
#define KERNEL_TIME_LINUX_TSC_READS_H

#include "kernel/time/linux_tsc.h"

/*
 * pit_calibrate_tsc()'s window of ms milliseconds on PIT channel 2, which
 * is then put back as the reference counter (pit.c).
 */
void pit_linux_window(void *ctx, u32 ms, struct linux_pit_window *w);

/*
 * On the BSP after clock_init(), interrupts off as Linux's are: whether
 * Linux's pit_hpet_ptimer_calibrate_cpu() would get tsc_khz here.
 */
void linux_tsc_measure(struct linux_tsc_verdict *v);

#endif
