// SPDX-License-Identifier: MIT
/*
 * Inputs the fuzzers (tests/fuzz/) found, each reduced to the smallest
 * structure that shows the defect and replayed here before the parser was
 * fixed, so that it stays fixed. The sanitizers of the unit test build
 * catch the original failure; the checks state the behaviour after the
 * fix.
 */
#include <string.h>

#include "boot/boot_info.h"
#include "boot/multiboot.h"
#include "kernel/test/test.h"
#include "tests/unit/phys_buffer.h"

#define INFO_ADDR 0x10000

static struct boot_info bi;

/* A Multiboot 2 information structure holding one memory-map tag. */
static void build_mb2_mmap(const u64 (*entries)[3], u32 count, u32 entry_size)
{
	u8 *p = phys_buffer_at(INFO_ADDR);
	u32 off = sizeof(struct mb2_info_header), tag_size;
	struct mb2_tag_mmap mmap;

	memset(phys_buffer, 0, PHYS_BUFFER_SIZE);
	tag_size = sizeof(mmap) + count * entry_size;
	mmap = (struct mb2_tag_mmap){ MB2_TAG_MMAP, tag_size, entry_size, 0 };
	memcpy(p + off, &mmap, sizeof(mmap));
	for (u32 i = 0; i < count; i++) {
		u8 *e = p + off + sizeof(mmap) + i * entry_size;
		u32 type = entries[i][2];

		memcpy(e, &entries[i][0], 8);
		memcpy(e + 8, &entries[i][1], 8);
		memcpy(e + 16, &type, 4);
	}
	off = ALIGN_UP(off + tag_size, 8);
	/* The end tag: type 0, size 8. */
	memcpy(p + off + 4, &(u32){ 8 }, 4);
	memcpy(p, &(u32){ off + 8 }, 4);
}

/*
 * fuzz_boot_info: a Multiboot 2 memory map whose entry_size is not a
 * multiple of 8 (the spec promises it is; a broken loader may not) puts
 * every other entry's 64-bit fields at a 4-byte boundary. The parser read
 * them through an 8-byte-aligned struct: undefined behaviour, which a
 * compiler may turn into an aligned vector load that faults.
 */
DEFINE_TEST(unit_fuzz_mb2_mmap_unaligned, "Multiboot 2 map entries of 28 bytes", 0)
{
	static const u64 entries[][3] = {
		{ 0x0, 0x9fc00, MEM_RAM },
		{ 0x100000, 0x7ee0000, MEM_RAM },
	};

	build_mb2_mmap(entries, ARRAY_SIZE(entries), 28);
	report(boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi), "parsed");
	report_eq(bi.mem_count, 2, "regions");
	report_eq(bi.mem[1].base, 0x100000, "second region's base, at a 4-byte boundary");
	report_eq(bi.mem[1].length, 0x7ee0000, "second region's length");
}

/*
 * fuzz_boot_info (make check, seed-dependent): two adjacent RAM regions
 * whose lengths add up past 2^64. Merging them wrapped the length to 0,
 * an empty region; a region that runs past the top of the address space
 * is garbage and is now left out with a note, so merges cannot wrap.
 */
DEFINE_TEST(unit_fuzz_mb2_mmap_wraps, "a map region past 2^64 is left out, not merged", 0)
{
	static const u64 entries[][3] = {
		{ 0x0, 0xffffffffffffffffULL, MEM_RAM },
		{ 0xffffffffffffffffULL, 0x1, MEM_RAM },
		{ 0xfffffffffffff000ULL, 0x2000, MEM_RESERVED },
	};

	build_mb2_mmap(entries, ARRAY_SIZE(entries), 24);
	report(boot_info_from_mb2(INFO_ADDR, phys_buffer_read, &bi), "parsed");
	report_eq(bi.mem_count, 1, "regions");
	report_eq(bi.mem[0].length, 0xffffffffffffffffULL, "the first region, whole");
	report(strstr(bi.problems, "past 2^64") != NULL, "noted: %s", bi.problems);
}
