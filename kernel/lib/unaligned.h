/* SPDX-License-Identifier: MIT */
/*
 * Little-endian loads at any alignment, for firmware tables: ACPI fields
 * are little-endian (ACPI 6.5 5.2) and, in packed subtables such as the
 * MADT's and SRAT's entries, often not naturally aligned. x86 is
 * little-endian and loads at any alignment, so each is one copy of the
 * bytes with no swap. The copy is __builtin_memcpy because -ffreestanding
 * turns off memcpy's builtin: named so, it is still one load, not a call.
 */
#ifndef KERNEL_LIB_UNALIGNED_H
#define KERNEL_LIB_UNALIGNED_H

#include "kernel/lib/types.h"

static inline u16 get_le16(const void *p)
{
	u16 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline u32 get_le32(const void *p)
{
	u32 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static inline u64 get_le64(const void *p)
{
	u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

#endif
