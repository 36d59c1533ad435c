// SPDX-License-Identifier: MIT
/*
 * crash: an unexpected exception ends the run as a clean KTAP failure.
 *
 * Run only when named (test=crash): it raises #UD with no recovery point
 * armed, so the kernel must print the register dump, mark this test as an
 * error, report every later test as not run, print the totals and exit
 * with failure. make check asserts exactly that; a silent triple fault or
 * a missing totals line would fail it.
 */
#include "kernel/test/test.h"

DEFINE_TEST(crash, "an unexpected exception ends the run cleanly", TEST_EXPLICIT)
{
	report(true, "about to execute ud2 with no recovery point");
	asm volatile("ud2");
	report(false, "execution continued past an unhandled #UD");
}
