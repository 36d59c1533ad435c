// SPDX-License-Identifier: MIT
/* The table of stated rates, walked in rank order; see rates.h. */
#include "kernel/time/rates.h"
#include "kernel/lib/string.h"

TABLE_DECLARE(struct rate_source, hvprobe_rate_sources);
_Static_assert(sizeof(struct rate_source) % 8 == 0, "a table entry is a multiple of 8 bytes");

/* lpj=, filled from the command line when the preset is chosen. */
DEFINE_RATE_SOURCE(rate_cmdline, .name = "cmdline", .listed_as = "lpj=", .rank = RATE_RANK_CMDLINE,
		   .lpj_flags = RATE_LPJ_HVPROBE | RATE_LPJ_LINUX, .absent = "no lpj= given");
/*
 * CPUID.15H: the TSC's rate when nobody else states it; a preset by name,
 * and under hv-preset where the platform's code calls hv_preset_lpj()
 * with native_calibrate_tsc() still its x86_platform.calibrate_tsc.
 */
DEFINE_RATE_SOURCE(rate_cpuid, .name = "cpuid", .rank = RATE_RANK_CPUID,
		   .lpj_flags = RATE_LPJ_HV_PRESET, .absent = "CPUID.15H states no TSC frequency",
		   .linux_tsc = true);

/* Whether a comes before b: by rank, then by name so that a tie is still an order. */
static bool before(const struct rate_source *a, const struct rate_source *b)
{
	return a->rank < b->rank || (a->rank == b->rank && strcmp(a->name, b->name) < 0);
}

/* The table's order is the linker's: a handful of entries, so a scan per step. */
const struct rate_source *rate_source_next(const struct rate_source *prev)
{
	const struct rate_source *s, *best = NULL;

	table_for_each (s, hvprobe_rate_sources)
		if ((!prev || before(prev, s)) && (!best || before(s, best)))
			best = s;
	return best;
}

const struct rate_source *rate_source_at(u32 i)
{
	const struct rate_source *s = rate_source_next(NULL);

	while (s && i--)
		s = rate_source_next(s);
	return s;
}

const struct rate_source *rate_source_named(const char *name)
{
	const struct rate_source *s;

	table_for_each (s, hvprobe_rate_sources)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

const char *rate_absent(const struct rate_source *s)
{
	return s->offer->absent ? s->offer->absent : s->absent;
}

const struct rate_platform *rate_linux_platform(void)
{
	const struct rate_platform *best = NULL;
	const struct rate_source *s;

	table_for_each (s, hvprobe_rate_sources)
		if (s->platform && s->platform->present &&
		    (!best || s->platform->detect > best->detect))
			best = s->platform;
	return best;
}

u64 rate_tsc_hz(const char **source)
{
	const struct rate_source *s;

	rate_for_each(s) if (s->offer->tsc_hz)
	{
		*source = s->name;
		return s->offer->tsc_hz;
	}
	return 0;
}

u64 rate_tsc_hz_linux(const char **source)
{
	const struct rate_platform *platform = rate_linux_platform();
	const struct rate_source *s;

	rate_for_each(s) if (s->linux_tsc && s->offer->tsc_hz &&
			     (!s->platform || s->platform == platform))
	{
		*source = s->name;
		return s->offer->tsc_hz;
	}
	return 0;
}

u64 rate_apic_hz(const char **source)
{
	const struct rate_source *s;

	rate_for_each(s) if (s->offer->apic_hz)
	{
		*source = s->name;
		return s->offer->apic_hz;
	}
	return 0;
}

void rate_offers_reset(void)
{
	const struct rate_source *s;

	table_for_each (s, hvprobe_rate_sources) {
		*s->offer = (struct rate_offer){ 0 };
		if (s->platform)
			s->platform->present = false;
	}
}
