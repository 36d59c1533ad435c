/* SPDX-License-Identifier: MIT */
/*
 * Turns to calibrate in parallel bring-up, pure so that the host tests
 * hold them: rank r may start once granted > r. Each AP that finishes
 * grants one more turn; an AP given up (never alive) gives back a turn
 * it held, and one it did not hold yet is passed over when it comes, so
 * that a dead AP neither blocks the line nor lets an extra AP in.
 */
#ifndef APIC_TURNS_H
#define APIC_TURNS_H

#include "kernel/lib/types.h"

#define TURNS_MAX 1024

struct turns {
	u32 ranks;	      /* calibrating APs in line */
	u32 granted;	      /* ranks below this may run */
	u8 dead[TURNS_MAX];   /* given up */
	u8 passed[TURNS_MAX]; /* its turn was passed on (once) */
};

/* The waker of rank r, whose turn has come. */
typedef void (*turn_wake_fn)(void *ctx, u32 rank);

/* granted ranks may run at first. */
void turns_init(struct turns *t, u32 ranks, u32 granted);
/* Whether rank may run now. */
bool turns_mine(struct turns *t, u32 rank);
/* One more turn, past dead ranks; wakes the rank it went to. */
void turns_grant(struct turns *t, turn_wake_fn wake, void *ctx);
/*
 * A rank at the end of the line for an AP that must calibrate though it
 * was planned to copy (its source's value cannot be taken after a TSC
 * warp): TURNS_MAX when the line is full. A turn granted past the last
 * rank is a free slot, which the newcomer takes at once.
 */
u32 turns_join(struct turns *t);
/* Rank will never run: its turn, held or to come, goes to the next live one. */
void turns_give_up(struct turns *t, u32 rank, turn_wake_fn wake, void *ctx);

#endif
