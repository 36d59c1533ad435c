// SPDX-License-Identifier: MIT
/*
 * SRAT parsing (ACPI 6.5 5.2.16) on constructed tables. The SRAT says
 * which node each CPU and each memory range belongs to; the NUMA tests
 * pick CPU and memory pairs from it, so a CPU given the wrong node, or a
 * range counted twice, is a "remote" access measured as local. Covered:
 * what QEMU emits for 16 CPUs in 4 nodes, x2APIC affinities, proximity
 * domains made dense in order of first appearance, the one-byte domains
 * of revision 1 tables, disabled entries, duplicate CPUs, overlapping and
 * wrapping memory, full lists, and every way an entry's type and length
 * can lie. Each parse runs on a copy of exactly the table's length, so
 * ASan sees a read past it.
 */
#include <string.h>

#include "kernel/acpi/acpi.h"
#include "kernel/acpi/srat.h"
#include "kernel/test/test.h"
#include "tests/unit/acpi_build.h"

/* SRAT layout (ACPI 6.5 5.2.16) */
#define SRAT_ENTRIES 48
#define LAPIC_LEN 16
#define MEM_LEN 40
#define X2APIC_LEN 24
#define ENABLED SRAT_ENABLED
#define HOTPLUG SRAT_MEM_HOT_PLUGGABLE

static struct srat_info s;

/* An SRAT header of the given revision; QEMU's is 1. */
static void begin(u8 revision)
{
	fw_begin("SRAT", revision, "BOCHS ", SRAT_ENTRIES);
	/* "Reserved, must be 1 for backward compatibility" */
	put_le32(fw_image + 36, 1);
}

/* Type 0: the domain split into bits 7:0 at +2 and 31:8 at +9. */
static u8 *lapic(u8 apic_id, u32 domain, u32 flags)
{
	u8 *e = fw_entry(0, LAPIC_LEN);

	e[2] = domain;
	e[3] = apic_id;
	put_le32(e + 4, flags);
	e[9] = domain >> 8;
	e[10] = domain >> 16;
	e[11] = domain >> 24;
	return e;
}

static u8 *mem(u64 base, u64 length, u32 domain, u32 flags)
{
	u8 *e = fw_entry(1, MEM_LEN);

	put_le32(e + 2, domain);
	put_le32(e + 8, base);
	put_le32(e + 12, base >> 32);
	put_le32(e + 16, length);
	put_le32(e + 20, length >> 32);
	put_le32(e + 28, flags);
	return e;
}

static u8 *x2apic(u32 apic_id, u32 domain, u32 flags)
{
	u8 *e = fw_entry(2, X2APIC_LEN);

	put_le32(e + 4, domain);
	put_le32(e + 8, apic_id);
	put_le32(e + 12, flags);
	return e;
}

/* Parse the image cut to length bytes, from a copy of exactly that size. */
static bool parse_len(u32 length)
{
	return acpi_srat_parse(fw_copy(length), &s);
}

static bool parse(void)
{
	return parse_len(fw_image_len);
}

static bool mem_is(u32 i, u64 base, u64 length, u32 node, bool hot_pluggable)
{
	const struct srat_mem *r = &s.mems[i];
	bool ok = i < s.mem_count && r->base == base && r->length == length && r->node == node &&
		  r->hot_pluggable == hot_pluggable;

	if (!ok)
		report_info("memory %u: 0x%llx+0x%llx node %u hot-pluggable %d", i, r->base,
			    r->length, r->node, r->hot_pluggable);
	return ok;
}

/* The list of nodes' domains, compared whole. */
static bool domains_are(const u32 *domains, u32 n)
{
	bool ok = s.node_count == n;

	for (u32 i = 0; ok && i < n; i++)
		ok = s.domains[i] == domains[i];
	if (!ok)
		report_info("%u nodes: domains %u %u %u %u ...", s.node_count, s.domains[0],
			    s.domains[1], s.domains[2], s.domains[3]);
	return ok;
}

/*
 * What QEMU 10 builds (build_srat()) for q35 with 4 GiB in four 1 GiB
 * nodes, CPUs 0-3 in node 0 and so on, and maxmem for hot-plug: the
 * 640 KiB hole cut out of node 0, RAM above 2 GiB moved above 4 GiB,
 * disabled padding entries, and the hot-plug area in the last node.
 */
static void qemu_q35(void)
{
	begin(1);
	for (u8 i = 0; i < 16; i++)
		lapic(i, i / 4, ENABLED);
	mem(0, 0xa0000, 0, ENABLED);
	mem(0x100000, 0x3ff00000, 0, ENABLED);
	mem(0x40000000, 0x40000000, 1, ENABLED);
	mem(0x100000000ULL, 0x40000000, 2, ENABLED);
	mem(0x140000000ULL, 0x40000000, 3, ENABLED);
	mem(0, 0, 0, 0);
	mem(0, 0, 0, 0);
	mem(0x180000000ULL, 0x100000000ULL, 3, ENABLED | HOTPLUG);
}

DEFINE_TEST(unit_srat_qemu, "a q35 SRAT: 16 CPUs and memory in 4 nodes", 0)
{
	static const u32 domains[] = { 0, 1, 2, 3 };
	const struct acpi_header *h;
	bool nodes_ok = true;

	qemu_q35();
	h = fw_install(fw_image_len);
	report(h, "acpi_find() returns the SRAT");
	if (!h)
		return;
	report(acpi_srat_parse(h, &s), "it parses");
	report_eq(s.cpu_count, 16, "16 CPUs");
	for (u32 i = 0; i < 16; i++)
		nodes_ok &= s.cpus[i].apic_id == i && srat_node_of(&s, i) == i / 4;
	report(nodes_ok, "APIC IDs 0-3 in node 0, 4-7 in node 1, 8-11 in 2, 12-15 in 3");
	report_eq(srat_node_of(&s, 16), NODE_NONE, "APIC ID 16 is not listed");
	report(domains_are(domains, 4), "four nodes, domains 0 to 3");

	report_eq(s.mem_count, 6, "six ranges: the two disabled ones are not kept");
	report(mem_is(0, 0, 0xa0000, 0, false), "node 0 below 640 KiB");
	report(mem_is(1, 0x100000, 0x3ff00000, 0, false), "node 0 from 1 MiB to 1 GiB");
	report(mem_is(2, 0x40000000, 0x40000000, 1, false), "node 1 from 1 to 2 GiB");
	report(mem_is(3, 0x100000000ULL, 0x40000000, 2, false), "node 2 above 4 GiB");
	report(mem_is(4, 0x140000000ULL, 0x40000000, 3, false), "node 3 after it");
	report(mem_is(5, 0x180000000ULL, 0x100000000ULL, 3, true),
	       "the hot-plug area in node 3, 64-bit length");
	report_str_eq(s.problems, "", "no problems");
}

DEFINE_TEST(unit_srat_x2apic, "x2APIC affinities and disabled entries", 0)
{
	static const u32 domains[] = { 0x10000, 0 };

	begin(3);
	x2apic(256, 0x10000, ENABLED);
	x2apic(257, 0x10000, 0);
	lapic(1, 0, ENABLED);
	x2apic(0xfffffffe, 0, ENABLED | 0xfffffffe);
	lapic(2, 5, 0);
	mem(0x200000000ULL, 0x1000, 6, HOTPLUG);
	report(parse(), "it parses");
	report_eq(s.cpu_count, 3, "three enabled CPUs");
	report_eq(srat_node_of(&s, 256), 0, "x2APIC ID 256 in the first node");
	report_eq(srat_node_of(&s, 1), 1, "APIC ID 1 in the second");
	report_eq(srat_node_of(&s, 0xfffffffe), 1, "a 32-bit x2APIC ID, reserved flags ignored");
	report_eq(srat_node_of(&s, 257), NODE_NONE, "a disabled x2APIC entry is not listed");
	report_eq(srat_node_of(&s, 2), NODE_NONE, "nor a disabled local APIC entry");
	report(domains_are(domains, 2), "disabled entries add no node: domains 0x10000 and 0");
	report_eq(s.mem_count, 0, "hot-pluggable but disabled memory is not kept");
	report_str_eq(s.problems, "", "disabled entries are not problems");
}

DEFINE_TEST(unit_srat_nodes, "proximity domains become dense nodes", 0)
{
	static const u32 sparse[] = { 7, 3, 100 };
	static const u32 mem_first[] = { 9, 4 };
	static const u32 rev1[] = { 0x34, 0x05 };
	static const u32 rev3[] = { 0x12000034, 0x105 };

	begin(3);
	lapic(0, 7, ENABLED);
	lapic(1, 3, ENABLED);
	x2apic(2, 7, ENABLED);
	lapic(3, 100, ENABLED);
	report(parse(), "domains 7, 3, 7, 100");
	report(srat_node_of(&s, 0) == 0 && srat_node_of(&s, 1) == 1 && srat_node_of(&s, 2) == 0 &&
		       srat_node_of(&s, 3) == 2,
	       "are nodes 0, 1, 0, 2");
	report(domains_are(sparse, 3), "node to domain: 7, 3, 100");

	begin(3);
	mem(0, 0x1000, 9, ENABLED);
	lapic(0, 4, ENABLED);
	lapic(1, 9, ENABLED);
	mem(0x1000, 0x1000, 4, ENABLED);
	report(parse(), "memory first, then CPUs");
	report(s.mems[0].node == 0 && srat_node_of(&s, 0) == 1 && srat_node_of(&s, 1) == 0 &&
		       s.mems[1].node == 1,
	       "memory and CPUs share one numbering");
	report(domains_are(mem_first, 2), "node to domain: 9, 4");

	/* Before revision 2 only bits 7:0 of a domain were defined. */
	begin(1);
	lapic(0, 0x12000034, ENABLED);
	mem(0, 0x1000, 0x105, ENABLED);
	report(parse(), "a revision 1 SRAT with bytes above the domains' low byte");
	report(domains_are(rev1, 2), "only the low bytes are used: 0x34, 0x05");
	fw_image[8] = 3;
	report(parse(), "the same entries in a revision 3 SRAT");
	report(domains_are(rev3, 2), "all 32 bits are used: 0x12000034, 0x105");
}

DEFINE_TEST(unit_srat_conflicts, "duplicate CPUs and overlapping memory", 0)
{
	begin(3);
	lapic(5, 0, ENABLED);
	x2apic(5, 1, ENABLED);
	lapic(5, 2, 0);
	x2apic(6, 3, ENABLED);
	report(parse(), "APIC ID 5 listed by type 0 and by type 2");
	report_eq(s.cpu_count, 2, "two CPUs");
	report_eq(srat_node_of(&s, 5), 0, "the first entry's node is kept");
	report_eq(s.node_count, 2, "the skipped entry's domain adds no node");
	report_str_eq(s.problems, "APIC ID 5 listed twice", "the enabled duplicate is reported");

	begin(3);
	mem(0x100000, 0x100000, 0, ENABLED);
	mem(0x180000, 0x100000, 1, ENABLED);
	mem(0x200000, 0x100000, 1, ENABLED);
	mem(0, 0x100000, 1, ENABLED);
	mem(0, 0x400000, 2, ENABLED);
	mem(0x280000, 0x1000, 2, 0);
	mem(0x2fffff, 1, 3, ENABLED);
	report(parse(), "overlapping ranges");
	report_eq(s.mem_count, 3, "three ranges kept");
	report(mem_is(0, 0x100000, 0x100000, 0, false), "the first");
	report(mem_is(1, 0x200000, 0x100000, 1, false), "one starting where it ends");
	report(mem_is(2, 0, 0x100000, 1, false), "one ending where it starts");
	report_eq(s.node_count, 2, "skipped ranges add no node");
	report_str_eq(s.problems,
		      "memory 0x180000+0x100000 overlaps an earlier range; "
		      "memory 0x0+0x400000 overlaps an earlier range; "
		      "memory 0x2fffff+0x1 overlaps an earlier range",
		      "partial, enclosing and last-byte overlaps reported; disabled ones not");

	begin(3);
	mem(0xfffffffffffff000ULL, 0x1000, 0, ENABLED);
	mem(0xffffffffffffe000ULL, 0x2000, 0, ENABLED);
	mem(0x1000, 0xfffffffffffff001ULL, 0, ENABLED);
	mem(0x5000, 0, 0, ENABLED);
	mem(0x5000, 0x1000, 0, ENABLED);
	mem(0x4000, 0x1001, 0, ENABLED);
	mem(0x8000, 0, 0, ENABLED);
	mem(0x7000, 0x2000, 0, ENABLED);
	mem(0x5800, 0, 0, ENABLED);
	report(parse(), "ranges at the top of the address space, and empty ones");
	report_eq(s.mem_count, 6, "six kept");
	report(mem_is(4, 0x7000, 0x2000, 0, false) && mem_is(5, 0x5800, 0, 0, false),
	       "empty ranges overlap nothing, even inside others");
	report(mem_is(0, 0xfffffffffffff000ULL, 0x1000, 0, false), "one ending at 2^64");
	report(mem_is(1, 0x5000, 0, 0, false), "an empty range, overlapping nothing");
	report(mem_is(2, 0x5000, 0x1000, 0, false), "a range where the empty one is");
	report_str_eq(s.problems,
		      "memory 0xffffffffffffe000+0x2000 overlaps an earlier range; "
		      "memory 0x1000+0xfffffffffffff001 wraps past 2^64; "
		      "memory 0x4000+0x1001 overlaps an earlier range",
		      "an overlap at the top, a wrap, and one byte's overlap are reported");
}

DEFINE_TEST(unit_srat_full, "full lists keep their first entries", 0)
{
	begin(3);
	for (u32 i = 0; i < SRAT_MAX_CPUS + 2; i++)
		x2apic(i, 0, ENABLED);
	for (u32 i = 0; i < SRAT_MAX_MEMS + 2; i++)
		mem(i * 0x1000ULL, 0x1000, 0, ENABLED);
	report(parse(), "%u CPUs and %u ranges", SRAT_MAX_CPUS + 2, SRAT_MAX_MEMS + 2);
	report_eq(s.cpu_count, SRAT_MAX_CPUS, "SRAT_MAX_CPUS CPUs kept");
	report_eq(srat_node_of(&s, SRAT_MAX_CPUS - 1), 0, "the last one kept has its node");
	report_eq(srat_node_of(&s, SRAT_MAX_CPUS), NODE_NONE, "the next is not listed");
	report_eq(s.mem_count, SRAT_MAX_MEMS, "SRAT_MAX_MEMS ranges kept");
	report_str_eq(s.problems,
		      "more than 1024 CPUs; the rest skipped; "
		      "more than 64 memory ranges; the rest skipped",
		      "each list reported once");

	begin(3);
	for (u32 i = 0; i < SRAT_MAX_NODES + 2; i++)
		lapic(i, i * 2, ENABLED);
	mem(0, 0x1000, 2 * SRAT_MAX_NODES, ENABLED);
	mem(0x1000, 0x1000, 2 * (SRAT_MAX_NODES - 1), ENABLED);
	report(parse(), "%u proximity domains", SRAT_MAX_NODES + 2);
	report_eq(s.node_count, SRAT_MAX_NODES, "SRAT_MAX_NODES nodes");
	report_eq(s.cpu_count, SRAT_MAX_NODES, "the CPUs in them are kept");
	report_eq(srat_node_of(&s, SRAT_MAX_NODES - 1), SRAT_MAX_NODES - 1, "up to the last node");
	report_eq(srat_node_of(&s, SRAT_MAX_NODES), NODE_NONE, "a CPU in a new domain is not");
	report(s.mem_count == 1 && s.mems[0].base == 0x1000 && s.mems[0].node == SRAT_MAX_NODES - 1,
	       "memory only in an existing domain is kept");
	report_str_eq(s.problems, "more than 64 proximity domains; the rest skipped",
		      "reported once");
}

/* A table shorter than its header, or cut inside an entry. */
static void srat_cut_short(void)
{
	begin(3);
	report(!parse_len(SRAT_ENTRIES - 1), "47 bytes: shorter than the SRAT header");
	report_str_eq(s.problems, "length 47 shorter than the 48-byte header", "reported");
	report(parse_len(SRAT_ENTRIES), "48 bytes: a header and no entries");
	report(!s.cpu_count && !s.mem_count && !s.node_count && !s.problems[0],
	       "nothing listed, no problems");

	lapic(0, 0, ENABLED);
	mem(0, 0x1000, 0, ENABLED);
	report(parse_len(SRAT_ENTRIES + LAPIC_LEN + 30), "cut in the middle of a memory entry");
	report(s.cpu_count == 1 && s.mem_count == 0, "the CPU before it is kept");
	report_str_eq(s.problems, "entry at offset 64 (length 40) runs past the end at 94",
		      "the cut entry is reported");
	report(parse_len(SRAT_ENTRIES + LAPIC_LEN + 36), "cut in the memory entry's reserved tail");
	report(s.cpu_count == 1 && s.mem_count == 0, "the entry is still not used");
	report_str_eq(s.problems, "entry at offset 64 (length 40) runs past the end at 100",
		      "and reported");
	report(parse_len(SRAT_ENTRIES + LAPIC_LEN + 1), "cut after the memory entry's type");
	report_str_eq(s.problems, "entry at offset 64 runs past the end at 65",
		      "its missing length is reported");
}

/* Entries of length 0 or 1 end the walk instead of looping on it. */
static void srat_tiny_lengths(void)
{
	for (u8 len = 0; len < 2; len++) {
		begin(3);
		lapic(0, 0, ENABLED);
		lapic(1, 0, ENABLED)[1] = len;
		report(parse(), "an entry of length %u", len);
		report_eq(s.cpu_count, 1, "ends the walk after the CPU before it");
		report_str_eq(s.problems,
			      len ? "entry at offset 64 has length 1"
				  : "entry at offset 64 has length 0",
			      "reported with its offset");
	}
}

/* An entry whose length runs past the table. */
static void srat_length_past_end(void)
{
	begin(3);
	lapic(0, 0, ENABLED);
	fw_image[SRAT_ENTRIES + 1] = 0x21;
	report(parse(), "an entry of length 33 in a table of 16 bytes of entries");
	report_eq(s.cpu_count, 0, "is not read");
	report_str_eq(s.problems, "entry at offset 48 (length 33) runs past the end at 64",
		      "reported with its offset");
}

/* Entries shorter than their types need are skipped, each reported. */
static void srat_short_for_type(void)
{
	begin(3);
	lapic(0, 0, ENABLED)[1] = 12;
	fw_image_len -= 4;
	mem(0, 0x1000, 0, ENABLED)[1] = 32;
	fw_image_len -= 8;
	x2apic(2, 0, ENABLED)[1] = 16;
	fw_image_len -= 8;
	x2apic(3, 0, ENABLED);
	report(parse(), "entries shorter than their types");
	report(s.cpu_count == 1 && srat_node_of(&s, 3) == 0 && !s.mem_count,
	       "are skipped, the walk goes on to the CPU after them");
	report_str_eq(s.problems,
		      "type 0 entry at offset 48 has length 12, needs 16; "
		      "type 1 entry at offset 60 has length 32, needs 40; "
		      "type 2 entry at offset 92 has length 16, needs 24",
		      "each is reported with its offset");
}

/* Unknown and longer entries are stepped over by their length. */
static void srat_unknown_entries(void)
{
	begin(3);
	fw_entry(3, 32); /* GICC affinity */
	fw_entry(5, 32); /* Generic Initiator affinity */
	fw_entry(0xff, 2);
	x2apic(4, 0, ENABLED)[1] = 28;
	fw_image_len += 4;
	lapic(5, 1, ENABLED);
	report(parse(), "unknown and longer entries");
	report(s.cpu_count == 2 && srat_node_of(&s, 4) == 0 && srat_node_of(&s, 5) == 1,
	       "are stepped over by their length");
	report_str_eq(s.problems, "", "unknown types are not problems");
}

DEFINE_TEST(unit_srat_bounds, "entries never read past the table's length", 0)
{
	srat_cut_short();
	srat_tiny_lengths();
	srat_length_past_end();
	srat_short_for_type();
	srat_unknown_entries();
}
