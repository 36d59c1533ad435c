// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the HPET description table, which says where the timer
 * block the kernel then maps and reads lives. Input: one table, handed
 * over as acpi_find() would (its length is the input's). Beyond not
 * crashing: a table is accepted only when it holds every field (56
 * bytes) and puts the block in system memory, and the accepted address
 * is the one the table states, so a rejected or short table never
 * becomes an MMIO pointer.
 */
#include "kernel/acpi/hpet.h"
#include "kernel/lib/unaligned.h"
#include "tests/fuzz/fuzz.h"

/* HPET 1.0a Table 3: the base address's GAS at 40, its address at 44. */
#define HPET_SPACE_ID 40
#define HPET_ADDRESS 44
#define HPET_TABLE_SIZE 56

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct acpi_header *t = fuzz_table(data, size);
	const u8 *b = (const u8 *)t;
	struct hpet_info h;

	if (!t)
		return 0;
	if (!acpi_hpet_parse(t, &h))
		return 0;
	fuzz_assert(t->length >= HPET_TABLE_SIZE, "accepted at length %u", t->length);
	fuzz_assert(b[HPET_SPACE_ID] == ACPI_GAS_SYSTEM_MEMORY, "accepted in space %u",
		    b[HPET_SPACE_ID]);
	fuzz_assert(h.address == get_le64(b + HPET_ADDRESS), "address 0x%llx, table says 0x%llx",
		    h.address, get_le64(b + HPET_ADDRESS));
	return 0;
}
