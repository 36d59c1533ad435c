/* SPDX-License-Identifier: MIT */
/*
 * Multiboot 1 (spec 0.6.96, section 3) and Multiboot 2 (spec 2.0, sections
 * 3.1 and 3.6) constants and the boot-information layouts this kernel reads.
 * Only boot/ includes this header: the rest of the kernel sees struct
 * boot_info.
 */
#ifndef BOOT_MULTIBOOT_H
#define BOOT_MULTIBOOT_H

/* clang-format off */
#define MB1_HEADER_MAGIC 0x1badb002
#define  MB1_HEADER_MEMINFO (1 << 1)
#define MB1_BOOT_MAGIC 0x2badb002
/* clang-format on */

/* clang-format off */
#define MB2_HEADER_MAGIC 0xe85250d6
#define  MB2_ARCH_I386 0
#define MB2_BOOT_MAGIC 0x36d76289
/* clang-format on */

#ifndef __ASSEMBLER__
#include "kernel/lib/types.h"

/* Multiboot 1 information structure: the fields up to the loader name. */
struct mb1_info {
	u32 flags;
	u32 mem_lower;
	u32 mem_upper;
	u32 boot_device;
	u32 cmdline;
	u32 mods_count;
	u32 mods_addr;
	u32 syms[4];
	u32 mmap_length;
	u32 mmap_addr;
	u32 drives_length;
	u32 drives_addr;
	u32 config_table;
	u32 boot_loader_name;
} __packed;

/* clang-format off */
#define  MB1_INFO_MEM BIT(0)
#define  MB1_INFO_CMDLINE BIT(2)
#define  MB1_INFO_MMAP BIT(6)
#define  MB1_INFO_LOADER_NAME BIT(9)
/* clang-format on */

/* The size field counts the bytes after itself. */
struct mb1_mmap_entry {
	u32 size;
	u64 base;
	u64 length;
	u32 type;
} __packed;

struct mb2_info_header {
	u32 total_size;
	u32 reserved;
};

struct mb2_tag {
	u32 type;
	u32 size;
};

#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_BASIC_MEMINFO 4
#define MB2_TAG_MMAP 6
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15

struct mb2_tag_mmap {
	u32 type;
	u32 size;
	u32 entry_size;
	u32 entry_version;
};

/*
 * Packed: entries lie entry_size apart, and a loader that breaks the
 * spec's multiple-of-8 promise puts the 64-bit fields at any alignment.
 */
struct mb2_mmap_entry {
	u64 base;
	u64 length;
	u32 type;
	u32 reserved;
} __packed;

#endif /* __ASSEMBLER__ */
#endif
