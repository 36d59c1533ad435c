// SPDX-License-Identifier: MIT
/*
 * The ACPI power-management timer as a reference (ACPI 6.5 4.8.3.3): a
 * 3.579545 MHz counter at the FADT's PM_TMR_BLK port, 24 bits wide unless
 * the FADT's TMR_VAL_EXT flag makes it 32.
 */
#include "kernel/acpi/fadt.h"
#include "kernel/lib/string.h"
#include "kernel/time/clock.h"
#include "kernel/x86/x86.h"

#define PMTMR_HZ 3579545

static u16 pmtmr_port;
static u32 pmtmr_mask;

static u64 pmtmr_read(void)
{
	return inl(pmtmr_port) & pmtmr_mask;
}

static bool pmtimer_probe(struct refclock *r)
{
	*r = (struct refclock){ .name = "pmtmr", .hz = PMTMR_HZ, .read = pmtmr_read };
	if (!fadt_ok || !fadt.pm_tmr || fadt.pm_tmr > 0xffff) {
		str_copy(r->absent, "no ACPI PM timer: the FADT gives no PM_TMR_BLK port",
			 sizeof(r->absent));
		return false;
	}
	pmtmr_port = (u16)fadt.pm_tmr;
	r->bits = fadt.pm_tmr_32bit ? 32 : 24;
	pmtmr_mask = (u32)((1ULL << r->bits) - 1);
	return refclock_counts(r, "ACPI PM timer does not count");
}

DEFINE_REFCLOCK("pmtmr", pmtimer_probe);
