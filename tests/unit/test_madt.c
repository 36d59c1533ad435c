// SPDX-License-Identifier: MIT
/*
 * MADT parsing (ACPI 6.5 5.2.12) on constructed tables. The MADT is the
 * list of CPUs the SMP tests start and of the interrupt controllers they
 * program: a CPU missed is a test that never runs, a disabled CPU started
 * or one started twice is an INIT-SIPI into nothing or into a running
 * CPU, and a wrong I/O APIC or override is an interrupt that never comes.
 * Covered: what QEMU's q35 emits with xAPIC and with x2APIC IDs, the
 * enabled and online-capable flags, duplicates, full lists, and every way
 * an entry's type and length can lie: zero, one, past the end, shorter
 * than its type, cut by the table's length. Each parse runs on a copy of
 * exactly the table's length, so ASan sees a read past it.
 */
#include <string.h>

#include "kernel/acpi/acpi.h"
#include "kernel/acpi/madt.h"
#include "kernel/test/test.h"
#include "tests/unit/acpi_build.h"

/* MADT layout (ACPI 6.5 5.2.12) */
#define MADT_ENTRIES 44
#define LAPIC_LEN 8
#define IOAPIC_LEN 12
#define OVERRIDE_LEN 10
#define NMI_LEN 6
#define LAPIC_ADDR_LEN 12
#define X2APIC_LEN 16
#define X2APIC_NMI_LEN 12
#define LAPIC_DEFAULT 0xfee00000
#define IOAPIC_DEFAULT 0xfec00000
/* Interrupt source override flags: active high, level triggered */
#define ISO_LEVEL_HIGH 0xd
#define ENABLED MADT_LAPIC_ENABLED
#define ONLINE_CAPABLE MADT_LAPIC_ONLINE_CAPABLE

static struct madt_info m;

/* An MADT header with QEMU's local APIC address and PCAT_COMPAT. */
static void begin(void)
{
	fw_begin("APIC", 3, "BOCHS ", MADT_ENTRIES);
	put_le32(fw_image + 36, LAPIC_DEFAULT);
	put_le32(fw_image + 40, MADT_PCAT_COMPAT);
}

static void lapic(u8 uid, u8 apic_id, u32 flags)
{
	u8 *e = fw_entry(0, LAPIC_LEN);

	e[2] = uid;
	e[3] = apic_id;
	put_le32(e + 4, flags);
}

static void ioapic(u8 id, u32 address, u32 gsi_base)
{
	u8 *e = fw_entry(1, IOAPIC_LEN);

	e[2] = id;
	put_le32(e + 4, address);
	put_le32(e + 8, gsi_base);
}

static void override(u8 source, u32 gsi, u16 flags)
{
	u8 *e = fw_entry(2, OVERRIDE_LEN);

	e[3] = source;
	put_le32(e + 4, gsi);
	put_le16(e + 8, flags);
}

static void nmi(u8 uid, u16 flags, u8 lint)
{
	u8 *e = fw_entry(4, NMI_LEN);

	e[2] = uid;
	put_le16(e + 3, flags);
	e[5] = lint;
}

static void lapic_address(u64 address)
{
	put_le64(fw_entry(5, LAPIC_ADDR_LEN) + 4, address);
}

static void x2apic(u32 apic_id, u32 flags, u32 uid)
{
	u8 *e = fw_entry(9, X2APIC_LEN);

	put_le32(e + 4, apic_id);
	put_le32(e + 8, flags);
	put_le32(e + 12, uid);
}

static void x2apic_nmi(u32 uid, u16 flags, u8 lint)
{
	u8 *e = fw_entry(0xa, X2APIC_NMI_LEN);

	put_le16(e + 2, flags);
	put_le32(e + 4, uid);
	e[8] = lint;
}

/* Parse the image cut to length bytes, from a copy of exactly that size. */
static bool parse_len(u32 length)
{
	return acpi_madt_parse(fw_copy(length), &m);
}

static bool parse(void)
{
	return parse_len(fw_image_len);
}

static bool cpu_is(u32 i, u32 apic_id, u32 uid, bool enabled, bool online_capable, bool x2)
{
	const struct madt_cpu *c = &m.cpus[i];
	bool ok = i < m.cpu_count && c->apic_id == apic_id && c->acpi_uid == uid &&
		  c->enabled == enabled && c->online_capable == online_capable &&
		  c->x2apic_entry == x2;

	if (!ok)
		report_info("cpu %u: APIC ID %u UID %u enabled %d online-capable %d x2APIC %d", i,
			    c->apic_id, c->acpi_uid, c->enabled, c->online_capable,
			    c->x2apic_entry);
	return ok;
}

/* What QEMU 10 builds for q35 with -smp 4: see acpi_build_madt(). */
static void qemu_q35(void)
{
	begin();
	for (u8 i = 0; i < 4; i++)
		lapic(i, i, ENABLED);
	ioapic(0, IOAPIC_DEFAULT, 0);
	override(0, 2, 0);
	override(9, 9, ISO_LEVEL_HIGH);
	nmi(MADT_UID_ALL_8, 0, 1);
}

DEFINE_TEST(unit_madt_qemu, "a q35 MADT: 4 CPUs, an I/O APIC, overrides, NMI", 0)
{
	const struct acpi_header *h;

	qemu_q35();
	h = fw_install(fw_image_len);
	report(h, "acpi_find() returns the MADT");
	if (!h)
		return;
	report(acpi_madt_parse(h, &m), "it parses");
	report_eq(m.lapic_address, LAPIC_DEFAULT, "local APIC address");
	report_eq(m.flags, MADT_PCAT_COMPAT, "PCAT_COMPAT: 8259s present");

	report_eq(m.cpu_count, 4, "four CPUs");
	report_eq(madt_usable_cpus(&m), 4, "four usable");
	for (u32 i = 0; i < 4; i++)
		report(cpu_is(i, i, i, true, false, false), "CPU %u: APIC ID and UID %u, enabled",
		       i, i);

	report_eq(m.ioapic_count, 1, "one I/O APIC");
	report_eq(m.ioapics[0].id, 0, "I/O APIC ID 0");
	report_eq(m.ioapics[0].address, IOAPIC_DEFAULT, "at 0xfec00000");
	report_eq(m.ioapics[0].gsi_base, 0, "from GSI 0");

	report_eq(m.override_count, 2, "two overrides");
	report(m.overrides[0].bus == 0 && m.overrides[0].source == 0 && m.overrides[0].gsi == 2 &&
		       m.overrides[0].flags == 0,
	       "ISA IRQ 0 is GSI 2, bus-conforming");
	report(m.overrides[1].bus == 0 && m.overrides[1].source == 9 && m.overrides[1].gsi == 9 &&
		       m.overrides[1].flags == ISO_LEVEL_HIGH,
	       "ISA IRQ 9 (SCI) is GSI 9, level, active high");

	report_eq(m.nmi_count, 1, "one NMI entry");
	report_eq(m.nmis[0].acpi_uid, MADT_UID_ALL_32, "UID 0xff becomes all processors");
	report_eq(m.nmis[0].flags, 0, "bus-conforming");
	report_eq(m.nmis[0].lint, 1, "on LINT1");
	report_str_eq(m.problems, "", "no problems");
}

DEFINE_TEST(unit_madt_x2apic, "x2APIC entries, their NMIs, the address override", 0)
{
	/* QEMU lists IDs below 255 as type 0 and the rest as type 9. */
	begin();
	lapic(0, 0, ENABLED);
	lapic(1, 254, ENABLED);
	x2apic(255, ENABLED, 2);
	x2apic(256, ENABLED, 3);
	x2apic(0x12345678, ENABLED, 0xabcdef);
	ioapic(0, IOAPIC_DEFAULT, 0);
	x2apic_nmi(MADT_UID_ALL_32, 0, 1);
	x2apic_nmi(3, 0x5, 0);
	nmi(7, 0xf, 0);
	report(parse(), "it parses");
	report_eq(m.cpu_count, 5, "five CPUs");
	report(cpu_is(0, 0, 0, true, false, false), "APIC ID 0 from a type 0 entry");
	report(cpu_is(1, 254, 1, true, false, false), "APIC ID 254 from a type 0 entry");
	report(cpu_is(2, 255, 2, true, false, true), "APIC ID 255 from a type 9 entry");
	report(cpu_is(3, 256, 3, true, false, true), "APIC ID 256, UID 3");
	report(cpu_is(4, 0x12345678, 0xabcdef, true, false, true),
	       "32-bit APIC ID and UID kept whole");
	report_eq(m.nmi_count, 3, "three NMI entries");
	report(m.nmis[0].acpi_uid == MADT_UID_ALL_32 && m.nmis[0].lint == 1 && !m.nmis[0].flags,
	       "x2APIC NMI for all processors on LINT1");
	report(m.nmis[1].acpi_uid == 3 && m.nmis[1].lint == 0 && m.nmis[1].flags == 0x5,
	       "x2APIC NMI for UID 3 on LINT0, flags kept");
	report(m.nmis[2].acpi_uid == 7 && m.nmis[2].lint == 0 && m.nmis[2].flags == 0xf,
	       "local APIC NMI for UID 7 (not 0xff) keeps its UID");
	report_eq(m.lapic_address, LAPIC_DEFAULT, "no override: the header's address");
	report_str_eq(m.problems, "", "no problems");

	lapic_address(0x1fee00000ULL);
	report(parse(), "with a local APIC address override");
	report_eq(m.lapic_address, 0x1fee00000ULL, "the 64-bit override wins");
	report_eq(m.flags, MADT_PCAT_COMPAT, "the flags are the header's");
}

/*
 * Recent QEMU (MADT revision 5) marks the empty slots of -smp maxcpus=
 * online-capable only, and present CPUs enabled only.
 */
DEFINE_TEST(unit_madt_flags, "disabled CPUs skipped, online-capable kept but not started", 0)
{
	begin();
	lapic(0, 0, ENABLED);
	lapic(1, 1, 0);
	lapic(2, 2, ONLINE_CAPABLE);
	lapic(3, 3, ENABLED | ONLINE_CAPABLE);
	x2apic(300, 0, 4);
	x2apic(301, ONLINE_CAPABLE, 5);
	/* Reserved flag bits alone do not make a CPU usable. */
	x2apic(302, 0xfffffffc, 6);
	lapic(7, 1, ENABLED);
	report(parse(), "it parses");
	report_eq(m.cpu_count, 5, "five of eight entries listed");
	report_eq(madt_usable_cpus(&m), 3, "the three enabled ones are started now");
	report(cpu_is(0, 0, 0, true, false, false), "APIC ID 0 enabled");
	report(cpu_is(1, 2, 2, false, true, false), "APIC ID 2 online-capable only");
	report(cpu_is(2, 3, 3, true, true, false), "APIC ID 3 with both flags");
	report(cpu_is(3, 301, 5, false, true, true), "x2APIC ID 301 online-capable only");
	report(cpu_is(4, 1, 7, true, false, false),
	       "APIC ID 1, disabled first, is listed from its later enabled entry");
	report_str_eq(m.problems, "", "skipping disabled CPUs is not a problem");
}

DEFINE_TEST(unit_madt_duplicates, "a CPU named twice is listed once", 0)
{
	begin();
	lapic(0, 0, ENABLED);
	lapic(1, 1, ENABLED);
	x2apic(1, ENABLED, 1);
	lapic(2, 0, ONLINE_CAPABLE);
	x2apic(256, ENABLED, 3);
	x2apic(256, ENABLED, 4);
	x2apic(0, 0, 5);
	report(parse(), "it parses");
	report_eq(m.cpu_count, 3, "three CPUs");
	report(cpu_is(1, 1, 1, true, false, false), "APIC ID 1 keeps its first, type 0, entry");
	report(cpu_is(2, 256, 3, true, false, true), "x2APIC ID 256 keeps its first UID");
	report_str_eq(m.problems,
		      "APIC ID 1 listed twice; APIC ID 0 listed twice; APIC ID 256 listed twice",
		      "each duplicate is reported, a disabled one is not");
}

DEFINE_TEST(unit_madt_full, "full lists keep their first entries", 0)
{
	begin();
	for (u32 i = 0; i < MADT_MAX_CPUS + 2; i++)
		x2apic(i, ENABLED, i);
	for (u32 i = 0; i < MADT_MAX_IOAPICS + 1; i++)
		ioapic(i, IOAPIC_DEFAULT + i * 0x1000, i * 24);
	for (u32 i = 0; i < MADT_MAX_OVERRIDES + 1; i++)
		override(i, i, 0);
	for (u32 i = 0; i < MADT_MAX_NMIS + 1; i++)
		nmi(i, 0, 1);
	lapic(0, 0, ENABLED);
	report(parse(), "a table of over a thousand entries parses");
	report_eq(m.cpu_count, MADT_MAX_CPUS, "MADT_MAX_CPUS CPUs");
	report(cpu_is(MADT_MAX_CPUS - 1, MADT_MAX_CPUS - 1, MADT_MAX_CPUS - 1, true, false, true),
	       "the last one kept is the 1024th listed");
	report_eq(m.ioapic_count, MADT_MAX_IOAPICS, "MADT_MAX_IOAPICS I/O APICs");
	report_eq(m.ioapics[15].address, IOAPIC_DEFAULT + 15 * 0x1000, "the 16th is the last");
	report_eq(m.override_count, MADT_MAX_OVERRIDES, "MADT_MAX_OVERRIDES overrides");
	report_eq(m.nmi_count, MADT_MAX_NMIS, "MADT_MAX_NMIS NMI entries");
	report_str_eq(
		m.problems,
		"more than 1024 CPUs; the rest skipped; more than 16 I/O APICs; the rest "
		"skipped; more than 32 overrides; the rest skipped; more than 16 NMI entries; "
		"the rest skipped; APIC ID 0 listed twice",
		"each list reported once, duplicates still found");
}

/* A table shorter than its header, or cut inside an entry. */
static void madt_cut_short(void)
{
	begin();
	report(!parse_len(MADT_ENTRIES - 1), "43 bytes: shorter than the MADT header");
	report_str_eq(m.problems, "length 43 shorter than the 44-byte header", "reported");
	report(parse_len(MADT_ENTRIES), "44 bytes: a header and no entries");
	report(!m.cpu_count && !m.ioapic_count && !m.problems[0], "nothing listed, no problems");

	lapic(0, 0, ENABLED);
	lapic(1, 1, ENABLED);
	report(parse_len(MADT_ENTRIES + LAPIC_LEN + 4), "cut in the middle of the second entry");
	report_eq(m.cpu_count, 1, "the first CPU is kept");
	report_str_eq(m.problems, "entry at offset 52 (length 8) runs past the end at 56",
		      "the cut entry is reported");
	report(parse_len(MADT_ENTRIES + LAPIC_LEN + 1), "cut after the second entry's type");
	report_eq(m.cpu_count, 1, "the first CPU is kept");
	report_str_eq(m.problems, "entry at offset 52 runs past the end at 53",
		      "its missing length is reported");
}

/* Entries of length 0 or 1 end the walk instead of looping on it. */
static void madt_tiny_lengths(void)
{
	u8 *e;

	for (u8 len = 0; len < 2; len++) {
		begin();
		lapic(0, 0, ENABLED);
		e = fw_entry(0, 0);
		e[1] = len;
		fw_image_len = MADT_ENTRIES + 2 * LAPIC_LEN;
		lapic(2, 2, ENABLED);
		report(parse(), "an entry of length %u", len);
		report_eq(m.cpu_count, 1, "ends the walk after the CPU before it");
		report_str_eq(m.problems,
			      len ? "entry at offset 52 has length 1"
				  : "entry at offset 52 has length 0",
			      "reported with its offset");
	}
}

/* An entry whose length runs past the table. */
static void madt_length_past_end(void)
{
	begin();
	ioapic(0, IOAPIC_DEFAULT, 0);
	lapic(0, 0, ENABLED);
	fw_image[MADT_ENTRIES + IOAPIC_LEN + 1] = 0xff;
	report(parse(), "an entry of length 255 in a table that ends sooner");
	report(m.ioapic_count == 1 && m.cpu_count == 0, "only the entry before it is read");
	report_str_eq(m.problems, "entry at offset 56 (length 255) runs past the end at 64",
		      "reported with its offset");
}

/* Entries shorter than their types need are skipped, each reported. */
static void madt_short_for_type(void)
{
	u8 *e;

	begin();
	fw_entry(0, 6)[3] = 9;
	e = fw_entry(9, 12);
	put_le32(e + 4, 300);
	put_le32(e + 8, ENABLED);
	fw_entry(1, 8);
	fw_entry(2, 9);
	lapic(1, 1, ENABLED);
	report(parse(), "entries shorter than their types");
	report_eq(m.cpu_count, 1, "each is skipped, the walk goes on to the CPU after them");
	report(cpu_is(0, 1, 1, true, false, false), "which is APIC ID 1");
	report(!m.ioapic_count && !m.override_count, "no I/O APIC or override is used");
	report_str_eq(m.problems,
		      "type 0 entry at offset 44 has length 6, needs 8; "
		      "type 9 entry at offset 50 has length 12, needs 16; "
		      "type 1 entry at offset 62 has length 8, needs 12; "
		      "type 2 entry at offset 70 has length 9, needs 10",
		      "each is reported with its offset");

	begin();
	fw_entry(4, 5);
	fw_entry(5, 11);
	fw_entry(0xa, 9);
	lapic(1, 1, ENABLED);
	report(parse(), "NMI and address entries shorter than their types");
	report(!m.nmi_count && m.lapic_address == LAPIC_DEFAULT && m.cpu_count == 1,
	       "are skipped, the CPU after them is listed");
	report_str_eq(m.problems,
		      "type 4 entry at offset 44 has length 5, needs 6; "
		      "type 5 entry at offset 49 has length 11, needs 12; "
		      "type 10 entry at offset 60 has length 9, needs 12",
		      "each is reported with its offset");
}

DEFINE_TEST(unit_madt_bounds, "entries never read past the table's length", 0)
{
	madt_cut_short();
	madt_tiny_lengths();
	madt_length_past_end();
	madt_short_for_type();
}

DEFINE_TEST(unit_madt_unknown, "unknown and longer entries are stepped over", 0)
{
	u8 *e;

	begin();
	fw_entry(0x3, 16); /* NMI source */
	fw_entry(0x7, 17); /* local SAPIC, variable length */
	fw_entry(0xb, 82); /* GIC CPU interface */
	fw_entry(0x7f, 2); /* reserved */
	fw_entry(0x80, 3); /* OEM */
	fw_entry(0xff, 255);
	e = fw_entry(0, LAPIC_LEN + 4);
	e[2] = 5;
	e[3] = 6;
	put_le32(e + 4, ENABLED);
	memset(e + LAPIC_LEN, 0xff, 4);
	lapic(7, 7, ENABLED);
	report(parse(), "it parses");
	report_eq(m.cpu_count, 2, "both CPUs after them are listed");
	report(cpu_is(0, 6, 5, true, false, false), "a 12-byte type 0 entry is read as one");
	report(cpu_is(1, 7, 7, true, false, false), "and the next starts after its 12 bytes");
	report_str_eq(m.problems, "", "unknown types are not problems");
}
