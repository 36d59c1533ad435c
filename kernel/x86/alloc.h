/* SPDX-License-Identifier: MIT */
/*
 * Boot-time memory: a bump allocator over the RAM region that holds the
 * kernel, above the kernel's end and below the 4 GiB identity map. Nothing
 * is ever freed; per-CPU data and stacks are all it serves.
 */
#ifndef KERNEL_X86_ALLOC_H
#define KERNEL_X86_ALLOC_H

#include "kernel/x86/boot_info.h"

void alloc_init(const struct boot_info *bi);
/* Zeroed memory, or NULL when the region is exhausted. */
void *boot_alloc(u64 size, u64 align);
/* A free 4 KiB page below 1 MiB for the AP trampoline, or 0. */
u64 alloc_low_page(const struct boot_info *bi);

#endif
