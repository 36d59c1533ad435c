// SPDX-License-Identifier: MIT
/*
 * The JSON writer behind every `# DATA` line. The host runner parses those
 * lines to compare figures across hypervisors, so a missing comma, a raw
 * control character in a CPU brand string or a truncated document would
 * lose a measurement silently. Covered: nesting and separators, string
 * escaping (RFC 8259 section 7), the extremes of each integer kind, hex
 * strings, and the failure contract: an overflow is sticky, and an
 * overflowed, unbalanced or too deep document is NULL, never half a
 * document.
 */
#include <string.h>

#include "kernel/lib/json.h"
#include "kernel/test/test.h"

#define DOC_MAX 256

/* The finished document must be exactly expected. */
static void check_doc(struct json *j, const char *expected, const char *what)
{
	const char *doc = json_finish(j);

	if (!doc || strcmp(doc, expected))
		report_info("%s: got %s, expected %s", what, doc ? doc : "NULL", expected);
	report(doc && !strcmp(doc, expected), "%s", what);
}

/* The document must be refused. */
static void check_null(struct json *j, const char *what)
{
	const char *doc = json_finish(j);

	if (doc)
		report_info("%s: got %s, expected NULL", what, doc);
	report(!doc, "%s", what);
}

/* A single string member, to check one escape at a time. */
static void check_escape(const char *value, const char *expected, const char *what)
{
	char buf[DOC_MAX];
	struct json j;

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "s", value);
	json_object_end(&j);
	check_doc(&j, expected, what);
}

static void open_nested_arrays(struct json *j, int n)
{
	for (int i = 0; i < n; i++)
		json_array_begin(j, NULL);
}

static void close_nested_arrays(struct json *j, int n)
{
	for (int i = 0; i < n; i++)
		json_array_end(j);
}

DEFINE_TEST(unit_json_structure, "nesting and commas", 0)
{
	char buf[DOC_MAX];
	struct json j;

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_object_end(&j);
	check_doc(&j, "{}", "empty object");

	json_init(&j, buf, sizeof(buf));
	json_array_begin(&j, NULL);
	json_array_end(&j);
	check_doc(&j, "[]", "empty array");

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_string(&j, "test", "boot");
	json_u64(&j, "cpus", 4);
	json_bool(&j, "ok", true);
	json_bool(&j, "smp", false);
	json_object_end(&j);
	check_doc(&j, "{\"test\":\"boot\",\"cpus\":4,\"ok\":true,\"smp\":false}",
		  "members separated by commas");

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_array_begin(&j, "lpj");
	json_u64(&j, NULL, 1);
	json_u64(&j, NULL, 2);
	json_object_begin(&j, NULL);
	json_object_end(&j);
	json_object_begin(&j, NULL);
	json_s64(&j, "d", -3);
	json_object_end(&j);
	json_array_end(&j);
	json_object_begin(&j, "inner");
	json_array_begin(&j, "empty");
	json_array_end(&j);
	json_hex(&j, "h", 0x1f);
	json_object_end(&j);
	json_string(&j, "last", "x");
	json_object_end(&j);
	check_doc(&j,
		  "{\"lpj\":[1,2,{},{\"d\":-3}],\"inner\":{\"empty\":[],\"h\":\"0x1f\"},"
		  "\"last\":\"x\"}",
		  "arrays and objects nest with commas only between siblings");

	json_init(&j, buf, sizeof(buf));
	json_array_begin(&j, NULL);
	json_array_end(&j);
	json_array_begin(&j, NULL);
	json_array_end(&j);
	check_doc(&j, "[][]", "two top-level values are written as given");
}

DEFINE_TEST(unit_json_values, "integers, hex and booleans at their extremes", 0)
{
	char buf[DOC_MAX];
	struct json j;

	json_init(&j, buf, sizeof(buf));
	json_array_begin(&j, NULL);
	json_u64(&j, NULL, 0);
	json_u64(&j, NULL, UINT64_MAX);
	json_s64(&j, NULL, 0);
	json_s64(&j, NULL, -1);
	json_s64(&j, NULL, INT64_MAX);
	json_s64(&j, NULL, INT64_MIN);
	json_array_end(&j);
	check_doc(&j,
		  "[0,18446744073709551615,0,-1,9223372036854775807,"
		  "-9223372036854775808]",
		  "u64 max and s64 min in full");

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_hex(&j, "zero", 0);
	json_hex(&j, "msr", 0xc0000080);
	json_hex(&j, "max", UINT64_MAX);
	json_string(&j, "null", NULL);
	json_object_end(&j);
	check_doc(&j,
		  "{\"zero\":\"0x0\",\"msr\":\"0xc0000080\",\"max\":\"0xffffffffffffffff\","
		  "\"null\":\"\"}",
		  "hex values are lower-case strings, a NULL string is empty");
}

DEFINE_TEST(unit_json_escaping, "quotes, backslashes and control characters", 0)
{
	char buf[DOC_MAX];
	struct json j;

	check_escape("say \"hi\"", "{\"s\":\"say \\\"hi\\\"\"}", "double quote");
	check_escape("C:\\x", "{\"s\":\"C:\\\\x\"}", "backslash");
	check_escape("a\nb\rc\td", "{\"s\":\"a\\nb\\rc\\td\"}", "newline, return, tab");
	check_escape("\x01", "{\"s\":\"\\u0001\"}", "0x01 as \\u0001");
	check_escape("\x1f", "{\"s\":\"\\u001f\"}", "0x1f as \\u001f");
	check_escape("\b\f", "{\"s\":\"\\u0008\\u000c\"}", "backspace and form feed as \\u");
	check_escape("\x7f", "{\"s\":\"\\u007f\"}", "DEL as \\u007f");
	check_escape(" ~", "{\"s\":\" ~\"}", "space and tilde unchanged");
	check_escape("caf\xc3\xa9", "{\"s\":\"caf\xc3\xa9\"}", "UTF-8 bytes unchanged");

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_u64(&j, "a\"b\n", 1);
	json_object_end(&j);
	check_doc(&j, "{\"a\\\"b\\n\":1}", "keys are escaped too");
}

DEFINE_TEST(unit_json_limits, "overflow is sticky; bad documents are NULL", 0)
{
	char buf[DOC_MAX];
	struct json j;

	/* {"a":1} is 7 characters: 8 bytes hold it with its NUL, 7 do not. */
	json_init(&j, buf, 8);
	json_object_begin(&j, NULL);
	json_u64(&j, "a", 1);
	json_object_end(&j);
	check_doc(&j, "{\"a\":1}", "a document that exactly fits");

	json_init(&j, buf, 7);
	json_object_begin(&j, NULL);
	json_u64(&j, "a", 1);
	json_object_end(&j);
	check_null(&j, "a document one byte too long");

	/*
	 * With 10 bytes, the 6-byte escape \u0001 after {"k":" does not fit,
	 * but the closing quote and brace would: a writer that forgot the
	 * overflow would finish {"k":""}, a valid document with a lie in it.
	 */
	json_init(&j, buf, 10);
	json_object_begin(&j, NULL);
	json_string(&j, "k", "\x01");
	json_object_end(&j);
	check_null(&j, "later output that would fit does not clear the overflow");
	report(!strcmp(buf, "{\"k\":\""), "the buffer stops, terminated, where it overflowed");

	json_init(&j, buf, 0);
	check_null(&j, "a zero-sized buffer");

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_array_begin(&j, "a");
	json_array_end(&j);
	check_null(&j, "an unclosed object");

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_object_end(&j);
	json_object_end(&j);
	check_null(&j, "one close too many");

	json_init(&j, buf, sizeof(buf));
	open_nested_arrays(&j, JSON_MAX_DEPTH);
	close_nested_arrays(&j, JSON_MAX_DEPTH);
	check_doc(&j, "[[[[[[[[]]]]]]]]", "JSON_MAX_DEPTH levels of nesting");

	json_init(&j, buf, sizeof(buf));
	open_nested_arrays(&j, JSON_MAX_DEPTH + 1);
	close_nested_arrays(&j, JSON_MAX_DEPTH + 1);
	check_null(&j, "one level deeper than JSON_MAX_DEPTH");
}
