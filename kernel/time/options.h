/* SPDX-License-Identifier: MIT */
/*
 * The command-line keys of time: the reference timer, the tick rate, and
 * where each CPU's loops-per-jiffy comes from.
 */
#ifndef KERNEL_TIME_OPTIONS_H
#define KERNEL_TIME_OPTIONS_H

#include "kernel/lib/table.h"
#include "kernel/lib/types.h"

struct rate_source;

/*
 * timer=: auto, or a reference timer by the word it registers with
 * DEFINE_REFCLOCK_NAME, from the folder that drives it, in a file the
 * host tests link too (its options.c), so that the command line knows
 * every word even where the driver (DEFINE_REFCLOCK, kernel/time/clock.h)
 * is not linked. A choice is auto (0) or 1 + the word's place in rank
 * order, as many as the table holds.
 */
struct refclock_name {
	const char *name;
	u32 rank;      /* where timer= lists it, and the timers test reports it */
	u32 auto_rank; /* where timer=auto tries it: lower first */
};

#define DEFINE_REFCLOCK_NAME(rname, rrank, rauto)                                                  \
	static const struct refclock_name TABLE_UNIQUE(refclock_name_)                             \
		TABLE_ENTRY(hvprobe_refclock_names) = { .name = (rname),                           \
							.rank = (rrank),                           \
							.auto_rank = (rauto) }

#define TIMER_AUTO 0
/* timer='s i-th word (a choice's), or NULL past the last. */
const char *timer_word(u32 choice);
/* The choice name is, or TIMER_AUTO when no reference has that name. */
u32 timer_choice(const char *name);
/* The n-th choice timer=auto tries, from 0, or TIMER_AUTO past the last. */
u32 timer_auto_choice(u32 n);

/*
 * lpj_source=: auto, calibrate, or the word of a registered stated rate
 * (rates.h), LPJ_SOURCE_RATES + its place in rank order.
 */
enum lpj_source { LPJ_SOURCE_AUTO, LPJ_SOURCE_CALIBRATE, LPJ_SOURCE_RATES };

enum calibrate_method { CALIBRATE_LINUX, CALIBRATE_FAST, CALIBRATE_COUNT };
enum lpj_reuse { LPJ_REUSE_NODE, LPJ_REUSE_PACKAGE, LPJ_REUSE_NONE, LPJ_REUSE_COUNT };
struct time_options {
	u32 timer;	/* timer=: a choice (timer_word()) */
	u64 hz;		/* hz=: jiffies per second */
	u64 lpj;	/* lpj=: a preset for every CPU, 0 for none */
	u32 lpj_source; /* lpj_source=: an enum lpj_source, or a rate's place */
	u32 calibrate;	/* calibrate=: an enum calibrate_method */
	u32 lpj_reuse;	/* lpj_reuse=: an enum lpj_reuse */
	u32 lpj_policy; /* lpj_policy=: a policy's place in rank order (policy.h) */
};

extern struct time_options time_options;
/* lpj_source='s i-th word, or NULL past the last. */
const char *lpj_source_word(u32 i);
/* The rate source lpj_source= names, or NULL for auto and calibrate. */
const struct rate_source *lpj_source_rate(void);
extern const char *const calibrate_names[CALIBRATE_COUNT];
extern const char *const lpj_reuse_names[LPJ_REUSE_COUNT];

#endif
