// SPDX-License-Identifier: MIT
/* Turns to calibrate in parallel bring-up; see turns.h. */
#include "apic/smp/turns.h"

void turns_init(struct turns *t, u32 ranks, u32 granted)
{
	t->ranks = ranks < TURNS_MAX ? ranks : TURNS_MAX;
	t->granted = granted;
	for (u32 r = 0; r < t->ranks; r++)
		t->dead[r] = t->passed[r] = 0;
}

bool turns_mine(struct turns *t, u32 rank)
{
	return rank < __atomic_load_n(&t->granted, __ATOMIC_ACQUIRE);
}

/* Whoever first finds a dead rank's turn granted passes it on, once. */
static bool take_pass(struct turns *t, u32 rank)
{
	return !__atomic_exchange_n(&t->passed[rank], 1, __ATOMIC_ACQ_REL);
}

void turns_grant(struct turns *t, turn_wake_fn wake, void *ctx)
{
	for (;;) {
		u32 next = __atomic_fetch_add(&t->granted, 1, __ATOMIC_SEQ_CST);

		if (next >= __atomic_load_n(&t->ranks, __ATOMIC_SEQ_CST))
			return;
		if (!__atomic_load_n(&t->dead[next], __ATOMIC_SEQ_CST)) {
			wake(ctx, next);
			return;
		}
		if (!take_pass(t, next))
			return;
	}
}

u32 turns_join(struct turns *t)
{
	u32 rank = __atomic_load_n(&t->ranks, __ATOMIC_SEQ_CST);

	do {
		if (rank >= TURNS_MAX)
			return TURNS_MAX;
	} while (!__atomic_compare_exchange_n(&t->ranks, &rank, rank + 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	return rank;
}

void turns_give_up(struct turns *t, u32 rank, turn_wake_fn wake, void *ctx)
{
	if (rank >= __atomic_load_n(&t->ranks, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&t->dead[rank], 1, __ATOMIC_SEQ_CST);
	/* A turn it held and will never give back: pass it on now. */
	if (turns_mine(t, rank) && take_pass(t, rank))
		turns_grant(t, wake, ctx);
}
