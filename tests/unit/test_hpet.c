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
#include <stdlib.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/acpi_hpet.h"
#include "kernel/test.h"
#include "tests/unit/phys_buffer.h"

/* Where the acpi_find() round trip puts things in the fake memory. */
#define ROM_ADDR  0xe0000
#define RSDT_ADDR 0x100000
#define HPET_ADDR 0x101000

/* HPET table (HPET 1.0a Table 3) and its base address GAS (ACPI Table 5.1) */
#define HPET_BLOCK_ID	     36
#define HPET_SPACE_ID	     40
#define HPET_BIT_WIDTH	     41
#define HPET_BIT_OFFSET	     42
#define HPET_ACCESS_SIZE     43
#define HPET_ADDRESS	     44
#define HPET_NUMBER	     52
#define HPET_MIN_TICK	     53
#define HPET_PAGE_PROTECTION 55
#define HPET_TABLE_SIZE	     56
#define HPET_DEFAULT	     0xfed00000
/* QEMU's: vendor 8086, LegacyReplacement capable, 3 timers, revision 1 */
#define QEMU_BLOCK_ID 0x8086a201

static u8 image[256];
static struct hpet_info h;
static struct boot_info bi;
static struct acpi a;

static u8 sum(const void *p, size_t len)
{
	const u8 *b = p;
	u8 t = 0;

	for (size_t i = 0; i < len; i++)
		t += b[i];
	return t;
}

/* The table QEMU 10 builds (build_hpet()). */
static void qemu_hpet(void)
{
	u32 block_id = QEMU_BLOCK_ID;
	u64 address = HPET_DEFAULT;

	memset(image, 0, sizeof(image));
	memcpy(image, "HPET", 4);
	image[8] = 1;
	memcpy(image + 10, "BOCHS ", 6);
	memcpy(image + HPET_BLOCK_ID, &block_id, 4);
	image[HPET_SPACE_ID] = ACPI_GAS_SYSTEM_MEMORY;
	image[HPET_BIT_WIDTH] = 64;
	memcpy(image + HPET_ADDRESS, &address, 8);
}

static void finish(u32 length)
{
	memcpy(image + 4, &length, 4);
	image[9] = 0;
	image[9] = -sum(image, length);
}

/* Parse the image cut to length bytes, from a copy of exactly that size. */
static bool parse_len(u32 length)
{
	u8 *copy;
	bool ok;

	finish(length);
	copy = malloc(length);
	memcpy(copy, image, length);
	memset(&h, 0xee, sizeof(h));
	ok = acpi_hpet_parse((const struct acpi_header *)copy, &h);
	free(copy);
	return ok;
}

/* The image placed in memory behind an RSDT and RSDP, and looked up. */
static const struct acpi_header *find_in_memory(void)
{
	struct acpi_header *rsdt = phys_buffer_at(RSDT_ADDR);
	struct acpi_rsdp *r = phys_buffer_at(ROM_ADDR);
	u32 addr = HPET_ADDR;

	memset(phys_buffer, 0, PHYS_BUFFER_SIZE);
	memset(&bi, 0, sizeof(bi));
	finish(HPET_TABLE_SIZE);
	memcpy(phys_buffer_at(HPET_ADDR), image, HPET_TABLE_SIZE);

	memcpy(rsdt->signature, "RSDT", 4);
	rsdt->length = sizeof(*rsdt) + 4;
	rsdt->revision = 1;
	memcpy(rsdt + 1, &addr, 4);
	rsdt->checksum = -sum(rsdt, rsdt->length);

	memcpy(r->signature, "RSD PTR ", 8);
	r->rsdt_address = RSDT_ADDR;
	r->checksum = -sum(r, ACPI_RSDP_V1_SIZE);
	if (!acpi_init(&a, &bi, phys_buffer_read))
		return NULL;
	return acpi_find(&a, "HPET", 0);
}

DEFINE_TEST(unit_hpet_qemu, "QEMU's HPET table: the block at 0xfed00000", 0)
{
	const struct acpi_header *t;

	qemu_hpet();
	t = find_in_memory();
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
	image[HPET_BIT_OFFSET] = 0;
	image[HPET_ACCESS_SIZE] = 3;
	memcpy(image + HPET_ADDRESS, &(u64){ 0x1fed01000ULL }, 8);
	image[HPET_NUMBER] = 2;
	memcpy(image + HPET_MIN_TICK, &(u16){ 0x37ee }, 2);
	image[HPET_PAGE_PROTECTION] = 0x11;
	report(parse_len(HPET_TABLE_SIZE), "a second block with every field set");
	report_eq(h.address, 0x1fed01000ULL, "its 64-bit address");
	report_eq(h.number, 2, "HPET number 2");
	report_eq(h.min_tick, 0x37ee, "minimum clock tick 0x37ee");
	report(parse_len(HPET_TABLE_SIZE + 8), "a table longer than 56 bytes parses too");
	report_eq(h.address, 0x1fed01000ULL, "with the same address");

	qemu_hpet();
	image[HPET_SPACE_ID] = ACPI_GAS_SYSTEM_IO;
	report(!parse_len(HPET_TABLE_SIZE), "a base in I/O space is refused");
	report_eq(h.space_id, ACPI_GAS_SYSTEM_IO, "its space is reported");
	image[HPET_SPACE_ID] = 0x7f;
	report(!parse_len(HPET_TABLE_SIZE), "a base in a functional fixed space is refused");

	qemu_hpet();
	report(!parse_len(HPET_TABLE_SIZE - 1), "55 bytes: page protection missing, refused");
	report(!h.address && !h.block_id && !h.number, "nothing is filled in");
	report(!parse_len(sizeof(struct acpi_header)), "a bare 36-byte header is refused");
}
