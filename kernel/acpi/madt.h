/* SPDX-License-Identifier: MIT */
/*
 * The MADT (ACPI 6.5 5.2.12, signature "APIC"): local APIC and x2APIC
 * entries (types 0 and 9), I/O APICs (1), interrupt source overrides (2),
 * local APIC NMI routing (4 and 0xA) and the local APIC address override
 * (5). A CPU is listed once however many entries name it.
 */
#ifndef KERNEL_ACPI_MADT_H
#define KERNEL_ACPI_MADT_H

#include "kernel/acpi/acpi.h"

#define MADT_MAX_CPUS 1024
#define MADT_MAX_IOAPICS 16
#define MADT_MAX_OVERRIDES 32
#define MADT_MAX_NMIS 16
#define MADT_PROBLEMS_MAX 256

/* MADT flags (ACPI 6.5 Table 5.20) */
/* clang-format off */
#define  MADT_PCAT_COMPAT BIT(0)
/* Local (x2)APIC flags (ACPI 6.5 Table 5.23) */
#define  MADT_LAPIC_ENABLED BIT(0)
#define  MADT_LAPIC_ONLINE_CAPABLE BIT(1)
/* "All processors" in NMI entries */
#define MADT_UID_ALL_8 0xff
#define MADT_UID_ALL_32 0xffffffffu
/* clang-format on */

struct madt_cpu {
	u32 apic_id;
	u32 acpi_uid;
	bool enabled;
	bool online_capable;
	bool x2apic_entry; /* listed by a type 9 entry */
};

struct madt_ioapic {
	u32 id;
	u32 address;
	u32 gsi_base;
};

struct madt_override {
	u8 bus;
	u8 source;
	u32 gsi;
	u16 flags;
};

struct madt_nmi {
	u32 acpi_uid; /* MADT_UID_ALL_32 for all processors */
	u16 flags;
	u8 lint;
};

struct madt_info {
	u64 lapic_address; /* type 5 overrides the header's */
	u32 flags;
	struct madt_cpu cpus[MADT_MAX_CPUS];
	u32 cpu_count;
	struct madt_ioapic ioapics[MADT_MAX_IOAPICS];
	u32 ioapic_count;
	struct madt_override overrides[MADT_MAX_OVERRIDES];
	u32 override_count;
	struct madt_nmi nmis[MADT_MAX_NMIS];
	u32 nmi_count;
	/* Skipped entries: short, bad length, past the end, duplicate CPU, full. */
	char problems[MADT_PROBLEMS_MAX];
};

/*
 * Parse a validated MADT (acpi_find() checked its length and checksum).
 * Returns false when the table is too short to hold the MADT header;
 * entry-level defects are skipped and recorded in m->problems.
 */
bool acpi_madt_parse(const struct acpi_header *madt, struct madt_info *m);
/* The CPUs to start now: enabled ones (online-capable ones are hot-plug slots). */
u32 madt_usable_cpus(const struct madt_info *m);

#endif
