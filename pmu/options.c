// SPDX-License-Identifier: MIT
/* pmu.period=, pmu.seconds=, pmu.nmi_ipi=, pmu.lvtpc= and pmu.counters=: see README. */
#include "pmu/options.h"
#include "kernel/lib/option.h"
#include "pmu/pmu.h"

struct pmu_options pmu_options;

const char *const pmu_lvtpc_names[] = {
	[PMU_LVTPC_NMI] = "nmi",
	[PMU_LVTPC_FIXED] = "fixed",
};
_Static_assert(ARRAY_SIZE(pmu_lvtpc_names) == PMU_LVTPC_COUNT, "pmu_lvtpc_names");

/*
 * Legacy counter writes sign-extend bit 31 (SDM Vol 3B 21.2.2), hence the
 * top. The floor keeps a PMI's own handling inside one period on a PMU
 * that counts through its handler (AMD without PerfMonV2, Intel v1):
 * with a period below what one entry retires, each entry would overflow
 * again before its IRET and the guest would only take PMIs. What an
 * entry retires is not its code size: each look at the PMU reads the
 * status or every armed counter's value (up to PMU_ARMED_MAX RDMSRs) and
 * re-arms what overflowed, and a busy entry looks again (up to
 * SERVICE_LOOKS times); as a rough bound, a few hundred instructions for
 * one look with one overflow, a few thousand for a worst-case entry. At
 * 2000 the common entry (one look, one or two overflows) fits several
 * times over; below a few thousand, on such a PMU, the late looks and
 * their credited NMIs (rereads in the DATA) grow. With global control the
 * handler is not counted and the floor only bounds the PMI rate, past
 * what any host delivers.
 */
DEFINE_OPTION_U64("pmu.period", pmu_options.period, 2000, 0x7fffffff, 10000);
DEFINE_OPTION_U64("pmu.seconds", pmu_options.seconds, 1, 3600, 2);
DEFINE_OPTION_U64("pmu.nmi_ipi", pmu_options.nmi_ipi, 0, 1000000, 0);
DEFINE_OPTION_ENUM("pmu.lvtpc", pmu_options.lvtpc, pmu_lvtpc_names, PMU_LVTPC_NMI);
/*
 * The default arms every counter the plan can (PMU_ARMED_MAX at most);
 * 1 arms GP counter 0 alone, for tools/pmi-verdict --quick: one
 * overflow per PMI, no merging, and where there is global control the
 * lean form's four exits per PMI (pmu_lean()).
 */
DEFINE_OPTION_U32("pmu.counters", pmu_options.counters, 1, PMU_ARMED_MAX, PMU_ARMED_MAX);
