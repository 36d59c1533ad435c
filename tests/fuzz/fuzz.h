/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer targets share. A target checks more than "does not
 * crash": each states an invariant of its parser's output and asserts it
 * with fuzz_assert(), whose abort makes libFuzzer save the input as a
 * crash like any sanitizer report.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/acpi/acpi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__noreturn __printf(3, 4) void fuzz_fail(const char *file, int line, const char *fmt, ...);

#define fuzz_assert(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);                                \
	} while (0)

/* A text field a parser fills (problems, names) must end inside its array. */
#define fuzz_assert_terminated(array)                                                              \
	fuzz_assert(memchr((array), 0, sizeof(array)), "%s is not terminated", #array)

/* Byte sum modulo 256, summed here so a bug in acpi_checksum() cannot hide. */
u8 fuzz_sum(const void *p, size_t len);

/*
 * The fuzzer's bytes as one table the way acpi_table_at() hands it to a
 * parser: readable for exactly its length. A heap copy of size bytes, so
 * ASan catches any read past it, whose header's length is set to size.
 * NULL when size cannot hold a header. Lives until the next call.
 */
struct acpi_header *fuzz_table(const u8 *data, size_t size);

#endif
