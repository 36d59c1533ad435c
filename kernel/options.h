/* SPDX-License-Identifier: MIT */
/* The command-line keys of the kernel's own top level: how a run ends. */
#ifndef KERNEL_OPTIONS_H
#define KERNEL_OPTIONS_H

#include "kernel/lib/types.h"

enum exit_method { EXIT_AUTO, EXIT_QEMU, EXIT_ACPI, EXIT_HALT, EXIT_COUNT };
/* Faults made on purpose, so that the paths that report them are tested. */
enum fault_injection { FAULT_NONE, FAULT_AP_SILENT, FAULT_EARLY_NMI, FAULT_COUNT };

struct kernel_options {
	u32 exit;  /* exit=: an enum exit_method */
	u32 fault; /* fault=: an enum fault_injection */
};

extern struct kernel_options kernel_options;
extern const char *const exit_names[EXIT_COUNT];
extern const char *const fault_names[FAULT_COUNT];

#endif
