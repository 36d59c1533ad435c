// SPDX-License-Identifier: MIT
/* ACPI RSDP and root-table discovery; see acpi.h. */
#include "kernel/acpi/acpi.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

struct acpi acpi;
bool acpi_ok;

#define RSDP_ALIGN 16
/* Larger tables are more likely a corrupt length than a real table. */
#define ACPI_TABLE_MAX (16 * MiB)

u8 acpi_checksum(const void *p, size_t len)
{
	const u8 *b = p;
	u8 sum = 0;

	while (len--)
		sum += *b++;
	return sum;
}

bool acpi_rsdp_valid(const void *p, size_t len, char *why, size_t whylen)
{
	const struct acpi_rsdp *r = p;

	if (len < ACPI_RSDP_V1_SIZE || memcmp(r->signature, "RSD PTR ", 8)) {
		snprintf(why, whylen, "no RSDP signature");
		return false;
	}
	if (acpi_checksum(r, ACPI_RSDP_V1_SIZE)) {
		snprintf(why, whylen, "RSDP checksum bad");
		return false;
	}
	if (r->revision >= 2) {
		if (len < sizeof(*r) || r->length < sizeof(*r) || r->length > len) {
			snprintf(why, whylen, "RSDP 2.0 length %u invalid",
				 len < sizeof(*r) ? 0 : r->length);
			return false;
		}
		if (acpi_checksum(r, r->length)) {
			snprintf(why, whylen, "RSDP extended checksum bad");
			return false;
		}
	}
	return true;
}

static u64 scan_range(phys_reader phys, u64 start, u64 end)
{
	char why[48];

	for (u64 addr = start; addr + ACPI_RSDP_V1_SIZE <= end; addr += RSDP_ALIGN) {
		const u8 *p = phys(addr, ACPI_RSDP_V1_SIZE);
		size_t len = ACPI_RSDP_V2_SIZE;

		if (!p || memcmp(p, "RSD PTR ", 8))
			continue;
		if (!phys(addr, len))
			len = ACPI_RSDP_V1_SIZE;
		if (acpi_rsdp_valid(phys(addr, len), len, why, sizeof(why)))
			return addr;
	}
	return 0;
}

u64 acpi_rsdp_scan(phys_reader phys)
{
	const u16 *seg = phys(BDA_EBDA_SEGMENT, sizeof(*seg));
	u64 found = 0;

	if (seg && *seg) {
		u64 ebda = (u64)*seg << 4;

		found = scan_range(phys, ebda, ebda + EBDA_SCAN_SIZE);
	}
	return found ? found : scan_range(phys, BIOS_ROM_BASE, BIOS_ROM_END);
}

/* A table is followed only when its whole length is readable and sums to 0. */
const struct acpi_header *acpi_table_at(struct acpi *a, u64 addr)
{
	const struct acpi_header *h = a->phys(addr, sizeof(*h));

	if (!h) {
		note(a->problems, "table at 0x%llx unreadable", addr);
		return NULL;
	}
	if (h->length < sizeof(*h) || h->length > ACPI_TABLE_MAX || !a->phys(addr, h->length)) {
		note(a->problems, "%.4s at 0x%llx: length %u invalid", h->signature, addr,
		     h->length);
		return NULL;
	}
	if (acpi_checksum(h, h->length)) {
		note(a->problems, "%.4s at 0x%llx: checksum bad", h->signature, addr);
		return NULL;
	}
	return h;
}

static bool load_root(struct acpi *a, u64 addr, bool xsdt)
{
	const struct acpi_header *root = acpi_table_at(a, addr);
	u32 entry = xsdt ? 8 : 4;
	const u8 *entries;
	u32 count;

	if (!root || memcmp(root->signature, xsdt ? "XSDT" : "RSDT", 4)) {
		if (root)
			note(a->problems, "root table signature %.4s", root->signature);
		return false;
	}
	entries = (const u8 *)(root + 1);
	count = (root->length - sizeof(*root)) / entry;
	if (count > ACPI_MAX_TABLES) {
		note(a->problems, "root table lists %u tables; using %u", count, ACPI_MAX_TABLES);
		count = ACPI_MAX_TABLES;
	}
	for (u32 i = 0; i < count; i++) {
		u64 t = 0;

		memcpy(&t, entries + i * entry, entry);
		a->tables[i] = t;
	}
	a->table_count = count;
	a->xsdt = xsdt;
	a->root_address = addr;
	return true;
}

bool acpi_init(struct acpi *a, const struct boot_info *bi, phys_reader phys)
{
	char why[48];

	memset(a, 0, sizeof(*a));
	a->phys = phys;
	if (bi->rsdp_size) {
		if (acpi_rsdp_valid(bi->rsdp, bi->rsdp_size, why, sizeof(why))) {
			memcpy(&a->rsdp, bi->rsdp, MIN(bi->rsdp_size, (u32)sizeof(a->rsdp)));
			a->rsdp_source = bi->rsdp_source;
		} else {
			note(a->problems, "loader's RSDP: %s", why);
		}
	}
	if (!a->rsdp_source) {
		a->rsdp_address = acpi_rsdp_scan(phys);
		if (!a->rsdp_address) {
			note(a->problems, "no RSDP found");
			return false;
		}
		memcpy(&a->rsdp, phys(a->rsdp_address, ACPI_RSDP_V1_SIZE), ACPI_RSDP_V1_SIZE);
		if (phys(a->rsdp_address, sizeof(a->rsdp)))
			memcpy(&a->rsdp, phys(a->rsdp_address, sizeof(a->rsdp)), sizeof(a->rsdp));
		a->rsdp_source = "BIOS area scan";
	}
	/* Prefer the XSDT (ACPI 6.5 5.2.7), fall back to the RSDT. */
	if (a->rsdp.revision >= 2 && a->rsdp.xsdt_address &&
	    load_root(a, a->rsdp.xsdt_address, true))
		return true;
	return load_root(a, a->rsdp.rsdt_address, false);
}

const struct acpi_header *acpi_find(struct acpi *a, const char sig[4], u32 n)
{
	for (u32 i = 0; i < a->table_count; i++) {
		const struct acpi_header *h = a->phys(a->tables[i], sizeof(*h));

		if (!h || memcmp(h->signature, sig, 4))
			continue;
		h = acpi_table_at(a, a->tables[i]);
		if (h && n-- == 0)
			return h;
	}
	return NULL;
}

void acpi_walk_entries(const struct acpi_header *t, u32 first, const u8 *min_length, u32 count,
		       char *problems, size_t size, void (*visit)(void *ctx, const u8 *entry),
		       void *ctx)
{
	const u8 *base = (const u8 *)t;
	u32 len;

	for (u32 off = first; off < t->length; off += len) {
		const u8 *e = base + off;
		u32 left = t->length - off;
		u8 type;

		if (left < 2) {
			notes_add(problems, size, "entry at offset %u runs past the end at %u", off,
				  t->length);
			return;
		}
		type = e[0];
		len = e[1];
		if (len < 2) {
			notes_add(problems, size, "entry at offset %u has length %u", off, len);
			return;
		}
		if (len > left) {
			notes_add(problems, size,
				  "entry at offset %u (length %u) runs past the end at %u", off,
				  len, t->length);
			return;
		}
		if (type >= count || !min_length[type])
			continue;
		if (len < min_length[type]) {
			notes_add(problems, size,
				  "type %u entry at offset %u has length %u, needs %u", type, off,
				  len, min_length[type]);
			continue;
		}
		visit(ctx, e);
	}
}
