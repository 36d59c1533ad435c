// SPDX-License-Identifier: MIT
/*
 * HPET description table parsing (IA-PC HPET specification 1.0a, section
 * 3.2.4, Table 3) with its base address as an ACPI Generic Address
 * Structure (ACPI 6.5 5.2.3.2, Table 5.1); see hpet.h.
 */
#include "kernel/acpi/hpet.h"
#include "kernel/lib/string.h"
#include "kernel/lib/unaligned.h"

/* HPET table byte offsets (HPET 1.0a Table 3) */
#define HPET_BLOCK_ID 36
#define HPET_BASE 40 /* the Generic Address Structure, 12 bytes */
#define HPET_NUMBER 52
#define HPET_MIN_TICK 53
#define HPET_PAGE_PROTECTION 55
#define HPET_TABLE_SIZE 56

/* Generic Address Structure byte offsets (ACPI 6.5 Table 5.1) */
#define GAS_SPACE_ID 0
#define GAS_BIT_WIDTH 1
#define GAS_BIT_OFFSET 2
#define GAS_ACCESS_SIZE 3
#define GAS_ADDRESS 4

bool acpi_hpet_parse(const struct acpi_header *hpet, struct hpet_info *h)
{
	const u8 *t = (const u8 *)hpet;

	memset(h, 0, sizeof(*h));
	if (hpet->length < HPET_TABLE_SIZE)
		return false;
	h->block_id = get_le32(t + HPET_BLOCK_ID);
	h->space_id = t[HPET_BASE + GAS_SPACE_ID];
	h->address = get_le64(t + HPET_BASE + GAS_ADDRESS);
	h->number = t[HPET_NUMBER];
	h->min_tick = get_le16(t + HPET_MIN_TICK);
	/*
	 * The timer block is memory-mapped (HPET 1.0a 2.3): a base in I/O or
	 * any other space is a table we cannot use. Width, bit offset,
	 * access size and page protection do not change where it is.
	 */
	return h->space_id == ACPI_GAS_SYSTEM_MEMORY;
}
