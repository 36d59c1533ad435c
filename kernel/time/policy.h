/* SPDX-License-Identifier: MIT */
/*
 * lpj_policy=: whose rules decide where each CPU's loops-per-jiffy comes
 * from, and what the TSC-sync check does meanwhile. Each policy is one
 * descriptor, registered with DEFINE_LPJ_POLICY (policies.c): what that
 * Linux version does, each field's value citing the Linux function and
 * version. delay.c, lpj.c and apic/smp read the fields and never ask
 * which policy runs, as Linux's tsc.c reads x86_platform and never asks
 * which hypervisor it runs on (struct x86_hyper_init). A new kernel
 * version is a new entry.
 */
#ifndef KERNEL_TIME_POLICY_H
#define KERNEL_TIME_POLICY_H

#include "kernel/lib/table.h"
#include "kernel/lib/types.h"

/* calibrate_delay_is_known(): which CPU an AP with a constant TSC copies. */
enum lpj_copy_rule {
	/* hvprobe's: the first CPU with a value in lpj_reuse='s domain. */
	LPJ_COPY_REUSE,
	/* Any online CPU of the package but this one (topology_core_cpumask()). */
	LPJ_COPY_PACKAGE,
	/* CPU 0's while the TSC is synchronized; else as LPJ_COPY_PACKAGE. */
	LPJ_COPY_BOOT_CPU,
};

/* Where an AP's TSC-sync check runs, against its calibrate_delay(). */
enum lpj_tsc_sync {
	/* hvprobe's cheap check: the AP's alive stamp against the BSP's SIPI. */
	LPJ_TSC_SYNC_STAMPS,
	/* check_tsc_sync_target() after calibrate_delay(). */
	LPJ_TSC_SYNC_AFTER_CALIBRATION,
	/* check_tsc_sync_target() before calibrate_delay(). */
	LPJ_TSC_SYNC_BEFORE_CALIBRATION,
};

/* When a warp the check saw marks the TSC unstable. */
enum lpj_warp_mark {
	/* mark_tsc_unstable() in check_tsc_sync_source(), before the AP goes on. */
	LPJ_WARP_MARKS_AT_ONCE,
	/* A work item the control CPU runs later: once the AP is online. */
	LPJ_WARP_MARKS_DEFERRED,
};

/*
 * What unsynchronized_tsc() counts for a TSC neither constant nor
 * reliable on a CPU that is not Intel's ("assume multi socket systems
 * are not synchronized").
 */
enum lpj_unsync_count {
	LPJ_UNSYNC_POSSIBLE_CPUS, /* num_possible_cpus() > 1 */
	LPJ_UNSYNC_PACKAGES,	  /* topology_max_packages() > 1 */
};

struct lpj_policy {
	const char *name; /* its word in lpj_policy= and the DATA */
	/* preset_rule's words around the sources it presets from. */
	const char *rule_prefix, *rule_suffix;
	u32 rank;	  /* where lpj_policy= lists it: lower first */
	u32 preset_flags; /* the enum rate_lpj_flags of the sources it presets from */
	/*
	 * Linux's x86_hyper platform code runs: only its sources preset, and
	 * its tsc_init changes the TSC before any calibration.
	 */
	bool linux_platform;
	/*
	 * Linux's tsc_init() runs where nothing stated the TSC's rate, and
	 * may fail to get tsc_khz ("could not calculate TSC khz", linux_tsc.h).
	 */
	bool tsc_khz_refusal;
	u8 copy_rule;	 /* an enum lpj_copy_rule */
	u8 tsc_sync;	 /* an enum lpj_tsc_sync */
	u8 warp_mark;	 /* an enum lpj_warp_mark */
	u8 unsync_count; /* an enum lpj_unsync_count */
	/*
	 * Runs of Linux's check before a warp marks the TSC unstable, where
	 * the CPU has TSC_ADJUST and the target may adjust it between runs;
	 * one run without it.
	 */
	u8 tsc_adjust_runs;
};

#define DEFINE_LPJ_POLICY(...)                                                                     \
	static const struct lpj_policy TABLE_UNIQUE(lpj_policy_)                                   \
		TABLE_ENTRY(hvprobe_lpj_policies) = { __VA_ARGS__ }

/* lpj_policy='s i-th word, in rank order, or NULL past the last. */
const char *lpj_policy_word(u32 i);
/* The i-th policy in rank order, or NULL. */
const struct lpj_policy *lpj_policy_at(u32 i);
/* The policy named name, or NULL. */
const struct lpj_policy *lpj_policy_named(const char *name);
/* The policy lpj_policy= chose. */
const struct lpj_policy *lpj_policy_chosen(void);

#endif
