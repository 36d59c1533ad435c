// SPDX-License-Identifier: MIT
/*
 * SRAT parsing (ACPI 6.5 5.2.16): the fixed part, Processor Local
 * APIC/SAPIC Affinity (5.2.16.1), Memory Affinity (5.2.16.2) and
 * Processor Local x2APIC Affinity (5.2.16.3) structures; see srat.h.
 */
#include "kernel/acpi/srat.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/lib/unaligned.h"

/* After the header: u32 "table revision" (reserved, 1) and a reserved u64. */
#define SRAT_ENTRIES 48

/* Static resource allocation structure types (ACPI 6.5 5.2.16) */
#define SRAT_TYPE_LAPIC 0
#define SRAT_TYPE_MEMORY 1
#define SRAT_TYPE_X2APIC 2

/*
 * The length each parsed type needs. Longer entries are accepted: the
 * length byte still says where the next starts.
 */
static const u8 min_length[] = {
	[SRAT_TYPE_LAPIC] = 16,
	[SRAT_TYPE_MEMORY] = 40,
	[SRAT_TYPE_X2APIC] = 24,
};

/* The lists that can fill up, each reported once when it does. */
enum srat_list {
	LIST_CPUS,
	LIST_MEMS,
	LIST_NODES,
};

/* Room for one more in a list of max; the first refusal is reported. */
static bool room(struct srat_info *s, u32 *full, enum srat_list list, u32 count, u32 max,
		 const char *what)
{
	if (count < max)
		return true;
	if (!(*full & BIT(list))) {
		*full |= BIT(list);
		note(s->problems, "more than %u %s; the rest skipped", max, what);
	}
	return false;
}

/*
 * The dense node of a proximity domain, numbering domains in the order
 * they first appear. Called only for entries that are kept, so every node
 * holds at least one CPU or memory range.
 */
static bool node_of(struct srat_info *s, u32 *full, u32 domain, u32 *node)
{
	for (u32 i = 0; i < s->node_count; i++) {
		if (s->domains[i] == domain) {
			*node = i;
			return true;
		}
	}
	if (!room(s, full, LIST_NODES, s->node_count, SRAT_MAX_NODES, "proximity domains"))
		return false;
	s->domains[s->node_count] = domain;
	*node = s->node_count++;
	return true;
}

static void add_cpu(struct srat_info *s, u32 *full, u32 apic_id, u32 domain)
{
	u32 node;

	/* Two affinities for one CPU: the first is believed. */
	if (srat_node_of(s, apic_id) != NODE_NONE) {
		note(s->problems, "APIC ID %u listed twice", apic_id);
		return;
	}
	if (!room(s, full, LIST_CPUS, s->cpu_count, SRAT_MAX_CPUS, "CPUs") ||
	    !node_of(s, full, domain, &node))
		return;
	s->cpus[s->cpu_count].apic_id = apic_id;
	s->cpus[s->cpu_count].node = node;
	s->cpu_count++;
}

/*
 * A memory range [base, base + length). Memory belongs to one node only,
 * so of two enabled ranges that overlap the first is believed. A range
 * ending exactly at 2^64 is accepted; one wrapping past it is not a range.
 */
static void add_mem(struct srat_info *s, u32 *full, u64 base, u64 length, u32 domain,
		    bool hot_pluggable)
{
	u64 last = base + length - 1;
	struct srat_mem *m;
	u32 node;

	if (length && last < base) {
		note(s->problems, "memory 0x%llx+0x%llx wraps past 2^64", base, length);
		return;
	}
	for (u32 i = 0; length && i < s->mem_count; i++) {
		const struct srat_mem *o = &s->mems[i];

		if (o->length && base <= o->base + o->length - 1 && o->base <= last) {
			note(s->problems, "memory 0x%llx+0x%llx overlaps an earlier range", base,
			     length);
			return;
		}
	}
	if (!room(s, full, LIST_MEMS, s->mem_count, SRAT_MAX_MEMS, "memory ranges") ||
	    !node_of(s, full, domain, &node))
		return;
	m = &s->mems[s->mem_count++];
	m->base = base;
	m->length = length;
	m->node = node;
	m->hot_pluggable = hot_pluggable;
}

/*
 * One entry whose length is at least min_length[type]. Disabled entries
 * describe nothing (the spec lets firmware pad the table with them).
 * Before SRAT revision 2 (ACPI 3.0) proximity domains were one byte and
 * the bytes above it reserved, so they are masked there as Linux does.
 */
static void entry(struct srat_info *s, u32 *full, const u8 *e, u8 revision)
{
	u32 domain;

	switch (e[0]) {
	case SRAT_TYPE_LAPIC:
		if (!(get_le32(e + 4) & SRAT_ENABLED))
			break;
		domain = e[2];
		if (revision >= 2)
			domain |= (u32)e[9] << 8 | (u32)e[10] << 16 | (u32)e[11] << 24;
		add_cpu(s, full, e[3], domain);
		break;
	case SRAT_TYPE_MEMORY: {
		u32 flags = get_le32(e + 28);
		u64 base = get_le32(e + 8) | (u64)get_le32(e + 12) << 32;
		u64 length = get_le32(e + 16) | (u64)get_le32(e + 20) << 32;

		if (!(flags & SRAT_ENABLED))
			break;
		domain = get_le32(e + 2);
		if (revision < 2)
			domain &= 0xff;
		add_mem(s, full, base, length, domain, flags & SRAT_MEM_HOT_PLUGGABLE);
		break;
	}
	case SRAT_TYPE_X2APIC:
		/* Introduced in ACPI 4.0: its domain is always 32 bits. */
		if (get_le32(e + 12) & SRAT_ENABLED)
			add_cpu(s, full, get_le32(e + 8), get_le32(e + 4));
		break;
	}
}

struct walk {
	struct srat_info *s;
	u32 full;
	u8 revision;
};

static void visit(void *ctx, const u8 *e)
{
	struct walk *w = ctx;

	entry(w->s, &w->full, e, w->revision);
}

bool acpi_srat_parse(const struct acpi_header *srat, struct srat_info *s)
{
	struct walk ctx = { s, 0, srat->revision };

	memset(s, 0, sizeof(*s));
	if (srat->length < SRAT_ENTRIES) {
		note(s->problems, "length %u shorter than the %u-byte header", srat->length,
		     SRAT_ENTRIES);
		return false;
	}

	acpi_walk_entries(srat, SRAT_ENTRIES, min_length, ARRAY_SIZE(min_length), s->problems,
			  sizeof(s->problems), visit, &ctx);
	return true;
}

u32 srat_node_of(const struct srat_info *s, u32 apic_id)
{
	for (u32 i = 0; i < s->cpu_count; i++)
		if (s->cpus[i].apic_id == apic_id)
			return s->cpus[i].node;
	return NODE_NONE;
}
