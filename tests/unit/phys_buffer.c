// SPDX-License-Identifier: MIT
/* The fake physical address space; see phys_buffer.h. */
#include "tests/unit/phys_buffer.h"

u8 phys_buffer[PHYS_BUFFER_SIZE];

const void *phys_buffer_read(u64 addr, u64 len)
{
	/* The space starts at 0, so only the upper bound needs a check. */
	if (len > PHYS_BUFFER_SIZE || addr > PHYS_BUFFER_SIZE - len)
		return NULL;
	return phys_buffer + addr;
}

void *phys_buffer_at(u64 addr)
{
	return phys_buffer + addr;
}
