// SPDX-License-Identifier: MIT
/*
 * crash_ap: an unexpected exception on an AP ends the run as cleanly as
 * one on the BSP, and says which CPU it was.
 *
 * Run only when named (test=crash_ap, with two CPUs or more): the first
 * online AP executes ud2 with no recovery point armed while the BSP waits
 * for it. The AP must dump its registers under its own CPU number and
 * APIC ID, make this test an error whose reason names that CPU, print the
 * totals and exit with failure; make check asserts exactly that.
 */
#include "apic/smp/smp.h"
#include "kernel/test/test.h"

#define AP_CRASH_TIMEOUT_US 5000000

static void raise_ud(void *arg)
{
	(void)arg;
	asm volatile("ud2");
}

DEFINE_TEST(crash_ap, "an unexpected exception on an AP ends the run cleanly", TEST_EXPLICIT)
{
	for (u32 i = 1; i < cpu_count(); i++) {
		struct percpu *ap = cpu_at(i);

		if (ap->state != CPU_ONLINE)
			continue;
		report(true, "CPU %u (APIC ID %u) is about to execute ud2", i, ap->apic_id);
		smp_run_on(ap, raise_ud, NULL, AP_CRASH_TIMEOUT_US);
		report(false, "the run went on after CPU %u's unhandled #UD", i);
		return;
	}
	report_skip("needs an online AP");
}
