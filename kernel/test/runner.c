// SPDX-License-Identifier: MIT
/*
 * Selects and runs the registered tests, one KTAP subtest each, and ends
 * the plan: after a crash too, so that the log always has its totals line.
 */
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/test/test.h"

TABLE_DECLARE(struct test, hvprobe_tests);

static struct ktap ktap_main;

static struct {
	const char *selection;
	const char *skip; /* planned, but reported as skipped, not run */
	const struct test *running;
	u32 next; /* the run order's place after the last test started */
	u64 seq;  /* tests started so far */
	bool started, finished;
} run;

static __noreturn void (*run_exit)(enum result r);

void tests_init(void (*write_line)(const char *line), __noreturn void (*exit)(enum result r))
{
	ktap_init(&ktap_main, write_line);
	ktap_current = &ktap_main;
	run_exit = exit;
}

const struct test *tests_at(u32 i)
{
	return i < (u32)(TABLE_END(hvprobe_tests) - TABLE_BEGIN(hvprobe_tests))
		       ? &TABLE_BEGIN(hvprobe_tests)[i]
		       : NULL;
}

/* Is name an element of the comma-separated list? */
static bool list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

static bool selected(const struct test *t, const char *selection)
{
	if (list_has(selection, t->name))
		return true;
	return list_has(selection, "all") && !(t->flags & TEST_EXPLICIT);
}

bool tests_check_selection(const char *key, const char *selection, char *why, size_t whylen)
{
	for (const char *p = selection; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool known = len == 3 && !strncmp(p, "all", 3);

		for (u32 i = 0; !known && tests_at(i); i++)
			known = strlen(tests_at(i)->name) == len &&
				!strncmp(p, tests_at(i)->name, len);
		if (!known) {
			snprintf(why, whylen, "%s: unknown test '%.*s' (accepted: all", key,
				 (int)len, p);
			for (u32 i = 0; tests_at(i); i++) {
				str_append(why, ", ", whylen);
				str_append(why, tests_at(i)->name, whylen);
			}
			str_append(why, ")", whylen);
			return false;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return true;
}

void tests_start(const char *selection, const char *skip, const char *banner)
{
	struct ktap *k = &ktap_main;
	u32 planned = 0;

	run.selection = selection;
	run.skip = skip;
	for (u32 i = 0; tests_at(i); i++)
		planned += selected(tests_at(i), selection);
	run.started = true;
	ktap_header(k, planned);
	if (banner)
		ktap_diag(k, "%s", banner);
}

enum result tests_abort_setup(const char *reason)
{
	struct ktap *k = &ktap_main;
	char why[KTAP_REASON_MAX];

	snprintf(why, sizeof(why), "not run: set-up failed: %s", reason);
	for (u32 i = 0; tests_at(i); i++)
		if (selected(tests_at(i), run.selection))
			ktap_test_result(k, tests_at(i)->name, RESULT_ERROR, why);
	run.finished = true;
	ktap_footer(k);
	return ktap_overall(k);
}

enum result tests_run(void)
{
	struct ktap *k = &ktap_main;

	for (u32 i = 0; tests_at(i); i++) {
		const struct test *t = tests_at(i);

		if (!selected(t, run.selection))
			continue;
		run.next = i + 1;
		if (list_has(run.skip, t->name)) {
			ktap_test_result(k, t->name, RESULT_SKIP, "skip= on the command line");
			continue;
		}
		run.running = t;
		run.seq++;
		ktap_test_begin(k, t->name);
		tests_call(t->run);
		ktap_test_end(k, t->name);
	}
	run.running = NULL;
	run.finished = true;
	ktap_footer(k);
	return ktap_overall(k);
}

/*
 * Where a failed ASSERT resumes: GCC's __builtin_setjmp() buffer (five
 * words; the compiler saves what the jump must restore), NULL outside
 * tests_call().
 */
static void **assert_landing;

bool tests_call(void (*fn)(void))
{
	void *landing[5];
	void **volatile outer = assert_landing;

	if (__builtin_setjmp(landing)) {
		assert_landing = outer;
		return false;
	}
	assert_landing = landing;
	fn();
	assert_landing = outer;
	return true;
}

void test_assert_failed(const char *file, u32 lineno, const char *cond, const char *fmt, ...)
{
	char why[KTAP_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!assert_landing) {
		char crash[KTAP_REASON_MAX];

		snprintf(crash, sizeof(crash), "ASSERT(%s) failed outside a test at %s:%u: %s",
			 cond, file, lineno, why);
		tests_crashed(crash);
	}
	report_info("ASSERT(%s) failed at %s:%u", cond, file, lineno);
	report_error("%s", why);
	__builtin_longjmp(assert_landing, 1);
}

const struct test *tests_current(u64 *seq)
{
	*seq = run.seq;
	return run.running;
}

enum result tests_fail_setup(const char *name, const char *reason)
{
	struct ktap *k = &ktap_main;

	run.started = run.finished = true;
	ktap_header(k, 1);
	ktap_test_result(k, name, RESULT_ERROR, reason);
	ktap_footer(k);
	return ktap_overall(k);
}

void tests_abort(enum result r, const char *reason)
{
	struct ktap *k = &ktap_main;
	const struct test *stopped = run.running;
	char why[KTAP_REASON_MAX];

	if (!run.started) {
		tests_fail_setup("boot", reason);
		return;
	}
	if (run.finished)
		return;
	run.finished = true;
	if (!stopped) {
		/* In set-up or between tests: what has not run is an error, not a skip. */
		snprintf(why, sizeof(why), "not run: %s outside any test", reason);
		for (u32 i = run.next; tests_at(i); i++)
			if (selected(tests_at(i), run.selection))
				ktap_test_result(k, tests_at(i)->name, RESULT_ERROR, why);
		ktap_footer(k);
		return;
	}
	run.running = NULL;
	ktap_test_abort(k, stopped->name, r, reason);
	snprintf(why, sizeof(why), "not run: test '%s' %s", stopped->name,
		 r == RESULT_TIMEOUT ? "never ended" : "crashed");
	for (u32 i = run.next; tests_at(i); i++)
		if (selected(tests_at(i), run.selection))
			ktap_test_result(k, tests_at(i)->name, RESULT_SKIP, why);
	ktap_footer(k);
}

void tests_end_run(enum result r, const char *reason)
{
	tests_abort(r, reason);
	run_exit(r);
}

void tests_crashed(const char *reason)
{
	tests_end_run(RESULT_ERROR, reason);
}
