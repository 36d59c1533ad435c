// SPDX-License-Identifier: MIT
/* apic=, bringup=, cpus= and init_udelay=: see README, "Kernel command line". */
#include "apic/options.h"
#include "kernel/lib/option.h"

struct apic_options apic_options;

const char *const apic_choice_names[] = {
	[APIC_AUTO] = "auto",
	[APIC_XAPIC] = "xapic",
	[APIC_X2APIC] = "x2apic",
};
_Static_assert(ARRAY_SIZE(apic_choice_names) == APIC_CHOICE_COUNT, "apic_choice_names");

const char *const bringup_names[] = {
	[BRINGUP_SERIAL] = "serial",
	[BRINGUP_PARALLEL] = "parallel",
};
_Static_assert(ARRAY_SIZE(bringup_names) == BRINGUP_COUNT, "bringup_names");

DEFINE_OPTION_ENUM("apic", apic_options.mode, apic_choice_names, APIC_AUTO);
DEFINE_OPTION_ENUM("bringup", apic_options.bringup, bringup_names, BRINGUP_SERIAL);
DEFINE_OPTION_U32("cpus", apic_options.cpus, 0, 65535, CPUS_ALL);
/* SDM Vol 3A 9.4.4.1 waits 10 ms after INIT; Linux uses 0 on modern CPUs. */
DEFINE_OPTION_U64("init_udelay", apic_options.init_udelay, 0, 1000000, 10000);
