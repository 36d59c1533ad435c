/* SPDX-License-Identifier: MIT */
/* The command-line keys of the PMI stress and the NMI storm. */
#ifndef PMU_OPTIONS_H
#define PMU_OPTIONS_H

#include "kernel/lib/types.h"

enum pmu_lvtpc { PMU_LVTPC_NMI, PMU_LVTPC_FIXED, PMU_LVTPC_COUNT };

struct pmu_options {
	u64 period;   /* pmu.period=: events between PMIs */
	u64 seconds;  /* pmu.seconds=: length of the stress */
	u64 nmi_ipi;  /* pmu.nmi_ipi=: NMI IPIs per second each CPU sends */
	u32 lvtpc;    /* pmu.lvtpc=: an enum pmu_lvtpc */
	u32 counters; /* pmu.counters=: the most counters the stress arms */
};

extern struct pmu_options pmu_options;
extern const char *const pmu_lvtpc_names[PMU_LVTPC_COUNT];

#endif
