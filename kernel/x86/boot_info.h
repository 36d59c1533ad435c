/* SPDX-License-Identifier: MIT */
/*
 * struct boot_info: what the loader told us, in one neutral form (the
 * part of a PC boot that Linux keeps in x86's struct boot_params: the
 * command line, the E820 map, the RSDP). boot/ fills it from Multiboot 1
 * or 2; nothing outside boot/ knows which.
 */
#ifndef KERNEL_X86_BOOT_INFO_H
#define KERNEL_X86_BOOT_INFO_H

#include "kernel/lib/types.h"

/* E820 numbering, which both Multiboot versions use for memory types. */
enum mem_type {
	MEM_RAM = 1,
	MEM_RESERVED = 2,
	MEM_ACPI = 3,
	MEM_NVS = 4,
	MEM_BAD = 5,
};

struct mem_region {
	u64 base;
	u64 length;
	u32 type;
};

#define BOOT_CMDLINE_MAX 1024
#define BOOT_LOADER_MAX 64
#define BOOT_MEM_MAX 256
#define BOOT_PROBLEMS_MAX 256
#define ACPI_RSDP_V2_SIZE 36

struct boot_info {
	const char *protocol;
	char loader[BOOT_LOADER_MAX];
	char cmdline[BOOT_CMDLINE_MAX];
	struct mem_region mem[BOOT_MEM_MAX];
	u32 mem_count;
	bool mem_overflow;
	/* A copy, because the loader's MBI lies in memory we may reuse. */
	u8 rsdp[ACPI_RSDP_V2_SIZE];
	u32 rsdp_size;
	const char *rsdp_source;
	/* Anything malformed that was skipped, as "; "-separated text. */
	char problems[BOOT_PROBLEMS_MAX];
};

/*
 * How the parser reaches physical memory: returns a pointer to [addr,
 * addr+len) or NULL when that range cannot be read. The kernel maps memory
 * 1:1; the host unit tests map a buffer.
 */
typedef const void *(*phys_reader)(u64 addr, u64 len);

#endif
