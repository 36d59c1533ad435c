/* SPDX-License-Identifier: MIT */
/*
 * A tiny JSON writer for `# DATA` lines (RFC 8259): objects, arrays,
 * strings with escaping, integers and booleans, into a fixed buffer. An
 * overflow is sticky and reported by json_finish(), never a truncated
 * document.
 */
#ifndef KERNEL_LIB_JSON_H
#define KERNEL_LIB_JSON_H

#include "kernel/lib/types.h"

#define JSON_MAX_DEPTH 8

struct json {
	char *buf;
	size_t size;
	size_t len;
	int depth;
	bool first[JSON_MAX_DEPTH];
	bool overflow;
};

void json_init(struct json *j, char *buf, size_t size);
/* key is NULL for the top level and for array elements. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *value);
void json_u64(struct json *j, const char *key, u64 value);
void json_s64(struct json *j, const char *key, s64 value);
void json_bool(struct json *j, const char *key, bool value);
/* Hex as a string ("0x1f"): JSON numbers lose precision past 2^53. */
void json_hex(struct json *j, const char *key, u64 value);
/* The document, or NULL when it did not fit or is unbalanced. */
const char *json_finish(struct json *j);

#endif
