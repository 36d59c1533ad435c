/* SPDX-License-Identifier: MIT */
/*
 * KTAP version 1 output (Linux Documentation/dev-tools/ktap.rst) and the
 * check API tests use. Every top-level test is a KTAP subtest whose cases
 * are the report*() calls; its own result is the worst of them:
 * pass < skip < error < fail. An error is our bug or a broken environment,
 * a fail is the platform misbehaving (XTF's distinction).
 */
#ifndef KERNEL_TEST_KTAP_H
#define KERNEL_TEST_KTAP_H

#include "kernel/lib/types.h"

enum result {
	RESULT_PASS,
	RESULT_SKIP,
	RESULT_ERROR,
	RESULT_FAIL,
};

#define KTAP_REASON_MAX 160
#define KTAP_PREFIX_MAX 128
#define KTAP_PREFIX_DEPTH 8
#define KTAP_INDENT "    "
#define KTAP_DATA_MAX (256 * 1024)

struct ktap_totals {
	u32 pass, fail, skip, error;
};

struct ktap {
	/* Receives each line without its newline. */
	void (*write_line)(const char *line);
	bool in_test;
	u32 test_number;
	u32 case_number;
	enum result verdict;
	char reason[KTAP_REASON_MAX];
	char prefix[KTAP_PREFIX_MAX];
	u32 prefix_len[KTAP_PREFIX_DEPTH];
	u32 prefix_depth;
	struct ktap_totals totals;
};

void ktap_init(struct ktap *k, void (*write_line)(const char *line));
void ktap_header(struct ktap *k, u32 planned_tests);
void ktap_test_begin(struct ktap *k, const char *name);
enum result ktap_test_end(struct ktap *k, const char *name);
/* A top-level result with no cases (skipped or never run). */
void ktap_test_result(struct ktap *k, const char *name, enum result r, const char *reason);
void ktap_case(struct ktap *k, enum result r, const char *fmt, ...) __printf(3, 4);
void ktap_vcase(struct ktap *k, enum result r, const char *fmt, va_list ap);
void ktap_diag(struct ktap *k, const char *fmt, ...) __printf(2, 3);
void ktap_prefix_push(struct ktap *k, const char *prefix);
void ktap_prefix_pop(struct ktap *k);
void ktap_footer(struct ktap *k);
enum result ktap_overall(const struct ktap *k);

/*
 * The check API, on the current instance. Checks read like sentences:
 *   report(ok, "what was checked");
 *   report_eq(actual, expected, "what");  prints both on failure
 */
extern struct ktap *ktap_current;

bool report(bool pass, const char *fmt, ...) __printf(2, 3);
bool report_eq_u64(u64 actual, u64 expected, const char *what);
#define report_eq(actual, expected, what) \
	report_eq_u64((u64)(actual), (u64)(expected), (what))
/* Strings compared exactly; both printed on failure, NULL shown as (null). */
bool report_str_eq(const char *actual, const char *expected, const char *what);
void report_skip(const char *fmt, ...) __printf(1, 2);
void report_error(const char *fmt, ...) __printf(1, 2);
void report_info(const char *fmt, ...) __printf(1, 2);
/* One `# DATA {json}` line, up to KTAP_DATA_MAX; json is the finished document. */
void report_data(const char *json);
struct json;
/* Finish j and report it as DATA, or report an error if it overflowed. */
void report_json(struct json *j);
void report_prefix_push(const char *prefix);
void report_prefix_pop(void);

#endif
