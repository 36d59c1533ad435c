/* SPDX-License-Identifier: MIT */
/*
 * A small printf: conversions d i u x X s c p %, length modifiers l ll z,
 * flags '0' and '-', and a field width (also '*'). vsnprintf is pure and
 * shared with the host tests; printf writes to the console.
 */
#ifndef KERNEL_LIB_PRINTF_H
#define KERNEL_LIB_PRINTF_H

#include "kernel/lib/types.h"

/* The host tests link a libc: keep our implementation under its own name. */
#ifdef HOST_TEST
#define vsnprintf hvprobe_vsnprintf
#define snprintf hvprobe_snprintf
#define notes_add hvprobe_notes_add
#endif

/* Returns the length the full output would have, like C99's vsnprintf. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

/*
 * Append a formatted note to a "; "-separated list in a char array, as
 * parsers record what they skipped: note(t->problems, "entry %u bad", i).
 */
void notes_add(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
#define note(buf, ...) notes_add((buf), sizeof(buf), __VA_ARGS__)

#ifndef HOST_TEST
int printf(const char *fmt, ...) __printf(1, 2);
int vprintf(const char *fmt, va_list ap);
#endif

#endif
