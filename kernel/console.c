// SPDX-License-Identifier: MIT
/*
 * The console: COM1's 16550 UART, polled, 115200 8N1. Output only:
 * hvprobe never reads the console.
 */
#include "kernel/console.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/uart.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/spinlock.h"
#include "kernel/x86/x86.h"

#define COM1 UART_COM1
/* An absent UART must not hang us: give up on a byte after this many polls. */
#define UART_POLL_LIMIT 100000

static struct spinlock console_lock;

void console_init(void)
{
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, UART_LCR_DLAB);
	outb(COM1 + UART_DLL, UART_DIVISOR_115200);
	outb(COM1 + UART_DLM, 0);
	outb(COM1 + UART_LCR, UART_LCR_8N1);
	outb(COM1 + UART_FCR, UART_FCR_ENABLE_CLEAR);
	outb(COM1 + UART_MCR, UART_MCR_DTR_RTS_OUT2);
}

static void put_byte(char c)
{
	for (int i = 0; i < UART_POLL_LIMIT; i++)
		if (inb(COM1 + UART_LSR) & UART_LSR_THRE)
			break;
	outb(COM1 + UART_THR, (u8)c);
}

static void write_raw(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			put_byte('\r');
		put_byte(s[i]);
	}
}

static void console_write(const char *s, size_t len)
{
	bool nested = spin_lock_reentrant(&console_lock);

	write_raw(s, len);
	spin_unlock_reentrant(&console_lock, nested);
}

void console_write_line(const char *line)
{
	bool nested = spin_lock_reentrant(&console_lock);

	write_raw(line, strlen(line));
	write_raw("\n", 1);
	spin_unlock_reentrant(&console_lock, nested);
}

int vprintf(const char *fmt, va_list ap)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	console_write(buf, MIN((size_t)n, sizeof(buf) - 1));
	return n;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}
