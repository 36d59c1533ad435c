// SPDX-License-Identifier: MIT
/* timer='s words, from the registered reference names; see options.h. */
#include "kernel/lib/string.h"
#include "kernel/time/options.h"

TABLE_DECLARE(struct refclock_name, hvprobe_refclock_names);
_Static_assert(sizeof(struct refclock_name) % 8 == 0, "a table entry is a multiple of 8 bytes");

/* Whether a comes before b in the order key picks (rank or auto_rank); names break ties. */
static bool before(const struct refclock_name *a, const struct refclock_name *b, bool by_auto)
{
	u32 ka = by_auto ? a->auto_rank : a->rank, kb = by_auto ? b->auto_rank : b->rank;

	return ka < kb || (ka == kb && strcmp(a->name, b->name) < 0);
}

/* The n-th name in that order, from 0, or NULL; a handful of entries, so a scan per step. */
static const struct refclock_name *nth(u32 n, bool by_auto)
{
	const struct refclock_name *prev = NULL, *best, *r;

	for (u32 i = 0; i <= n; i++) {
		best = NULL;
		table_for_each (r, hvprobe_refclock_names)
			if ((!prev || before(prev, r, by_auto)) &&
			    (!best || before(r, best, by_auto)))
				best = r;
		if (!best)
			return NULL;
		prev = best;
	}
	return prev;
}

const char *timer_word(u32 choice)
{
	const struct refclock_name *r;

	if (choice == TIMER_AUTO)
		return "auto";
	r = nth(choice - 1, false);
	return r ? r->name : NULL;
}

u32 timer_choice(const char *name)
{
	for (u32 c = TIMER_AUTO + 1; timer_word(c); c++)
		if (!strcmp(timer_word(c), name))
			return c;
	return TIMER_AUTO;
}

u32 timer_auto_choice(u32 n)
{
	const struct refclock_name *r = nth(n, true);

	return r ? timer_choice(r->name) : TIMER_AUTO;
}
