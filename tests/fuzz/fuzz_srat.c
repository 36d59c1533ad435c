// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the SRAT, which places CPUs and memory in NUMA nodes and
 * so decides which CPU's calibration another may reuse. Input: one
 * table, handed over as acpi_find() would (its length is the input's).
 * Beyond not crashing: the CPU and memory counts never exceed the
 * entries of their types present; every node number is below node_count
 * and names a distinct proximity domain; an APIC ID is listed once and
 * srat_node_of() finds it in its own node; kept memory ranges neither
 * wrap past 2^64 nor overlap.
 */
#include "kernel/acpi/srat.h"
#include "tests/fuzz/fuzz.h"

#define SRAT_ENTRIES 48

/* Entries of one type along the chain of lengths, counted independently. */
static u32 entries(const struct acpi_header *t, u8 type_a, u8 type_b)
{
	const u8 *b = (const u8 *)t;
	u32 n = 0;

	for (u32 off = SRAT_ENTRIES;
	     off + 2 <= t->length && b[off + 1] >= 2 && b[off + 1] <= t->length - off;
	     off += b[off + 1])
		n += b[off] == type_a || b[off] == type_b;
	return n;
}

static void check_mems(const struct srat_info *s)
{
	for (u32 i = 0; i < s->mem_count; i++) {
		const struct srat_mem *m = &s->mems[i];

		fuzz_assert(m->node < s->node_count, "memory in node %u of %u", m->node,
			    s->node_count);
		if (!m->length)
			continue;
		fuzz_assert(m->base + m->length - 1 >= m->base, "memory range %u wraps", i);
		for (u32 j = 0; j < i; j++) {
			const struct srat_mem *o = &s->mems[j];

			fuzz_assert(!o->length || m->base > o->base + o->length - 1 ||
					    o->base > m->base + m->length - 1,
				    "memory ranges %u and %u overlap", j, i);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct srat_info s;
	const struct acpi_header *t = fuzz_table(data, size);
	bool ok;

	if (!t)
		return 0;
	ok = acpi_srat_parse(t, &s);
	fuzz_assert(ok == (t->length >= SRAT_ENTRIES), "parse %d on length %u", ok, t->length);
	fuzz_assert_terminated(s.problems);
	fuzz_assert(s.cpu_count <= SRAT_MAX_CPUS && s.mem_count <= SRAT_MAX_MEMS &&
			    s.node_count <= SRAT_MAX_NODES,
		    "a list outgrew its array");
	fuzz_assert(s.cpu_count <= entries(t, 0, 2), "%u CPUs from %u entries", s.cpu_count,
		    entries(t, 0, 2));
	fuzz_assert(s.mem_count <= entries(t, 1, 1), "%u memory ranges from %u entries",
		    s.mem_count, entries(t, 1, 1));
	for (u32 i = 0; i < s.node_count; i++)
		for (u32 j = 0; j < i; j++)
			fuzz_assert(s.domains[i] != s.domains[j], "nodes %u and %u share domain %u",
				    j, i, s.domains[i]);
	for (u32 i = 0; i < s.cpu_count; i++) {
		fuzz_assert(s.cpus[i].node < s.node_count, "CPU in node %u of %u", s.cpus[i].node,
			    s.node_count);
		fuzz_assert(srat_node_of(&s, s.cpus[i].apic_id) == s.cpus[i].node,
			    "APIC ID %u listed twice", s.cpus[i].apic_id);
	}
	check_mems(&s);
	return 0;
}
