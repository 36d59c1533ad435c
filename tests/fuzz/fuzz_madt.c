// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the MADT, the firmware's list of CPUs and interrupt
 * controllers, which decides which APIC IDs get INIT-SIPI-SIPI. Input:
 * one table, handed over as acpi_find() would (its length is the
 * input's). Beyond not crashing: the parsed CPU count never exceeds the
 * local APIC and x2APIC entries present, no APIC ID is listed twice (a
 * second INIT to a running CPU resets it), every CPU listed is enabled or
 * online-capable, the usable count never exceeds the listed one, and no
 * list outgrows its array.
 */
#include "kernel/acpi/madt.h"
#include "tests/fuzz/fuzz.h"

#define MADT_ENTRIES 44

/* Entries of type 0 and 9 along the chain of lengths, counted independently. */
static u32 cpu_entries(const struct acpi_header *t)
{
	const u8 *b = (const u8 *)t;
	u32 n = 0;

	for (u32 off = MADT_ENTRIES;
	     off + 2 <= t->length && b[off + 1] >= 2 && b[off + 1] <= t->length - off;
	     off += b[off + 1])
		n += b[off] == 0 || b[off] == 9;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct madt_info m;
	const struct acpi_header *t = fuzz_table(data, size);
	bool ok;

	if (!t)
		return 0;
	ok = acpi_madt_parse(t, &m);
	fuzz_assert(ok == (t->length >= MADT_ENTRIES), "parse %d on length %u", ok, t->length);
	fuzz_assert_terminated(m.problems);
	fuzz_assert(m.cpu_count <= MADT_MAX_CPUS && m.ioapic_count <= MADT_MAX_IOAPICS &&
			    m.override_count <= MADT_MAX_OVERRIDES && m.nmi_count <= MADT_MAX_NMIS,
		    "a list outgrew its array");
	fuzz_assert(m.cpu_count <= cpu_entries(t), "%u CPUs from %u entries", m.cpu_count,
		    cpu_entries(t));
	fuzz_assert(madt_usable_cpus(&m) <= m.cpu_count, "more usable CPUs than listed");
	for (u32 i = 0; i < m.cpu_count; i++) {
		fuzz_assert(m.cpus[i].enabled || m.cpus[i].online_capable,
			    "APIC ID %u listed but neither enabled nor online-capable",
			    m.cpus[i].apic_id);
		for (u32 j = 0; j < i; j++)
			fuzz_assert(m.cpus[j].apic_id != m.cpus[i].apic_id,
				    "APIC ID %u listed twice", m.cpus[i].apic_id);
	}
	return 0;
}
