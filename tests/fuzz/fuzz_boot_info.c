// SPDX-License-Identifier: MIT
/*
 * Fuzz target: Multiboot 1 and 2 boot information, written by whichever
 * loader started the kernel. Input: one byte whose bit 0 picks Multiboot
 * 2, then the physical memory the loader wrote, seen at IMAGE_BASE with
 * the information structure at its start; its pointers may point
 * anywhere, and only the image is readable (address 0 is not, as when a
 * loader leaves a pointer unset).
 *
 * Beyond not crashing: the memory map never holds more than BOOT_MEM_MAX
 * regions, none of them empty, and no two that add_region() should have
 * merged; the strings copied out are terminated; at most an ACPI 2.0
 * RSDP is copied; and a structure that could not be read leaves nothing
 * behind but the note saying so.
 */
#include <stdlib.h>

#include "boot/boot_info.h"
#include "tests/fuzz/fuzz.h"

/* Above 0 so that a zero pointer is unreadable, as on a real machine's first page. */
#define IMAGE_BASE 0x10000

static const u8 *image;
static u64 image_size;

static const void *image_read(u64 addr, u64 len)
{
	if (addr < IMAGE_BASE || len > image_size || addr - IMAGE_BASE > image_size - len)
		return NULL;
	return image + (addr - IMAGE_BASE);
}

static void check(const struct boot_info *bi, bool ok)
{
	fuzz_assert_terminated(bi->loader);
	fuzz_assert_terminated(bi->cmdline);
	fuzz_assert_terminated(bi->problems);
	fuzz_assert(bi->mem_count <= BOOT_MEM_MAX, "%u regions", bi->mem_count);
	fuzz_assert(!bi->mem_overflow || bi->mem_count == BOOT_MEM_MAX,
		    "overflow noted with %u regions", bi->mem_count);
	fuzz_assert(bi->rsdp_size <= ACPI_RSDP_V2_SIZE, "RSDP copy of %u bytes", bi->rsdp_size);
	for (u32 i = 0; i < bi->mem_count; i++) {
		const struct mem_region *r = &bi->mem[i], *prev = &bi->mem[i ? i - 1 : 0];

		fuzz_assert(r->length, "region %u is empty", i);
		fuzz_assert(!i || prev->type != r->type || prev->base + prev->length != r->base,
			    "regions %u and %u should be one", i - 1, i);
	}
	if (!ok)
		fuzz_assert(!bi->mem_count && !bi->cmdline[0] && !bi->loader[0] && !bi->rsdp_size &&
				    bi->problems[0],
			    "unreadable information left fields behind or no note");
	/* Both totals walk the map; the sanitizers watch their arithmetic. */
	boot_info_ram_kib(bi);
	boot_info_ram_extent_kib(bi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct boot_info bi;
	u8 *copy;
	bool ok;

	if (!size)
		return 0;
	/* Exactly the image, on the heap: ASan sees any read past it. */
	image_size = size - 1;
	copy = malloc(image_size ? image_size : 1);
	memcpy(copy, data + 1, image_size);
	image = copy;

	if (data[0] & 1)
		ok = boot_info_from_mb2(IMAGE_BASE, image_read, &bi);
	else
		ok = boot_info_from_mb1(IMAGE_BASE, image_read, &bi);
	check(&bi, ok);

	free(copy);
	return 0;
}
