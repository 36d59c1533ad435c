// SPDX-License-Identifier: MIT
/*
 * Host unit tests of hvprobe's pure logic. The tests are registered with
 * the kernel's own DEFINE_TEST and run by the kernel's own runner, so the
 * KTAP they print is produced by the code under test too.
 *
 *	build/unit/hvprobe-unit [test,test,...]
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernel/test/test.h"

static void write_line(const char *line)
{
	puts(line);
}

/* Only a crash or the watchdog end a run early; neither exists here. */
static __noreturn void end(enum result r)
{
	exit(r > RESULT_SKIP);
}

int main(int argc, char **argv)
{
	const char *selection = argc > 1 ? argv[1] : "all";
	char err[512];

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [test,test,...]\n", argv[0]);
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
