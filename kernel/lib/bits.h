/* SPDX-License-Identifier: MIT */
/*
 * Bits and fields of registers, in the manuals' "h:l" notation: a field
 * is a GENMASK(h, l) mask, read with FIELD_GET() and built with
 * FIELD_PREP(), as Linux's <linux/bitfield.h> does. BIT() and GENMASK()
 * also work in assembly.
 */
#ifndef KERNEL_LIB_BITS_H
#define KERNEL_LIB_BITS_H

#ifdef __ASSEMBLER__
#define BIT(n) (1 << (n))
#define GENMASK(h, l) (((1 << ((h) - (l) + 1)) - 1) << (l))
#else
#define BIT(n) (1ULL << (n))
/* Bits h..l inclusive. */
#define GENMASK(h, l) ((~0ULL >> (63 - (h))) & (~0ULL << (l)))
/* The field mask selects, shifted down to bit 0. */
#define FIELD_GET(mask, reg) (((reg) & (mask)) >> __builtin_ctzll(mask))
/* val placed in the field mask selects. */
#define FIELD_PREP(mask, val) (((unsigned long long)(val) << __builtin_ctzll(mask)) & (mask))
#endif

#endif
