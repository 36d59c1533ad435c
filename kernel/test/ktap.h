/* SPDX-License-Identifier: MIT */
/*
 * KTAP version 1 output (Linux Documentation/dev-tools/ktap.rst) and the
 * check API tests use. Every top-level test is a KTAP subtest whose cases
 * are the report*() calls. Its result follows ktap.rst: a fail if any
 * case failed, else an error (or a timeout) if any case erred, else a
 * pass if any case passed; a skip only when every case skipped ("skipped
 * tests do not affect the result of the parent test"). An error is our
 * bug or a broken environment, a fail the platform misbehaving (XTF's
 * distinction).
 *
 * A subtest has no plan line: how many checks a test makes is known only
 * when it ends (a case per CPU, per timer present), and ktap.rst lets a
 * plan be left out when the count is not known in advance, where a plan
 * printed after the cases is out of place (plans follow version lines).
 * Readers find the end of a subtest by its result line, whose name
 * matches the "# Subtest:" line.
 *
 * No line is longer than KTAP_LINE_MAX bytes. The run ends with a "# Cases:"
 * line, the leaf results by kind, and the "# Totals:" line, which counts
 * the top-level tests as kselftest's does.
 */
#ifndef KERNEL_TEST_KTAP_H
#define KERNEL_TEST_KTAP_H

#include "kernel/lib/types.h"

/* Ranked: a worse result hides a milder one in the verdict. */
enum result {
	RESULT_PASS,
	RESULT_SKIP,
	RESULT_ERROR,
	RESULT_TIMEOUT, /* an error: the test never ended (the watchdog) */
	RESULT_FAIL,
};

#define KTAP_REASON_MAX 160
#define KTAP_PREFIX_MAX 128
#define KTAP_PREFIX_DEPTH 8
#define KTAP_INDENT "    "
/* The longest line, without its newline: DATA included. */
#define KTAP_LINE_MAX 1024

/* Results by kind; a timeout counts as an error. */
struct ktap_totals {
	u32 pass, fail, skip, error;
};

struct ktap {
	/* Receives each line without its newline. */
	void (*write_line)(const char *line);
	bool in_test;
	u32 test_number;
	u32 case_number;
	u32 case_passes;
	enum result verdict; /* the worst case but skips */
	char reason[KTAP_REASON_MAX];
	char prefix[KTAP_PREFIX_MAX];
	u32 prefix_len[KTAP_PREFIX_DEPTH];
	u32 prefix_depth;
	struct ktap_totals totals; /* top-level tests */
	struct ktap_totals cases;  /* leaf cases of every test */
};

void ktap_init(struct ktap *k, void (*write_line)(const char *line));
void ktap_header(struct ktap *k, u32 planned_tests);
void ktap_test_begin(struct ktap *k, const char *name);
enum result ktap_test_end(struct ktap *k, const char *name);
/*
 * End the running test early (a crash, the watchdog): a case that says
 * so, with r (RESULT_ERROR or RESULT_TIMEOUT) and reason, then the test's
 * own result, so that readers that count cases see it too.
 */
enum result ktap_test_abort(struct ktap *k, const char *name, enum result r, const char *reason);
/* A top-level result with no cases (skipped or never run). */
void ktap_test_result(struct ktap *k, const char *name, enum result r, const char *reason);
void ktap_case(struct ktap *k, enum result r, const char *fmt, ...) __printf(3, 4);
void ktap_diag(struct ktap *k, const char *fmt, ...) __printf(2, 3);
void ktap_prefix_push(struct ktap *k, const char *prefix);
void ktap_prefix_pop(struct ktap *k);
void ktap_footer(struct ktap *k);
enum result ktap_overall(const struct ktap *k);

/*
 * The check API, on the current instance. Checks read like sentences:
 *   report(ok, "what was checked");
 *   report_eq(actual, expected, "what");  prints both on failure
 * A failed check says where it is, as the KVM selftests' TEST_ASSERT and
 * KUnit's "EXPECTATION FAILED at" do: a "# at tests/smp.c:123" line just
 * before its "not ok", where kunit.py's parser files a diagnostic with
 * the result that follows it.
 */
extern struct ktap *ktap_current;

#define report(pass, ...) report_at(__FILE__, __LINE__, (pass), __VA_ARGS__)
#define report_eq(actual, expected, what)                                                          \
	report_eq_at(__FILE__, __LINE__, (u64)(actual), (u64)(expected), (what))
/* Strings compared exactly; both printed on failure, NULL shown as (null). */
#define report_str_eq(actual, expected, what)                                                      \
	report_str_eq_at(__FILE__, __LINE__, (actual), (expected), (what))
bool report_at(const char *file, u32 lineno, bool pass, const char *fmt, ...) __printf(4, 5);
bool report_eq_at(const char *file, u32 lineno, u64 actual, u64 expected, const char *what);
bool report_str_eq_at(const char *file, u32 lineno, const char *actual, const char *expected,
		      const char *what);
void report_skip(const char *fmt, ...) __printf(1, 2);
void report_error(const char *fmt, ...) __printf(1, 2);
void report_info(const char *fmt, ...) __printf(1, 2);
/*
 * One `# DATA {json}` line; json is the finished document. A line past
 * KTAP_LINE_MAX is an error instead: a subsystem with a record per CPU
 * writes one DATA line per record (docs/results.md, "DATA lines").
 */
void report_data(const char *json);
struct json;
/* Finish j and report it as DATA, or report an error if it overflowed. */
void report_json(struct json *j);
/*
 * A DATA record, the one shape every test's takes: an object whose first
 * key names the test ("test":"smp"), what the test adds, then the end,
 * reported as report_json() does. The host names every number by that
 * test and the key's path (docs/results.md). buf is the array the line is
 * built in, never a pointer: its size bounds the record.
 *
 *	report_data_begin(&j, buf, "smp");
 *	json_u64(&j, "cpus", n);
 *	report_data_end(&j);
 */
#define report_data_begin(j, buf, test)                                                            \
	do {                                                                                       \
		_Static_assert(                                                                    \
			!__builtin_types_compatible_p(__typeof__(buf), __typeof__(&(buf)[0])),     \
			"report_data_begin() builds in an array");                                 \
		report_data_open((j), (buf), sizeof(buf), (test));                                 \
	} while (0)
void report_data_open(struct json *j, char *buf, size_t size, const char *test);
void report_data_end(struct json *j);
void report_prefix_push(const char *prefix);
void report_prefix_pop(void);

#endif
