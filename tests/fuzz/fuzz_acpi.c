// SPDX-License-Identifier: MIT
/*
 * Fuzz target: ACPI discovery as the kernel does it at boot, on tables
 * the firmware wrote: the RSDP (the loader's copy or a BIOS-area scan),
 * the RSDT or XSDT, lookup by signature, the FADT and the \_S5 object in
 * its DSDT, then the MADT, SRAT and HPET parsers on what lookup returns.
 *
 * Input (tests/fuzz/make-seeds writes it from QEMU's tables):
 *	u8	flags (FLAG_* below)
 *	u8[36]	the RSDP
 *	then up to MAX_REGIONS pieces of physical memory, each a u64
 *	address, a u32 length and that many bytes (fewer if the input ends).
 * Below PHYS_BUFFER_SIZE lies the zeroed low memory of the unit tests,
 * where a scan finds the RSDP. The parsers read a short range and then
 * trust the same pointer for a longer one, as they may with the kernel's
 * identity map, so the harness keeps one address space too: a piece that
 * overlaps low memory or an earlier piece is dropped.
 *
 * Unless FLAG_RAW_CHECKSUMS, every checksum the harness can reach from
 * the RSDP is then set the way firmware sets it, so that mutations get
 * past the checksum tests into the parsers.
 *
 * Beyond not crashing: a table whose checksum fails is never followed.
 * acpi_init() succeeds only on a valid RSDP and a root table of the right
 * signature that sums to 0; every table acpi_find() returns has the
 * signature asked for and sums to 0 over a length that can be read; \_S5
 * comes only from a DSDT that sums to 0; the list holds at most
 * ACPI_MAX_TABLES tables.
 */
#include <stdlib.h>

#include "kernel/acpi/fadt.h"
#include "kernel/acpi/hpet.h"
#include "kernel/acpi/madt.h"
#include "kernel/acpi/srat.h"
#include "kernel/lib/unaligned.h"
#include "tests/fuzz/fuzz.h"
#include "tests/unit/phys_buffer.h"

/* The loader hands over a copy of the RSDP (Multiboot 2 tags 14 and 15). */
#define FLAG_LOADER_COPY BIT(0)
/* ...only its ACPI 1.0 part (tag 14). */
#define FLAG_V1_COPY BIT(1)
/* Without a copy: the RSDP is in the EBDA rather than the BIOS ROM area. */
#define FLAG_IN_EBDA BIT(2)
/* Leave the checksums as the input has them. */
#define FLAG_RAW_CHECKSUMS BIT(3)

#define RSDP_SIZE ACPI_RSDP_V2_SIZE
#define MAX_REGIONS 16
/* Where the scan finds the RSDP, and the EBDA segment pointing at it. */
#define ROM_RSDP_ADDR 0xf0000
#define EBDA_SEGMENT 0x9fc0
#define EBDA_RSDP_ADDR (EBDA_SEGMENT << 4)

struct region {
	u64 addr, len;
	u8 *bytes;
};

static struct region regions[MAX_REGIONS];
static u32 region_count;

/*
 * The reader runs thousands of times per input (the scan steps through
 * the BIOS area 16 bytes at a time): its compares are the harness's, not
 * the parser's, and tracing them for the fuzzer would cost most of the
 * time.
 */
#define HARNESS_ONLY __attribute__((no_sanitize("coverage")))

HARNESS_ONLY static void *region_at(u64 addr, u64 len)
{
	for (u32 i = 0; i < region_count; i++) {
		const struct region *r = &regions[i];

		if (addr >= r->addr && len <= r->len && addr - r->addr <= r->len - len)
			return r->bytes + (addr - r->addr);
	}
	return NULL;
}

HARNESS_ONLY static const void *phys_read(u64 addr, u64 len)
{
	const u8 *p = region_at(addr, len);

	return p ? p : phys_buffer_read(addr, len);
}

static bool overlaps(u64 addr, u64 len)
{
	if (addr < PHYS_BUFFER_SIZE)
		return true;
	for (u32 i = 0; i < region_count; i++)
		if (addr < regions[i].addr + regions[i].len && regions[i].addr < addr + len)
			return true;
	return false;
}

static void load_regions(const u8 *p, size_t left)
{
	region_count = 0;
	while (left >= 12 && region_count < MAX_REGIONS) {
		u64 addr = get_le64(p);
		u64 len = MIN((u64)get_le32(p + 8), (u64)left - 12);

		p += 12;
		left -= 12;
		if (len && addr + len > addr && !overlaps(addr, len)) {
			struct region *r = &regions[region_count++];

			/* Exactly len bytes: ASan sees a read past the piece. */
			r->addr = addr;
			r->len = len;
			r->bytes = malloc(len);
			memcpy(r->bytes, p, len);
		}
		p += len;
		left -= len;
	}
}

/* The BIOS data area's pointer to the EBDA, a real-mode segment. */
static void set_ebda_segment(u16 segment)
{
	memcpy(phys_buffer_at(BDA_EBDA_SEGMENT), &segment, sizeof(segment));
}

/* What firmware does last: make the table at addr sum to 0. */
static const struct acpi_header *fix_table(u64 addr)
{
	const struct acpi_header *peek = region_at(addr, sizeof(*peek));
	struct acpi_header *h;

	if (!peek || peek->length < sizeof(*peek) || !(h = region_at(addr, peek->length)))
		return NULL;
	h->checksum = 0;
	h->checksum = -fuzz_sum(h, h->length);
	return h;
}

static void fix_root(u64 addr, u32 entry_size)
{
	const struct acpi_header *root = region_at(addr, sizeof(*root));
	u32 count;

	if (!root || root->length < sizeof(*root) || !region_at(addr, root->length))
		return;
	count = MIN((root->length - (u32)sizeof(*root)) / entry_size, (u32)ACPI_MAX_TABLES);
	for (u32 i = 0; i < count; i++) {
		const u8 *e = (const u8 *)(root + 1) + i * entry_size;
		const struct acpi_header *t =
			fix_table(entry_size == 8 ? get_le64(e) : get_le32(e));

		if (t && !memcmp(t->signature, "FACP", 4)) {
			if (t->length >= ACPI_FADT_X_DSDT + 8)
				fix_table(get_le64((const u8 *)t + ACPI_FADT_X_DSDT));
			if (t->length >= ACPI_FADT_DSDT + 4)
				fix_table(get_le32((const u8 *)t + ACPI_FADT_DSDT));
			/* The DSDT may lie inside the FADT: sum the FADT last. */
			fix_table(entry_size == 8 ? get_le64(e) : get_le32(e));
		}
	}
	fix_table(addr);
}

static void fix_checksums(u8 *rsdp)
{
	struct acpi_rsdp *r = (struct acpi_rsdp *)rsdp;

	fix_root(r->rsdt_address, 4);
	fix_root(r->xsdt_address, 8);
	r->checksum = 0;
	r->checksum = -fuzz_sum(r, ACPI_RSDP_V1_SIZE);
	r->extended_checksum = 0;
	r->extended_checksum = -fuzz_sum(r, RSDP_SIZE);
}

/* The table at addr if all of it can be read and it sums to 0. */
static const struct acpi_header *valid_at(u64 addr)
{
	const struct acpi_header *h = phys_read(addr, sizeof(*h));

	if (!h || h->length < sizeof(*h) || !phys_read(addr, h->length) || fuzz_sum(h, h->length))
		return NULL;
	return h;
}

static void check_found(struct acpi *a, const char *sig)
{
	static struct madt_info madt;
	static struct srat_info srat;
	struct hpet_info hpet;
	const struct acpi_header *t;

	for (u32 n = 0; n <= a->table_count && (t = acpi_find(a, sig, n)); n++) {
		fuzz_assert(!memcmp(t->signature, sig, 4), "asked for %.4s, got %.4s", sig,
			    t->signature);
		fuzz_assert(t->length >= sizeof(*t) && !fuzz_sum(t, t->length),
			    "%.4s #%u returned with a bad length or checksum", sig, n);
		if (!memcmp(sig, "APIC", 4))
			acpi_madt_parse(t, &madt);
		else if (!memcmp(sig, "SRAT", 4))
			acpi_srat_parse(t, &srat);
		else if (!memcmp(sig, "HPET", 4))
			acpi_hpet_parse(t, &hpet);
	}
}

static void check(struct acpi *a, bool ok)
{
	struct fadt_info f;

	fuzz_assert(a->table_count <= ACPI_MAX_TABLES, "%u tables", a->table_count);
	fuzz_assert_terminated(a->problems);
	if (ok) {
		const struct acpi_header *root = valid_at(a->root_address);

		fuzz_assert(!memcmp(a->rsdp.signature, "RSD PTR ", 8) &&
				    !fuzz_sum(&a->rsdp, ACPI_RSDP_V1_SIZE),
			    "RSDP used with a bad signature or checksum");
		fuzz_assert(root, "root table at 0x%llx used with a bad length or checksum",
			    a->root_address);
		fuzz_assert(!memcmp(root->signature, a->xsdt ? "XSDT" : "RSDT", 4),
			    "root table signature %.4s", root->signature);
	} else {
		fuzz_assert(!a->table_count, "no root table, yet %u tables", a->table_count);
	}
	for (u32 i = 0; i < a->table_count; i++) {
		const struct acpi_header *h = phys_read(a->tables[i], sizeof(*h));

		if (h)
			check_found(a, h->signature);
	}
	if (acpi_fadt_parse(a, &f) && f.has_s5) {
		const struct acpi_header *dsdt = valid_at(f.dsdt);

		fuzz_assert(dsdt && !memcmp(dsdt->signature, "DSDT", 4),
			    "\\_S5 read from an invalid DSDT at 0x%llx", f.dsdt);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct acpi a;
	struct boot_info *bi = calloc(1, sizeof(*bi));
	u8 rsdp[RSDP_SIZE];
	u8 flags;
	u64 rsdp_addr = 0;

	if (size < 1 + RSDP_SIZE) {
		free(bi);
		return 0;
	}
	flags = data[0];
	memcpy(rsdp, data + 1, RSDP_SIZE);
	load_regions(data + 1 + RSDP_SIZE, size - 1 - RSDP_SIZE);
	if (!(flags & FLAG_RAW_CHECKSUMS))
		fix_checksums(rsdp);

	if (flags & FLAG_LOADER_COPY) {
		bi->rsdp_size = flags & FLAG_V1_COPY ? ACPI_RSDP_V1_SIZE : RSDP_SIZE;
		memcpy(bi->rsdp, rsdp, bi->rsdp_size);
		bi->rsdp_source = "fuzz";
	} else if (flags & FLAG_IN_EBDA) {
		rsdp_addr = EBDA_RSDP_ADDR;
		set_ebda_segment(EBDA_SEGMENT);
	} else {
		rsdp_addr = ROM_RSDP_ADDR;
	}
	if (rsdp_addr)
		memcpy(phys_buffer_at(rsdp_addr), rsdp, RSDP_SIZE);

	check(&a, acpi_init(&a, bi, phys_read));

	/* Low memory back to zeros for the next input. */
	if (rsdp_addr)
		memset(phys_buffer_at(rsdp_addr), 0, RSDP_SIZE);
	set_ebda_segment(0);
	for (u32 i = 0; i < region_count; i++)
		free(regions[i].bytes);
	region_count = 0;
	free(bi);
	return 0;
}
