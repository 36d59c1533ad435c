/* SPDX-License-Identifier: MIT */
/*
 * The watchdog: a test that runs longer than watchdog= seconds is ended
 * with a report naming it and saying what every CPU was doing (its state,
 * the work it was given, and where an NMI found it), then the run ends
 * cleanly with the test as an error. The limit grows by a second for
 * every ten online CPUs, and by what a test adds with watchdog_extend().
 * It rides on the BSP's jiffy tick, so a BSP spinning with interrupts
 * disabled is left to the host's timeout.
 */
#ifndef KERNEL_TEST_WATCHDOG_H
#define KERNEL_TEST_WATCHDOG_H

#include "kernel/x86/trap.h"

/* A test that knows it runs long (pmu.seconds=) adds its own time. */
void watchdog_extend(u64 seconds);
/* From the BSP's tick: f is where the tick found the BSP. */
void watchdog_tick(const struct trap_frame *f);

#endif
