// SPDX-License-Identifier: MIT
/*
 * ACPI tables built in the fake physical memory for the parser tests;
 * see acpi_build.h.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/acpi_build.h"
#include "tests/unit/phys_buffer.h"

u8 fw_image[FW_IMAGE_MAX];
u32 fw_image_len;

u8 fw_sum(const void *p, size_t len)
{
	const u8 *b = p;
	u8 s = 0;

	for (size_t i = 0; i < len; i++)
		s += b[i];
	return s;
}

void fw_fix_checksum(struct acpi_header *h)
{
	h->checksum = 0;
	h->checksum = -fw_sum(h, h->length);
}

/* Zero size bytes at p and start a table there. */
static struct acpi_header *header(void *p, size_t size, const char *sig, u8 revision,
				  const char *oem_id)
{
	struct acpi_header *h = p;

	memset(p, 0, size);
	memcpy(h->signature, sig, sizeof(h->signature));
	h->revision = revision;
	memcpy(h->oem_id, oem_id, sizeof(h->oem_id));
	return h;
}

/* Set a table's length and fix its checksum over it. */
static void finish(struct acpi_header *h, u32 length)
{
	h->length = length;
	fw_fix_checksum(h);
}

struct acpi_header *fw_table(u64 addr, const char *sig, u32 length)
{
	struct acpi_header *h = header(phys_buffer_at(addr), length, sig, 1, FW_OEM_ID);

	finish(h, length);
	return h;
}

struct acpi_header *fw_table_with(u64 addr, const char *sig, const void *body, u32 len)
{
	struct acpi_header *h = fw_table(addr, sig, sizeof(*h) + len);

	memcpy(h + 1, body, len);
	fw_fix_checksum(h);
	return h;
}

struct acpi_rsdp *fw_rsdp(void *p, u8 revision, u32 rsdt_addr, u64 xsdt_addr)
{
	struct acpi_rsdp *r = p;

	memset(r, 0, revision >= 2 ? sizeof(*r) : ACPI_RSDP_V1_SIZE);
	memcpy(r->signature, "RSD PTR ", 8);
	memcpy(r->oem_id, FW_OEM_ID, 6);
	r->revision = revision;
	r->rsdt_address = rsdt_addr;
	r->checksum = -fw_sum(r, ACPI_RSDP_V1_SIZE);
	if (revision >= 2) {
		r->length = sizeof(*r);
		r->xsdt_address = xsdt_addr;
		r->extended_checksum = -fw_sum(r, sizeof(*r));
	}
	return r;
}

struct acpi_rsdp *fw_rsdp_at(u64 addr, u8 revision, u32 rsdt_addr, u64 xsdt_addr)
{
	return fw_rsdp(phys_buffer_at(addr), revision, rsdt_addr, xsdt_addr);
}

bool fw_root(struct acpi *a, u64 addr)
{
	static const struct boot_info no_loader_rsdp;
	u32 entry = addr;

	fw_table_with(FW_RSDT_ADDR, "RSDT", &entry, sizeof(entry));
	fw_rsdp_at(FW_RSDP_ADDR, 0, FW_RSDT_ADDR, 0);
	return acpi_init(a, &no_loader_rsdp, phys_buffer_read);
}

struct acpi_header *fw_begin(const char *sig, u8 revision, const char *oem_id, u32 fixed_len)
{
	fw_image_len = fixed_len;
	return header(fw_image, sizeof(fw_image), sig, revision, oem_id);
}

u8 *fw_entry(u8 type, u8 length)
{
	u8 *e = fw_image + fw_image_len;

	e[0] = type;
	e[1] = length;
	fw_image_len += length;
	return e;
}

struct acpi_header *fw_copy(u32 length)
{
	static struct acpi_header *copy;

	finish((struct acpi_header *)fw_image, length);
	free(copy);
	copy = malloc(length);
	memcpy(copy, fw_image, length);
	return copy;
}

const struct acpi_header *fw_install(u32 length)
{
	static struct acpi a;
	struct acpi_header *h = (struct acpi_header *)fw_image;

	finish(h, length);
	memset(phys_buffer, 0, PHYS_BUFFER_SIZE);
	memcpy(phys_buffer_at(FW_TABLE_ADDR), fw_image, length);
	if (!fw_root(&a, FW_TABLE_ADDR))
		return NULL;
	return acpi_find(&a, h->signature, 0);
}
