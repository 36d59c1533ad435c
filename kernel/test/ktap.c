// SPDX-License-Identifier: MIT
/* KTAP v1 writer and the report*() check API; see ktap.h. */
#include "kernel/test/ktap.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

/* Every line but DATA fits this; KTAP_LINE_MAX bounds DATA. */
#define LINE_MAX 512
_Static_assert(LINE_MAX <= KTAP_LINE_MAX, "LINE_MAX");

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
	k->case_passes = 0;
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
	case RESULT_TIMEOUT: return " # TIMEOUT ";
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

static void count(struct ktap_totals *t, enum result r)
{
	switch (r) {
	case RESULT_PASS: t->pass++; break;
	case RESULT_SKIP: t->skip++; break;
	case RESULT_ERROR:
	case RESULT_TIMEOUT: t->error++; break;
	case RESULT_FAIL: t->fail++; break;
	}
}

enum result ktap_test_end(struct ktap *k, const char *name)
{
	enum result r = k->verdict;

	/* A test that checked nothing must not pass: that would be a lie. */
	if (!k->case_number) {
		r = RESULT_ERROR;
		str_copy(k->reason, "no checks were made", sizeof(k->reason));
	} else if (r == RESULT_PASS && !k->case_passes) {
		/* Every case skipped: the first one's reason says why. */
		r = RESULT_SKIP;
	}
	k->in_test = false;
	result_line(k, ++k->test_number, name, r, k->reason);
	count(&k->totals, r);
	return r;
}

enum result ktap_test_abort(struct ktap *k, const char *name, enum result r, const char *reason)
{
	if (k->in_test) {
		result_line(k, ++k->case_number, "the test ran to its end", r, reason);
		count(&k->cases, r);
	}
	k->verdict = r;
	str_copy(k->reason, reason, sizeof(k->reason));
	return ktap_test_end(k, name);
}

void ktap_test_result(struct ktap *k, const char *name, enum result r, const char *reason)
{
	k->in_test = false;
	result_line(k, ++k->test_number, name, r, reason);
	count(&k->totals, r);
}

static void ktap_vcase(struct ktap *k, enum result r, const char *fmt, va_list ap)
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
	count(&k->cases, r);
	k->case_passes += r == RESULT_PASS;
	/* Skips lower nothing; the first one's reason is kept for an all-skip test. */
	if (r == RESULT_SKIP) {
		if (k->verdict == RESULT_PASS && !k->reason[0])
			str_copy(k->reason, desc, sizeof(k->reason));
	} else if (r > k->verdict) {
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

static void ktap_vdiag(struct ktap *k, const char *fmt, va_list ap)
{
	char buf[LINE_MAX];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	line(k, "# %s", buf);
}

void ktap_diag(struct ktap *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vdiag(k, fmt, ap);
	va_end(ap);
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
	line(k, "# Cases: pass:%u fail:%u skip:%u error:%u", k->cases.pass, k->cases.fail,
	     k->cases.skip, k->cases.error);
	line(k, "# Totals: pass:%u fail:%u skip:%u error:%u", k->totals.pass, k->totals.fail,
	     k->totals.skip, k->totals.error);
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

bool report_at(const char *file, u32 lineno, bool pass, const char *fmt, ...)
{
	va_list ap;

	if (!pass)
		ktap_diag(ktap_current, "at %s:%u", file, lineno);
	va_start(ap, fmt);
	ktap_vcase(ktap_current, pass ? RESULT_PASS : RESULT_FAIL, fmt, ap);
	va_end(ap);
	return pass;
}

bool report_eq_at(const char *file, u32 lineno, u64 actual, u64 expected, const char *what)
{
	if (actual != expected)
		ktap_diag(ktap_current, "%s: got %llu (0x%llx), expected %llu (0x%llx)", what,
			  actual, actual, expected, expected);
	return report_at(file, lineno, actual == expected, "%s", what);
}

bool report_str_eq_at(const char *file, u32 lineno, const char *actual, const char *expected,
		      const char *what)
{
	bool same = actual && expected ? !strcmp(actual, expected) : actual == expected;

	if (!same)
		ktap_diag(ktap_current, "%s: got \"%s\", expected \"%s\"", what,
			  actual ? actual : "(null)", expected ? expected : "(null)");
	return report_at(file, lineno, same, "%s", what);
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
	va_list ap;

	va_start(ap, fmt);
	ktap_vdiag(ktap_current, fmt, ap);
	va_end(ap);
}

void report_data(const char *json)
{
	/* One byte more than a line may have, to tell a full line from a long one. */
	static char line[KTAP_LINE_MAX + 2];
	size_t indent = ktap_current->in_test ? sizeof(KTAP_INDENT) - 1 : 0;

	memcpy(line, KTAP_INDENT, indent);
	str_copy(line + indent, "# DATA ", sizeof(line) - indent);
	if (!str_append(line, json, sizeof(line)) || strlen(line) > KTAP_LINE_MAX) {
		ktap_case(ktap_current, RESULT_ERROR, "a DATA line of %zu bytes is longer than %d",
			  indent + 7 + strlen(json), KTAP_LINE_MAX);
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

void report_data_open(struct json *j, char *buf, size_t size, const char *test)
{
	json_init(j, buf, size);
	json_object_begin(j, NULL);
	json_string(j, "test", test);
}

void report_data_end(struct json *j)
{
	json_object_end(j);
	report_json(j);
}

void report_prefix_push(const char *prefix)
{
	ktap_prefix_push(ktap_current, prefix);
}

void report_prefix_pop(void)
{
	ktap_prefix_pop(ktap_current);
}
