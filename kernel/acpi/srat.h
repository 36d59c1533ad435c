/* SPDX-License-Identifier: MIT */
/*
 * The SRAT (ACPI 6.5 5.2.16): processor local APIC affinity (type 0),
 * memory affinity (type 1) and processor x2APIC affinity (type 2).
 * Proximity domains become dense node numbers 0..node_count-1 in the order
 * they first appear in the table, as Linux's acpi_map_pxm_to_node() does.
 */
#ifndef KERNEL_ACPI_SRAT_H
#define KERNEL_ACPI_SRAT_H

#include "kernel/acpi/acpi.h"

#define SRAT_MAX_CPUS 1024
#define SRAT_MAX_MEMS 64
#define SRAT_MAX_NODES 64
#define SRAT_PROBLEMS_MAX 256
#define NODE_NONE 0xffffffffu

/* Affinity flags (ACPI 6.5 Tables 5.57, 5.59, 5.60) */
/* clang-format off */
#define  SRAT_ENABLED BIT(0)
#define  SRAT_MEM_HOT_PLUGGABLE BIT(1)
/* clang-format on */

struct srat_cpu {
	u32 apic_id;
	u32 node;
};

struct srat_mem {
	u64 base;
	u64 length;
	u32 node;
	bool hot_pluggable;
};

struct srat_info {
	/* Only enabled entries are kept. */
	struct srat_cpu cpus[SRAT_MAX_CPUS];
	u32 cpu_count;
	struct srat_mem mems[SRAT_MAX_MEMS];
	u32 mem_count;
	u32 domains[SRAT_MAX_NODES]; /* node -> proximity domain */
	u32 node_count;
	/* Skipped entries (truncated, duplicate CPU, overlapping memory, full). */
	char problems[SRAT_PROBLEMS_MAX];
};

/* Parse a validated SRAT; false when it is too short for its header. */
bool acpi_srat_parse(const struct acpi_header *srat, struct srat_info *s);
/* Node of a CPU by APIC ID, or NODE_NONE when the SRAT does not list it. */
u32 srat_node_of(const struct srat_info *s, u32 apic_id);

#endif
