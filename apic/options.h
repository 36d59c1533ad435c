/* SPDX-License-Identifier: MIT */
/* The command-line keys of the local APIC and SMP bring-up. */
#ifndef APIC_OPTIONS_H
#define APIC_OPTIONS_H

#include "kernel/lib/types.h"

enum apic_choice { APIC_AUTO, APIC_XAPIC, APIC_X2APIC, APIC_CHOICE_COUNT };
/*
 * bringup=: serial (Linux before 6.5: one AP after another, each waited
 * for); parallel (hvprobe's concurrent mode: APs kicked in pairs and
 * started at once, calibrations in a measured line); linux-6.5 (Linux
 * 6.5's cpuhp_bringup_cpus_parallel(): every AP kicked with its own
 * INIT-SIPI-SIPI and no wait, each spinning at the alive point, then
 * released one at a time for the rest, calibration included).
 */
enum bringup_mode { BRINGUP_SERIAL, BRINGUP_PARALLEL, BRINGUP_LINUX_6_5, BRINGUP_COUNT };
/*
 * parallel_calibrate=: with bringup=parallel, how many APs may calibrate
 * at once: auto measures what the host gives (see smp.c), serialize lets
 * one at a time, concurrent all of them.
 */
enum parallel_calibrate {
	PARALLEL_CALIBRATE_AUTO,
	PARALLEL_CALIBRATE_SERIALIZE,
	PARALLEL_CALIBRATE_CONCURRENT,
	PARALLEL_CALIBRATE_COUNT,
};

/* cpus= default: start every AP the firmware lists. */
#define CPUS_ALL 0xffffffffu

struct apic_options {
	u32 mode;	 /* apic=: an enum apic_choice */
	u32 bringup;	 /* bringup=: an enum bringup_mode */
	u32 cpus;	 /* cpus=: how many APs to start */
	u64 init_udelay; /* init_udelay=: microseconds between INIT and SIPI, or OPTION_AUTO */
	u32 parallel_calibrate; /* parallel_calibrate=: an enum parallel_calibrate */
};

extern struct apic_options apic_options;
extern const char *const apic_choice_names[APIC_CHOICE_COUNT];
extern const char *const bringup_names[BRINGUP_COUNT];
extern const char *const parallel_calibrate_names[PARALLEL_CALIBRATE_COUNT];

/*
 * init_udelay=auto: Linux's smp_quirk_init_udelay(). 0 on Intel family 6,
 * AMD family 0xF and later, Hygon family 0x18 and later; the SDM's 10 ms
 * (UDELAY_10MS_LEGACY) elsewhere. vendor is CPUID leaf 0's string, family
 * the folded family; *why says which rule applied.
 */
#define INIT_UDELAY_LEGACY_US 10000
u64 init_udelay_rule(const char *vendor, u32 family, const char **why);

/*
 * How many APs may calibrate at once, from a probe run while one AP is
 * calibrating: one CPU alone ran solo loops in a window; n other APs at
 * once ran together[i] each in a window of the same length. Their sum
 * over solo is the parallelism the host gave beside the calibrating one
 * (x100 in *parallelism_x100): each AP calibrating against the tick needs
 * a host CPU of its own and the BSP must be run at every tick, so the
 * answer is 1 + (that parallelism less half a CPU), rounded down, at most
 * n + 1: under TCG two calibrations on what the probe called 1.02 CPUs
 * stretched each other to 3x their cost.
 */
u32 calibrate_concurrency(u64 solo, const u64 *together, u32 n, u32 *parallelism_x100);

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
u64 ap_bringup_cycles(u64 bsp_init, u64 bsp_sipi, u64 ap_alive, u64 ap_online, u64 bsp_seen,
		      bool *offset);

/*
 * Linux 6.5's kick order (cpuhp_bringup_cpus_parallel(): primary threads
 * first, then the rest, each in CPU order): fills order[] with the
 * indexes 1..n-1 of the APs, by their APIC IDs, where an ID with any of
 * its smt_shift low bits set is a secondary thread.
 */
void bringup_order(const u32 *apic_ids, u32 n, u32 smt_shift, u32 *order);

#endif
