// SPDX-License-Identifier: MIT
/*
 * hang: a test that never ends is ended by the watchdog, with a report of
 * what every CPU was doing.
 *
 * Run only when named (test=hang, best with a short watchdog=): every
 * CPU spins in the same loop, the BSP with interrupts enabled so that its
 * tick still runs. The watchdog must name this test, report each CPU (the
 * APs through an NMI, as busy with work), make the test an error and end
 * the run; make check asserts exactly that.
 */
#include "apic/smp/smp.h"
#include "kernel/test/test.h"
#include "kernel/x86/x86.h"

static void spin_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
}

DEFINE_TEST(hang, "a test that never ends is ended by the watchdog", TEST_EXPLICIT)
{
	report(true, "every CPU is about to spin forever");
	smp_run_all(spin_forever, NULL, 0);
	report(false, "the spin ended");
}
