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

/*
 * Legacy counter writes sign-extend bit 31 (SDM Vol 3B 21.2.2), hence the
 * top. The floor keeps a PMI's own handling well inside one period: the
 * NMI path (the stub, trap_dispatch(), the NMI entry, the PMU's poll and
 * service, the watchdog's poll, the accounting) is 636 instructions of
 * code in all, by objdump, a bound on what one PMI retires counting in
 * both rings. A PMU without global control counts its own handler, and
 * with a period below that bound it would overflow again before the
 * IRET, every time: the guest would only take PMIs. At 2000, three times
 * the bound, the workload still gets most of every period, and the rate,
 * a PMI per 2000 instructions, is past what any host delivers.
 */
DEFINE_OPTION_U64("pmu.period", pmu_options.period, 2000, 0x7fffffff, 10000);
DEFINE_OPTION_U64("pmu.seconds", pmu_options.seconds, 1, 3600, 2);
DEFINE_OPTION_U64("pmu.nmi_ipi", pmu_options.nmi_ipi, 0, 1000000, 0);
DEFINE_OPTION_ENUM("pmu.lvtpc", pmu_options.lvtpc, pmu_lvtpc_names, PMU_LVTPC_NMI);
