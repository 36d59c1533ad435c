// SPDX-License-Identifier: MIT
/* JSON writer; see json.h. */
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"

static void emit(struct json *j, const char *s, size_t n)
{
	if (j->overflow || j->len + n + 1 > j->size) {
		j->overflow = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		j->buf[j->len++] = s[i];
	j->buf[j->len] = '\0';
}

static void emit_str(struct json *j, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	emit(j, s, n);
}

static void emit_quoted(struct json *j, const char *s)
{
	emit(j, "\"", 1);
	for (; *s; s++) {
		u8 c = (u8)*s;
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			emit(j, esc, 2);
		} else if (c == '\n') {
			emit(j, "\\n", 2);
		} else if (c == '\r') {
			emit(j, "\\r", 2);
		} else if (c == '\t') {
			emit(j, "\\t", 2);
		} else if (c < 0x20 || c == 0x7f) {
			emit(j, esc, snprintf(esc, sizeof(esc), "\\u%04x", c));
		} else {
			emit(j, (const char *)&c, 1);
		}
	}
	emit(j, "\"", 1);
}

/* Separator and key for the next member. */
static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth - 1])
			emit(j, ",", 1);
		j->first[j->depth - 1] = false;
	}
	if (key) {
		emit_quoted(j, key);
		emit(j, ":", 1);
	}
}

static void nest_open(struct json *j, const char *key, const char *bracket)
{
	member(j, key);
	emit_str(j, bracket);
	if (j->depth == JSON_MAX_DEPTH) {
		j->overflow = true;
		return;
	}
	j->first[j->depth++] = true;
}

static void nest_close(struct json *j, const char *bracket)
{
	if (j->depth == 0) {
		j->overflow = true;
		return;
	}
	j->depth--;
	emit_str(j, bracket);
}

void json_init(struct json *j, char *buf, size_t size)
{
	*j = (struct json){ .buf = buf, .size = size };
	if (size)
		buf[0] = '\0';
	else
		j->overflow = true;
}

void json_object_begin(struct json *j, const char *key)
{
	nest_open(j, key, "{");
}

void json_object_end(struct json *j)
{
	nest_close(j, "}");
}

void json_array_begin(struct json *j, const char *key)
{
	nest_open(j, key, "[");
}

void json_array_end(struct json *j)
{
	nest_close(j, "]");
}

void json_string(struct json *j, const char *key, const char *value)
{
	member(j, key);
	emit_quoted(j, value ? value : "");
}

void json_u64(struct json *j, const char *key, u64 value)
{
	char num[24];

	member(j, key);
	emit(j, num, snprintf(num, sizeof(num), "%llu", value));
}

void json_s64(struct json *j, const char *key, s64 value)
{
	char num[24];

	member(j, key);
	emit(j, num, snprintf(num, sizeof(num), "%lld", (long long)value));
}

void json_bool(struct json *j, const char *key, bool value)
{
	member(j, key);
	emit_str(j, value ? "true" : "false");
}

void json_hex(struct json *j, const char *key, u64 value)
{
	char num[24];

	snprintf(num, sizeof(num), "0x%llx", value);
	json_string(j, key, num);
}

const char *json_finish(struct json *j)
{
	return j->overflow || j->depth ? NULL : j->buf;
}
