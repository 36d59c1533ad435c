// SPDX-License-Identifier: MIT
/* The warp loop of Linux's TSC-sync check and its two halves; see tsc_warp.h. */
#include "apic/smp/tsc_warp.h"
#include "apic/smp/tsc_sync.h"

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

static void wait_for(volatile u32 *count, u32 value)
{
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) != value)
		pause();
}

/* check_tsc_sync_source(), tsc_sync.c v6.5: "goto retry" while test_runs > 0. */
void tsc_sync_source(struct tsc_sync_pair *p, u64 cycles, u32 runs, struct tsc_sync_source_runs *r)
{
	u32 verdict;

	*r = (struct tsc_sync_source_runs){ 0 };
	do {
		wait_for(&p->start, 1);
		p->stop = 0;
		__atomic_store_n(&p->start, 2, __ATOMIC_RELEASE);
		tsc_warp_loop(&p->warp, cycles);
		wait_for(&p->stop, 1);
		verdict = smp_tsc_sync_after_run(&runs, p->warp.warps, p->warp.random);
		p->in_step = r->in_step = verdict == SMP_TSC_SYNC_RUN_IN_STEP;
		p->again = verdict == SMP_TSC_SYNC_RUN_AGAIN;
		r->runs++;
		r->warped += !!p->warp.warps;
		r->max_warp = MAX(r->max_warp, p->warp.max_warp);
		p->start = 0;
		p->warp = (struct tsc_warp){ 0 };
		__atomic_store_n(&p->stop, 2, __ATOMIC_RELEASE);
	} while (verdict == SMP_TSC_SYNC_RUN_AGAIN);
}

/*
 * check_tsc_sync_target(), tsc_sync.c v6.5:475-508: gbl_max_warp is read
 * before the stop, while the source has not reset it yet.
 */
bool tsc_sync_target(struct tsc_sync_pair *p, u64 cycles, s64 *adjusted, u32 *runs)
{
	u64 mine, source;
	s64 step;
	bool again;

	do {
		__atomic_add_fetch(&p->start, 1, __ATOMIC_ACQ_REL);
		wait_for(&p->start, 2);
		mine = tsc_warp_loop(&p->warp, cycles);
		source = p->warp.max_warp;
		__atomic_add_fetch(&p->stop, 1, __ATOMIC_ACQ_REL);
		wait_for(&p->stop, 2);
		(*runs)++;
		again = p->again;
		if (again) {
			step = smp_tsc_adjust_step(mine, source);
			*adjusted += step;
			wrmsr(MSR_IA32_TSC_ADJUST, rdmsr(MSR_IA32_TSC_ADJUST) + (u64)step);
		}
	} while (again);
	return p->in_step;
}
