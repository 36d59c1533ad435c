/* SPDX-License-Identifier: MIT */
/*
 * The few string and memory helpers the kernel needs, written once. The
 * libc-named ones are built into the kernel only (the host tests use their
 * libc's); the rest are pure and shared with the host tests.
 */
#ifndef KERNEL_LIB_STRING_H
#define KERNEL_LIB_STRING_H

#include "kernel/lib/types.h"

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);

/* Copy with truncation and NUL termination; false if src did not fit. */
bool str_copy(char *dst, const char *src, size_t size);
/* Append to a NUL-terminated buffer; false if it had to truncate. */
bool str_append(char *dst, const char *src, size_t size);

#endif
