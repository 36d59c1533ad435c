/* SPDX-License-Identifier: MIT */
/*
 * Fixed-width types and small helpers. Only the freestanding headers every
 * C11 compiler ships are used, so the same code builds in the kernel and in
 * the host unit tests.
 */
#ifndef KERNEL_LIB_TYPES_H
#define KERNEL_LIB_TYPES_H

#include "kernel/lib/bits.h"

#ifndef __ASSEMBLER__
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + (a)-1) & ~((__typeof__(x))(a)-1))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define __packed __attribute__((packed))
#define __noreturn __attribute__((noreturn))
#define __printf(f, a) __attribute__((format(printf, f, a)))

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#endif /* __ASSEMBLER__ */
#endif
