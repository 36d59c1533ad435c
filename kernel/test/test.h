/* SPDX-License-Identifier: MIT */
/*
 * Test registration: one line per test,
 *
 *	DEFINE_TEST(boot, "the loader's information arrives intact", 0)
 *	{
 *		...report() calls...
 *	}
 *
 * places a descriptor in the hvprobe_tests table; the runner selects by
 * name and runs them in table order, which is link order: the Makefile
 * links the guest tests last, in the order of its TESTS list.
 */
#ifndef KERNEL_TEST_TEST_H
#define KERNEL_TEST_TEST_H

#include "kernel/lib/table.h"
#include "kernel/test/ktap.h"

/* Run only when named in test=, never as part of "all". */
#define TEST_EXPLICIT BIT(0)

struct test {
	const char *name;
	const char *summary;
	u64 flags;
	void (*run)(void);
};

#define DEFINE_TEST(tname, tsummary, tflags)                                                       \
	static void test_##tname(void);                                                            \
	static const struct test test_desc_##tname TABLE_ENTRY(hvprobe_tests) = {                  \
		.name = #tname,                                                                    \
		.summary = tsummary,                                                               \
		.flags = tflags,                                                                   \
		.run = test_##tname,                                                               \
	};                                                                                         \
	static void test_##tname(void)

/*
 * ASSERT(cond, "fmt", ...): a condition without which the rest of the
 * test would measure nothing (a table it reads, a CPU it needs). When it
 * does not hold, the test ends there as an error, our bug or a broken
 * environment rather than the platform's failure (XTF's xtf_error(), KUT's
 * assert()): a "# ASSERT(cond) failed at file:line" line, an error case
 * saying fmt, then the test's result; the run goes on with the next test.
 * For the BSP's test code, as report() is; outside a test it ends the run
 * as a crash does.
 */
#define ASSERT(cond, fmt, ...)                                                                     \
	do {                                                                                       \
		if (!(cond))                                                                       \
			test_assert_failed(__FILE__, __LINE__, #cond, fmt, ##__VA_ARGS__);         \
	} while (0)
__noreturn void test_assert_failed(const char *file, u32 lineno, const char *cond, const char *fmt,
				   ...) __printf(4, 5);
/*
 * Call fn as a test's body is called: false when an ASSERT ended it.
 * Calls nest (a unit test of ASSERT runs one inside its own).
 */
bool tests_call(void (*fn)(void));

/* The registered tests, in run order: the i-th, or NULL past the end. */
const struct test *tests_at(u32 i);

/*
 * Direct all KTAP output to write_line, and end a run that cannot go on
 * (a crash, the watchdog) with exit; first thing at boot.
 */
void tests_init(void (*write_line)(const char *line), __noreturn void (*exit)(enum result r));

/*
 * Check a comma-separated selection ("all" or names) given as key=. On an
 * unknown name, writes a message listing the tests and returns false.
 */
bool tests_check_selection(const char *key, const char *selection, char *why, size_t whylen);
/*
 * Print the plan for the selection; set-up diagnostics may follow. The
 * tests skip names stay in the plan, each a SKIP that is not run: a host
 * that knows a test cannot run here (int3 under some KVMs) says so.
 */
void tests_start(const char *selection, const char *skip, const char *banner);
/* Set-up after tests_start() failed: every planned test is an error. */
enum result tests_abort_setup(const char *reason);
/* Run the planned tests and print the totals; returns the worst result. */
enum result tests_run(void);
/* The test running now, or NULL; *seq changes with every test started. */
const struct test *tests_current(u64 *seq);
/* A run that cannot start: a one-test plan whose test is an error. */
enum result tests_fail_setup(const char *name, const char *reason);
/*
 * Ends the run from a crash (r = RESULT_ERROR) or the watchdog (r =
 * RESULT_TIMEOUT), keeping the KTAP well-formed: the running test gets a
 * case with r and the reason, then its own result; the rest are reported
 * as not run.
 */
void tests_abort(enum result r, const char *reason);
/*
 * tests_abort(), then exit: the end of a run that cannot go on, r being
 * RESULT_ERROR for a crash and RESULT_TIMEOUT for the watchdog.
 */
__noreturn void tests_end_run(enum result r, const char *reason);
/* A crash, for trap_set_fatal(): tests_end_run(RESULT_ERROR, reason). */
__noreturn void tests_crashed(const char *reason);

#endif
