/* SPDX-License-Identifier: MIT */
/*
 * ACPI table discovery (ACPI 6.5 section 5.2): the RSDP, the RSDT or XSDT,
 * and lookup by signature with checksum and length validation. A table
 * that fails validation is reported and never followed.
 *
 * Tables are read through a phys_reader, so the same code parses QEMU's
 * tables in the guest and constructed ones in the host tests.
 */
#ifndef KERNEL_ACPI_ACPI_H
#define KERNEL_ACPI_ACPI_H

#include "kernel/x86/boot_info.h"

struct acpi_rsdp {
	char signature[8];
	u8 checksum;
	char oem_id[6];
	u8 revision;
	u32 rsdt_address;
	/* ACPI 2.0+ */
	u32 length;
	u64 xsdt_address;
	u8 extended_checksum;
	u8 reserved[3];
} __packed;

struct acpi_header {
	char signature[4];
	u32 length;
	u8 revision;
	u8 checksum;
	char oem_id[6];
	char oem_table_id[8];
	u32 oem_revision;
	u32 creator_id;
	u32 creator_revision;
} __packed;

#define ACPI_RSDP_V1_SIZE 20
/*
 * Where a BIOS leaves the RSDP (ACPI 6.5 5.2.5.1): the first KiB of the
 * EBDA, whose real-mode segment the BIOS data area holds at 0x40e, then
 * the BIOS ROM area.
 */
#define BDA_EBDA_SEGMENT 0x40e
#define EBDA_SCAN_SIZE 1024
#define BIOS_ROM_BASE 0xe0000
#define BIOS_ROM_END 0x100000
#define ACPI_MAX_TABLES 64
#define ACPI_PROBLEMS_MAX 256

struct acpi {
	phys_reader phys;
	struct acpi_rsdp rsdp;
	u64 rsdp_address; /* 0 when the loader handed us a copy */
	const char *rsdp_source;
	bool xsdt;
	u64 root_address;
	u64 tables[ACPI_MAX_TABLES];
	u32 table_count;
	char problems[ACPI_PROBLEMS_MAX];
};

/* The platform's own tables, found once at boot (kmain()). */
extern struct acpi acpi;
extern bool acpi_ok;

/* Sum of bytes modulo 256; a valid ACPI structure sums to 0. */
u8 acpi_checksum(const void *p, size_t len);
/* Validate an RSDP image (20 or 36 bytes); false with a message in why. */
bool acpi_rsdp_valid(const void *p, size_t len, char *why, size_t whylen);
/* Find the RSDP in the BIOS areas: the EBDA's first KiB, then E0000-FFFFF. */
u64 acpi_rsdp_scan(phys_reader phys);
/*
 * Locate the RSDP (the loader's copy if any, else a BIOS scan) and the
 * root table. Returns false when there is no usable root table.
 */
bool acpi_init(struct acpi *a, const struct boot_info *bi, phys_reader phys);
/* The table at addr if readable, of sane length and checksum, else NULL. */
const struct acpi_header *acpi_table_at(struct acpi *a, u64 addr);
/*
 * Walk a table's entries from byte offset first: each starts with a type
 * byte and its whole length (MADT, SRAT and the like). visit(ctx, entry)
 * sees each entry whose type has a nonzero min_length[type] (types below
 * count) and that is at least that long; shorter ones are noted and
 * skipped. A length below 2 never advances and one past the end cannot be
 * read: the walk ends at either, with a note in problems.
 */
void acpi_walk_entries(const struct acpi_header *t, u32 first, const u8 *min_length, u32 count,
		       char *problems, size_t size, void (*visit)(void *ctx, const u8 *entry),
		       void *ctx);
/* The first valid table with this signature (n = 0) or the n-th one. */
const struct acpi_header *acpi_find(struct acpi *a, const char sig[4], u32 n);

#endif
