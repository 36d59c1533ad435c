/* SPDX-License-Identifier: MIT */
/*
 * The kernel command line: space-separated key=value words (README,
 * "Kernel command line"), parsed into the keys every folder declares in
 * its options.c. An unknown key or a bad value yields a message naming
 * the key and the accepted values.
 */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include "kernel/lib/option.h"

/* The registered options, in no particular order. */
const struct option *options_begin(void);
const struct option *options_end(void);
/* Every registered option back to its default. */
void options_reset(void);
/*
 * Parse line into the registered options. Returns false on the first bad
 * word, with a message in why naming the key and the accepted values;
 * the words before it have been applied.
 */
bool cmdline_parse(const char *line, char *why, size_t whylen);

#endif
