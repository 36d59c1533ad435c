// SPDX-License-Identifier: MIT
/* pmu.period=, pmu.seconds=, pmu.nmi_ipi= and pmu.lvtpc=: see README. */
#include "kernel/lib/option.h"
#include "pmu/options.h"

struct pmu_options pmu_options;

const char *const pmu_lvtpc_names[] = {
	[PMU_LVTPC_NMI] = "nmi",
	[PMU_LVTPC_FIXED] = "fixed",
};
_Static_assert(ARRAY_SIZE(pmu_lvtpc_names) == PMU_LVTPC_COUNT, "pmu_lvtpc_names");

/* Legacy counter writes sign-extend bit 31 (SDM Vol 3B 21.2.2). */
DEFINE_OPTION_U64("pmu.period", pmu_options.period, 1, 0x7fffffff, 10000);
DEFINE_OPTION_U64("pmu.seconds", pmu_options.seconds, 1, 3600, 2);
DEFINE_OPTION_U64("pmu.nmi_ipi", pmu_options.nmi_ipi, 0, 1000000, 0);
DEFINE_OPTION_ENUM("pmu.lvtpc", pmu_options.lvtpc, pmu_lvtpc_names, PMU_LVTPC_NMI);
