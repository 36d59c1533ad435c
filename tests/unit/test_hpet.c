// SPDX-License-Identifier: MIT
/*
 * HPET description table parsing (IA-PC HPET 1.0a section 3.2.4) on
 * constructed tables. The HPET is a reference clock for the timer tests:
 * reading a wrong address, or an I/O port as if it were memory, turns
 * every measurement against it into noise. Covered: QEMU's table, found
 * through acpi_find(), a table of another vendor with every field set,
 * a base in I/O space and tables too short for their fields. Each parse
 * runs on a copy of exactly the table's length, so ASan sees a read past
 * it.
 */
#include <string.h>

#include "kernel/acpi/acpi.h"
#include "kernel/acpi/hpet.h"
#include "kernel/test/test.h"
#include "tests/unit/acpi_build.h"

/* HPET table (HPET 1.0a Table 3) and its base address GAS (ACPI Table 5.1) */
#define HPET_BLOCK_ID 36
#define HPET_SPACE_ID 40
#define HPET_BIT_WIDTH 41
#define HPET_BIT_OFFSET 42
#define HPET_ACCESS_SIZE 43
#define HPET_ADDRESS 44
#define HPET_NUMBER 52
#define HPET_MIN_TICK 53
#define HPET_PAGE_PROTECTION 55
#define HPET_TABLE_SIZE 56
#define HPET_DEFAULT 0xfed00000
/* QEMU's: vendor 8086, LegacyReplacement capable, 3 timers, revision 1 */
#define QEMU_BLOCK_ID 0x8086a201

static struct hpet_info h;

/* The table QEMU 10 builds (build_hpet()). */
static void qemu_hpet(void)
{
	fw_begin("HPET", 1, "BOCHS ", HPET_TABLE_SIZE);
	put_le32(fw_image + HPET_BLOCK_ID, QEMU_BLOCK_ID);
	fw_image[HPET_SPACE_ID] = ACPI_GAS_SYSTEM_MEMORY;
	fw_image[HPET_BIT_WIDTH] = 64;
	put_le64(fw_image + HPET_ADDRESS, HPET_DEFAULT);
}

/* Parse the image cut to length bytes, from a copy of exactly that size. */
static bool parse_len(u32 length)
{
	memset(&h, 0xee, sizeof(h));
	return acpi_hpet_parse(fw_copy(length), &h);
}

DEFINE_TEST(unit_hpet_qemu, "QEMU's HPET table: the block at 0xfed00000", 0)
{
	const struct acpi_header *t;

	qemu_hpet();
	t = fw_install(HPET_TABLE_SIZE);
	report(t, "acpi_find() returns the HPET table");
	if (!t)
		return;
	report(acpi_hpet_parse(t, &h), "it parses");
	report_eq(h.block_id, QEMU_BLOCK_ID, "Event Timer Block ID");
	report_eq(h.space_id, ACPI_GAS_SYSTEM_MEMORY, "in system memory");
	report_eq(h.address, HPET_DEFAULT, "at 0xfed00000");
	report_eq(h.number, 0, "HPET number 0");
	report_eq(h.min_tick, 0, "no minimum tick");
}

DEFINE_TEST(unit_hpet_fields, "every field, I/O space and short tables", 0)
{
	qemu_hpet();
	fw_image[HPET_BIT_OFFSET] = 0;
	fw_image[HPET_ACCESS_SIZE] = 3;
	put_le64(fw_image + HPET_ADDRESS, 0x1fed01000ULL);
	fw_image[HPET_NUMBER] = 2;
	put_le16(fw_image + HPET_MIN_TICK, 0x37ee);
	fw_image[HPET_PAGE_PROTECTION] = 0x11;
	report(parse_len(HPET_TABLE_SIZE), "a second block with every field set");
	report_eq(h.address, 0x1fed01000ULL, "its 64-bit address");
	report_eq(h.number, 2, "HPET number 2");
	report_eq(h.min_tick, 0x37ee, "minimum clock tick 0x37ee");
	report(parse_len(HPET_TABLE_SIZE + 8), "a table longer than 56 bytes parses too");
	report_eq(h.address, 0x1fed01000ULL, "with the same address");

	qemu_hpet();
	fw_image[HPET_SPACE_ID] = ACPI_GAS_SYSTEM_IO;
	report(!parse_len(HPET_TABLE_SIZE), "a base in I/O space is refused");
	report_eq(h.space_id, ACPI_GAS_SYSTEM_IO, "its space is reported");
	fw_image[HPET_SPACE_ID] = 0x7f;
	report(!parse_len(HPET_TABLE_SIZE), "a base in a functional fixed space is refused");

	qemu_hpet();
	report(!parse_len(HPET_TABLE_SIZE - 1), "55 bytes: page protection missing, refused");
	report(!h.address && !h.block_id && !h.number, "nothing is filled in");
	report(!parse_len(sizeof(struct acpi_header)), "a bare 36-byte header is refused");
}
