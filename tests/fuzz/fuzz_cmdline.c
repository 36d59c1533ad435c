// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the kernel command line. Whoever starts the VM types it
 * and the loader passes it on unchanged, so it can be anything. Beyond
 * not crashing: a line that is accepted leaves every option inside the
 * range its key documents (an enum inside its name table, a number inside
 * its min..max), so no later code indexes a table with a bad value; a
 * line that is refused always gets a terminated, non-empty message, since
 * that message is all the user sees. The message buffer's size comes from
 * the input too, so truncation at every length is exercised.
 */
#include <stdlib.h>

#include "kernel/cmdline.h"
#include "tests/fuzz/fuzz.h"

/* The kernel's message buffer is this size (KTAP_REASON_MAX * 2). */
#define ERR_MAX 320

/* Every registered option: its default, or a value its key accepts. */
static void check_accepted(void)
{
	for (const struct option *o = options_begin(); o < options_end(); o++) {
		u64 v;

		switch (o->kind) {
		case OPTION_STRING:
			fuzz_assert(memchr(o->value, 0, o->count), "%s not terminated", o->key);
			fuzz_assert(((const char *)o->value)[0] || !o->def_string[0],
				    "%s accepted as empty", o->key);
			continue;
		case OPTION_ENUM:
			v = *(const u32 *)o->value;
			fuzz_assert(option_word(o, v), "%s %llu", o->key, v);
			continue;
		case OPTION_U32: v = *(const u32 *)o->value; break;
		default: v = *(const u64 *)o->value; break;
		}
		fuzz_assert(v == o->def || (v >= o->min && v <= o->max), "%s %llu", o->key, v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t errlen;
	char *line, *err;
	bool ok;

	if (!size)
		return 0;
	/* First byte: the message buffer's size, the kernel's one half the time. */
	errlen = data[0] & 0x80 ? ERR_MAX : 1 + (data[0] & 0x7f);
	line = malloc(size);
	memcpy(line, data + 1, size - 1);
	line[size - 1] = '\0';
	/* Exactly errlen bytes: ASan sees a message written past its end. */
	err = malloc(errlen);

	options_reset();
	ok = cmdline_parse(line, err, errlen);
	fuzz_assert(memchr(err, 0, errlen), "message not terminated");
	if (ok) {
		fuzz_assert(!err[0], "line accepted with a message: %s", err);
		check_accepted();
	} else {
		fuzz_assert(errlen == 1 || err[0], "line refused without a message");
	}
	free(err);
	free(line);
	return 0;
}
