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

/* One conversion's flags, width, precision and length modifier. */
struct spec {
	bool left;
	char padc;
	int width, precision, lng;
};

static int digits_at(const char **fmt, int n)
{
	while (**fmt >= '0' && **fmt <= '9')
		n = n * 10 + (*(*fmt)++ - '0');
	return n;
}

/* Read the spec after a '%', leaving fmt at its conversion character. */
static void parse_spec(const char **fmt, va_list *ap, struct spec *sp)
{
	*sp = (struct spec){ .padc = ' ', .precision = -1 };
	for (;; (*fmt)++) {
		if (**fmt == '-')
			sp->left = true;
		else if (**fmt == '0')
			sp->padc = '0';
		else
			break;
	}
	if (**fmt == '*') {
		sp->width = va_arg(*ap, int);
		(*fmt)++;
		/* C11 7.21.6.1: a negative width is a '-' flag. */
		if (sp->width < 0) {
			sp->left = true;
			sp->width = -sp->width;
		}
	}
	sp->width = digits_at(fmt, sp->width);
	if (**fmt == '.') {
		sp->precision = 0;
		if (*++(*fmt) == '*') {
			sp->precision = va_arg(*ap, int);
			(*fmt)++;
		}
		sp->precision = digits_at(fmt, sp->precision);
	}
	while (**fmt == 'l') {
		sp->lng++;
		(*fmt)++;
	}
	if (**fmt == 'z') {
		sp->lng = 2;
		(*fmt)++;
	}
}

static void put_number(struct out *o, const struct spec *sp, unsigned long long v, unsigned base,
		       bool upper, bool negative)
{
	char tmp[24];

	put_field(o, tmp, format_number(tmp, v, base, upper, negative), sp->width, sp->left,
		  sp->padc);
}

static void put_string(struct out *o, const struct spec *sp, const char *s)
{
	int len = 0;

	if (!s)
		s = "(null)";
	/* A precision bounds the read: the string may be unterminated. */
	while ((sp->precision < 0 || len < sp->precision) && s[len])
		len++;
	put_field(o, s, len, sp->width, sp->left, ' ');
}

/* Put one conversion, c, of spec sp; false when the format ended inside it. */
static bool convert(struct out *o, char c, const struct spec *sp, va_list *ap)
{
	unsigned long long v;
	long long s;
	char ch;

	switch (c) {
	case 'd':
	case 'i':
		s = sp->lng >= 2 ? va_arg(*ap, long long)
		    : sp->lng	 ? va_arg(*ap, long)
				 : va_arg(*ap, int);
		v = s < 0 ? 0ULL - (unsigned long long)s : (unsigned long long)s;
		put_number(o, sp, v, 10, false, s < 0);
		return true;
	case 'x':
	case 'X':
	case 'u':
		v = sp->lng >= 2 ? va_arg(*ap, unsigned long long)
		    : sp->lng	 ? va_arg(*ap, unsigned long)
				 : va_arg(*ap, unsigned int);
		put_number(o, sp, v, c == 'u' ? 10 : 16, c == 'X', false);
		return true;
	case 'p':
		v = (unsigned long long)(uintptr_t)va_arg(*ap, void *);
		put(o, '0');
		put(o, 'x');
		put_number(o, sp, v, 16, false, false);
		return true;
	case 's': put_string(o, sp, va_arg(*ap, const char *)); return true;
	case 'c':
		ch = (char)va_arg(*ap, int);
		put_field(o, &ch, 1, sp->width, sp->left, ' ');
		return true;
	case '%': put(o, '%'); return true;
	default:
		/* Unknown conversion: show it rather than guess its argument. */
		put(o, '%');
		if (!c)
			return false;
		put(o, c);
		return true;
	}
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	struct spec sp;
	va_list args;

	/* A copy, so that the helpers can take it by address (C11 7.16). */
	va_copy(args, ap);
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		parse_spec(&fmt, &args, &sp);
		if (!convert(&o, *fmt, &sp, &args))
			break;
	}
	va_end(args);
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
