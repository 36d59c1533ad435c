// SPDX-License-Identifier: MIT
/* The command-line parser over the registered options. */
#include "kernel/cmdline.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

TABLE_DECLARE(struct option, hvprobe_options);

const struct option *options_begin(void)
{
	return TABLE_BEGIN(hvprobe_options);
}

const struct option *options_end(void)
{
	return TABLE_END(hvprobe_options);
}

void options_reset(void)
{
	const struct option *d;

	table_for_each (d, hvprobe_options) {
		switch (d->kind) {
		case OPTION_STRING: str_copy(d->value, d->def_string, d->count); break;
		case OPTION_U64:
		case OPTION_U64_AUTO: *(u64 *)d->value = d->def; break;
		default: *(u32 *)d->value = (u32)d->def; break;
		}
	}
}

/* Decimal or 0x-prefixed hex, the whole of [s, s+len), without overflow. */
static bool parse_u64(const char *s, size_t len, u64 *out)
{
	u64 base = 10, v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		char c = s[i];
		u64 d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* The key after prev in byte order (the first for NULL), or NULL. */
static const char *next_key(const char *prev)
{
	const char *best = NULL;
	const struct option *d;

	table_for_each (d, hvprobe_options)
		if ((!prev || strcmp(d->key, prev) > 0) && (!best || strcmp(d->key, best) < 0))
			best = d->key;
	return best;
}

/* Every key, sorted: the table's order is the linker's. */
static void list_keys(char *why, size_t whylen)
{
	str_append(why, " (accepted: ", whylen);
	for (const char *k = next_key(NULL); k; k = next_key(k)) {
		str_append(why, k, whylen);
		if (next_key(k))
			str_append(why, ", ", whylen);
	}
	str_append(why, ")", whylen);
}

static bool set_value(const struct option *d, const char *val, size_t len, char *why, size_t whylen)
{
	void *field = d->value;
	u64 v;

	switch (d->kind) {
	case OPTION_STRING:
		if (!len || len >= d->count) {
			snprintf(why, whylen, "%s: value must be 1..%llu characters", d->key,
				 d->count - 1);
			return false;
		}
		memcpy(field, val, len);
		((char *)field)[len] = '\0';
		return true;
	case OPTION_ENUM:
		for (u32 i = 0; option_word(d, i); i++) {
			if (strlen(option_word(d, i)) == len &&
			    !strncmp(option_word(d, i), val, len)) {
				*(u32 *)field = i;
				return true;
			}
		}
		snprintf(why, whylen, "%s: '%.*s' is not accepted (accepted: ", d->key, (int)len,
			 val);
		for (u32 i = 0; option_word(d, i); i++) {
			if (i)
				str_append(why, ", ", whylen);
			str_append(why, option_word(d, i), whylen);
		}
		str_append(why, ")", whylen);
		return false;
	case OPTION_U64_AUTO:
		if (len == 4 && !strncmp(val, "auto", 4)) {
			*(u64 *)field = OPTION_AUTO;
			return true;
		}
		if (!parse_u64(val, len, &v) || v < d->min || v > d->max) {
			snprintf(why, whylen,
				 "%s: '%.*s' is not accepted (accepted: auto, %llu..%llu)", d->key,
				 (int)len, val, d->min, d->max);
			return false;
		}
		*(u64 *)field = v;
		return true;
	case OPTION_U32:
	case OPTION_U64:
		if (!parse_u64(val, len, &v) || v < d->min || v > d->max) {
			snprintf(why, whylen, "%s: '%.*s' is not accepted (accepted: %llu..%llu)",
				 d->key, (int)len, val, d->min, d->max);
			return false;
		}
		if (d->kind == OPTION_U32)
			*(u32 *)field = (u32)v;
		else
			*(u64 *)field = v;
		return true;
	}
	return false;
}

bool cmdline_parse(const char *line, char *why, size_t whylen)
{
	const char *p = line;

	if (whylen)
		why[0] = '\0';
	for (;;) {
		const char *word, *eq = NULL;
		size_t len, key_len;
		const struct option *d = NULL, *o;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			return true;
		word = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		len = p - word;
		for (size_t i = 0; i < len && !eq; i++)
			if (word[i] == '=')
				eq = word + i;
		if (!eq) {
			snprintf(why, whylen, "'%.*s' is not key=value", (int)len, word);
			list_keys(why, whylen);
			return false;
		}
		key_len = eq - word;
		table_for_each (o, hvprobe_options)
			if (!d && strlen(o->key) == key_len && !strncmp(o->key, word, key_len))
				d = o;
		if (!d) {
			snprintf(why, whylen, "unknown key '%.*s'", (int)key_len, word);
			list_keys(why, whylen);
			return false;
		}
		if (!set_value(d, eq + 1, len - key_len - 1, why, whylen))
			return false;
	}
}
