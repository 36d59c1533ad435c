// SPDX-License-Identifier: MIT
/* test=, skip= and watchdog=: see README, "Kernel command line". */
#include "kernel/test/options.h"
#include "kernel/lib/option.h"

struct test_options test_options;

DEFINE_OPTION_STRING("test", test_options.test, "all");
DEFINE_OPTION_STRING("skip", test_options.skip, "");
/* Well past any test under TCG, well inside tools/run's timeout. */
DEFINE_OPTION_U64("watchdog", test_options.watchdog, 0, 86400, 30);
