// SPDX-License-Identifier: MIT
/*
 * Multiboot 1 and 2 boot information -> struct boot_info.
 *
 * The loader's structures are input we do not control: every pointer goes
 * through the phys_reader, every length is checked against what contains
 * it, and a defect skips the field and is noted in bi->problems rather than
 * being followed. Multiboot 1: spec 0.6.96 section 3.3; Multiboot 2: spec
 * 2.0 section 3.6.
 */
#include "boot/boot_info.h"
#include "boot/multiboot.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

#define MB2_TAG_ALIGN 8
/* An MBI larger than this is more likely garbage than a real loader's. */
#define MB2_INFO_MAX (1 * MiB)
#define STRING_SCAN_MAX 4096

static void init(struct boot_info *bi, const char *protocol)
{
	memset(bi, 0, sizeof(*bi));
	bi->protocol = protocol;
}

/* Copy a NUL-terminated string whose terminator must lie within max bytes. */
static bool copy_string(const char *src, size_t max, char *dst, size_t size)
{
	size_t n = strnlen(src, max);

	if (n == max)
		return false;
	return str_copy(dst, src, size);
}

static bool copy_string_at(u64 addr, phys_reader phys, char *dst, size_t size)
{
	const char *s = phys(addr, 1);
	u64 max = 1;

	if (!s)
		return false;
	/* Grow the window byte by byte: memory may end right after the NUL. */
	while (max < STRING_SCAN_MAX && s[max - 1] && phys(addr, max + 1))
		max++;
	return copy_string(s, max, dst, size);
}

static void add_region(struct boot_info *bi, u64 base, u64 length, u32 type)
{
	struct mem_region *last = bi->mem_count ? &bi->mem[bi->mem_count - 1] : NULL;

	if (!length)
		return;
	/* Past the top of the address space is garbage; and merges cannot wrap. */
	if (length > ~0ULL - base) {
		note(bi->problems, "memory region at 0x%llx runs past 2^64", base);
		return;
	}
	if (last && last->type == type && last->base + last->length == base) {
		last->length += length;
		return;
	}
	if (bi->mem_count == BOOT_MEM_MAX) {
		if (!bi->mem_overflow)
			note(bi->problems, "memory map has more than %d regions", BOOT_MEM_MAX);
		bi->mem_overflow = true;
		return;
	}
	bi->mem[bi->mem_count++] = (struct mem_region){ base, length, type };
}

static void set_cmdline(struct boot_info *bi, const char *s)
{
	if (!str_copy(bi->cmdline, s, sizeof(bi->cmdline)))
		note(bi->problems, "command line longer than %d bytes", BOOT_CMDLINE_MAX - 1);
}

bool boot_info_from_mb1(u64 mbi, phys_reader phys, struct boot_info *bi)
{
	const struct mb1_info *info = phys(mbi, sizeof(*info));
	char line[BOOT_CMDLINE_MAX];

	init(bi, "multiboot1");
	if (!info) {
		note(bi->problems, "multiboot1 info at 0x%llx unreadable", mbi);
		return false;
	}

	if (info->flags & MB1_INFO_CMDLINE) {
		if (copy_string_at(info->cmdline, phys, line, sizeof(line))) {
			/*
			 * Multiboot 1 loaders (QEMU's, GRUB's "multiboot")
			 * put the kernel's path first: drop that word.
			 */
			const char *args = strchr(line, ' ');

			set_cmdline(bi, args ? args + 1 : "");
		} else {
			note(bi->problems, "command line unterminated or unreadable");
		}
	}

	if (info->flags & MB1_INFO_LOADER_NAME &&
	    !copy_string_at(info->boot_loader_name, phys, bi->loader, sizeof(bi->loader)))
		note(bi->problems, "loader name unterminated or unreadable");

	if (info->flags & MB1_INFO_MMAP) {
		const u8 *p = phys(info->mmap_addr, info->mmap_length);
		u32 off = 0;

		if (!p)
			note(bi->problems, "memory map unreadable");
		while (p && off + sizeof(u32) <= info->mmap_length) {
			const struct mb1_mmap_entry *e = (const void *)(p + off);
			/* 64-bit: a size near 2^32 must not wrap the step. */
			u64 step = (u64)e->size + sizeof(u32);

			if (step < sizeof(*e) || off + step > info->mmap_length) {
				note(bi->problems, "memory map entry at +%u malformed", off);
				break;
			}
			add_region(bi, e->base, e->length, e->type);
			off += step;
		}
	} else if (info->flags & MB1_INFO_MEM) {
		add_region(bi, 0, (u64)info->mem_lower * KiB, MEM_RAM);
		add_region(bi, 1 * MiB, (u64)info->mem_upper * KiB, MEM_RAM);
	}
	return true;
}

static void mb2_mmap(struct boot_info *bi, const struct mb2_tag_mmap *t)
{
	const u8 *p = (const u8 *)(t + 1);
	u32 body;

	if (t->size < sizeof(*t)) {
		note(bi->problems, "mmap tag of %u bytes is truncated", t->size);
		return;
	}
	if (t->entry_size < sizeof(struct mb2_mmap_entry)) {
		note(bi->problems, "mmap tag: entry size %u too small", t->entry_size);
		return;
	}
	body = t->size - sizeof(*t);
	for (u32 off = 0; off + t->entry_size <= body; off += t->entry_size) {
		const struct mb2_mmap_entry *e = (const void *)(p + off);

		add_region(bi, e->base, e->length, e->type);
	}
}

/* What the walk over the tags remembers from one tag to the next. */
struct mb2_seen {
	bool mmap, new_rsdp;
	const u32 *meminfo; /* the basic meminfo tag's lower and upper KiB */
};

static void mb2_rsdp(struct boot_info *bi, const struct mb2_tag *tag, const char *body,
		     u32 body_len, struct mb2_seen *seen)
{
	bool is_new = tag->type == MB2_TAG_ACPI_NEW;
	u32 n = MIN(body_len, (u32)ACPI_RSDP_V2_SIZE);

	/* Prefer the 2.0 copy: it carries the XSDT address. */
	if (seen->new_rsdp && !is_new)
		return;
	memcpy(bi->rsdp, body, n);
	bi->rsdp_size = n;
	bi->rsdp_source = is_new ? "multiboot2 tag 15" : "multiboot2 tag 14";
	seen->new_rsdp = is_new;
}

/* One tag whose size is known to fit the information structure. */
static void mb2_tag(struct boot_info *bi, const struct mb2_tag *tag, struct mb2_seen *seen)
{
	const char *body = (const char *)(tag + 1);
	u32 body_len = tag->size - sizeof(*tag);
	char line[BOOT_CMDLINE_MAX];

	switch (tag->type) {
	case MB2_TAG_CMDLINE:
		if (copy_string(body, body_len, line, sizeof(line)))
			set_cmdline(bi, line);
		else
			note(bi->problems, "command line tag unterminated or too long");
		break;
	case MB2_TAG_LOADER_NAME:
		if (!copy_string(body, body_len, bi->loader, sizeof(bi->loader)))
			note(bi->problems, "loader name tag unterminated");
		break;
	case MB2_TAG_MMAP:
		mb2_mmap(bi, (const void *)tag);
		seen->mmap = true;
		break;
	case MB2_TAG_BASIC_MEMINFO:
		if (body_len >= 2 * sizeof(u32))
			seen->meminfo = (const u32 *)body;
		break;
	case MB2_TAG_ACPI_OLD:
	case MB2_TAG_ACPI_NEW: mb2_rsdp(bi, tag, body, body_len, seen); break;
	default: break;
	}
}

bool boot_info_from_mb2(u64 mbi, phys_reader phys, struct boot_info *bi)
{
	const struct mb2_info_header *hdr = phys(mbi, sizeof(*hdr));
	struct mb2_seen seen = { 0 };
	const u8 *base;
	u32 off;

	init(bi, "multiboot2");
	if (!hdr) {
		note(bi->problems, "multiboot2 info at 0x%llx unreadable", mbi);
		return false;
	}
	if (hdr->total_size < sizeof(*hdr) || hdr->total_size > MB2_INFO_MAX ||
	    !(base = phys(mbi, hdr->total_size))) {
		note(bi->problems, "multiboot2 info size %u invalid", hdr->total_size);
		return false;
	}

	for (off = sizeof(*hdr); off + sizeof(struct mb2_tag) <= hdr->total_size;
	     off = ALIGN_UP(off + ((const struct mb2_tag *)(base + off))->size, MB2_TAG_ALIGN)) {
		const struct mb2_tag *tag = (const void *)(base + off);

		if (tag->type == MB2_TAG_END)
			break;
		if (tag->size < sizeof(*tag) || tag->size > hdr->total_size - off) {
			note(bi->problems, "tag %u at +%u: size %u runs past the end", tag->type,
			     off, tag->size);
			break;
		}
		mb2_tag(bi, tag, &seen);
	}
	/* The basic meminfo tag is a fallback: the map, when present, wins. */
	if (!seen.mmap && seen.meminfo) {
		add_region(bi, 0, (u64)seen.meminfo[0] * KiB, MEM_RAM);
		add_region(bi, 1 * MiB, (u64)seen.meminfo[1] * KiB, MEM_RAM);
	}
	return true;
}

u64 boot_info_ram_kib(const struct boot_info *bi)
{
	u64 bytes = 0;

	for (u32 i = 0; i < bi->mem_count; i++)
		if (bi->mem[i].type == MEM_RAM || bi->mem[i].type == MEM_ACPI)
			bytes += bi->mem[i].length;
	return bytes / KiB;
}

static bool ram_like(u32 type)
{
	return type == MEM_RAM || type == MEM_ACPI || type == MEM_NVS;
}

u64 boot_info_ram_extent_kib(const struct boot_info *bi)
{
	u64 low_end = 0, high = 0;

	for (u32 i = 0; i < bi->mem_count; i++) {
		const struct mem_region *r = &bi->mem[i];
		u64 end = r->base + r->length;

		if (!ram_like(r->type))
			continue;
		if (end <= 4 * GiB)
			low_end = MAX(low_end, end);
		else if (r->base >= 4 * GiB)
			high += r->length;
		else {
			low_end = 4 * GiB;
			high += end - 4 * GiB;
		}
	}
	return (low_end + high) / KiB;
}

static bool overlap(const struct mem_region *x, const struct mem_region *y)
{
	return x->base < y->base + y->length && y->base < x->base + x->length;
}

bool boot_info_regions_disjoint(const struct boot_info *bi, u32 *a, u32 *b)
{
	for (u32 i = 0; i < bi->mem_count; i++)
		for (u32 j = i + 1; j < bi->mem_count; j++)
			if (overlap(&bi->mem[i], &bi->mem[j])) {
				*a = i;
				*b = j;
				return false;
			}
	return true;
}

bool boot_info_regions_in_order(const struct boot_info *bi)
{
	for (u32 i = 1; i < bi->mem_count; i++)
		if (bi->mem[i].base < bi->mem[i - 1].base)
			return false;
	return true;
}
