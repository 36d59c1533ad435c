/* SPDX-License-Identifier: MIT */
/*
 * A test-and-set spinlock that remembers its owner, so that an exception or
 * NMI on the CPU that holds it (a crash while printing) can still print
 * instead of deadlocking against itself.
 */
#ifndef KERNEL_X86_SPINLOCK_H
#define KERNEL_X86_SPINLOCK_H

#include "kernel/x86/percpu.h"
#include "kernel/x86/x86.h"

struct spinlock {
	u32 owner; /* CPU index + 1; 0 = free */
};

/* Returns true when this CPU already held the lock (a nested entry). */
static inline bool spin_lock_reentrant(struct spinlock *l)
{
	u32 me = this_cpu()->index + 1;

	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me)
		return true;
	for (;;) {
		u32 free = 0;

		if (__atomic_compare_exchange_n(&l->owner, &free, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return false;
		while (__atomic_load_n(&l->owner, __ATOMIC_RELAXED))
			pause();
	}
}

static inline void spin_unlock_reentrant(struct spinlock *l, bool nested)
{
	if (!nested)
		__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
}

#endif
