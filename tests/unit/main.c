// SPDX-License-Identifier: MIT
/*
 * Host unit tests of hvprobe's pure logic. The tests are registered with
 * the kernel's own DEFINE_TEST and run by the kernel's own runner, so the
 * KTAP they print is produced by the code under test too.
 *
 *	build/unit/hvprobe-unit [test,test,...]
 *	build/unit/hvprobe-unit --list
 *
 * --list prints the names the build defines, as one JSON document (as
 * XTF's mkinfo.py writes info.json): every command-line key from the
 * kernel's own option table with what it accepts and its default, the
 * guest tests in run order (the Makefile's TESTS, their link order), and
 * the unit tests. Tools and their tests read names from here, never from
 * a copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cmdline.h"
#include "kernel/lib/json.h"
#include "kernel/test/test.h"

#ifndef GUEST_TESTS
#error "GUEST_TESTS: the Makefile passes its TESTS"
#endif

static const char *const kind_names[] = {
	[OPTION_U32] = "u32",	[OPTION_U64] = "u64",	    [OPTION_U64_AUTO] = "u64_or_auto",
	[OPTION_ENUM] = "enum", [OPTION_STRING] = "string",
};

_Static_assert(ARRAY_SIZE(kind_names) == OPTION_STRING + 1, "a name for each option kind");

static void write_line(const char *line)
{
	puts(line);
}

/* Only a crash or the watchdog end a run early; neither exists here. */
static __noreturn void end(enum result r)
{
	exit(r > RESULT_SKIP);
}

static void list_option(struct json *j, const struct option *o)
{
	json_object_begin(j, NULL);
	json_string(j, "key", o->key);
	json_string(j, "kind", kind_names[o->kind]);
	switch (o->kind) {
	case OPTION_ENUM:
		json_array_begin(j, "values");
		for (u64 i = 0; option_word(o, i); i++)
			json_string(j, NULL, option_word(o, i));
		json_array_end(j);
		json_string(j, "default", option_word(o, o->def));
		break;
	case OPTION_STRING:
		json_u64(j, "max_length", o->count - 1);
		json_string(j, "default", o->def_string);
		break;
	case OPTION_U64_AUTO:
		json_u64(j, "min", o->min);
		json_u64(j, "max", o->max);
		json_string(j, "default", "auto");
		break;
	default:
		json_u64(j, "min", o->min);
		json_u64(j, "max", o->max);
		json_u64(j, "default", o->def);
		break;
	}
	json_object_end(j);
}

/* The guest tests, from the space-separated list the Makefile passes. */
static void list_guest_tests(struct json *j)
{
	static char names[] = GUEST_TESTS;

	json_array_begin(j, "tests");
	for (char *name = strtok(names, " "); name; name = strtok(NULL, " "))
		json_string(j, NULL, name);
	json_array_end(j);
}

static int list(void)
{
	static char buf[64 * 1024];
	const struct test *t;
	struct json j;
	const char *doc;

	json_init(&j, buf, sizeof(buf));
	json_object_begin(&j, NULL);
	json_array_begin(&j, "options");
	for (const struct option *o = options_begin(); o < options_end(); o++)
		list_option(&j, o);
	json_array_end(&j);
	list_guest_tests(&j);
	json_array_begin(&j, "unit_tests");
	for (u32 i = 0; (t = tests_at(i)); i++)
		json_string(&j, NULL, t->name);
	json_array_end(&j);
	json_object_end(&j);
	doc = json_finish(&j);
	if (!doc) {
		fprintf(stderr, "--list: the document does not fit %zu bytes\n", sizeof(buf));
		return 1;
	}
	puts(doc);
	return 0;
}

int main(int argc, char **argv)
{
	const char *selection = argc > 1 ? argv[1] : "all";
	char err[512];

	if (argc == 2 && !strcmp(argv[1], "--list"))
		return list();
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [test,test,...] | --list\n", argv[0]);
		return 2;
	}
	tests_init(write_line, end);
	if (!tests_check_selection("test", selection, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	tests_start(selection, "", "hvprobe host unit tests");
	return tests_run() > RESULT_SKIP;
}
