/* SPDX-License-Identifier: MIT */
/*
 * A fake physical address space for parser tests: a 2 MiB buffer that
 * appears at physical address 0, so the BIOS areas an RSDP scan reads
 * exist too. Reads past its end are refused, which is how the tests model
 * pointers the loader or firmware got wrong.
 */
#ifndef TESTS_UNIT_PHYS_BUFFER_H
#define TESTS_UNIT_PHYS_BUFFER_H

#include "kernel/lib/types.h"

#define PHYS_BUFFER_SIZE (2 * 1024 * 1024)

extern u8 phys_buffer[PHYS_BUFFER_SIZE];

/* The phys_reader over phys_buffer. */
const void *phys_buffer_read(u64 addr, u64 len);
/* Pointer to the byte at a fake physical address (must be in range). */
void *phys_buffer_at(u64 addr);

#endif
