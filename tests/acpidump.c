// SPDX-License-Identifier: MIT
/*
 * acpidump: the firmware's ACPI tables, as hex on the serial port.
 *
 * The fuzzers' seed corpora are real tables: tests/fuzz/make-seeds boots
 * this test under each QEMU machine configuration (pc, q35, NUMA, no
 * HPET, OVMF, x2APIC) and turns its output back into bytes. The tables
 * are read raw, not through acpi_table_at(), so a table with a bad length
 * or checksum is dumped as the firmware wrote it. Run only when named
 * (test=acpidump): it measures nothing and prints a lot.
 *
 * Output, per table: "# ACPIDUMP <signature> <address> <length>", then
 * "# ACPIHEX <hex>" lines of up to HEX_LINE_BYTES bytes. The RSDP's
 * address is 0 when the loader handed over a copy.
 */
#include "kernel/kernel.h"
#include "kernel/test/test.h"
#include "kernel/x86/phys.h"

#define HEX_LINE_BYTES 128
/* A length beyond this is a corrupt header, not a table worth printing. */
#define DUMP_MAX (1 * MiB)
/* RSDP, RSDT, XSDT, DSDT and the tables the root lists. */
#define DUMPED_MAX (ACPI_MAX_TABLES + 4)

static u64 dumped[DUMPED_MAX];
static u32 dumped_count;

static void hex_lines(const u8 *p, u32 len)
{
	static const char digits[] = "0123456789abcdef";
	char hex[2 * HEX_LINE_BYTES + 1];

	for (u32 off = 0; off < len; off += HEX_LINE_BYTES) {
		u32 n = MIN(len - off, (u32)HEX_LINE_BYTES);

		for (u32 i = 0; i < n; i++) {
			hex[2 * i] = digits[p[off + i] >> 4];
			hex[2 * i + 1] = digits[p[off + i] & 0xf];
		}
		hex[2 * n] = '\0';
		report_info("ACPIHEX %s", hex);
	}
}

static void dump(const char *name, u64 addr, const void *p, u32 len)
{
	report_info("ACPIDUMP %.4s 0x%llx %u", name, addr, len);
	hex_lines(p, len);
}

/* The table at addr, once, whatever its checksum says; false if unreadable. */
static bool dump_table(u64 addr)
{
	const struct acpi_header *h = phys_map(addr, sizeof(*h));

	for (u32 i = 0; i < dumped_count; i++)
		if (dumped[i] == addr)
			return true;
	if (!h || h->length < sizeof(*h) || h->length > DUMP_MAX || !phys_map(addr, h->length))
		return false;
	if (dumped_count < DUMPED_MAX)
		dumped[dumped_count++] = addr;
	dump(h->signature, addr, h, h->length);
	return true;
}

DEFINE_TEST(acpidump, "the firmware's ACPI tables as hex, for the fuzzers' seeds", TEST_EXPLICIT)
{
	const struct acpi_rsdp *r = &acpi.rsdp;
	u32 rsdp_len = r->revision >= 2 ? sizeof(*r) : ACPI_RSDP_V1_SIZE;
	u32 unreadable = 0;

	if (!acpi.rsdp_source) {
		report_skip("no RSDP: %s", acpi.problems);
		return;
	}
	dumped_count = 0;
	dump("RSDP", acpi.rsdp_address, r, rsdp_len);
	if (r->rsdt_address)
		unreadable += !dump_table(r->rsdt_address);
	if (r->revision >= 2 && r->xsdt_address)
		unreadable += !dump_table(r->xsdt_address);
	for (u32 i = 0; i < acpi.table_count; i++)
		unreadable += !dump_table(acpi.tables[i]);
	if (fadt_ok && fadt.dsdt)
		unreadable += !dump_table(fadt.dsdt);
	report(!unreadable, "%u tables dumped, %u unreadable", dumped_count, unreadable);
}
