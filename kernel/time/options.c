// SPDX-License-Identifier: MIT
/*
 * timer=, hz=, lpj=, lpj_source=, calibrate=, lpj_reuse= and lpj_policy=: see README,
 * "Kernel command line".
 */
#include "kernel/time/options.h"
#include "kernel/lib/option.h"
#include "kernel/time/policy.h"
#include "kernel/time/rates.h"

struct time_options time_options;

/*
 * The references kernel/time drives (pit.c, hpet.c, pmtimer.c). timer=
 * lists the legacy PIT first; auto prefers the HPET and the PM timer,
 * which do not wrap in milliseconds.
 */
DEFINE_REFCLOCK_NAME("pit", 10, 30);
DEFINE_REFCLOCK_NAME("hpet", 20, 10);
DEFINE_REFCLOCK_NAME("pmtmr", 30, 20);

const char *lpj_source_word(u32 i)
{
	const struct rate_source *s;

	switch (i) {
	case LPJ_SOURCE_AUTO: return "auto";
	case LPJ_SOURCE_CALIBRATE: return "calibrate";
	default: s = rate_source_at(i - LPJ_SOURCE_RATES); return s ? s->name : NULL;
	}
}

const struct rate_source *lpj_source_rate(void)
{
	if (time_options.lpj_source < LPJ_SOURCE_RATES)
		return NULL;
	return rate_source_at(time_options.lpj_source - LPJ_SOURCE_RATES);
}

const char *const calibrate_names[] = {
	[CALIBRATE_LINUX] = "linux",
	[CALIBRATE_FAST] = "fast",
};
_Static_assert(ARRAY_SIZE(calibrate_names) == CALIBRATE_COUNT, "calibrate_names");

const char *const lpj_reuse_names[] = {
	[LPJ_REUSE_NODE] = "node",
	[LPJ_REUSE_PACKAGE] = "package",
	[LPJ_REUSE_NONE] = "none",
};
_Static_assert(ARRAY_SIZE(lpj_reuse_names) == LPJ_REUSE_COUNT, "lpj_reuse_names");

DEFINE_OPTION_WORDS("timer", time_options.timer, timer_word, TIMER_AUTO);
/* Debian's CONFIG_HZ. */
DEFINE_OPTION_U64("hz", time_options.hz, 10, 10000, 250);
/*
 * No TSC runs at 100 GHz: 10^10 is that rate's lpj at the lowest hz=, and
 * keeps lpj * hz * us (udelay()'s cycles) inside 64 bits. A larger
 * preset wrapped there and turned the 10 ms INIT wait into years.
 */
#define LPJ_MAX 10000000000ULL
DEFINE_OPTION_U64("lpj", time_options.lpj, 0, LPJ_MAX, 0);
DEFINE_OPTION_WORDS("lpj_source", time_options.lpj_source, lpj_source_word, LPJ_SOURCE_AUTO);
DEFINE_OPTION_ENUM("calibrate", time_options.calibrate, calibrate_names, CALIBRATE_LINUX);
DEFINE_OPTION_ENUM("lpj_reuse", time_options.lpj_reuse, lpj_reuse_names, LPJ_REUSE_NODE);
/* hvprobe's own, the first in rank order. */
DEFINE_OPTION_WORDS("lpj_policy", time_options.lpj_policy, lpj_policy_word, 0);
