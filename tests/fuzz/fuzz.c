// SPDX-License-Identifier: MIT
/* Helpers for the libFuzzer targets; see fuzz.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"

void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: invariant broken: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

u8 fuzz_sum(const void *p, size_t len)
{
	const u8 *b = p;
	u8 s = 0;

	while (len--)
		s += *b++;
	return s;
}

struct acpi_header *fuzz_table(const u8 *data, size_t size)
{
	static struct acpi_header *copy;

	free(copy);
	copy = NULL;
	if (size < sizeof(*copy) || size > UINT32_MAX)
		return NULL;
	copy = malloc(size);
	memcpy(copy, data, size);
	copy->length = size;
	return copy;
}
