// SPDX-License-Identifier: MIT
/* Bounded string helpers shared by the kernel and the host tests. */
#include "kernel/lib/string.h"

bool str_copy(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size);

	if (!size)
		return false;
	if (n == size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return src[n] == '\0';
}

bool str_append(char *dst, const char *src, size_t size)
{
	size_t used = strnlen(dst, size);

	if (used == size)
		return false;
	return str_copy(dst + used, src, size - used);
}
