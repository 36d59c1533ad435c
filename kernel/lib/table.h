/* SPDX-License-Identifier: MIT */
/*
 * Tables the linker builds. Each entry is a static object placed in a
 * named section; GNU ld bounds every section whose name is a C identifier
 * with __start_ and __stop_ symbols (the kernel's linker script lists
 * them explicitly). Tests, command-line keys, reference clocks and NMI
 * sources register this way from the folder that owns them, so adding one
 * touches no list anywhere else. Entries are 8-byte aligned and every
 * entry type's size is a multiple of 8, so a table is an array. The
 * bounds are weak: a program in which nothing registers (a fuzzer has no
 * tests) sees an empty table.
 */
#ifndef KERNEL_LIB_TABLE_H
#define KERNEL_LIB_TABLE_H

#define TABLE_ENTRY(table) __attribute__((used, section(#table), aligned(8)))

#define TABLE_DECLARE(type, table)                                                                 \
	extern const type __start_##table[] __attribute__((weak)),                                 \
		__stop_##table[] __attribute__((weak))
#define TABLE_BEGIN(table) (__start_##table)
#define TABLE_END(table) (__stop_##table)
#define table_for_each(p, table) for ((p) = TABLE_BEGIN(table); (p) < TABLE_END(table); (p)++)

/* A name for a file's n-th anonymous entry. */
#define TABLE_CONCAT_(a, b) a##b
#define TABLE_CONCAT(a, b) TABLE_CONCAT_(a, b)
#define TABLE_UNIQUE(prefix) TABLE_CONCAT(prefix, __COUNTER__)

#endif
