/* SPDX-License-Identifier: MIT */
/*
 * Physical memory access. boot/ maps the low 4 GiB 1:1, so a physical
 * address below that is its own pointer; anything else is unreadable.
 */
#ifndef KERNEL_X86_PHYS_H
#define KERNEL_X86_PHYS_H

#include "kernel/lib/types.h"

#define IDENTITY_MAP_END (4 * GiB)

/* A phys_reader over the identity map. */
static inline const void *phys_map(u64 addr, u64 len)
{
	if (addr + len < addr || addr + len > IDENTITY_MAP_END)
		return NULL;
	return (const void *)(uintptr_t)addr;
}

#endif
