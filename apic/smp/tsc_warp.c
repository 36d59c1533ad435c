// SPDX-License-Identifier: MIT
/* The warp loop of Linux's TSC-sync check; see tsc_warp.h. */
#include "apic/smp/tsc_warp.h"

/* A bound on the loop should the TSC stand still, as Linux's 10 million turns. */
#define WARP_LOOP_MAX 10000000u

static void lock(struct tsc_warp *w)
{
	spin_lock_reentrant(&w->lock);
}

static void unlock(struct tsc_warp *w)
{
	spin_unlock_reentrant(&w->lock, false);
}

/*
 * check_tsc_warp(), arch/x86/kernel/tsc_sync.c v6.1 to v6.12: each reading is
 * rdtsc_ordered(), so that it cannot be taken before the lock is held
 * and the other CPU's last reading is seen; a plain RDTSC can, and then
 * reports a warp two synchronized TSCs never had.
 */
u64 tsc_warp_loop(struct tsc_warp *w, u64 cycles)
{
	u64 start = rdtsc_ordered(), end = start + cycles, now, prev, mine = 0;
	u32 seen = 0;

	for (u32 i = 0;; i++) {
		lock(w);
		prev = w->last;
		now = rdtsc_ordered();
		w->last = now;
		unlock(w);
		if (!(i & 7)) {
			if (now > end || i > WARP_LOOP_MAX)
				break;
			pause();
		}
		if (prev > now) {
			lock(w);
			w->max_warp = MAX(w->max_warp, prev - now);
			mine = w->max_warp;
			/* Only one CPU should see time go backwards. */
			if (seen != w->warps)
				w->random++;
			w->warps++;
			seen = w->warps;
			unlock(w);
		}
	}
	return mine;
}
