/* SPDX-License-Identifier: MIT */
/*
 * The kernel command line: space-separated key=value words (README,
 * "Kernel command line"). Each folder declares its own keys beside the
 * values they set, in its options.c, with DEFINE_OPTION_*(), as Linux's
 * early_param() places its keys in a section; the parser here is generic
 * and table-driven. An unknown key or a bad value yields a message naming
 * the key and the accepted values.
 */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include "kernel/lib/table.h"
#include "kernel/lib/types.h"

enum option_kind { OPTION_U32, OPTION_U64, OPTION_ENUM, OPTION_STRING };

struct option {
	const char *key;
	enum option_kind kind;
	void *value;		  /* a u32 (enums too), a u64, or a char[count] */
	u64 min, max;		  /* numbers: the accepted range */
	u64 def;		  /* numbers and enums: the default */
	const char *const *names; /* enums: the accepted words, by value */
	u64 count;		  /* enums: how many words; strings: the buffer's size */
	const char *def_string;	  /* strings: the default */
};

#define DEFINE_OPTION_(...) \
	static const struct option TABLE_UNIQUE(option_) TABLE_ENTRY(hvprobe_options) = { __VA_ARGS__ }

#define DEFINE_OPTION_U32(k, var, lo, hi, d)                                        \
	_Static_assert(sizeof(var) == sizeof(u32), k ": a u32 option");             \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_U32, .value = &(var), .min = (lo), \
		       .max = (hi), .def = (d))
#define DEFINE_OPTION_U64(k, var, lo, hi, d)                                        \
	_Static_assert(sizeof(var) == sizeof(u64), k ": a u64 option");             \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_U64, .value = &(var), .min = (lo), \
		       .max = (hi), .def = (d))
/* table is the array of accepted words, indexed by the enum's values. */
#define DEFINE_OPTION_ENUM(k, var, table, d)                                         \
	_Static_assert(sizeof(var) == sizeof(u32), k ": an enum option is a u32");    \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_ENUM, .value = &(var), .names = (table), \
		       .count = ARRAY_SIZE(table), .def = (d))
#define DEFINE_OPTION_STRING(k, buf, d) \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_STRING, .value = (buf), .count = sizeof(buf), \
		       .def_string = (d))

/* The registered options, in no particular order. */
const struct option *options_begin(void);
const struct option *options_end(void);
/* Every registered option back to its default. */
void options_reset(void);
/*
 * Parse line into the registered options. Returns false on the first bad
 * word, with a message in err naming the key and the accepted values;
 * the words before it have been applied.
 */
bool cmdline_parse(const char *line, char *err, size_t errlen);

#endif
