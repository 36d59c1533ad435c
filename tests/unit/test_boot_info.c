// SPDX-License-Identifier: MIT
/*
 * Multiboot 1 and 2 boot information -> struct boot_info, on structures
 * built in the fake physical memory. The loader is the first party the
 * kernel trusts: its command line picks the experiment, its memory map
 * says where the AP trampoline may go and how much RAM the VM has, its
 * RSDP roots every ACPI table. Covered: each field on both protocols
 * (Multiboot 1 drops the kernel's path from the command line, Multiboot 2
 * does not), region merging, the basic-meminfo fallback, the tag 15 RSDP
 * winning over tag 14, the RAM totals on realistic maps; and each way the
 * input can be malformed, which must give the documented result, a
 * message in bi->problems, and no read outside what the reader allowed
 * (ASan watches).
 */
#include <string.h>

#include "boot/boot_info.h"
#include "boot/multiboot.h"
#include "kernel/acpi/acpi.h"
#include "kernel/lib/printf.h"
#include "kernel/test/test.h"
#include "tests/unit/phys_buffer.h"

/* Where the tests build things in the fake physical memory. */
#define INFO_ADDR 0x10000
#define STRING_ADDR 0x20000
#define MMAP_ADDR 0x30000
#define PHYS_END ((u64)PHYS_BUFFER_SIZE)

/* struct boot_info is large: one for every test, reset by each parse. */
static struct boot_info bi;

/* The map of SeaBIOS (QEMU pc, -m 256): RAM ends 128 KiB short of 256 MiB. */
static const struct mem_region seabios_256m[] = {
	{ 0x0, 0x9fc00, MEM_RAM },
	{ 0x9fc00, 0x400, MEM_RESERVED },
	{ 0xf0000, 0x10000, MEM_RESERVED },
	{ 0x100000, 0xfee0000, MEM_RAM },
	{ 0xffe0000, 0x20000, MEM_RESERVED },
	{ 0xfffc0000, 0x40000, MEM_RESERVED },
};

static void reset(void)
{
	memset(phys_buffer, 0, PHYS_BUFFER_SIZE);
}

static void put_string(u64 addr, const char *s)
{
	memcpy(phys_buffer_at(addr), s, strlen(s) + 1);
}

/* bi->mem must be exactly expected[0..n). */
static void check_map(const struct mem_region *expected, u32 n, const char *what)
{
	u32 i;

	for (i = 0; i < n && i < bi.mem_count; i++)
		if (bi.mem[i].base != expected[i].base || bi.mem[i].length != expected[i].length ||
		    bi.mem[i].type != expected[i].type)
			break;
	if (i < n || bi.mem_count != n) {
		report_info("%s: %u regions, expected %u", what, bi.mem_count, n);
		if (i < bi.mem_count)
			report_info("  region %u is 0x%llx+0x%llx type %u", i, bi.mem[i].base,
				    bi.mem[i].length, bi.mem[i].type);
		if (i < n)
			report_info("  expected   0x%llx+0x%llx type %u", expected[i].base,
				    expected[i].length, expected[i].type);
	}
	report(i == n && bi.mem_count == n, "%s", what);
}

/* Multiboot 1: the info structure at INFO_ADDR, its map at MMAP_ADDR. */
static struct mb1_info *mb1_start(void)
{
	reset();
	return phys_buffer_at(INFO_ADDR);
}

static void mb1_cmdline(struct mb1_info *info, const char *s)
{
	put_string(STRING_ADDR, s);
	info->flags |= MB1_INFO_CMDLINE;
	info->cmdline = STRING_ADDR;
}

static void mb1_mmap_add(struct mb1_info *info, u64 base, u64 length, u32 type)
{
	struct mb1_mmap_entry e = { .size = 20, .base = base, .length = length, .type = type };

	info->flags |= MB1_INFO_MMAP;
	info->mmap_addr = MMAP_ADDR;
	memcpy(phys_buffer_at(MMAP_ADDR + info->mmap_length), &e, sizeof(e));
	info->mmap_length += sizeof(e);
}

static bool mb1_parse(void)
{
	return boot_info_from_mb1(INFO_ADDR, phys_buffer_read, &bi);
}

/* Multiboot 2: tags appended from INFO_ADDR, 8-byte aligned. */
struct mb2 {
	u32 len;
};

static void mb2_start(struct mb2 *m)
{
	reset();
	m->len = sizeof(struct mb2_info_header);
}

static struct mb2_tag *mb2_tag(struct mb2 *m, u32 type, const void *body, u32 body_len)
{
	struct mb2_tag *t = phys_buffer_at(INFO_ADDR + m->len);

	t->type = type;
	t->size = sizeof(*t) + body_len;
	if (body_len)
		memcpy(t + 1, body, body_len);
	m->len = ALIGN_UP(m->len + t->size, 8);
	return t;
}

static void mb2_string(struct mb2 *m, u32 type, const char *s)
{
	mb2_tag(m, type, s, strlen(s) + 1);
}

/* A mmap tag of n regions, each entry_size bytes (24 or larger). */
static void mb2_mmap(struct mb2 *m, u32 entry_size, const struct mem_region *r, u32 n)
{
	static u8 body[8 + 300 * 32];
	u32 len = 8;

	memcpy(body, &entry_size, 4);
	memset(body + 4, 0, sizeof(body) - 4);
	for (u32 i = 0; i < n; i++, len += entry_size) {
		struct mb2_mmap_entry e = { r[i].base, r[i].length, r[i].type, 0 };

		memcpy(body + len, &e, sizeof(e));
	}
	mb2_tag(m, MB2_TAG_MMAP, body, len);
}

static void mb2_meminfo(struct mb2 *m, u32 lower_kib, u32 upper_kib)
{
	u32 body[2] = { lower_kib, upper_kib };

	mb2_tag(m, MB2_TAG_BASIC_MEMINFO, body, sizeof(body));
}

/* An RSDP image whose first byte tells the copies apart. */
static void mb2_rsdp(struct mb2 *m, u32 type, u32 len, u8 mark)
{
	u8 rsdp[64] = { mark };

	mb2_tag(m, type, rsdp, len);
}

/* Close with the end tag, write total_size and parse. */
static bool mb2_parse(struct mb2 *m)
{
	struct mb2_info_header *hdr = phys_buffer_at(INFO_ADDR);

	mb2_tag(m, MB2_TAG_END, NULL, 0);
	hdr->total_size = m->len;
	return boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi);
}

/* 257 alternating RAM and reserved regions: none merge. */
static struct mem_region many[BOOT_MEM_MAX + 1];

static void fill_many(void)
{
	for (u32 i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = (struct mem_region){ i * 0x1000ULL, 0x1000,
					       i % 2 ? MEM_RESERVED : MEM_RAM };
}

DEFINE_TEST(unit_boot_info_mb1, "Multiboot 1: command line, loader, map", 0)
{
	static const struct mem_region meminfo[] = {
		{ 0x0, 639 * KiB, MEM_RAM },
		{ 0x100000, 261120 * KiB, MEM_RAM },
	};
	static const struct mem_region merged[] = {
		{ 0x0, 0x9fc00, MEM_RAM },	{ 0x100000, 0x300000, MEM_RAM },
		{ 0x400000, 0x1000, MEM_ACPI }, { 0x401000, 0x1000, MEM_RAM },
		{ 0x500000, 0x1000, MEM_RAM },
	};
	struct mb1_info *info;

	info = mb1_start();
	mb1_cmdline(info, "/boot/hvprobe.elf test=boot hz=100");
	put_string(STRING_ADDR + 0x100, "GNU GRUB 0.97");
	info->flags |= MB1_INFO_LOADER_NAME;
	info->boot_loader_name = STRING_ADDR + 0x100;
	for (u32 i = 0; i < ARRAY_SIZE(seabios_256m); i++)
		mb1_mmap_add(info, seabios_256m[i].base, seabios_256m[i].length,
			     seabios_256m[i].type);
	report(mb1_parse(), "a complete MBI parses");
	report_str_eq(bi.protocol, "multiboot1", "protocol is multiboot1");
	report_str_eq(bi.cmdline, "test=boot hz=100",
		      "the kernel's path is dropped from the command line");
	report_str_eq(bi.loader, "GNU GRUB 0.97", "loader name");
	check_map(seabios_256m, ARRAY_SIZE(seabios_256m), "memory map entries, in order");
	report_eq(bi.rsdp_size, 0, "no RSDP copy");
	report_str_eq(bi.problems, "", "no problems");

	info = mb1_start();
	mb1_cmdline(info, "/boot/hvprobe.elf");
	report(mb1_parse(), "a command line of only the kernel's path parses");
	report_str_eq(bi.cmdline, "", "and leaves the command line empty");

	info = mb1_start();
	info->flags = MB1_INFO_MEM;
	info->mem_lower = 639;
	info->mem_upper = 261120;
	report(mb1_parse(), "an MBI with only mem_lower and mem_upper parses");
	check_map(meminfo, ARRAY_SIZE(meminfo), "the basic meminfo gives two RAM regions");
	report_str_eq(bi.cmdline, "", "no command line flag: empty command line");
	report_str_eq(bi.loader, "", "no loader name flag: empty loader name");

	info = mb1_start();
	info->flags = MB1_INFO_MEM;
	info->mem_lower = 1;
	mb1_mmap_add(info, 0x0, 0x9fc00, MEM_RAM);
	mb1_mmap_add(info, 0x100000, 0x100000, MEM_RAM);
	mb1_mmap_add(info, 0x200000, 0x200000, MEM_RAM);
	mb1_mmap_add(info, 0x400000, 0x1000, MEM_ACPI);
	mb1_mmap_add(info, 0x401000, 0x0, MEM_RESERVED);
	mb1_mmap_add(info, 0x401000, 0x1000, MEM_RAM);
	mb1_mmap_add(info, 0x500000, 0x1000, MEM_RAM);
	mb1_parse();
	check_map(merged, ARRAY_SIZE(merged),
		  "adjacent RAM merges; a gap, a type change or an empty entry does not");
}

/* Every tag hvprobe reads, an unknown one among them, in one MBI. */
static void mb2_complete_info(void)
{
	u8 unknown[16] = { 0 };
	struct mb2 m;

	mb2_start(&m);
	mb2_string(&m, MB2_TAG_CMDLINE, "/boot/hvprobe.elf test=boot");
	mb2_string(&m, MB2_TAG_LOADER_NAME, "GRUB 2.12");
	mb2_tag(&m, 21, unknown, 12);
	mb2_meminfo(&m, 1, 2);
	mb2_mmap(&m, 24, seabios_256m, ARRAY_SIZE(seabios_256m));
	report(mb2_parse(&m), "a complete MBI parses");
	report_str_eq(bi.protocol, "multiboot2", "protocol is multiboot2");
	report_str_eq(bi.cmdline, "/boot/hvprobe.elf test=boot", "the command line is kept whole");
	report_str_eq(bi.loader, "GRUB 2.12", "loader name");
	check_map(seabios_256m, ARRAY_SIZE(seabios_256m),
		  "24-byte map entries; the map wins over an earlier basic meminfo");
	report_str_eq(bi.problems, "", "no problems (an unknown tag is skipped)");
}

/* Map entries of another size, and the basic meminfo when there is no map. */
static void mb2_map_forms(void)
{
	static const struct mem_region meminfo[] = {
		{ 0x0, 639 * KiB, MEM_RAM },
		{ 0x100000, 130048 * KiB, MEM_RAM },
	};
	struct mb2 m;

	mb2_start(&m);
	mb2_mmap(&m, 32, seabios_256m, ARRAY_SIZE(seabios_256m));
	mb2_parse(&m);
	check_map(seabios_256m, ARRAY_SIZE(seabios_256m), "32-byte map entries step by 32");

	mb2_start(&m);
	mb2_meminfo(&m, 639, 130048);
	mb2_parse(&m);
	check_map(meminfo, ARRAY_SIZE(meminfo), "without a map, the basic meminfo is used");
}

/* Which RSDP tag's copy is kept, in either order, and how much of it. */
static void mb2_rsdp_copies(void)
{
	struct mb2 m;

	mb2_start(&m);
	mb2_rsdp(&m, MB2_TAG_ACPI_OLD, ACPI_RSDP_V1_SIZE, 14);
	mb2_parse(&m);
	report(bi.rsdp_size == ACPI_RSDP_V1_SIZE && bi.rsdp[0] == 14,
	       "tag 14 alone: its 20 bytes are copied");
	report_str_eq(bi.rsdp_source, "multiboot2 tag 14", "and named as the source");

	mb2_start(&m);
	mb2_rsdp(&m, MB2_TAG_ACPI_OLD, ACPI_RSDP_V1_SIZE, 14);
	mb2_rsdp(&m, MB2_TAG_ACPI_NEW, ACPI_RSDP_V2_SIZE, 15);
	mb2_parse(&m);
	report(bi.rsdp_size == ACPI_RSDP_V2_SIZE && bi.rsdp[0] == 15,
	       "tag 14 then 15: the 36-byte copy from tag 15");
	report_str_eq(bi.rsdp_source, "multiboot2 tag 15", "and named as the source");

	mb2_start(&m);
	mb2_rsdp(&m, MB2_TAG_ACPI_NEW, ACPI_RSDP_V2_SIZE, 15);
	mb2_rsdp(&m, MB2_TAG_ACPI_OLD, ACPI_RSDP_V1_SIZE, 14);
	mb2_parse(&m);
	report(bi.rsdp_size == ACPI_RSDP_V2_SIZE && bi.rsdp[0] == 15,
	       "tag 15 then 14: tag 15 still wins");
	report_str_eq(bi.rsdp_source, "multiboot2 tag 15", "and named as the source");

	mb2_start(&m);
	mb2_rsdp(&m, MB2_TAG_ACPI_NEW, ACPI_RSDP_V2_SIZE + 8, 15);
	mb2_parse(&m);
	report_eq(bi.rsdp_size, ACPI_RSDP_V2_SIZE, "a longer RSDP tag is copied up to 36 bytes");
}

DEFINE_TEST(unit_boot_info_mb2, "Multiboot 2: tags, map, RSDP copies", 0)
{
	mb2_complete_info();
	mb2_map_forms();
	mb2_rsdp_copies();
}

DEFINE_TEST(unit_boot_info_ram, "RAM total and RAM extent of realistic maps", 0)
{
	/* QEMU pc -m 8G: 3 GiB below the PCI hole, 5 GiB above 4 GiB. */
	static const struct mem_region pc_8g[] = {
		{ 0x0, 0x9fc00, MEM_RAM },
		{ 0x9fc00, 0x400, MEM_RESERVED },
		{ 0xf0000, 0x10000, MEM_RESERVED },
		{ 0x100000, 0xbfee0000, MEM_RAM },
		{ 0xbffe0000, 0x20000, MEM_RESERVED },
		{ 0xfeffc000, 0x4000, MEM_RESERVED },
		{ 0xfffc0000, 0x40000, MEM_RESERVED },
		{ 0x100000000, 0x140000000, MEM_RAM },
	};
	/* UEFI-like: ACPI and NVS count, a reserved hole inside RAM does too. */
	static const struct mem_region uefi[] = {
		{ 0x0, 0xa0000, MEM_RAM },
		{ 0x100000, 0x700000, MEM_RAM },
		{ 0x800000, 0x8000, MEM_NVS },
		{ 0x808000, 0x3000, MEM_RAM },
		{ 0x80b000, 0x1000, MEM_NVS },
		{ 0x80c000, 0x1000000, MEM_RAM },
		{ 0x180c000, 0x100000, MEM_RESERVED },
		{ 0x190c000, 0x64f4000, MEM_RAM },
		{ 0x7e00000, 0x100000, MEM_ACPI },
		{ 0x7f00000, 0x100000, MEM_NVS },
		{ 0xffc00000, 0x400000, MEM_RESERVED },
	};
	/* One region straddles 4 GiB: [3 GiB, 5 GiB). */
	static const struct mem_region straddle[] = {
		{ 0x0, 0x80000000, MEM_RAM },
		{ 0xc0000000, 0x80000000, MEM_RAM },
	};

	memset(&bi, 0, sizeof(bi));
	report_eq(boot_info_ram_kib(&bi), 0, "an empty map has no RAM");
	report_eq(boot_info_ram_extent_kib(&bi), 0, "and no extent");

	memcpy(bi.mem, seabios_256m, sizeof(seabios_256m));
	bi.mem_count = ARRAY_SIZE(seabios_256m);
	report_eq(boot_info_ram_kib(&bi), 261631, "SeaBIOS 256 MiB: 261631 KiB available");
	report_eq(boot_info_ram_extent_kib(&bi), 262016, "SeaBIOS 256 MiB: extent 262016 KiB");

	memcpy(bi.mem, pc_8g, sizeof(pc_8g));
	bi.mem_count = ARRAY_SIZE(pc_8g);
	report_eq(boot_info_ram_kib(&bi), 8388095, "8 GiB with RAM above 4 GiB: 8388095 KiB");
	report_eq(boot_info_ram_extent_kib(&bi), 8388480,
		  "8 GiB: extent is 3 GiB - 128 KiB below 4 GiB plus 5 GiB above");

	memcpy(bi.mem, uefi, sizeof(uefi));
	bi.mem_count = ARRAY_SIZE(uefi);
	/* RAM and ACPI: 640 + 7168 + 12 + 16384 + 103376 + 1024 KiB */
	report_eq(boot_info_ram_kib(&bi), 128604, "UEFI 128 MiB: RAM and ACPI, not NVS");
	report_eq(boot_info_ram_extent_kib(&bi), 131072, "UEFI 128 MiB: extent 128 MiB");

	memcpy(bi.mem, straddle, sizeof(straddle));
	bi.mem_count = ARRAY_SIZE(straddle);
	report_eq(boot_info_ram_kib(&bi), 4 * 1024 * 1024, "a region across 4 GiB: 4 GiB of RAM");
	report_eq(boot_info_ram_extent_kib(&bi), 5 * 1024 * 1024,
		  "extent: [0, 4 GiB) plus its 1 GiB above");
}

/* The one region the malformed maps keep: the first 639 KiB of conventional memory. */
static const struct mem_region low_ram[] = { { 0x0, 0x9fc00, MEM_RAM } };

/* An MBI address outside memory, or one running past its end. */
static void mb1_unreadable_info(void)
{
	reset();
	report(!boot_info_from_mb1(PHYS_END, phys_buffer_read, &bi),
	       "an MBI outside memory: nothing usable");
	report_str_eq(bi.problems, "multiboot1 info at 0x200000 unreadable",
		      "problem names the address");
	report(!boot_info_from_mb1(PHYS_END - 8, phys_buffer_read, &bi),
	       "an MBI running past the end of memory: nothing usable");
}

/* Strings unreadable, unterminated, too long, or ending at memory's last byte. */
static void mb1_bad_strings(void)
{
	struct mb1_info *info;

	info = mb1_start();
	info->flags = MB1_INFO_CMDLINE | MB1_INFO_LOADER_NAME;
	info->cmdline = PHYS_END;
	info->boot_loader_name = PHYS_END + 0x1000;
	report(mb1_parse(), "unreadable strings: the MBI is still usable");
	report_str_eq(
		bi.problems,
		"command line unterminated or unreadable; loader name unterminated or unreadable",
		"both strings reported");

	info = mb1_start();
	info->flags = MB1_INFO_CMDLINE;
	info->cmdline = PHYS_END - 8192;
	memset(phys_buffer_at(PHYS_END - 8192), 'a', 8192);
	mb1_parse();
	report_str_eq(bi.problems, "command line unterminated or unreadable",
		      "a command line running to the end of memory unterminated");
	report_str_eq(bi.cmdline, "", "is not copied");

	info = mb1_start();
	info->flags = MB1_INFO_LOADER_NAME;
	info->boot_loader_name = STRING_ADDR;
	memset(phys_buffer_at(STRING_ADDR), 'g', BOOT_LOADER_MAX);
	mb1_parse();
	report_str_eq(bi.problems, "loader name unterminated or unreadable",
		      "a loader name too long for bi->loader");

	info = mb1_start();
	info->flags = MB1_INFO_LOADER_NAME;
	info->boot_loader_name = PHYS_END - 5;
	put_string(PHYS_END - 5, "QEMU");
	mb1_parse();
	/*
	 * Regression: the scan window used to shrink by halves, so a string
	 * whose NUL is the last readable byte was called unterminated.
	 */
	report_str_eq(bi.loader, "QEMU", "a string ending at the last byte of memory is read");
	report_str_eq(bi.problems, "", "and is not a problem");
}

/* Maps past memory, entries too small, past mmap_length or wrapping the step. */
static void mb1_bad_map(void)
{
	struct mb1_info *info;

	info = mb1_start();
	info->flags = MB1_INFO_MMAP;
	info->mmap_addr = PHYS_END - 16;
	info->mmap_length = 24;
	mb1_parse();
	report_str_eq(bi.problems, "memory map unreadable", "a map running past memory");
	report_eq(bi.mem_count, 0, "gives no regions");

	info = mb1_start();
	mb1_mmap_add(info, 0x0, 0x9fc00, MEM_RAM);
	((struct mb1_mmap_entry *)phys_buffer_at(MMAP_ADDR))->size = 16;
	mb1_parse();
	report_str_eq(bi.problems, "memory map entry at +0 malformed",
		      "an entry with size 16 < 20");
	report_eq(bi.mem_count, 0, "gives no regions");

	info = mb1_start();
	mb1_mmap_add(info, 0x0, 0x9fc00, MEM_RAM);
	mb1_mmap_add(info, 0x100000, 0x100000, MEM_RAM);
	info->mmap_length -= 4;
	mb1_parse();
	report_str_eq(bi.problems, "memory map entry at +24 malformed",
		      "an entry running past mmap_length");
	check_map(low_ram, ARRAY_SIZE(low_ram), "the entries before it are kept");

	/*
	 * Regression: the step e->size + 4 was computed in 32 bits, so size
	 * 0xfffffffd wrapped to a step of 1 and the entry was read from past
	 * an 8-byte map (0xfffffffc: a step of 0, an endless loop).
	 */
	info = mb1_start();
	mb1_mmap_add(info, 0x1000, 0x1000, MEM_RAM);
	((struct mb1_mmap_entry *)phys_buffer_at(MMAP_ADDR))->size = 0xfffffffd;
	info->mmap_length = 8;
	mb1_parse();
	report_eq(bi.mem_count, 0, "an entry size that would wrap the step gives no region");
	report_str_eq(bi.problems, "memory map entry at +0 malformed", "and is reported at +0");
}

/* More regions than BOOT_MEM_MAX: the first kept, the rest reported. */
static void mb1_too_many_regions(void)
{
	struct mb1_info *info;

	info = mb1_start();
	fill_many();
	for (u32 i = 0; i < ARRAY_SIZE(many); i++)
		mb1_mmap_add(info, many[i].base, many[i].length, many[i].type);
	mb1_parse();
	report_eq(bi.mem_count, BOOT_MEM_MAX, "257 regions: the first BOOT_MEM_MAX are kept");
	check_map(many, BOOT_MEM_MAX, "in order");
	report_str_eq(bi.problems, "memory map has more than 256 regions", "and the rest reported");
}

DEFINE_TEST(unit_boot_info_mb1_malformed, "Multiboot 1: bad pointers and lengths", 0)
{
	mb1_unreadable_info();
	mb1_bad_strings();
	mb1_bad_map();
	mb1_too_many_regions();
}

/* An MBI outside memory, or a total_size too small, too large or past memory. */
static void mb2_bad_total_size(void)
{
	struct mb2_info_header *hdr = phys_buffer_at(INFO_ADDR);
	struct mb2 m;

	reset();
	report(!boot_info_from_mb2(PHYS_END, phys_buffer_read, &bi),
	       "an MBI outside memory: nothing usable");
	report_str_eq(bi.problems, "multiboot2 info at 0x200000 unreadable",
		      "problem names the address");

	mb2_start(&m);
	hdr->total_size = 4;
	report(!boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi),
	       "total_size 4, smaller than its header: nothing usable");
	report_str_eq(bi.problems, "multiboot2 info size 4 invalid", "problem names the size");

	mb2_start(&m);
	hdr->total_size = MiB + 8;
	report(!boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi),
	       "total_size past the 1 MiB sanity limit: nothing usable");
	report_str_eq(bi.problems, "multiboot2 info size 1048584 invalid",
		      "problem names the size");

	reset();
	*(struct mb2_info_header *)phys_buffer_at(PHYS_END - 64) =
		(struct mb2_info_header){ .total_size = 128 };
	report(!boot_info_from_mb2(PHYS_END - 64, phys_buffer_read, &bi),
	       "total_size running past the end of memory: nothing usable");
	report_str_eq(bi.problems, "multiboot2 info size 128 invalid", "problem names the size");
}

/* A tag whose size runs past total_size, is under its header, or is 0. */
static void mb2_bad_tag_size(void)
{
	struct mb2_tag *t;
	struct mb2 m;

	mb2_start(&m);
	mb2_mmap(&m, 24, low_ram, 1);
	t = mb2_tag(&m, MB2_TAG_CMDLINE, "x", 2);
	mb2_parse(&m);
	t->size = 4096;
	report(boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi),
	       "a tag whose size runs past total_size: the MBI is still usable");
	report_str_eq(bi.problems, "tag 1 at +48: size 4096 runs past the end",
		      "the tag is reported");
	check_map(low_ram, ARRAY_SIZE(low_ram), "tags before it are kept");
	report_str_eq(bi.cmdline, "", "the bad tag is not read");

	t->size = 4;
	boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi);
	report_str_eq(bi.problems, "tag 1 at +48: size 4 runs past the end",
		      "a tag smaller than its header is reported");
	t->size = 0;
	boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi);
	report_str_eq(bi.problems, "tag 1 at +48: size 0 runs past the end",
		      "a tag of size 0 is reported, not looped on");
}

/* String tags unterminated or too long for bi. */
static void mb2_bad_strings(void)
{
	char long_line[BOOT_CMDLINE_MAX + 1];
	char abc[3] = { 'a', 'b', 'c' };
	struct mb2 m;

	mb2_start(&m);
	mb2_tag(&m, MB2_TAG_CMDLINE, abc, sizeof(abc));
	mb2_tag(&m, MB2_TAG_LOADER_NAME, abc, sizeof(abc));
	mb2_parse(&m);
	report_str_eq(bi.problems,
		      "command line tag unterminated or too long; loader name tag unterminated",
		      "unterminated strings are reported");
	report(!bi.cmdline[0] && !bi.loader[0], "and not copied");

	memset(long_line, 'a', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	mb2_start(&m);
	mb2_string(&m, MB2_TAG_CMDLINE, long_line);
	mb2_parse(&m);
	report_str_eq(bi.problems, "command line tag unterminated or too long",
		      "a 1024-character command line is reported");
}

/* mmap tags with small entries, truncated, or more regions than BOOT_MEM_MAX. */
static void mb2_bad_map(void)
{
	struct mb2 m;

	mb2_start(&m);
	mb2_meminfo(&m, 639, 1024);
	mb2_mmap(&m, 16, low_ram, 1);
	mb2_parse(&m);
	report_str_eq(bi.problems, "mmap tag: entry size 16 too small",
		      "entry_size 16 is reported");
	report_eq(bi.mem_count, 0, "and gives no regions, not the basic meminfo either");

	mb2_start(&m);
	mb2_tag(&m, MB2_TAG_MMAP, (u32[]){ 24 }, 4);
	mb2_parse(&m);
	report_str_eq(bi.problems, "mmap tag of 12 bytes is truncated",
		      "a 12-byte mmap tag is reported");

	mb2_start(&m);
	fill_many();
	mb2_mmap(&m, 24, many, ARRAY_SIZE(many));
	mb2_parse(&m);
	report_eq(bi.mem_count, BOOT_MEM_MAX, "257 regions: the first BOOT_MEM_MAX are kept");
	check_map(many, BOOT_MEM_MAX, "in order");
	report_str_eq(bi.problems, "memory map has more than 256 regions", "and the rest reported");
}

DEFINE_TEST(unit_boot_info_mb2_malformed, "Multiboot 2: bad sizes and tags", 0)
{
	mb2_bad_total_size();
	mb2_bad_tag_size();
	mb2_bad_strings();
	mb2_bad_map();
}

DEFINE_TEST(unit_boot_info_overlap, "regions overlap or not, in any order", 0)
{
	/* qboot's map, as it hands it over: the high RAM region comes last. */
	static const struct mem_region qboot[] = {
		{ 0x0, 0x9fc00, MEM_RAM },
		{ 0x9fc00, 0x400, MEM_RESERVED },
		{ 0xd0000, 0x20000, MEM_NVS },
		{ 0xf0000, 0x10000, MEM_RESERVED },
		{ 0xb0000000, 0x10000000, MEM_RESERVED },
		{ 0x100000, 0xff00000, MEM_RAM },
	};
	static const struct mem_region overlapping[] = {
		{ 0x100000, 0x200000, MEM_RAM },
		{ 0x0, 0x9fc00, MEM_RAM },
		{ 0x280000, 0x1000, MEM_RESERVED },
	};
	u32 a = 9, b = 9;

	memset(&bi, 0, sizeof(bi));
	memcpy(bi.mem, qboot, sizeof(qboot));
	bi.mem_count = ARRAY_SIZE(qboot);
	report(boot_info_regions_disjoint(&bi, &a, &b), "qboot's unsorted map is disjoint");
	report(!boot_info_regions_in_order(&bi), "and says it is out of order");

	memcpy(bi.mem, seabios_256m, sizeof(seabios_256m));
	bi.mem_count = ARRAY_SIZE(seabios_256m);
	report(boot_info_regions_disjoint(&bi, &a, &b) && boot_info_regions_in_order(&bi),
	       "SeaBIOS's map is disjoint and in order");

	memcpy(bi.mem, overlapping, sizeof(overlapping));
	bi.mem_count = ARRAY_SIZE(overlapping);
	report(!boot_info_regions_disjoint(&bi, &a, &b), "an overlap out of order is found");
	report(a == 0 && b == 2, "with its pair (%u, %u)", a, b);
	bi.mem[2].base = 0x300000;
	report(boot_info_regions_disjoint(&bi, &a, &b), "a region that only touches is no overlap");
}
