/* SPDX-License-Identifier: MIT */
/*
 * Command-line keys, declared by the folder that owns them: each
 * DEFINE_OPTION_*() places an entry in a linker-section table
 * (kernel/lib/table.h) that names the key, the value it sets, what it
 * accepts and its default, as Linux's early_param() places its keys in a
 * section. The parser walks the table.
 */
#ifndef KERNEL_LIB_OPTION_H
#define KERNEL_LIB_OPTION_H

#include "kernel/lib/table.h"
#include "kernel/lib/types.h"

enum option_kind { OPTION_U32, OPTION_U64, OPTION_U64_AUTO, OPTION_ENUM, OPTION_STRING };

/* What an OPTION_U64_AUTO key holds for the word "auto": the owner decides. */
#define OPTION_AUTO UINT64_MAX

struct option {
	const char *key;
	enum option_kind kind;
	void *value;		  /* a u32 (enums too), a u64, or a char[count] */
	u64 min, max;		  /* numbers: the accepted range */
	u64 def;		  /* numbers and enums: the default */
	const char *const *names; /* enums: the accepted words, by value */
	u64 count;		  /* enums: how many words; strings: the buffer's size */
	/* enums without names: the word for a value, NULL past the last */
	const char *(*word)(u32 value);
	const char *def_string; /* strings: the default */
};

#define DEFINE_OPTION_(...)                                                                        \
	static const struct option TABLE_UNIQUE(option_)                                           \
		TABLE_ENTRY(hvprobe_options) = { __VA_ARGS__ }

#define DEFINE_OPTION_U32(k, var, lo, hi, d)                                                       \
	_Static_assert(sizeof(var) == sizeof(u32), k ": a u32 option");                            \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_U32, .value = &(var), .min = (lo), .max = (hi),  \
		       .def = (d))
#define DEFINE_OPTION_U64(k, var, lo, hi, d)                                                       \
	_Static_assert(sizeof(var) == sizeof(u64), k ": a u64 option");                            \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_U64, .value = &(var), .min = (lo), .max = (hi),  \
		       .def = (d))
/* A number in lo..hi, or the word "auto" (OPTION_AUTO), the default. */
#define DEFINE_OPTION_U64_OR_AUTO(k, var, lo, hi)                                                  \
	_Static_assert(sizeof(var) == sizeof(u64), k ": a u64 option");                            \
	_Static_assert((hi) < OPTION_AUTO, k ": auto lies outside the range");                     \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_U64_AUTO, .value = &(var), .min = (lo),          \
		       .max = (hi), .def = OPTION_AUTO)
/* table is the array of accepted words, indexed by the enum's values. */
#define DEFINE_OPTION_ENUM(k, var, table, d)                                                       \
	_Static_assert(sizeof(var) == sizeof(u32), k ": an enum option is a u32");                 \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_ENUM, .value = &(var), .names = (table),         \
		       .count = ARRAY_SIZE(table), .def = (d))
/*
 * word(i) is the word for value i, NULL past the last: for words another
 * table registers, unknown until link time.
 */
#define DEFINE_OPTION_WORDS(k, var, wordfn, d)                                                     \
	_Static_assert(sizeof(var) == sizeof(u32), k ": an enum option is a u32");                 \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_ENUM, .value = &(var), .word = (wordfn),         \
		       .def = (d))
#define DEFINE_OPTION_STRING(k, buf, d)                                                            \
	DEFINE_OPTION_(.key = (k), .kind = OPTION_STRING, .value = (buf), .count = sizeof(buf),    \
		       .def_string = (d))

/* An enum's word for value i, or NULL past the last. */
static inline const char *option_word(const struct option *o, u64 i)
{
	if (o->word)
		return i <= UINT32_MAX ? o->word((u32)i) : NULL;
	return i < o->count ? o->names[i] : NULL;
}

#endif
