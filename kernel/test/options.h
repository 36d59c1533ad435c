/* SPDX-License-Identifier: MIT */
/* The test framework's command-line keys: which tests run, and for how long. */
#ifndef KERNEL_TEST_OPTIONS_H
#define KERNEL_TEST_OPTIONS_H

#include "kernel/lib/types.h"

#define TEST_SELECTION_MAX 256

struct test_options {
	char test[TEST_SELECTION_MAX]; /* test=: "all" or a comma list of names */
	char skip[TEST_SELECTION_MAX]; /* skip=: names planned, reported skipped, not run */
	u64 watchdog;		       /* watchdog=: seconds a test may run, 0 for ever */
};

extern struct test_options test_options;

#endif
