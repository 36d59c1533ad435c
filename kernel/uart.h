/* SPDX-License-Identifier: MIT */
/*
 * The 16550 UART (PC16550D datasheet) at COM1, as on every PC: register
 * offsets from the base and the bits hvprobe uses. Asm-safe, for the
 * boot stub's messages before C runs.
 */
#ifndef KERNEL_UART_H
#define KERNEL_UART_H

#include "kernel/lib/bits.h"

/* clang-format off */
#define UART_COM1 0x3f8
#define UART_THR 0 /* transmit holding (DLAB=0) */
#define UART_DLL 0 /* divisor latch low (DLAB=1) */
#define UART_IER 1
#define UART_DLM 1
#define UART_FCR 2
#define  UART_FCR_ENABLE_CLEAR 0x07
#define UART_LCR 3
#define  UART_LCR_8N1 0x03
#define  UART_LCR_DLAB BIT(7)
#define UART_MCR 4
#define  UART_MCR_DTR_RTS_OUT2 0x0b
#define UART_LSR 5
#define  UART_LSR_THRE BIT(5)
/* 1.8432 MHz / 16 / 115200 */
#define UART_DIVISOR_115200 1
/* clang-format on */

#endif
