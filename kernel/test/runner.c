// SPDX-License-Identifier: MIT
/*
 * Selects and runs the registered tests, one KTAP subtest each, and ends
 * the plan: after a crash too, so that the log always has its totals line.
 */
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/test/test.h"

extern const struct test __start_hvprobe_tests[], __stop_hvprobe_tests[];

static struct ktap ktap_main;

static struct {
	const char *selection;
	const struct test *running;
	u64 seq; /* tests started so far */
	bool started, finished;
} run;

static __noreturn void (*run_exit)(enum result r);

void tests_init(void (*write_line)(const char *line), __noreturn void (*exit)(enum result r))
{
	ktap_init(&ktap_main, write_line);
	ktap_current = &ktap_main;
	run_exit = exit;
}

const struct test *tests_begin(void)
{
	return __start_hvprobe_tests;
}

const struct test *tests_end(void)
{
	return __stop_hvprobe_tests;
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

bool tests_check_selection(const char *selection, char *err, size_t errlen)
{
	for (const char *p = selection; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool known = len == 3 && !strncmp(p, "all", 3);

		for (const struct test *t = tests_begin(); !known && t < tests_end(); t++)
			known = strlen(t->name) == len && !strncmp(p, t->name, len);
		if (!known) {
			snprintf(err, errlen, "test: unknown test '%.*s' (accepted: all", (int)len,
				 p);
			for (const struct test *t = tests_begin(); t < tests_end(); t++) {
				str_append(err, ", ", errlen);
				str_append(err, t->name, errlen);
			}
			str_append(err, ")", errlen);
			return false;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return true;
}

void tests_start(const char *selection, const char *banner)
{
	struct ktap *k = &ktap_main;
	u32 planned = 0;

	run.selection = selection;
	for (const struct test *t = tests_begin(); t < tests_end(); t++)
		planned += selected(t, selection);
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
	for (const struct test *t = tests_begin(); t < tests_end(); t++)
		if (selected(t, run.selection))
			ktap_test_result(k, t->name, RESULT_ERROR, why);
	run.finished = true;
	ktap_footer(k);
	return ktap_overall(k);
}

enum result tests_run(void)
{
	struct ktap *k = &ktap_main;

	for (const struct test *t = tests_begin(); t < tests_end(); t++) {
		if (!selected(t, run.selection))
			continue;
		run.running = t;
		run.seq++;
		ktap_test_begin(k, t->name);
		t->run();
		ktap_test_end(k, t->name);
	}
	run.running = NULL;
	run.finished = true;
	ktap_footer(k);
	return ktap_overall(k);
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

void tests_abort(const char *reason)
{
	struct ktap *k = &ktap_main;
	const struct test *crashed = run.running;
	char why[KTAP_REASON_MAX];

	if (!run.started) {
		tests_fail_setup("boot", reason);
		return;
	}
	if (run.finished)
		return;
	run.finished = true;
	if (!crashed) {
		ktap_diag(k, "%s outside any test", reason);
		k->totals.error++;
		ktap_footer(k);
		return;
	}
	run.running = NULL;
	ktap_test_result(k, crashed->name, RESULT_ERROR, reason);
	snprintf(why, sizeof(why), "not run: test '%s' crashed", crashed->name);
	for (const struct test *t = crashed + 1; t < tests_end(); t++)
		if (selected(t, run.selection))
			ktap_test_result(k, t->name, RESULT_SKIP, why);
	ktap_footer(k);
}

void tests_end_run(const char *reason)
{
	tests_abort(reason);
	run_exit(RESULT_ERROR);
}
