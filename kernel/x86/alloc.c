// SPDX-License-Identifier: MIT
/* Boot-time bump allocator; see alloc.h. */
#include "kernel/x86/alloc.h"
#include "kernel/lib/string.h"
#include "kernel/x86/phys.h"

#define PAGE_SIZE 4096
/* Real-mode memory above this is the EBDA, video memory and BIOS (PC/AT). */
#define LOW_MEMORY_END 0x9f000
/* Page 0 holds the real-mode IVT and the BIOS data area. */
#define LOW_MEMORY_START 0x1000

extern char __kernel_end[];

static u64 next, end;

void alloc_init(const struct boot_info *bi)
{
	u64 kernel_end = (u64)(uintptr_t)__kernel_end;

	for (u32 i = 0; i < bi->mem_count; i++) {
		const struct mem_region *r = &bi->mem[i];
		u64 top = MIN(r->base + r->length, IDENTITY_MAP_END);

		if (r->type == MEM_RAM && r->base <= kernel_end && kernel_end < top) {
			next = ALIGN_UP(kernel_end, PAGE_SIZE);
			end = top;
			return;
		}
	}
}

void *boot_alloc(u64 size, u64 align)
{
	u64 at = ALIGN_UP(next, align);
	void *p;

	if (!end || at + size > end || at + size < at)
		return NULL;
	next = at + size;
	p = (void *)(uintptr_t)at;
	memset(p, 0, size);
	return p;
}

u64 alloc_low_page(const struct boot_info *bi)
{
	for (u32 i = 0; i < bi->mem_count; i++) {
		const struct mem_region *r = &bi->mem[i];
		u64 base = MAX(ALIGN_UP(r->base, PAGE_SIZE), (u64)LOW_MEMORY_START);

		if (r->type == MEM_RAM &&
		    base + PAGE_SIZE <= MIN(r->base + r->length, (u64)LOW_MEMORY_END))
			return base;
	}
	return 0;
}
