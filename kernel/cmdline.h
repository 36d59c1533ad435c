/* SPDX-License-Identifier: MIT */
/*
 * The kernel command line: space-separated key=value words (DESIGN.md,
 * "Command line"). Parsing is pure and table-driven; an unknown key or bad
 * value yields a message naming the key and the accepted values.
 */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include "kernel/lib/types.h"

enum lpj_source {
	LPJ_SOURCE_AUTO,
	LPJ_SOURCE_HYPERV,
	LPJ_SOURCE_KVM,
	LPJ_SOURCE_KVMCLOCK,
	LPJ_SOURCE_CPUID,
	LPJ_SOURCE_CMDLINE,
	LPJ_SOURCE_CALIBRATE,
	LPJ_SOURCE_COUNT,
};

enum calibrate_method { CALIBRATE_LINUX, CALIBRATE_FAST, CALIBRATE_COUNT };
enum bringup_mode { BRINGUP_SERIAL, BRINGUP_PARALLEL, BRINGUP_COUNT };

enum timer_choice {
	TIMER_AUTO,
	TIMER_PIT,
	TIMER_HPET,
	TIMER_PMTMR,
	TIMER_APIC,
	TIMER_HV,
	TIMER_COUNT,
};

enum exit_method { EXIT_AUTO, EXIT_QEMU, EXIT_ACPI, EXIT_HALT, EXIT_COUNT };
enum apic_choice { APIC_AUTO, APIC_XAPIC, APIC_X2APIC, APIC_CHOICE_COUNT };
enum lpj_reuse { LPJ_REUSE_NODE, LPJ_REUSE_PACKAGE, LPJ_REUSE_NONE, LPJ_REUSE_COUNT };
enum pmu_lvtpc { PMU_LVTPC_NMI, PMU_LVTPC_FIXED, PMU_LVTPC_COUNT };
/* Faults made on purpose, so that the paths that report them are tested. */
enum fault_injection { FAULT_NONE, FAULT_AP_SILENT, FAULT_EARLY_NMI, FAULT_COUNT };

#define CMDLINE_TEST_MAX 256
/* cpus= default: start every AP the firmware lists. */
#define CPUS_ALL 0xffffffffu

struct options {
	char test[CMDLINE_TEST_MAX];
	u64 lpj;
	u32 lpj_source;
	u32 calibrate;
	u32 bringup;
	u32 cpus;
	u32 timer;
	u64 pmu_period;
	u64 pmu_seconds;
	u64 pmu_nmi_ipi;
	u32 pmu_lvtpc;
	u32 exit;
	u64 hz;
	u32 apic;
	u64 init_udelay;
	u32 lpj_reuse;
	u64 watchdog;
	u32 fault;
};

extern const char *const lpj_source_names[LPJ_SOURCE_COUNT];
extern const char *const timer_names[TIMER_COUNT];
extern const char *const exit_names[EXIT_COUNT];
extern const char *const calibrate_names[CALIBRATE_COUNT];
extern const char *const bringup_names[BRINGUP_COUNT];
extern const char *const apic_choice_names[APIC_CHOICE_COUNT];
extern const char *const lpj_reuse_names[LPJ_REUSE_COUNT];
extern const char *const pmu_lvtpc_names[PMU_LVTPC_COUNT];
extern const char *const fault_names[FAULT_COUNT];

void options_default(struct options *o);
/*
 * Parse line into o (which holds the defaults). Returns false on the first
 * bad word, with a message in err naming the key and the accepted values.
 */
bool cmdline_parse(const char *line, struct options *o, char *err, size_t errlen);

#endif
