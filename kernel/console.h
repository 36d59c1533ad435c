/* SPDX-License-Identifier: MIT */
/* The serial console: a 16550 UART on COM1, 115200 8N1. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include "kernel/lib/types.h"

void console_init(void);
/* One whole line, newline added, never interleaved with another CPU's. */
void console_write_line(const char *line);

#endif
