// SPDX-License-Identifier: MIT
/* exit= and fault=: see README, "Kernel command line". */
#include "kernel/options.h"
#include "kernel/lib/option.h"

struct kernel_options kernel_options;

const char *const exit_names[] = {
	[EXIT_AUTO] = "auto",
	[EXIT_QEMU] = "qemu",
	[EXIT_ACPI] = "acpi",
	[EXIT_HALT] = "halt",
};
_Static_assert(ARRAY_SIZE(exit_names) == EXIT_COUNT, "exit_names");

const char *const fault_names[] = {
	[FAULT_NONE] = "none",
	[FAULT_AP_SILENT] = "ap_silent",
	[FAULT_EARLY_NMI] = "early_nmi",
};
_Static_assert(ARRAY_SIZE(fault_names) == FAULT_COUNT, "fault_names");

DEFINE_OPTION_ENUM("exit", kernel_options.exit, exit_names, EXIT_AUTO);
DEFINE_OPTION_ENUM("fault", kernel_options.fault, fault_names, FAULT_NONE);
