/* SPDX-License-Identifier: MIT */
/*
 * ACPI tables built for the parser tests, doing what firmware would
 * (hence fw_): a header with its signature, revision and OEM ID, a
 * length and a checksum that sums to 0 (ACPI 6.5 5.2.6), an RSDP of
 * revision 0 or 2 (5.2.5.3), and an RSDT listing a table in the fake
 * physical memory, so that acpi_init() finds it by the BIOS-area scan
 * and acpi_find() returns it. A table with subtables (MADT, SRAT) is
 * built in fw_image, entry by entry, then handed to its parser as an
 * exact copy or installed in memory. Checksums are summed here, not by
 * acpi_checksum(), so a bug there cannot hide itself.
 */
#ifndef TESTS_UNIT_ACPI_BUILD_H
#define TESTS_UNIT_ACPI_BUILD_H

#include <string.h>

#include "kernel/acpi/acpi.h"

/* Where fw_root() puts the RSDP (in the BIOS ROM area) and the RSDT. */
#define FW_RSDP_ADDR 0xe0000
#define FW_RSDT_ADDR 0x100000
/* Where fw_install() puts the table it is given. */
#define FW_TABLE_ADDR 0x101000
/* The OEM ID of fw_table()'s tables and of RSDPs. */
#define FW_OEM_ID "HVPRB "

/* Little-endian stores at any alignment, for packed table fields. */
static inline void put_le16(void *p, u16 v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_le32(void *p, u32 v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_le64(void *p, u64 v)
{
	memcpy(p, &v, sizeof(v));
}

/* Byte sum modulo 256. */
u8 fw_sum(const void *p, size_t len);
/* Set h's checksum so that its h->length bytes sum to 0. */
void fw_fix_checksum(struct acpi_header *h);

/* A table of length bytes at addr: header, zero body, valid checksum. */
struct acpi_header *fw_table(u64 addr, const char *sig, u32 length);
/* A table at addr whose body is the given bytes (a DSDT's AML, a list). */
struct acpi_header *fw_table_with(u64 addr, const char *sig, const void *body, u32 len);

/*
 * An RSDP image at p: revision 0 is 20 bytes, revision 2 is 36 with the
 * XSDT's address and the extended checksum.
 */
struct acpi_rsdp *fw_rsdp(void *p, u8 revision, u32 rsdt_addr, u64 xsdt_addr);
/* The same at a fake physical address. */
struct acpi_rsdp *fw_rsdp_at(u64 addr, u8 revision, u32 rsdt_addr, u64 xsdt_addr);

/*
 * An RSDT listing just the table at addr, a revision 0 RSDP in the BIOS
 * ROM area naming it, and acpi_init() over them with no loader's copy.
 */
bool fw_root(struct acpi *a, u64 addr);

/* Room for the largest tables built: MADT and SRAT of 1026 x2APIC entries. */
#define FW_IMAGE_MAX (48 * 1024)

/*
 * The table being built entry by entry, and its length so far. Tests
 * poke its bytes and length directly to break it; it is finished (length
 * and checksum set) only when copied or installed, at a length of the
 * test's choice.
 */
extern u8 fw_image[FW_IMAGE_MAX];
extern u32 fw_image_len;

/*
 * Start a table in fw_image, zeroed: signature, revision and OEM ID, and
 * fixed_len bytes so far (the header and the table's fixed fields).
 */
struct acpi_header *fw_begin(const char *sig, u8 revision, const char *oem_id, u32 fixed_len);
/*
 * Append a subtable of type and length (the MADT's and SRAT's entries
 * both start with these two bytes); the caller fills in its fields.
 */
u8 *fw_entry(u8 type, u8 length);

/*
 * fw_image finished at length bytes, as a heap copy of exactly that
 * size, so ASan sees a parser reading past it. The copy lives until the
 * next call.
 */
struct acpi_header *fw_copy(u32 length);
/*
 * fw_image finished at length bytes and placed in otherwise zeroed
 * memory behind fw_root(), then looked up by its signature: the table as
 * acpi_find() returns it, or NULL.
 */
const struct acpi_header *fw_install(u32 length);

#endif
