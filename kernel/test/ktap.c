// SPDX-License-Identifier: MIT
/* KTAP v1 writer and the report*() check API; see ktap.h. */
#include "kernel/lib/json.h"
#include "kernel/test/ktap.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

#define LINE_MAX 512

struct ktap *ktap_current;

static void line(struct ktap *k, const char *fmt, ...) __printf(2, 3);

static void line(struct ktap *k, const char *fmt, ...)
{
	char buf[LINE_MAX];
	size_t indent = k->in_test ? sizeof(KTAP_INDENT) - 1 : 0;
	va_list ap;

	memcpy(buf, KTAP_INDENT, indent);
	va_start(ap, fmt);
	vsnprintf(buf + indent, sizeof(buf) - indent, fmt, ap);
	va_end(ap);
	k->write_line(buf);
}

void ktap_init(struct ktap *k, void (*write_line)(const char *line))
{
	memset(k, 0, sizeof(*k));
	k->write_line = write_line;
}

void ktap_header(struct ktap *k, u32 planned_tests)
{
	line(k, "KTAP version 1");
	line(k, "1..%u", planned_tests);
}

void ktap_test_begin(struct ktap *k, const char *name)
{
	k->in_test = true;
	k->case_number = 0;
	k->verdict = RESULT_PASS;
	k->reason[0] = '\0';
	k->prefix[0] = '\0';
	k->prefix_depth = 0;
	line(k, "KTAP version 1");
	line(k, "# Subtest: %s", name);
}

/*
 * A result line is one line, and '#' starts its directive: text from the
 * platform (a CPUID brand, a table's OEM ID) must not break either rule.
 */
static void sanitize(char *s)
{
	for (; *s; s++) {
		if (*s == '#')
			*s = '_';
		else if ((u8)*s < 0x20 || *s == 0x7f)
			*s = ' ';
	}
}

static const char *directive(enum result r)
{
	switch (r) {
	case RESULT_SKIP: return " # SKIP ";
	case RESULT_ERROR: return " # ERROR ";
	default: return "";
	}
}

static void result_line(struct ktap *k, u32 number, const char *name, enum result r,
			const char *reason)
{
	const char *d = directive(r);

	line(k, "%s %u %s%s%s", r == RESULT_PASS || r == RESULT_SKIP ? "ok" : "not ok", number,
	     name, d, *d ? reason : "");
}

static void count(struct ktap *k, enum result r)
{
	switch (r) {
	case RESULT_PASS: k->totals.pass++; break;
	case RESULT_SKIP: k->totals.skip++; break;
	case RESULT_ERROR: k->totals.error++; break;
	case RESULT_FAIL: k->totals.fail++; break;
	}
}

enum result ktap_test_end(struct ktap *k, const char *name)
{
	enum result r = k->verdict;

	/* A test that checked nothing must not pass: that would be a lie. */
	if (!k->case_number) {
		r = RESULT_ERROR;
		str_copy(k->reason, "no checks were made", sizeof(k->reason));
	}
	line(k, "1..%u", k->case_number);
	k->in_test = false;
	result_line(k, ++k->test_number, name, r, k->reason);
	count(k, r);
	return r;
}

void ktap_test_result(struct ktap *k, const char *name, enum result r, const char *reason)
{
	k->in_test = false;
	result_line(k, ++k->test_number, name, r, reason);
	count(k, r);
}

void ktap_vcase(struct ktap *k, enum result r, const char *fmt, va_list ap)
{
	char desc[LINE_MAX / 2], name[LINE_MAX / 2];
	bool has_reason = r == RESULT_SKIP || r == RESULT_ERROR;

	vsnprintf(desc, sizeof(desc), fmt, ap);
	sanitize(desc);

	/* A skip or error names the sub-case by its prefix; desc is why. */
	if (has_reason && k->prefix[0])
		str_copy(name, k->prefix, sizeof(name));
	else if (k->prefix[0])
		snprintf(name, sizeof(name), "%s: %s", k->prefix, desc);
	else
		str_copy(name, desc, sizeof(name));

	sanitize(name);
	result_line(k, ++k->case_number, name, r, desc);
	if (r > k->verdict) {
		k->verdict = r;
		str_copy(k->reason, has_reason ? desc : name, sizeof(k->reason));
	}
}

void ktap_case(struct ktap *k, enum result r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vcase(k, r, fmt, ap);
	va_end(ap);
}

void ktap_diag(struct ktap *k, const char *fmt, ...)
{
	char buf[LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	line(k, "# %s", buf);
}

void ktap_prefix_push(struct ktap *k, const char *prefix)
{
	u32 len = strlen(k->prefix);

	if (k->prefix_depth == KTAP_PREFIX_DEPTH)
		return;
	k->prefix_len[k->prefix_depth++] = len;
	if (len)
		str_append(k->prefix, ": ", sizeof(k->prefix));
	str_append(k->prefix, prefix, sizeof(k->prefix));
}

void ktap_prefix_pop(struct ktap *k)
{
	if (k->prefix_depth)
		k->prefix[k->prefix_len[--k->prefix_depth]] = '\0';
}

void ktap_footer(struct ktap *k)
{
	line(k, "# Totals: pass:%u fail:%u skip:%u error:%u", k->totals.pass,
	     k->totals.fail, k->totals.skip, k->totals.error);
}

enum result ktap_overall(const struct ktap *k)
{
	if (k->totals.fail)
		return RESULT_FAIL;
	if (k->totals.error)
		return RESULT_ERROR;
	if (k->totals.skip)
		return RESULT_SKIP;
	return RESULT_PASS;
}

bool report(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vcase(ktap_current, pass ? RESULT_PASS : RESULT_FAIL, fmt, ap);
	va_end(ap);
	return pass;
}

bool report_eq_u64(u64 actual, u64 expected, const char *what)
{
	if (actual != expected)
		ktap_diag(ktap_current, "%s: got %llu (0x%llx), expected %llu (0x%llx)", what,
			  actual, actual,
			  expected, expected);
	return report(actual == expected, "%s", what);
}

bool report_str_eq(const char *actual, const char *expected, const char *what)
{
	bool same = actual && expected ? !strcmp(actual, expected) : actual == expected;

	if (!same)
		ktap_diag(ktap_current, "%s: got \"%s\", expected \"%s\"", what,
			  actual ? actual : "(null)", expected ? expected : "(null)");
	return report(same, "%s", what);
}

void report_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vcase(ktap_current, RESULT_SKIP, fmt, ap);
	va_end(ap);
}

void report_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vcase(ktap_current, RESULT_ERROR, fmt, ap);
	va_end(ap);
}

void report_info(const char *fmt, ...)
{
	char buf[LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ktap_diag(ktap_current, "%s", buf);
}

void report_data(const char *json)
{
	/* DATA lines can be long (one entry per CPU): no vsnprintf buffer. */
	static char line[KTAP_DATA_MAX];
	size_t indent = ktap_current->in_test ? sizeof(KTAP_INDENT) - 1 : 0;

	memcpy(line, KTAP_INDENT, indent);
	str_copy(line + indent, "# DATA ", sizeof(line) - indent);
	if (!str_append(line, json, sizeof(line))) {
		ktap_case(ktap_current, RESULT_ERROR, "DATA line longer than %d bytes", KTAP_DATA_MAX);
		return;
	}
	ktap_current->write_line(line);
}

void report_json(struct json *j)
{
	const char *doc = json_finish(j);

	if (doc)
		report_data(doc);
	else
		report_error("DATA line did not fit its %zu-byte buffer", j->size);
}

void report_prefix_push(const char *prefix)
{
	ktap_prefix_push(ktap_current, prefix);
}

void report_prefix_pop(void)
{
	ktap_prefix_pop(ktap_current);
}
