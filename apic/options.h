/* SPDX-License-Identifier: MIT */
/* The command-line keys of the local APIC and SMP bring-up. */
#ifndef APIC_OPTIONS_H
#define APIC_OPTIONS_H

#include "kernel/lib/types.h"

enum apic_choice { APIC_AUTO, APIC_XAPIC, APIC_X2APIC, APIC_CHOICE_COUNT };
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
	u32 bringup;	 /* bringup=: a mode's place in rank order (apic/bringup.h) */
	u32 cpus;	 /* cpus=: how many APs to start */
	u64 init_udelay; /* init_udelay=: microseconds between INIT and SIPI, or OPTION_AUTO */
	u32 parallel_calibrate; /* parallel_calibrate=: an enum parallel_calibrate */
};

extern struct apic_options apic_options;
extern const char *const apic_choice_names[APIC_CHOICE_COUNT];
extern const char *const parallel_calibrate_names[PARALLEL_CALIBRATE_COUNT];

#endif
