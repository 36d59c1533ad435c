// SPDX-License-Identifier: MIT
/*
 * The HPET main counter as a reference (IA-PC HPET specification 1.0a,
 * 2.3): the period in femtoseconds is in the capabilities register's high
 * half, the counter is 64 bits wide when COUNT_SIZE_CAP says so, and it
 * runs once ENABLE_CNF is set.
 */
#include "kernel/acpi/hpet.h"
#include "kernel/acpi/acpi.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/time/clock.h"
#include "kernel/x86/phys.h"

/* clang-format off */
#define HPET_GCAP_ID 0x000
#define  HPET_GCAP_COUNT_SIZE_64 BIT(13)
#define  HPET_GCAP_PERIOD_SHIFT 32
#define HPET_GEN_CONF 0x010
#define  HPET_GEN_CONF_ENABLE BIT(0)
#define HPET_MAIN_COUNTER 0x0f0
#define FEMTOSECONDS_PER_SECOND 1000000000000000ULL
/* The specification caps the period at 100 ns (10 MHz minimum). */
#define HPET_MAX_PERIOD_FS 100000000ULL
/* clang-format on */

static volatile u64 *hpet;

static u64 hpet_read(void)
{
	return hpet[HPET_MAIN_COUNTER / 8];
}

static bool hpet_probe(struct refclock *r)
{
	const struct acpi_header *t = acpi_ok ? acpi_find(&acpi, "HPET", 0) : NULL;
	struct hpet_info info;
	u64 cap, period;

	*r = (struct refclock){ .name = "hpet", .read = hpet_read };
	if (!t) {
		str_copy(r->absent, "no HPET: the ACPI tables list none", sizeof(r->absent));
		return false;
	}
	if (!acpi_hpet_parse(t, &info) || !phys_map(info.address, 0x400)) {
		snprintf(r->absent, sizeof(r->absent), "HPET table unusable (base 0x%llx)",
			 info.address);
		return false;
	}
	hpet = (volatile u64 *)(uintptr_t)info.address;
	cap = hpet[HPET_GCAP_ID / 8];
	period = cap >> HPET_GCAP_PERIOD_SHIFT;
	if (!period || period > HPET_MAX_PERIOD_FS) {
		snprintf(r->absent, sizeof(r->absent), "HPET period %llu fs out of range", period);
		return false;
	}
	hpet[HPET_GEN_CONF / 8] |= HPET_GEN_CONF_ENABLE;
	r->hz = FEMTOSECONDS_PER_SECOND / period;
	r->bits = cap & HPET_GCAP_COUNT_SIZE_64 ? 64 : 32;
	r->present = true;
	return true;
}

DEFINE_REFCLOCK("hpet", hpet_probe);
