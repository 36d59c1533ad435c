// SPDX-License-Identifier: MIT
/* The bring-up modes, one descriptor each (bringup.h), and the table's walk. */
#include "apic/bringup.h"
#include "apic/options.h"
#include "kernel/lib/string.h"

TABLE_DECLARE(struct bringup_mode, hvprobe_bringup_modes);
_Static_assert(sizeof(struct bringup_mode) % 8 == 0, "a table entry is a multiple of 8 bytes");

/*
 * Linux before 6.5, and 6.5+ wherever it does not bring up in parallel
 * (cpuhp.parallel=0, SEV-ES, TDX): native_cpu_up() kicks one AP and
 * waits for it to come online before the next.
 */
DEFINE_BRINGUP_MODE(.name = "serial", .rank = 10, .linux_tsc_sync = true);

/* hvprobe's own concurrent mode, in no Linux. */
DEFINE_BRINGUP_MODE(.name = "parallel", .rank = 20, .kick_ahead = true, .calibration_line = true);

/*
 * Linux 6.5's cpuhp_bringup_cpus_parallel(): a first pass kicks every AP
 * (CPUHP_BP_KICK_AP); a second waits for each at cpuhp_bp_sync_alive()
 * and releases it past cpuhp_ap_sync_alive().
 */
DEFINE_BRINGUP_MODE(.name = "linux-6.5", .rank = 30, .kick_ahead = true, .hold_at_alive = true,
		    .linux_tsc_sync = true);

/* Whether a comes before b: by rank, then by name so that a tie is still an order. */
static bool before(const struct bringup_mode *a, const struct bringup_mode *b)
{
	return a->rank < b->rank || (a->rank == b->rank && strcmp(a->name, b->name) < 0);
}

/* A handful of entries in the linker's order: a scan per step. */
static const struct bringup_mode *next(const struct bringup_mode *prev)
{
	const struct bringup_mode *m, *best = NULL;

	table_for_each (m, hvprobe_bringup_modes)
		if ((!prev || before(prev, m)) && (!best || before(m, best)))
			best = m;
	return best;
}

const struct bringup_mode *bringup_mode_at(u32 i)
{
	const struct bringup_mode *m = next(NULL);

	while (m && i--)
		m = next(m);
	return m;
}

const char *bringup_mode_word(u32 i)
{
	const struct bringup_mode *m = bringup_mode_at(i);

	return m ? m->name : NULL;
}

const struct bringup_mode *bringup_mode_named(const char *name)
{
	const struct bringup_mode *m;

	table_for_each (m, hvprobe_bringup_modes)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

const struct bringup_mode *bringup_mode_chosen(void)
{
	return bringup_mode_at(apic_options.bringup);
}
