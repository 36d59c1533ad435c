// SPDX-License-Identifier: MIT
/*
 * The KTAP writer and the report*() API, on private instances whose lines
 * are captured. The KTAP log is the only thing the host runner, KUnit's
 * parser and KernelCI read, so its exact text is an interface: a wrong
 * indent, a stray '#' or a verdict that lets an error pass as "ok" would
 * misreport a hypervisor. Covered: plan and header, subtests without a
 * plan (ktap.rst: plans follow version lines or are left out), the SKIP,
 * ERROR and TIMEOUT directives, ktap.rst's verdicts (a skip lowers
 * nothing; a test is skipped when all of it was), the test that checked
 * nothing, a test ended by a crash or the watchdog, prefixes, DATA lines
 * past the line length, and the cases and totals lines.
 *
 * report*() write to ktap_current, which is the harness's own instance
 * while this runs: those checks point it at a private instance for the
 * calls and restore it before asserting anything.
 */
#include <string.h>

#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/test/ktap.h"
#include "kernel/test/test.h"

#define CAPTURE_LINES 32
#define CAPTURE_LINE_MAX (KTAP_LINE_MAX + 8)

static char captured[CAPTURE_LINES][CAPTURE_LINE_MAX];
static u32 captured_count;

static void capture(const char *line)
{
	if (captured_count < CAPTURE_LINES) {
		strncpy(captured[captured_count], line, CAPTURE_LINE_MAX - 1);
		captured[captured_count][CAPTURE_LINE_MAX - 1] = '\0';
	}
	captured_count++;
}

/* A fresh instance writing into the capture. */
static void start(struct ktap *k)
{
	captured_count = 0;
	ktap_init(k, capture);
}

/* The captured lines must be exactly expected[0..n). */
static void check_lines(const char *const *expected, u32 n, const char *what)
{
	u32 i;

	for (i = 0; i < n && i < captured_count; i++)
		if (strcmp(captured[i], expected[i]))
			break;
	if (i < n || captured_count != n) {
		report_info("%s: line %u differs", what, i + 1);
		report_info("  got:      \"%s\"", i < captured_count ? captured[i] : "(none)");
		report_info("  expected: \"%s\"", i < n ? expected[i] : "(none)");
	}
	report(i == n && captured_count == n, "%s", what);
}

/* The most recent captured line must be exactly expected. */
static void check_last(const char *expected, const char *what)
{
	const char *last = captured_count ? captured[captured_count - 1] : "(none)";

	if (strcmp(last, expected))
		report_info("%s: got \"%s\", expected \"%s\"", what, last, expected);
	report(!strcmp(last, expected), "%s", what);
}

/* One subtest holding cases of the given results, in order. */
static enum result run_cases(struct ktap *k, const enum result *r, u32 n)
{
	static const char *const names[] = { "passed", "skipped", "errored", "timed out",
					     "failed" };

	start(k);
	ktap_test_begin(k, "t");
	for (u32 i = 0; i < n; i++)
		ktap_case(k, r[i], "%s %u", names[r[i]], i + 1);
	return ktap_test_end(k, "t");
}

static void check_verdict(const enum result *r, u32 n, enum result expected_r,
			  const char *expected_line, const char *what)
{
	struct ktap k;

	report_eq(run_cases(&k, r, n), expected_r, what);
	check_last(expected_line, what);
}

DEFINE_TEST(unit_ktap_plan, "header, subtests, case lines and totals", 0)
{
	static const char *const want[] = {
		"KTAP version 1",
		"1..2",
		"    KTAP version 1",
		"    # Subtest: alpha",
		"    # a diagnostic",
		"    ok 1 first check",
		"    ok 2 second check",
		"ok 1 alpha",
		"    KTAP version 1",
		"    # Subtest: beta",
		"    not ok 1 it broke",
		"not ok 2 beta",
		"# Cases: pass:2 fail:1 skip:0 error:0",
		"# Totals: pass:1 fail:1 skip:0 error:0",
	};
	struct ktap k;

	start(&k);
	ktap_header(&k, 2);
	ktap_test_begin(&k, "alpha");
	ktap_diag(&k, "a %s", "diagnostic");
	ktap_case(&k, RESULT_PASS, "first check");
	ktap_case(&k, RESULT_PASS, "second %s", "check");
	report_eq(ktap_test_end(&k, "alpha"), RESULT_PASS, "passing subtest ends as a pass");
	ktap_test_begin(&k, "beta");
	ktap_case(&k, RESULT_FAIL, "it broke");
	report_eq(ktap_test_end(&k, "beta"), RESULT_FAIL, "failing subtest ends as a fail");
	ktap_footer(&k);
	check_lines(want, ARRAY_SIZE(want), "the whole log, line for line");
	report_eq(ktap_overall(&k), RESULT_FAIL, "overall result is the fail");
}

DEFINE_TEST(unit_ktap_directives, "SKIP and ERROR lines name their reason", 0)
{
	static const char *const want[] = {
		"    KTAP version 1",
		"    # Subtest: hpet",
		"    ok 1 no HPET # SKIP no HPET",
		"    not ok 2 table bad # ERROR table bad",
		"    ok 3 hpet: main counter # SKIP not enabled",
		"not ok 1 hpet # ERROR table bad",
	};
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "hpet");
	ktap_case(&k, RESULT_SKIP, "no HPET");
	ktap_case(&k, RESULT_ERROR, "table %s", "bad");
	ktap_prefix_push(&k, "hpet: main counter");
	ktap_case(&k, RESULT_SKIP, "not enabled");
	ktap_prefix_pop(&k);
	ktap_test_end(&k, "hpet");
	check_lines(want, ARRAY_SIZE(want), "a skip or error with no prefix repeats its reason");

	start(&k);
	ktap_header(&k, 4);
	ktap_test_result(&k, "pmu", RESULT_SKIP, "no PMU");
	ktap_test_result(&k, "smp", RESULT_ERROR, "crashed");
	ktap_test_result(&k, "tsc", RESULT_PASS, "ignored");
	ktap_test_result(&k, "apic", RESULT_FAIL, "ignored");
	ktap_footer(&k);
	{
		static const char *const results[] = {
			"KTAP version 1",
			"1..4",
			"ok 1 pmu # SKIP no PMU",
			"not ok 2 smp # ERROR crashed",
			"ok 3 tsc",
			"not ok 4 apic",
			"# Cases: pass:0 fail:0 skip:0 error:0",
			"# Totals: pass:1 fail:1 skip:1 error:1",
		};

		check_lines(results, ARRAY_SIZE(results),
			    "top-level results carry a reason only with a directive");
	}
}

DEFINE_TEST(unit_ktap_verdict, "ktap.rst's verdicts: fail > error > pass; skip when all skip", 0)
{
	static const enum result pass_skip[] = { RESULT_PASS, RESULT_SKIP, RESULT_PASS };
	static const enum result all_skip[] = { RESULT_SKIP, RESULT_SKIP };
	static const enum result skip_error[] = { RESULT_SKIP, RESULT_ERROR, RESULT_SKIP };
	static const enum result fail_first[] = { RESULT_FAIL, RESULT_ERROR, RESULT_SKIP };
	static const enum result error_fail[] = { RESULT_ERROR, RESULT_PASS, RESULT_FAIL };
	static const enum result two_errors[] = { RESULT_ERROR, RESULT_ERROR };
	static const enum result all_pass[] = { RESULT_PASS, RESULT_PASS };

	check_verdict(all_pass, ARRAY_SIZE(all_pass), RESULT_PASS, "ok 1 t", "only passes: pass");
	check_verdict(pass_skip, ARRAY_SIZE(pass_skip), RESULT_PASS, "ok 1 t",
		      "a skip among passes: still a pass");
	check_verdict(all_skip, ARRAY_SIZE(all_skip), RESULT_SKIP, "ok 1 t # SKIP skipped 1",
		      "every case skipped: a skip, with the first one's reason");
	check_verdict(skip_error, ARRAY_SIZE(skip_error), RESULT_ERROR,
		      "not ok 1 t # ERROR errored 2", "an error among skips: error");
	check_verdict(error_fail, ARRAY_SIZE(error_fail), RESULT_FAIL, "not ok 1 t",
		      "a fail after an error: fail");
	check_verdict(fail_first, ARRAY_SIZE(fail_first), RESULT_FAIL, "not ok 1 t",
		      "milder results after a fail: still fail");
	check_verdict(two_errors, ARRAY_SIZE(two_errors), RESULT_ERROR,
		      "not ok 1 t # ERROR errored 1", "two errors: the first one's reason");
	check_verdict(NULL, 0, RESULT_ERROR, "not ok 1 t # ERROR no checks were made",
		      "no checks at all: error");
	report(!strcmp(captured[captured_count - 2], "    # Subtest: t"),
	       "a subtest prints no plan, not even 1..0");
}

/* Prefixes join with ': ', pop back, and '#' in a description is replaced. */
static void prefixes_join_and_pop(void)
{
	static const char *const want[] = {
		"    KTAP version 1",
		"    # Subtest: t",
		"    ok 1 cpu _1: 3 _ 4",
		"    ok 2 outer: x",
		"    ok 3 outer: inner: y",
		"    ok 4 outer: z",
		"    ok 5 w",
		"    not ok 6 outer: inner # ERROR why _2",
		"not ok 1 t # ERROR why _2",
	};
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "t");
	ktap_case(&k, RESULT_PASS, "cpu #1: %d # %d", 3, 4);
	ktap_prefix_push(&k, "outer");
	ktap_case(&k, RESULT_PASS, "x");
	ktap_prefix_push(&k, "inner");
	ktap_case(&k, RESULT_PASS, "y");
	ktap_prefix_pop(&k);
	ktap_case(&k, RESULT_PASS, "z");
	ktap_prefix_pop(&k);
	ktap_prefix_pop(&k);
	ktap_case(&k, RESULT_PASS, "w");
	ktap_prefix_push(&k, "outer");
	ktap_prefix_push(&k, "inner");
	ktap_case(&k, RESULT_ERROR, "why #2");
	ktap_test_end(&k, "t");
	check_lines(want, ARRAY_SIZE(want), "prefixes join with ': ' and pop back");
}

/* A new test starts with no prefix, whatever the last one left. */
static void new_test_clears_prefix(void)
{
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "a");
	ktap_prefix_push(&k, "left over");
	ktap_case(&k, RESULT_PASS, "x");
	ktap_test_end(&k, "a");
	ktap_test_begin(&k, "b");
	ktap_case(&k, RESULT_PASS, "y");
	check_last("    ok 1 y", "ktap_test_begin clears the prefix and numbers from 1");
}

/* Pushes past KTAP_PREFIX_DEPTH are dropped, and pops stop at empty. */
static void prefix_depth(void)
{
	static const char *const levels[KTAP_PREFIX_DEPTH + 1] = { "0", "1", "2", "3", "4",
								   "5", "6", "7", "8" };
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "t");
	for (u32 i = 0; i < ARRAY_SIZE(levels); i++)
		ktap_prefix_push(&k, levels[i]);
	ktap_case(&k, RESULT_PASS, "deep");
	check_last("    ok 1 0: 1: 2: 3: 4: 5: 6: 7: deep", "the push past the depth is dropped");
	for (int i = 0; i < KTAP_PREFIX_DEPTH + 2; i++)
		ktap_prefix_pop(&k);
	ktap_case(&k, RESULT_PASS, "flat");
	check_last("    ok 2 flat", "extra pops leave the prefix empty");
}

/* A '#' in a prefix would start a bogus directive ("# 1: ..."). */
static void hash_in_prefix(void)
{
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "t");
	ktap_prefix_push(&k, "cpu #1");
	ktap_case(&k, RESULT_PASS, "x");
	check_last("    ok 1 cpu _1: x", "a hash sign in a prefix is replaced too");
}

/* A newline in a description (a hypervisor's CPUID brand string, say)
 * would split the result line into a non-KTAP second half. */
static void newline_in_description(void)
{
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "t");
	ktap_case(&k, RESULT_PASS, "brand \"%s\"", "QEMU\nVirtual CPU");
	report(!strchr(captured[captured_count - 1], '\n'),
	       "a newline in a description does not split the line");
}

/* Descriptions far beyond a line are cut, not overflowed (ASan). */
static void long_lines_cut(void)
{
	char long_desc[700];
	struct ktap k;

	memset(long_desc, 'a', sizeof(long_desc) - 1);
	long_desc[sizeof(long_desc) - 1] = '\0';
	start(&k);
	ktap_test_begin(&k, "t");
	ktap_prefix_push(&k, long_desc);
	ktap_case(&k, RESULT_FAIL, "%s", long_desc);
	ktap_case(&k, RESULT_ERROR, "%s", long_desc);
	ktap_test_end(&k, "t");
	/* "    not ok 1 " + the name cut to 255 (127-character prefix, ": ", 126) */
	report_eq(strlen(captured[2]), 13 + 255, "a failed case's name is cut to 255 characters");
	/* "    not ok 2 " + the 127-character prefix + " # ERROR " + 255 */
	report_eq(strlen(captured[3]), 13 + 127 + 9 + 255,
		  "an error's prefix is cut to 127 and its reason to 255 characters");
	check_last("not ok 1 t", "the cut lines still give a verdict");
}

DEFINE_TEST(unit_ktap_text, "'#' kept out of descriptions, prefixes, long lines", 0)
{
	prefixes_join_and_pop();
	new_test_clears_prefix();
	prefix_depth();
	hash_in_prefix();
	newline_in_description();
	long_lines_cut();
}

DEFINE_TEST(unit_ktap_report, "report*() write to ktap_current", 0)
{
	char at_false[64], at_two[64];
	const char *const want[] = {
		"    KTAP version 1",
		"    # Subtest: t",
		"    ok 1 true holds",
		at_false,
		"    not ok 2 false fails",
		"    ok 3 three",
		"    # two: got 2 (0x2), expected 3 (0x3)",
		at_two,
		"    not ok 4 two",
		"    # info 7",
		"    # DATA {\"a\":1}",
		"    ok 5 p: q",
		"    ok 6 p # SKIP not here",
		"    not ok 7 broken # ERROR broken",
		"not ok 1 t",
		"# Cases: pass:3 fail:2 skip:1 error:1",
		"# Totals: pass:0 fail:1 skip:0 error:0",
	};
	struct ktap *saved = ktap_current;
	bool r_true, r_false, r_eq, r_ne;
	u32 line_false, line_two;
	struct ktap k;

	start(&k);
	ktap_current = &k;
	ktap_test_begin(&k, "t");
	r_true = report(true, "%s holds", "true");
	line_false = __LINE__, r_false = report(false, "false fails");
	r_eq = report_eq(3, 3, "three");
	line_two = __LINE__, r_ne = report_eq(2, 3, "two");
	report_info("info %d", 7);
	report_data("{\"a\":1}");
	report_prefix_push("p");
	report(true, "q");
	report_skip("not %s", "here");
	report_prefix_pop();
	report_error("broken");
	ktap_test_end(&k, "t");
	ktap_footer(&k);
	ktap_current = saved;

	snprintf(at_false, sizeof(at_false), "    # at %s:%u", __FILE__, line_false);
	snprintf(at_two, sizeof(at_two), "    # at %s:%u", __FILE__, line_two);
	check_lines(want, ARRAY_SIZE(want), "each call's line, in order; a failure says where");
	report(r_true && !r_false && r_eq && !r_ne, "report and report_eq return the check");
	report_eq(k.totals.fail, 1, "one failed test counted");
}

static u32 assert_line;
static bool assert_went_on;

static void asserting_body(void)
{
	report(true, "before");
	report_prefix_push("p");
	assert_line = __LINE__ + 1;
	ASSERT(1 + 1 == 3, "needs %d", 3);
	assert_went_on = true;
	report(true, "after");
}

static void passing_body(void)
{
	ASSERT(true, "holds");
	report(true, "ran to its end");
}

DEFINE_TEST(unit_ktap_assert, "ASSERT() ends a test as an error, where it failed", 0)
{
	char at[96];
	const char *const want[] = {
		"    KTAP version 1",
		"    # Subtest: t",
		"    ok 1 before",
		at,
		"    not ok 2 p # ERROR needs 3",
		"not ok 1 t # ERROR needs 3",
		"    KTAP version 1",
		"    # Subtest: u",
		"    ok 1 ran to its end",
		"ok 2 u",
	};
	struct ktap *saved = ktap_current;
	bool asserted, passed;
	enum result r;
	struct ktap k;

	start(&k);
	ktap_current = &k;
	ktap_test_begin(&k, "t");
	asserted = !tests_call(asserting_body);
	r = ktap_test_end(&k, "t");
	ktap_test_begin(&k, "u");
	passed = tests_call(passing_body);
	ktap_test_end(&k, "u");
	ktap_current = saved;

	snprintf(at, sizeof(at), "    # ASSERT(1 + 1 == 3) failed at %s:%u", __FILE__, assert_line);
	check_lines(want, ARRAY_SIZE(want), "the failed ASSERT's lines, then the next test's");
	report(asserted && !assert_went_on, "the body ends at the ASSERT");
	report_eq(r, RESULT_ERROR, "an error, not a fail: our bug or a broken environment");
	report(passed, "a body whose ASSERTs hold runs to its end");
}

static void record_body(void)
{
	char buf[64];
	struct json j;

	report_data_begin(&j, buf, "t");
	json_u64(&j, "cpus", 4);
	report_data_end(&j);
	report_data_begin(&j, buf, "t");
	json_string(&j, "long", "a value longer than the line's buffer of 64 bytes, it is");
	report_data_end(&j);
}

DEFINE_TEST(unit_ktap_data_record, "report_data_begin/end frame a DATA record", 0)
{
	static const char *const want[] = {
		"    KTAP version 1",
		"    # Subtest: t",
		"    # DATA {\"test\":\"t\",\"cpus\":4}",
		"    not ok 1 DATA line did not fit its 64-byte buffer # ERROR DATA line did not "
		"fit "
		"its 64-byte buffer",
	};
	struct ktap *saved = ktap_current;
	struct ktap k;

	start(&k);
	ktap_current = &k;
	ktap_test_begin(&k, "t");
	record_body();
	ktap_current = saved;

	check_lines(want, ARRAY_SIZE(want),
		    "the record opens with its test, an overflow is an error");
}

DEFINE_TEST(unit_ktap_abort, "a crash or the watchdog ends a test with a case", 0)
{
	static const char *const crash[] = {
		"    KTAP version 1",
		"    # Subtest: smp",
		"    ok 1 started",
		"    not ok 2 the test ran to its end # ERROR crashed: unexpected #UD",
		"not ok 1 smp # ERROR crashed: unexpected #UD",
	};
	static const char *const hang[] = {
		"    KTAP version 1",
		"    # Subtest: hang",
		"    ok 1 spinning",
		"    not ok 2 the test ran to its end # TIMEOUT watchdog: still running after 2 s",
		"not ok 1 hang # TIMEOUT watchdog: still running after 2 s",
		"# Cases: pass:1 fail:0 skip:0 error:1",
		"# Totals: pass:0 fail:0 skip:0 error:1",
	};
	struct ktap k;

	start(&k);
	ktap_test_begin(&k, "smp");
	ktap_case(&k, RESULT_PASS, "started");
	report_eq(ktap_test_abort(&k, "smp", RESULT_ERROR, "crashed: unexpected #UD"), RESULT_ERROR,
		  "a crash ends the test as an error");
	check_lines(crash, ARRAY_SIZE(crash), "the crash is a case, then the test's result");

	start(&k);
	ktap_test_begin(&k, "hang");
	ktap_case(&k, RESULT_PASS, "spinning");
	report_eq(ktap_test_abort(&k, "hang", RESULT_TIMEOUT, "watchdog: still running after 2 s"),
		  RESULT_TIMEOUT, "the watchdog ends the test as a timeout");
	ktap_footer(&k);
	check_lines(hang, ARRAY_SIZE(hang), "a timeout is a TIMEOUT case, counted as an error");
	report_eq(ktap_overall(&k), RESULT_ERROR, "and the run is an error");
}

DEFINE_TEST(unit_ktap_line_length, "no line is longer than KTAP_LINE_MAX", 0)
{
	static char json[KTAP_LINE_MAX + 16];
	struct ktap *saved = ktap_current;
	size_t fits = KTAP_LINE_MAX - strlen("    # DATA ");
	struct ktap k;

	memset(json, 'x', sizeof(json) - 1);
	start(&k);
	ktap_current = &k;
	ktap_test_begin(&k, "t");
	json[fits] = '\0';
	report_data(json);
	json[fits] = 'x';
	json[fits + 1] = '\0';
	report_data(json);
	ktap_current = saved;

	report_eq(captured_count, 4, "the longest DATA line is written, one byte more is not");
	report_eq(strlen(captured[2]), KTAP_LINE_MAX, "a DATA line of exactly KTAP_LINE_MAX bytes");
	report(!strncmp(captured[3], "    not ok 1 a DATA line of 1025 bytes", 38),
	       "the longer one is an error case that says how long it was");
}
