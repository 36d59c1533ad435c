/* SPDX-License-Identifier: MIT */
/* The command-line keys of the local APIC and SMP bring-up. */
#ifndef APIC_OPTIONS_H
#define APIC_OPTIONS_H

#include "kernel/lib/types.h"

enum apic_choice { APIC_AUTO, APIC_XAPIC, APIC_X2APIC, APIC_CHOICE_COUNT };
enum bringup_mode { BRINGUP_SERIAL, BRINGUP_PARALLEL, BRINGUP_COUNT };

/* cpus= default: start every AP the firmware lists. */
#define CPUS_ALL 0xffffffffu

struct apic_options {
	u32 mode;	 /* apic=: an enum apic_choice */
	u32 bringup;	 /* bringup=: an enum bringup_mode */
	u32 cpus;	 /* cpus=: how many APs to start */
	u64 init_udelay; /* init_udelay=: microseconds between INIT and SIPI */
};

extern struct apic_options apic_options;
extern const char *const apic_choice_names[APIC_CHOICE_COUNT];
extern const char *const bringup_names[BRINGUP_COUNT];

#endif
