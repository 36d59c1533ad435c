// SPDX-License-Identifier: MIT
/*
 * apic=, bringup=, cpus=, init_udelay= and parallel_calibrate=: see README,
 * "Kernel command line"; and the pure rules behind their auto values.
 */
#include "apic/options.h"
#include "apic/bringup.h"
#include "kernel/lib/option.h"
#include "kernel/lib/string.h"
#include "kernel/time/options.h"

struct apic_options apic_options;

const char *const apic_choice_names[] = {
	[APIC_AUTO] = "auto",
	[APIC_XAPIC] = "xapic",
	[APIC_X2APIC] = "x2apic",
};
_Static_assert(ARRAY_SIZE(apic_choice_names) == APIC_CHOICE_COUNT, "apic_choice_names");

const char *const parallel_calibrate_names[] = {
	[PARALLEL_CALIBRATE_AUTO] = "auto",
	[PARALLEL_CALIBRATE_SERIALIZE] = "serialize",
	[PARALLEL_CALIBRATE_CONCURRENT] = "concurrent",
};
_Static_assert(ARRAY_SIZE(parallel_calibrate_names) == PARALLEL_CALIBRATE_COUNT,
	       "parallel_calibrate_names");

DEFINE_OPTION_ENUM("apic", apic_options.mode, apic_choice_names, APIC_AUTO);
/* serial, the first in rank order. */
DEFINE_OPTION_WORDS("bringup", apic_options.bringup, bringup_mode_word, 0);
DEFINE_OPTION_U32("cpus", apic_options.cpus, 0, 65535, CPUS_ALL);
/* SDM Vol 3A 9.4.4.1 waits 10 ms after INIT; auto is Linux's rule by vendor and family. */
DEFINE_OPTION_U64_OR_AUTO("init_udelay", apic_options.init_udelay, 0, 1000000);
DEFINE_OPTION_ENUM("parallel_calibrate", apic_options.parallel_calibrate, parallel_calibrate_names,
		   PARALLEL_CALIBRATE_AUTO);

/*
 * timer=apic: the APIC timer as a reference (apic/timer.c), auto's last
 * resort, since only a stated rate makes it one.
 */
DEFINE_REFCLOCK_NAME("apic", 40, 50);
