/* SPDX-License-Identifier: MIT */
/*
 * Bring-up's pure rules: Linux's INIT wait, how many APs may calibrate
 * at once, an AP's bring-up time across two CPUs' TSCs, and Linux 6.5's
 * kick order. Pure, so the host tests check them.
 */
#ifndef APIC_SMP_RULES_H
#define APIC_SMP_RULES_H

#include "kernel/lib/types.h"

/*
 * init_udelay=auto: Linux's smp_quirk_init_udelay(). 0 on Intel family 6,
 * AMD family 0xF and later, Hygon family 0x18 and later; the SDM's 10 ms
 * (UDELAY_10MS_LEGACY) elsewhere. vendor is CPUID leaf 0's string, family
 * the folded family; *why says which rule applied.
 */
#define INIT_UDELAY_LEGACY_US 10000
u64 smp_init_udelay_rule(const char *vendor, u32 family, const char **why);

/*
 * How many APs may calibrate at once, from a probe run while one AP is
 * calibrating: one CPU alone ran solo loops in a window; n other APs at
 * once ran together[i] each in a window of the same length. Their sum
 * over solo (or over the fastest AP's count, where one counted more than
 * the BSP alone) is the parallelism the host gave beside the calibrating one
 * (x100 in *parallelism_x100): each AP calibrating against the tick needs
 * a host CPU of its own and the BSP must be run at every tick, so the
 * answer is 1 + (that parallelism less half a CPU), rounded down, at most
 * n + 1: under TCG two calibrations on what the probe called 1.02 CPUs
 * stretched each other to 3x their cost.
 */
u32 smp_concurrency_rule(u64 solo, const u64 *together, u32 n, u32 *parallelism_x100);

/*
 * Where parallel bring-up kicks APs ahead of the ones before them. An AP
 * kicked ahead starts beside the AP that calibrates and takes host time
 * from it, which only pays where a second calibration can run beside the
 * first. So, before anything is measured (from the calibrating APs and
 * parallel_calibrate=, an enum parallel_calibrate): one by one, each AP
 * kicked once the one before is online, serial's cost, where no two
 * calibrations may overlap (at most one AP calibrates, or serialize);
 * the first calibrating AP and then the probe's APs under auto, the rest
 * as smp_line_rest_rule() says once the probe has its concurrency; every
 * AP ahead under concurrent.
 */
enum smp_line_kicks { SMP_LINE_ONE_BY_ONE, SMP_LINE_PROBE, SMP_LINE_AHEAD };
u32 smp_line_start_rule(u32 calibrators, u32 parallel_calibrate);
/* The APs not yet kicked, once `concurrency` APs may calibrate at once. */
u32 smp_line_rest_rule(u32 concurrency);

/*
 * An AP's bring-up time in the BSP's TSC cycles, from the BSP's INIT
 * stamp to the AP's own online stamp. The two are different CPUs' TSCs:
 * where they are offset (a host that gives each vCPU its own TSC offset,
 * or a warp), the difference means nothing, and an AP behind the BSP
 * makes it wrap to a huge value. The AP's stamps must fall where
 * causality puts them, after the BSP's SIPI and before the BSP saw it
 * online (bsp_seen, 0 when it never did); when they do not, the BSP's
 * own span to bsp_seen is the figure and *offset is set. 0 when neither
 * can be had.
 */
u64 smp_ap_bringup_cycles(u64 bsp_init, u64 bsp_sipi, u64 ap_alive, u64 ap_online, u64 bsp_seen,
			  bool *offset);

/*
 * Linux 6.5's kick order (cpuhp_bringup_cpus_parallel(): primary threads
 * first, then the rest, each in CPU order): fills order[] with the
 * indexes 1..n-1 of the APs, by their APIC IDs, where an ID with any of
 * its smt_shift low bits set is a secondary thread.
 */
void smp_bringup_order(const u32 *apic_ids, u32 n, u32 smt_shift, u32 *order);

#endif
