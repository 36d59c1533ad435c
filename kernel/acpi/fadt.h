/* SPDX-License-Identifier: MIT */
/*
 * The FADT (ACPI 6.5 5.2.9) fields hvprobe uses, and the \_S5 sleep type
 * from the DSDT (ACPI 6.5 7.4.2 and 16.2, AML encoding), for power-off.
 */
#ifndef KERNEL_ACPI_FADT_H
#define KERNEL_ACPI_FADT_H

#include "kernel/acpi/acpi.h"

/* PM1 control register bits (ACPI 6.5 4.8.4.2.1, Table 4.13) */
#define ACPI_PM1_CNT_SCI_EN BIT(0)
#define ACPI_PM1_CNT_SLP_TYP_SHIFT 10
#define ACPI_PM1_CNT_SLP_EN BIT(13)

/* FADT byte offsets of the fields hvprobe reads (ACPI 6.5 Table 5.9) */
#define ACPI_FADT_DSDT 40
#define ACPI_FADT_SMI_CMD 48
#define ACPI_FADT_ACPI_ENABLE 52
#define ACPI_FADT_PM1A_CNT_BLK 64
#define ACPI_FADT_PM1B_CNT_BLK 68
#define ACPI_FADT_PM_TMR_BLK 76
#define ACPI_FADT_FLAGS 112
#define ACPI_FADT_X_DSDT 140
/* The table's length in ACPI 1.0 (up to Flags) and since ACPI 6.0 */
#define ACPI_FADT_V1_LENGTH 116
#define ACPI_FADT_V6_LENGTH 276

/* FADT Flags (ACPI 6.5 Table 5.10) */
#define ACPI_FADT_TMR_VAL_EXT BIT(8)
#define ACPI_FADT_HW_REDUCED BIT(20)

struct fadt_info {
	u64 dsdt;
	u32 smi_cmd;
	u8 acpi_enable;
	u32 pm1a_cnt;
	u32 pm1b_cnt;
	u32 pm_tmr;
	bool pm_tmr_32bit;
	bool hw_reduced;
	/* From \_S5 in the DSDT; valid only when has_s5. */
	bool has_s5;
	u8 s5_typa, s5_typb;
};

/* The platform's FADT, parsed once at boot (kmain()). */
extern struct fadt_info fadt;
extern bool fadt_ok;

/* Parse the FADT (and the DSDT it names); false if there is no FADT. */
bool acpi_fadt_parse(struct acpi *a, struct fadt_info *f);
/* Find the \_S5 package in AML and return its first two integers. */
bool acpi_s5_parse(const u8 *aml, size_t len, u8 *typa, u8 *typb);

#endif
