// SPDX-License-Identifier: MIT
/*
 * The kernel's vsnprintf: every conversion, length modifier, flag, width
 * and precision it claims to support, and the C99 contract for the buffer
 * (the return value is the full length, the output is cut and always
 * NUL-terminated, size 0 writes nothing). Every number the probes print,
 * every KTAP line and every JSON document goes through it, so a wrong
 * digit here is a wrong measurement everywhere. Expected outputs are
 * literals, not libc's output: the subset is ours.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/lib/printf.h"
#include "kernel/test/test.h"

#define SENTINEL 0x5a

/*
 * Format into an exactly sized heap buffer, so that ASan catches a write
 * past size, and check both the text and the returned length.
 */
static void check_fmt(const char *expected, const char *fmt, ...)
{
	size_t size = strlen(expected) + 1;
	char *buf = malloc(size);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (strcmp(buf, expected))
		report_info("\"%s\": got \"%s\"", fmt, buf);
	report(!strcmp(buf, expected) && n == (int)strlen(expected), "\"%s\" formats as \"%s\"",
	       fmt, expected);
	free(buf);
}

/*
 * Format "hello world" into a buffer of size bytes with a sentinel byte
 * after it: the text must be cut to size - 1 characters plus NUL, the
 * sentinel untouched, the return value the full length.
 */
static void check_cut(size_t size, const char *expected)
{
	char *buf = malloc(size + 1);
	int n;

	memset(buf, SENTINEL, size + 1);
	n = snprintf(buf, size, "hello %s", "world");
	report_eq(n, 11, "return value is the untruncated length");
	report(!strcmp(buf, expected), "size %zu keeps \"%s\"", size, expected);
	report_eq((u8)buf[size], SENTINEL, "byte after the buffer untouched");
	free(buf);
}

DEFINE_TEST(unit_printf_integers, "d i u x X with l ll z, flags and width", 0)
{
	check_fmt("0", "%d", 0);
	check_fmt("42", "%d", 42);
	check_fmt("-42", "%i", -42);
	check_fmt("2147483647", "%d", 2147483647);
	check_fmt("-2147483648", "%d", (int)-2147483647 - 1);
	check_fmt("4294967295", "%u", 4294967295u);
	check_fmt("deadbeef", "%x", 0xdeadbeefu);
	check_fmt("DEADBEEF", "%X", 0xdeadbeefu);
	check_fmt("-1", "%ld", -1L);
	check_fmt("18446744073709551615", "%lu", 18446744073709551615UL);
	check_fmt("9223372036854775807", "%lld", 9223372036854775807LL);
	check_fmt("-9223372036854775808", "%lld", (long long)-9223372036854775807LL - 1);
	check_fmt("18446744073709551615", "%llu", 18446744073709551615ULL);
	check_fmt("ffffffffffffffff", "%llx", 18446744073709551615ULL);
	check_fmt("123456789abc", "%zx", (size_t)0x123456789abcULL);
	check_fmt("4096", "%zu", (size_t)4096);

	report_prefix_push("width");
	check_fmt("   42", "%5d", 42);
	check_fmt("00042", "%05d", 42);
	check_fmt("-0042", "%05d", -42);
	check_fmt("  -42", "%5d", -42);
	check_fmt("42   |", "%-5d|", 42);
	check_fmt("-42  |", "%-5d|", -42);
	check_fmt("42   |", "%-05d|", 42);
	check_fmt("12345", "%3d", 12345);
	check_fmt("000000ff", "%08x", 0xffu);
	check_fmt("0000000000001000", "%016llx", 0x1000ULL);
	check_fmt("    7", "%*d", 5, 7);
	check_fmt("00007", "%0*d", 5, 7);
	check_fmt("7    |", "%-*d|", 5, 7);
	/* C11 7.21.6.1: a negative * width is a - flag and its magnitude. */
	check_fmt("7    |", "%*d|", -5, 7);
	report_prefix_pop();
}

DEFINE_TEST(unit_printf_text, "s c p % with width and precision", 0)
{
	const char unterminated[3] = { 'a', 'b', 'c' };

	check_fmt("hvprobe", "%s", "hvprobe");
	check_fmt("", "%s", "");
	check_fmt("(null)", "%s", (char *)NULL);
	check_fmt("   ab", "%5s", "ab");
	check_fmt("ab   |", "%-5s|", "ab");
	check_fmt("   ab", "%05s", "ab");
	check_fmt("hvp", "%.3s", "hvprobe");
	check_fmt("hv", "%.*s", 2, "hvprobe");
	check_fmt("hvprobe", "%.*s", -1, "hvprobe");
	check_fmt("", "%.0s", "hvprobe");
	check_fmt("  hvp", "%5.3s", "hvprobe");
	/* The precision bounds the read: ASan checks nothing past it is read. */
	check_fmt("abc", "%.3s", unterminated);
	check_fmt("x", "%c", 'x');
	check_fmt("  x|x  |", "%3c|%-3c|", 'x', 'x');
	check_fmt("0x1000", "%p", (void *)0x1000);
	check_fmt("0xffff800000000000", "%p", (void *)0xffff800000000000ULL);
	check_fmt("0x0", "%p", NULL);
	check_fmt("100%", "100%%");
	check_fmt("a%b", "a%%b");
	check_fmt("1 two 3", "%d %s %c", 1, "two", '3');
}

DEFINE_TEST(unit_printf_unknown, "an unknown conversion is shown, not guessed", 0)
{
	/* No argument is consumed: the next conversion still gets 5. */
	check_fmt("%q 5", "%q %d", 5);
	check_fmt("%hd", "%hd", 5);
	check_fmt("abc%", "abc%");
}

DEFINE_TEST(unit_printf_buffer, "return value, truncation and size 0", 0)
{
	char one = SENTINEL;
	int n;

	check_cut(12, "hello world");
	check_cut(11, "hello worl");
	check_cut(5, "hell");
	check_cut(1, "");

	n = snprintf(&one, 0, "hello %s", "world");
	report_eq(n, 11, "size 0 returns the full length");
	report_eq((u8)one, SENTINEL, "size 0 writes nothing");
	report_eq(snprintf(NULL, 0, "%d", 123456), 6, "size 0 accepts a NULL buffer");
	report_eq(snprintf(NULL, 0, "%-8s|", "ab"), 9, "padding counts in the length");
	report_eq(snprintf(NULL, 0, "%s", ""), 0, "empty output has length 0");
}
