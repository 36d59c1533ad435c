// SPDX-License-Identifier: MIT
/*
 * ACPI discovery (ACPI 6.5 section 5.2) and the FADT and \_S5 parsing
 * (5.2.9, 7.4.2, 20.2), on tables built in the fake physical memory with
 * correct checksums. Every timer and SMP figure starts from these tables,
 * and power-off writes the \_S5 sleep type into PM1 control: a wrong table
 * followed, or a bad one not refused, means a wrong port poked. Covered:
 * the checksum, the RSDP's validation and its BIOS-area scan (EBDA first,
 * then E0000-FFFFF, decoys skipped), the XSDT preferred with the RSDT as
 * fallback, lookups that skip and report a corrupt or overlong table, the
 * FADT fields, and \_S5 in each AML integer encoding, truncated, and
 * without its NameOp.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/acpi/acpi.h"
#include "kernel/acpi/fadt.h"
#include "kernel/test/test.h"
#include "tests/unit/acpi_build.h"
#include "tests/unit/phys_buffer.h"

/* The BIOS data area's EBDA segment, and where the tests put things. */
#define EBDA_ADDR 0x9fc00
#define RSDT_ADDR 0x100000
#define XSDT_ADDR 0x101000
#define FADT_ADDR 0x102000
#define DSDT_ADDR 0x103000
#define X_DSDT_ADDR 0x104000
#define MADT_ADDR 0x105000
#define SSDT_ADDR 0x106000
#define PHYS_END ((u64)PHYS_BUFFER_SIZE)

/* AML (ACPI 6.5 20.2): NameOp, RootChar, PackageOp, and the name _S5_. */
#define NAME 0x08
#define ROOT '\\'
#define PKG 0x12
#define S5 '_', 'S', '5', '_'

static struct boot_info bi;
static struct acpi a;

static void reset(void)
{
	memset(phys_buffer, 0, PHYS_BUFFER_SIZE);
	memset(&bi, 0, sizeof(bi));
}

static void rsdt(const u32 *entries, u32 n)
{
	fw_table_with(RSDT_ADDR, "RSDT", entries, n * 4);
}

static void xsdt(const u64 *entries, u32 n)
{
	fw_table_with(XSDT_ADDR, "XSDT", entries, n * 8);
}

/* The loader's copy of a revision 2 RSDP, as Multiboot 2 tag 15 gives. */
static void loader_rsdp(u32 rsdt_addr, u64 xsdt_addr)
{
	fw_rsdp(bi.rsdp, 2, rsdt_addr, xsdt_addr);
	bi.rsdp_size = ACPI_RSDP_V2_SIZE;
	bi.rsdp_source = "multiboot2 tag 15";
}

static void set_ebda_segment(u16 segment)
{
	put_le16(phys_buffer_at(BDA_EBDA_SEGMENT), segment);
}

static void check_rsdp(const void *p, size_t len, bool valid, const char *why_expected,
		       const char *what)
{
	char why[64] = "";
	bool ok = acpi_rsdp_valid(p, len, why, sizeof(why));

	if (ok != valid || strcmp(why, why_expected))
		report_info("%s: %s \"%s\"", what, ok ? "valid" : "invalid", why);
	report(ok == valid && !strcmp(why, why_expected), "%s", what);
}

static u64 addr_of(const struct acpi_header *h)
{
	return h ? (u64)((const u8 *)h - phys_buffer) : 0;
}

/* acpi_s5_parse over an exactly sized heap copy, so ASan sees over-reads. */
static void check_s5(const u8 *aml, size_t len, bool found, u8 typa, u8 typb, const char *what)
{
	u8 *copy = malloc(len);
	u8 a_got = 0xee, b_got = 0xee;
	bool ok;

	memcpy(copy, aml, len);
	ok = acpi_s5_parse(copy, len, &a_got, &b_got);
	free(copy);
	if (ok != found || (found && (a_got != typa || b_got != typb)))
		report_info("%s: %s, SLP_TYPa %u SLP_TYPb %u", what, ok ? "found" : "not found",
			    a_got, b_got);
	report(ok == found && (!found || (a_got == typa && b_got == typb)), "%s", what);
}

#define CHECK_S5(what, found, typa, typb, ...)                                                     \
	check_s5((const u8[]){ __VA_ARGS__ }, sizeof((const u8[]){ __VA_ARGS__ }), found, typa,    \
		 typb, what)

/* A FADT of the given length, pointing at DSDT and X_DSDT. */
static struct acpi_header *build_fadt(u32 length, u32 dsdt, u64 x_dsdt, u32 flags)
{
	struct acpi_header *h = fw_table(FADT_ADDR, "FACP", length);
	u8 *f = (u8 *)h;
	u32 smi_cmd = 0xb2, pm1a = 0x604, pm1b = 0x704, pm_tmr = 0x608;

	h->revision = length >= ACPI_FADT_V6_LENGTH ? 6 : 1;
	put_le32(f + ACPI_FADT_DSDT, dsdt);
	put_le32(f + ACPI_FADT_SMI_CMD, smi_cmd);
	f[ACPI_FADT_ACPI_ENABLE] = 0xf1;
	put_le32(f + ACPI_FADT_PM1A_CNT_BLK, pm1a);
	put_le32(f + ACPI_FADT_PM1B_CNT_BLK, pm1b);
	put_le32(f + ACPI_FADT_PM_TMR_BLK, pm_tmr);
	put_le32(f + ACPI_FADT_FLAGS, flags);
	/* Written even past a short FADT's end, where it must not be read. */
	put_le64(f + ACPI_FADT_X_DSDT, x_dsdt);
	fw_fix_checksum(h);
	return h;
}

/* A DSDT holding Name (_S5, Package (4) { typa, typb, 0, 0 }). */
static void dsdt(u64 addr, u8 typa, u8 typb)
{
	const u8 aml[] = { 0x10, 0x05, ROOT, 0x00, NAME, S5,   PKG, 0x0a,
			   0x04, 0x0a, typa, 0x0a, typb, 0x00, 0x00 };

	fw_table_with(addr, "DSDT", aml, sizeof(aml));
}

DEFINE_TEST(unit_acpi_rsdp, "checksum and RSDP validation", 0)
{
	static const u8 six[] = { 1, 2, 3 };
	static const u8 zero_sum[] = { 0xff, 0x01, 0x80, 0x80 };
	u8 ones[256];
	struct acpi_rsdp r;

	memset(ones, 1, sizeof(ones));
	report_eq(acpi_checksum(six, sizeof(six)), 6, "1 + 2 + 3 is 6");
	report_eq(acpi_checksum(zero_sum, sizeof(zero_sum)), 0, "sums wrap modulo 256");
	report_eq(acpi_checksum(ones, sizeof(ones)), 0, "256 ones sum to 0");
	report_eq(acpi_checksum(ones, 0), 0, "no bytes sum to 0");
	reset();
	report_eq(acpi_checksum(fw_table(RSDT_ADDR, "RSDT", 40), 40), 0,
		  "a table with a fixed checksum sums to 0");

	fw_rsdp(&r, 0, RSDT_ADDR, 0);
	check_rsdp(&r, ACPI_RSDP_V1_SIZE, true, "", "a 20-byte revision 0 RSDP is valid");
	check_rsdp(&r, sizeof(r), true, "", "revision 0 ignores the bytes past 20");
	check_rsdp(&r, ACPI_RSDP_V1_SIZE - 1, false, "no RSDP signature", "19 bytes are too short");
	r.signature[7] = '!';
	check_rsdp(&r, ACPI_RSDP_V1_SIZE, false, "no RSDP signature", "a wrong signature");

	fw_rsdp(&r, 0, RSDT_ADDR, 0);
	r.oem_id[0] ^= 1;
	check_rsdp(&r, ACPI_RSDP_V1_SIZE, false, "RSDP checksum bad", "a wrong checksum");

	fw_rsdp(&r, 2, RSDT_ADDR, XSDT_ADDR);
	check_rsdp(&r, sizeof(r), true, "", "a 36-byte revision 2 RSDP is valid");
	check_rsdp(&r, ACPI_RSDP_V1_SIZE, false, "RSDP 2.0 length 0 invalid",
		   "revision 2 in 20 bytes is too short");
	r.xsdt_address ^= 0x10;
	check_rsdp(&r, sizeof(r), false, "RSDP extended checksum bad",
		   "a wrong extended checksum (the first 20 bytes still sum to 0)");

	fw_rsdp(&r, 2, RSDT_ADDR, XSDT_ADDR);
	r.length = ACPI_RSDP_V1_SIZE;
	r.checksum = 0;
	r.checksum = -fw_sum(&r, ACPI_RSDP_V1_SIZE);
	r.extended_checksum = 0;
	r.extended_checksum = -fw_sum(&r, sizeof(r));
	check_rsdp(&r, sizeof(r), false, "RSDP 2.0 length 20 invalid", "a length field below 36");
	r.length = 40;
	check_rsdp(&r, sizeof(r), false, "RSDP 2.0 length 40 invalid",
		   "a length field past the image");
}

DEFINE_TEST(unit_acpi_scan, "the RSDP scan of the EBDA and the BIOS ROM", 0)
{
	reset();
	report_eq(acpi_rsdp_scan(phys_buffer_read), 0, "empty BIOS areas: not found");

	fw_rsdp_at(0xf5a40, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), 0xf5a40, "found in the BIOS ROM area");

	reset();
	fw_rsdp_at(0xfffe0, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), 0xfffe0, "found in the last slot it fits in");

	reset();
	fw_rsdp_at(0xffff0, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), 0, "not found running past 1 MiB");

	reset();
	fw_rsdp_at(BIOS_ROM_BASE + 8, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), 0, "not on a 16-byte boundary: not found");

	reset();
	fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0)->checksum ^= 1;
	fw_rsdp_at(BIOS_ROM_BASE + 0x10, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), BIOS_ROM_BASE + 0x10,
		  "a bad-checksum decoy is passed over for the good one after it");

	reset();
	fw_rsdp_at(BIOS_ROM_BASE, 2, RSDT_ADDR, XSDT_ADDR)->extended_checksum ^= 1;
	fw_rsdp_at(BIOS_ROM_BASE + 0x30, 2, RSDT_ADDR, XSDT_ADDR);
	report_eq(acpi_rsdp_scan(phys_buffer_read), BIOS_ROM_BASE + 0x30,
		  "a bad extended checksum is passed over too");

	reset();
	set_ebda_segment(EBDA_ADDR >> 4);
	fw_rsdp_at(EBDA_ADDR + 0x40, 0, RSDT_ADDR, 0);
	fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), EBDA_ADDR + 0x40,
		  "the EBDA named at 0x40e is searched first");

	reset();
	set_ebda_segment(EBDA_ADDR >> 4);
	fw_rsdp_at(EBDA_ADDR + 0x400, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), 0, "only the EBDA's first KiB is searched");
	fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0);
	report_eq(acpi_rsdp_scan(phys_buffer_read), BIOS_ROM_BASE,
		  "nothing in the EBDA: the ROM area is searched");
}

/* A root pair: the RSDT lists the FADT, the XSDT the FADT and the MADT. */
static const u32 rsdt_entries[] = { FADT_ADDR };
static const u64 xsdt_entries[] = { FADT_ADDR, MADT_ADDR };

/* The loader's RSDP: its XSDT preferred, the RSDT when the XSDT is bad or absent. */
static void xsdt_then_rsdt(void)
{
	reset();
	rsdt(rsdt_entries, ARRAY_SIZE(rsdt_entries));
	xsdt(xsdt_entries, ARRAY_SIZE(xsdt_entries));
	loader_rsdp(RSDT_ADDR, XSDT_ADDR);
	report(acpi_init(&a, &bi, phys_buffer_read), "the loader's RSDP and a valid XSDT");
	report(a.xsdt && a.table_count == 2 && a.tables[1] == MADT_ADDR,
	       "the XSDT's two tables are used");
	report_str_eq(a.rsdp_source, "multiboot2 tag 15", "the RSDP is the loader's copy");
	report_eq(a.rsdp_address, 0, "which has no address");
	report_str_eq(a.problems, "", "no problems");

	((struct acpi_header *)phys_buffer_at(XSDT_ADDR))->checksum ^= 1;
	report(acpi_init(&a, &bi, phys_buffer_read), "a corrupt XSDT: still usable");
	report(!a.xsdt && a.table_count == 1 && a.tables[0] == FADT_ADDR,
	       "the RSDT's one table is used");
	report_str_eq(a.problems, "XSDT at 0x101000: checksum bad", "the XSDT is reported");

	loader_rsdp(RSDT_ADDR, 0);
	report(acpi_init(&a, &bi, phys_buffer_read) && !a.xsdt,
	       "a revision 2 RSDP without an XSDT: the RSDT");
}

/* The BIOS area scan: a revision 0 RSDP, and the fallback from a bad loader copy. */
static void rsdp_by_scan(void)
{
	struct acpi_rsdp *r;

	reset();
	rsdt(rsdt_entries, ARRAY_SIZE(rsdt_entries));
	xsdt(xsdt_entries, ARRAY_SIZE(xsdt_entries));
	r = fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0);
	/* A revision 0 RSDP has no XSDT field: what lies there is not one. */
	put_le64((u8 *)r + 24, XSDT_ADDR);
	report(acpi_init(&a, &bi, phys_buffer_read) && !a.xsdt && a.table_count == 1,
	       "revision 0 found by the scan: the RSDT, even with an XSDT address after it");
	report_str_eq(a.rsdp_source, "BIOS area scan", "the RSDP source is the scan");
	report_eq(a.rsdp_address, BIOS_ROM_BASE, "at its address");

	loader_rsdp(RSDT_ADDR, XSDT_ADDR);
	bi.rsdp[0] = 'X';
	report(acpi_init(&a, &bi, phys_buffer_read), "a bad loader copy: the scan finds one");
	report_str_eq(a.problems, "loader's RSDP: no RSDP signature",
		      "the loader's copy is reported");
	report_eq(a.rsdp_address, BIOS_ROM_BASE, "the scanned RSDP is used");
}

/* No RSDP, or a root table unreadable, too short or of another kind: no ACPI. */
static void no_usable_root(void)
{
	reset();
	report(!acpi_init(&a, &bi, phys_buffer_read), "no RSDP anywhere: no ACPI");
	report_str_eq(a.problems, "no RSDP found", "reported");

	fw_rsdp_at(BIOS_ROM_BASE, 0, PHYS_END + 0x1000, 0);
	report(!acpi_init(&a, &bi, phys_buffer_read), "an RSDP pointing outside memory: no ACPI");
	report_str_eq(a.problems, "table at 0x201000 unreadable", "the address is reported");

	fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0);
	fw_table(RSDT_ADDR, "RSDT", 36)->length = 20;
	report(!acpi_init(&a, &bi, phys_buffer_read), "an RSDT shorter than its header: no ACPI");
	report_str_eq(a.problems, "RSDT at 0x100000: length 20 invalid", "its length is reported");

	fw_table(RSDT_ADDR, "FACP", 36);
	report(!acpi_init(&a, &bi, phys_buffer_read), "an RSDT that is another table: no ACPI");
	report_str_eq(a.problems, "root table signature FACP", "its signature is reported");
}

/* A root table of more than ACPI_MAX_TABLES entries keeps the first ones. */
static void root_too_long(void)
{
	static u32 too_many[ACPI_MAX_TABLES + 6];

	reset();
	for (u32 i = 0; i < ARRAY_SIZE(too_many); i++)
		too_many[i] = SSDT_ADDR + i * 0x100;
	rsdt(too_many, ARRAY_SIZE(too_many));
	fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0);
	report(acpi_init(&a, &bi, phys_buffer_read), "an RSDT of 70 entries is usable");
	report(a.table_count == ACPI_MAX_TABLES && a.tables[63] == SSDT_ADDR + 63 * 0x100,
	       "its first ACPI_MAX_TABLES entries are kept");
	report_str_eq(a.problems, "root table lists 70 tables; using 64", "the rest are reported");
}

/* XSDT and RSDT both bad: both reported. */
static void xsdt_and_rsdt_bad(void)
{
	reset();
	fw_table(XSDT_ADDR, "XSDT", 36)->length = 0;
	loader_rsdp(PHYS_END + 0x1000, XSDT_ADDR);
	report(!acpi_init(&a, &bi, phys_buffer_read), "XSDT and RSDT both bad: no ACPI");
	report_str_eq(a.problems,
		      "XSDT at 0x101000: length 0 invalid; table at 0x201000 unreadable",
		      "both are reported");
}

DEFINE_TEST(unit_acpi_init, "XSDT preferred, RSDT as fallback", 0)
{
	xsdt_then_rsdt();
	rsdp_by_scan();
	no_usable_root();
	root_too_long();
	xsdt_and_rsdt_bad();
}

DEFINE_TEST(unit_acpi_find, "lookups skip corrupt and overlong tables", 0)
{
	static const u32 entries[] = {
		FADT_ADDR, FADT_ADDR + 0x100, PHYS_END - 64,	 MADT_ADDR,
		SSDT_ADDR, SSDT_ADDR + 0x100, PHYS_END + 0x1000,
	};
	const u64 end = PHYS_END;

	reset();
	fw_table(FADT_ADDR, "FACP", ACPI_FADT_V6_LENGTH)->checksum ^= 1;
	fw_table(FADT_ADDR + 0x100, "FACP", ACPI_FADT_V6_LENGTH);
	fw_table(PHYS_END - 64, "APIC", 64)->length = 256;
	fw_table(MADT_ADDR, "APIC", 64);
	fw_table(SSDT_ADDR, "SSDT", 40);
	fw_table(SSDT_ADDR + 0x100, "SSDT", 48);
	rsdt(entries, ARRAY_SIZE(entries));
	fw_rsdp_at(BIOS_ROM_BASE, 0, RSDT_ADDR, 0);
	report(acpi_init(&a, &bi, phys_buffer_read), "an RSDT of seven entries");
	report_eq(a.table_count, 7, "all seven are listed");

	report_eq(addr_of(acpi_find(&a, "FACP", 0)), FADT_ADDR + 0x100,
		  "a FACP with a bad checksum is skipped for the next");
	report_eq(addr_of(acpi_find(&a, "APIC", 0)), MADT_ADDR,
		  "an APIC running past the end of memory is skipped for the next");
	report_str_eq(a.problems,
		      "FACP at 0x102000: checksum bad; APIC at 0x1fffc0: length 256 invalid",
		      "both are reported");
	report_eq(addr_of(acpi_find(&a, "SSDT", 0)), SSDT_ADDR, "the first SSDT");
	report_eq(addr_of(acpi_find(&a, "SSDT", 1)), SSDT_ADDR + 0x100, "the second SSDT");
	report(!acpi_find(&a, "SSDT", 2), "no third SSDT");
	report(!acpi_find(&a, "HPET", 0), "no HPET");

	report(!acpi_table_at(&a, end + 0x1000), "a table outside memory is not read");
	report(!acpi_table_at(&a, end - 16), "a table whose header runs past memory is not read");
	fw_table(MADT_ADDR, "APIC", 64)->length = 35;
	report(!acpi_table_at(&a, MADT_ADDR), "a length below the header's 36 bytes is refused");
	fw_table(MADT_ADDR, "APIC", 64)->length = 0x1000001;
	report(!acpi_table_at(&a, MADT_ADDR), "a length over 16 MiB is refused");
	report_str_eq(
		strstr(a.problems, "table at 0x201000"),
		"table at 0x201000 unreadable; table at 0x1ffff0 unreadable; "
		"APIC at 0x105000: length 35 invalid; APIC at 0x105000: length 16777217 invalid",
		"each is reported");
}

DEFINE_TEST(unit_acpi_fadt, "FADT fields and the DSDT it names", 0)
{
	struct fadt_info f;

	reset();
	dsdt(DSDT_ADDR, 5, 5);
	dsdt(X_DSDT_ADDR, 7, 6);
	build_fadt(ACPI_FADT_V6_LENGTH, DSDT_ADDR, X_DSDT_ADDR, ACPI_FADT_TMR_VAL_EXT);
	fw_root(&a, FADT_ADDR);
	report(acpi_fadt_parse(&a, &f), "a revision 6 FADT parses");
	report_eq(f.smi_cmd, 0xb2, "SMI_CMD port");
	report_eq(f.acpi_enable, 0xf1, "ACPI_ENABLE value");
	report_eq(f.pm1a_cnt, 0x604, "PM1a control port");
	report_eq(f.pm1b_cnt, 0x704, "PM1b control port");
	report_eq(f.pm_tmr, 0x608, "PM timer port");
	report(f.pm_tmr_32bit, "TMR_VAL_EXT: a 32-bit PM timer");
	report(!f.hw_reduced, "not hardware-reduced");
	report_eq(f.dsdt, X_DSDT_ADDR, "X_DSDT is preferred over DSDT");
	report(f.has_s5 && f.s5_typa == 7 && f.s5_typb == 6, "\\_S5 comes from the X_DSDT");

	build_fadt(ACPI_FADT_V6_LENGTH, DSDT_ADDR, 0, ACPI_FADT_HW_REDUCED);
	acpi_fadt_parse(&a, &f);
	report_eq(f.dsdt, DSDT_ADDR, "X_DSDT 0: the 32-bit DSDT");
	report(f.has_s5 && f.s5_typa == 5 && f.s5_typb == 5, "\\_S5 from that DSDT");
	report(f.hw_reduced && !f.pm_tmr_32bit, "HW_REDUCED without TMR_VAL_EXT");

	build_fadt(ACPI_FADT_V1_LENGTH, DSDT_ADDR, X_DSDT_ADDR, 0);
	acpi_fadt_parse(&a, &f);
	report_eq(f.dsdt, DSDT_ADDR, "a 116-byte FADT has no X_DSDT: its bytes are not read");
	report_eq(f.pm_tmr, 0x608, "and its fields still are");

	((struct acpi_header *)phys_buffer_at(DSDT_ADDR))->checksum ^= 1;
	report(acpi_fadt_parse(&a, &f), "a corrupt DSDT: the FADT still parses");
	report(!f.has_s5, "but there is no \\_S5");
	report_str_eq(a.problems, "DSDT at 0x103000: checksum bad", "the DSDT is reported");

	fw_table(DSDT_ADDR, "SSDT", 64);
	acpi_fadt_parse(&a, &f);
	report(!f.has_s5, "a DSDT pointer to another table: no \\_S5");

	reset();
	fw_table(FADT_ADDR, "APIC", 64);
	fw_root(&a, FADT_ADDR);
	report(!acpi_fadt_parse(&a, &f), "no FACP: no FADT");
	report(!f.pm1a_cnt && !f.has_s5, "and nothing filled in");
}

DEFINE_TEST(unit_acpi_s5, "\\_S5 in AML: encodings, prefixes, truncation", 0)
{
	CHECK_S5("ZeroOp and OneOp", true, 1, 0, NAME, S5, PKG, 0x06, 0x04, 0x01, 0x00, 0x00, 0x00);
	CHECK_S5("BytePrefix values", true, 5, 7, NAME, S5, PKG, 0x08, 0x04, 0x0a, 0x05, 0x0a, 0x07,
		 0x00, 0x00);
	CHECK_S5("WordPrefix and DWordPrefix values, low byte kept", true, 0x34, 0x78, NAME, S5,
		 PKG, 0x0c, 0x02, 0x0b, 0x34, 0x12, 0x0c, 0x78, 0x56, 0x34, 0x12);
	CHECK_S5("with the root prefix '\\'", true, 5, 5, NAME, ROOT, S5, PKG, 0x08, 0x04, 0x0a,
		 0x05, 0x0a, 0x05, 0x00, 0x00);
	CHECK_S5("inside a Scope, after other bytes", true, 3, 4, 0x10, 0x0f, ROOT, 0x00, 0x5b,
		 0x80, NAME, S5, PKG, 0x08, 0x04, 0x0a, 0x03, 0x0a, 0x04, 0x00, 0x00);
	CHECK_S5("a two-byte PkgLength is skipped whole", true, 2, 3, NAME, S5, PKG, 0x48, 0x00,
		 0x02, 0x0a, 0x02, 0x0a, 0x03);

	CHECK_S5("truncated after the first element", false, 0, 0, NAME, S5, PKG, 0x08, 0x04, 0x0a,
		 0x05);
	CHECK_S5("truncated inside a BytePrefix", false, 0, 0, NAME, S5, PKG, 0x08, 0x04, 0x0a,
		 0x05, 0x0a);
	CHECK_S5("truncated after PackageOp", false, 0, 0, NAME, S5, PKG);
	CHECK_S5("truncated after the name", false, 0, 0, NAME, S5);
	CHECK_S5("a string element is not an integer", false, 0, 0, NAME, S5, PKG, 0x08, 0x04, 0x0d,
		 'a', 0x00, 0x0a, 0x05);
	CHECK_S5("not a Package", false, 0, 0, NAME, S5, 0x0a, 0x05);

	CHECK_S5("_S5_ at the very start, with no NameOp", false, 0, 0, S5, PKG, 0x06, 0x04, 0x01,
		 0x01, 0x00, 0x00);
	CHECK_S5("_S5_ after a StoreOp, not a NameOp", false, 0, 0, 0x70, S5, PKG, 0x06, 0x04, 0x01,
		 0x01, 0x00, 0x00);
	CHECK_S5("'\\_S5_' after a StoreOp, not a NameOp", false, 0, 0, 0x70, ROOT, S5, PKG, 0x06,
		 0x04, 0x01, 0x01, 0x00, 0x00);
	CHECK_S5("'\\_S5_' at the very start", false, 0, 0, ROOT, S5, PKG, 0x06, 0x04, 0x01, 0x01,
		 0x00, 0x00);
	CHECK_S5("a reference first, then the NameOp definition", true, 2, 2, 0x70, S5, PKG, 0x06,
		 0x04, 0x01, 0x01, 0x00, 0x00, NAME, S5, PKG, 0x08, 0x04, 0x0a, 0x02, 0x0a, 0x02,
		 0x00, 0x00);
	CHECK_S5("no _S5_ at all", false, 0, 0, NAME, '_', 'S', '4', '_', PKG, 0x06, 0x04, 0x01,
		 0x01, 0x00, 0x00);
}
