/* SPDX-License-Identifier: MIT */
/*
 * bringup=: how the BSP starts the APs. Each mode is one descriptor,
 * registered with DEFINE_BRINGUP_MODE (bringup.c), whose fields say what
 * the mode does; smp.c, parallel.c, the smp DATA and the smp test read
 * the fields and never ask which mode runs.
 */
#ifndef APIC_BRINGUP_H
#define APIC_BRINGUP_H

#include "kernel/lib/table.h"
#include "kernel/lib/types.h"

struct bringup_mode {
	const char *name; /* its word in bringup= and the DATA */
	u32 rank;	  /* where bringup= lists it: lower first */
	/*
	 * The BSP kicks an AP before the ones before it are online, so the
	 * AP wakes the BSP at its alive point.
	 */
	bool kick_ahead;
	/*
	 * Every AP kicked with its own INIT-SIPI-SIPI, primary SMT threads
	 * first, then each spins at the alive point until the BSP releases
	 * it, one at a time, for the rest of its bring-up, calibration
	 * included.
	 */
	bool hold_at_alive;
	/*
	 * hvprobe's concurrent mode: APs kicked ahead only where two
	 * calibrations may overlap (smp_line_start_rule()), copiers parked
	 * until their source has a value, calibrations in a line as many
	 * at once as the host allows.
	 */
	bool calibration_line;
	/*
	 * One AP at a time comes past its alive point with the BSP waiting
	 * for it, so Linux's TSC-sync check, which needs the control CPU,
	 * can run.
	 */
	bool linux_tsc_sync;
};

#define DEFINE_BRINGUP_MODE(...)                                                                   \
	static const struct bringup_mode TABLE_UNIQUE(bringup_mode_)                               \
		TABLE_ENTRY(hvprobe_bringup_modes) = { __VA_ARGS__ }

/* bringup='s i-th word, in rank order, or NULL past the last. */
const char *bringup_mode_word(u32 i);
/* The i-th mode in rank order, or NULL. */
const struct bringup_mode *bringup_mode_at(u32 i);
/* The mode named name, or NULL. */
const struct bringup_mode *bringup_mode_named(const char *name);
/* The mode bringup= chose. */
const struct bringup_mode *bringup_mode_chosen(void);

#endif
