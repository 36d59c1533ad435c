// SPDX-License-Identifier: MIT
/* vsnprintf for the kernel and its host tests; see printf.h for the subset. */
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

static void put_field(struct out *o, const char *s, int len, int width, bool left, char padc)
{
	/* Zero padding goes after a sign, space padding before it. */
	if (!left && padc == '0' && len && *s == '-') {
		put(o, *s++);
		len--;
		width--;
	}
	if (!left)
		pad(o, padc, width - len);
	for (int i = 0; i < len; i++)
		put(o, s[i]);
	if (left)
		pad(o, ' ', width - len);
}

static int format_number(char *tmp, unsigned long long v, unsigned base, bool upper, bool negative)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char rev[24];
	int n = 0, len = 0;

	do {
		rev[n++] = digits[v % base];
		v /= base;
	} while (v);
	if (negative)
		tmp[len++] = '-';
	while (n)
		tmp[len++] = rev[--n];
	return len;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		bool left = false;
		char padc = ' ';
		int width = 0, lng = 0, precision = -1;
		char tmp[24];
		unsigned long long v;
		bool negative = false;
		unsigned base = 10;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = true;
			else if (*fmt == '0')
				padc = '0';
			else
				break;
		}
		if (*fmt == '*') {
			width = va_arg(ap, int);
			fmt++;
			/* C11 7.21.6.1: a negative width is a '-' flag. */
			if (width < 0) {
				left = true;
				width = -width;
			}
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		if (*fmt == '.') {
			precision = 0;
			if (*++fmt == '*') {
				precision = va_arg(ap, int);
				fmt++;
			}
			while (*fmt >= '0' && *fmt <= '9')
				precision = precision * 10 + (*fmt++ - '0');
		}
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		if (*fmt == 'z') {
			lng = 2;
			fmt++;
		}

		switch (*fmt) {
		case 'd':
		case 'i': {
			long long s = lng >= 2 ? va_arg(ap, long long)
				      : lng    ? va_arg(ap, long)
					       : va_arg(ap, int);

			negative = s < 0;
			v = negative ? 0ULL - (unsigned long long)s : (unsigned long long)s;
			put_field(&o, tmp, format_number(tmp, v, 10, false, negative), width, left,
				  padc);
			continue;
		}
		case 'x':
		case 'X':
		case 'u':
			base = *fmt == 'u' ? 10 : 16;
			v = lng >= 2 ? va_arg(ap, unsigned long long)
			    : lng    ? va_arg(ap, unsigned long)
				     : va_arg(ap, unsigned int);
			put_field(&o, tmp, format_number(tmp, v, base, *fmt == 'X', false), width,
				  left, padc);
			continue;
		case 'p':
			v = (unsigned long long)(uintptr_t)va_arg(ap, void *);
			put(&o, '0');
			put(&o, 'x');
			put_field(&o, tmp, format_number(tmp, v, 16, false, false), width, left,
				  padc);
			continue;
		case 's': {
			const char *s = va_arg(ap, const char *);
			int len = 0;

			if (!s)
				s = "(null)";
			/* A precision bounds the read: the string may be unterminated. */
			while ((precision < 0 || len < precision) && s[len])
				len++;
			put_field(&o, s, len, width, left, ' ');
			continue;
		}
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			put_field(&o, tmp, 1, width, left, ' ');
			continue;
		case '%': put(&o, '%'); continue;
		default:
			/* Unknown conversion: show it rather than guess its argument. */
			put(&o, '%');
			if (!*fmt)
				goto out;
			put(&o, *fmt);
			continue;
		}
	}
out:
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void notes_add(char *buf, size_t size, const char *fmt, ...)
{
	char msg[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (buf[0])
		str_append(buf, "; ", size);
	str_append(buf, msg, size);
}
