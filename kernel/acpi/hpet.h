/* SPDX-License-Identifier: MIT */
/*
 * The HPET description table (IA-PC HPET specification 1.0a, section
 * 3.2.4, signature "HPET"): where the timer block's registers are.
 */
#ifndef KERNEL_ACPI_HPET_H
#define KERNEL_ACPI_HPET_H

#include "kernel/acpi/acpi.h"

/* Generic Address Structure address spaces (ACPI 6.5 Table 5.1) */
#define ACPI_GAS_SYSTEM_MEMORY 0
#define ACPI_GAS_SYSTEM_IO 1

struct hpet_info {
	u32 block_id; /* Event Timer Block ID: the capabilities' low half */
	u8 space_id;
	u64 address;
	u8 number;
	u16 min_tick;
};

/*
 * Parse a validated HPET table. False when it is too short or its base
 * is not in system memory (the only space an HPET block lives in).
 */
bool acpi_hpet_parse(const struct acpi_header *hpet, struct hpet_info *h);

#endif
