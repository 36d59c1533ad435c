// SPDX-License-Identifier: MIT
/* FADT and \_S5 parsing; see fadt.h. */
#include "kernel/acpi/fadt.h"
#include "kernel/lib/string.h"
#include "kernel/lib/unaligned.h"

struct fadt_info fadt;
bool fadt_ok;

/* AML opcodes (ACPI 6.5 20.2) */
#define AML_ZERO_OP 0x00
#define AML_ONE_OP 0x01
#define AML_NAME_OP 0x08
#define AML_BYTE_PREFIX 0x0a
#define AML_WORD_PREFIX 0x0b
#define AML_DWORD_PREFIX 0x0c
#define AML_PACKAGE_OP 0x12
#define AML_ONES_OP 0xff

/* A field of 1, 2, 4 or 8 bytes; 0 if the table is too short to hold it. */
static u64 field(const struct acpi_header *h, u32 offset, u32 size)
{
	const u8 *p;

	if (offset + size > h->length)
		return 0;
	p = (const u8 *)h + offset;
	switch (size) {
	case 1: return *p;
	case 2: return get_le16(p);
	case 4: return get_le32(p);
	case 8: return get_le64(p);
	}
	return 0;
}

/* One AML integer at *p; false if it is not a constant integer. */
static bool aml_integer(const u8 **p, const u8 *end, u64 *val)
{
	const u8 *q = *p;
	u32 n = 0;

	if (q >= end)
		return false;
	switch (*q++) {
	case AML_ZERO_OP: *val = 0; break;
	case AML_ONE_OP: *val = 1; break;
	case AML_ONES_OP: *val = ~0ULL; break;
	case AML_BYTE_PREFIX: n = 1; break;
	case AML_WORD_PREFIX: n = 2; break;
	case AML_DWORD_PREFIX: n = 4; break;
	default: return false;
	}
	if (n) {
		if (q + n > end)
			return false;
		*val = n == 1 ? *q : n == 2 ? get_le16(q) : get_le32(q);
		q += n;
	}
	*p = q;
	return true;
}

bool acpi_s5_parse(const u8 *aml, size_t len, u8 *typa, u8 *typb)
{
	const u8 *end = aml + len;

	for (const u8 *p = aml; p + 4 <= end; p++) {
		const u8 *q = p + 4;
		u32 pkglen_bytes;
		u64 a, b;

		if (memcmp(p, "_S5_", 4))
			continue;
		/* NameOp, optionally with a root prefix, names the object. */
		if (!(p > aml && (p[-1] == AML_NAME_OP ||
				  (p[-1] == '\\' && p - 1 > aml && p[-2] == AML_NAME_OP))))
			continue;
		if (q >= end || *q++ != AML_PACKAGE_OP || q >= end)
			continue;
		/* PkgLength: bits 7:6 of the lead byte count the bytes that follow. */
		pkglen_bytes = *q >> 6;
		q += 1 + pkglen_bytes;
		/* NumElements, then the elements. */
		if (q >= end)
			continue;
		q++;
		if (!aml_integer(&q, end, &a) || !aml_integer(&q, end, &b))
			continue;
		*typa = (u8)a;
		*typb = (u8)b;
		return true;
	}
	return false;
}

bool acpi_fadt_parse(struct acpi *a, struct fadt_info *f)
{
	const struct acpi_header *fadt = acpi_find(a, "FACP", 0);
	const struct acpi_header *dsdt;
	u32 flags;

	memset(f, 0, sizeof(*f));
	if (!fadt)
		return false;
	f->smi_cmd = field(fadt, ACPI_FADT_SMI_CMD, 4);
	f->acpi_enable = field(fadt, ACPI_FADT_ACPI_ENABLE, 1);
	f->pm1a_cnt = field(fadt, ACPI_FADT_PM1A_CNT_BLK, 4);
	f->pm1b_cnt = field(fadt, ACPI_FADT_PM1B_CNT_BLK, 4);
	f->pm_tmr = field(fadt, ACPI_FADT_PM_TMR_BLK, 4);
	flags = field(fadt, ACPI_FADT_FLAGS, 4);
	f->pm_tmr_32bit = flags & ACPI_FADT_TMR_VAL_EXT;
	f->hw_reduced = flags & ACPI_FADT_HW_REDUCED;
	f->dsdt = field(fadt, ACPI_FADT_X_DSDT, 8);
	if (!f->dsdt)
		f->dsdt = field(fadt, ACPI_FADT_DSDT, 4);

	dsdt = f->dsdt ? acpi_table_at(a, f->dsdt) : NULL;
	if (dsdt && !memcmp(dsdt->signature, "DSDT", 4))
		f->has_s5 = acpi_s5_parse((const u8 *)(dsdt + 1), dsdt->length - sizeof(*dsdt),
					  &f->s5_typa, &f->s5_typb);
	return true;
}
