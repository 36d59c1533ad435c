// SPDX-License-Identifier: MIT
/*
 * MADT parsing (ACPI 6.5 5.2.12): the fixed part, the Processor Local
 * APIC (5.2.12.2), I/O APIC (5.2.12.3), Interrupt Source Override
 * (5.2.12.5), Local APIC NMI (5.2.12.7), Local APIC Address Override
 * (5.2.12.8), Processor Local x2APIC (5.2.12.12) and Local x2APIC NMI
 * (5.2.12.13) structures; see madt.h.
 */
#include "kernel/acpi/madt.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/lib/unaligned.h"

/* MADT byte offsets (ACPI 6.5 5.2.12) */
#define MADT_LAPIC_ADDRESS 36
#define MADT_FLAGS 40
#define MADT_ENTRIES 44

/* Interrupt controller structure types (ACPI 6.5 5.2.12) */
#define MADT_TYPE_LAPIC 0
#define MADT_TYPE_IOAPIC 1
#define MADT_TYPE_OVERRIDE 2
#define MADT_TYPE_LAPIC_NMI 4
#define MADT_TYPE_LAPIC_ADDRESS 5
#define MADT_TYPE_X2APIC 9
#define MADT_TYPE_X2APIC_NMI 0xa

/*
 * The length each parsed type needs. Longer entries are accepted: later
 * revisions may append fields, and the length byte still says where the
 * next entry starts.
 */
static const u8 min_length[] = {
	[MADT_TYPE_LAPIC] = 8,		/* UID, APIC ID, flags */
	[MADT_TYPE_IOAPIC] = 12,	/* ID, address, GSI base */
	[MADT_TYPE_OVERRIDE] = 10,	/* bus, source, GSI, flags */
	[MADT_TYPE_LAPIC_NMI] = 6,	/* UID, flags, LINT# */
	[MADT_TYPE_LAPIC_ADDRESS] = 12, /* 64-bit address */
	[MADT_TYPE_X2APIC] = 16,	/* x2APIC ID, flags, UID */
	[MADT_TYPE_X2APIC_NMI] = 12,	/* flags, UID, LINT# */
};

/* The lists that can fill up, each reported once when it does. */
enum madt_list {
	LIST_CPUS,
	LIST_IOAPICS,
	LIST_OVERRIDES,
	LIST_NMIS,
};

/* Room for one more in a list of max; the first refusal is reported. */
static bool room(struct madt_info *m, u32 *full, enum madt_list list, u32 count, u32 max,
		 const char *what)
{
	if (count < max)
		return true;
	if (!(*full & BIT(list))) {
		*full |= BIT(list);
		note(m->problems, "more than %u %s; the rest skipped", max, what);
	}
	return false;
}

/*
 * A processor from a type 0 or type 9 entry. One with neither Enabled nor
 * Online Capable set cannot be brought up at all (5.2.12.2), so it is
 * not listed. Firmware may describe one CPU twice, as a local APIC and
 * as an x2APIC: starting it twice would send INIT-SIPI to a running CPU.
 */
static void add_cpu(struct madt_info *m, u32 *full, u32 apic_id, u32 uid, u32 flags, bool x2apic)
{
	struct madt_cpu *c;

	if (!(flags & (MADT_LAPIC_ENABLED | MADT_LAPIC_ONLINE_CAPABLE)))
		return;
	for (u32 i = 0; i < m->cpu_count; i++) {
		if (m->cpus[i].apic_id == apic_id) {
			note(m->problems, "APIC ID %u listed twice", apic_id);
			return;
		}
	}
	if (!room(m, full, LIST_CPUS, m->cpu_count, MADT_MAX_CPUS, "CPUs"))
		return;
	c = &m->cpus[m->cpu_count++];
	c->apic_id = apic_id;
	c->acpi_uid = uid;
	c->enabled = flags & MADT_LAPIC_ENABLED;
	c->online_capable = flags & MADT_LAPIC_ONLINE_CAPABLE;
	c->x2apic_entry = x2apic;
}

static void add_nmi(struct madt_info *m, u32 *full, u32 uid, u16 flags, u8 lint)
{
	struct madt_nmi *n;

	if (!room(m, full, LIST_NMIS, m->nmi_count, MADT_MAX_NMIS, "NMI entries"))
		return;
	n = &m->nmis[m->nmi_count++];
	n->acpi_uid = uid;
	n->flags = flags;
	n->lint = lint;
}

/* One entry whose length is at least min_length[type]. */
static void entry(struct madt_info *m, u32 *full, const u8 *e)
{
	switch (e[0]) {
	case MADT_TYPE_LAPIC: add_cpu(m, full, e[3], e[2], get_le32(e + 4), false); break;
	case MADT_TYPE_IOAPIC:
		if (room(m, full, LIST_IOAPICS, m->ioapic_count, MADT_MAX_IOAPICS, "I/O APICs")) {
			struct madt_ioapic *io = &m->ioapics[m->ioapic_count++];

			io->id = e[2];
			io->address = get_le32(e + 4);
			io->gsi_base = get_le32(e + 8);
		}
		break;
	case MADT_TYPE_OVERRIDE:
		if (room(m, full, LIST_OVERRIDES, m->override_count, MADT_MAX_OVERRIDES,
			 "overrides")) {
			struct madt_override *o = &m->overrides[m->override_count++];

			o->bus = e[2];
			o->source = e[3];
			o->gsi = get_le32(e + 4);
			o->flags = get_le16(e + 8);
		}
		break;
	case MADT_TYPE_LAPIC_NMI:
		/* 0xff here and 0xffffffff in type 0xA both mean every CPU. */
		add_nmi(m, full, e[2] == MADT_UID_ALL_8 ? MADT_UID_ALL_32 : e[2], get_le16(e + 3),
			e[5]);
		break;
	case MADT_TYPE_LAPIC_ADDRESS:
		/* 64-bit address replacing the header's 32-bit one (5.2.12.8). */
		m->lapic_address = get_le64(e + 4);
		break;
	case MADT_TYPE_X2APIC:
		add_cpu(m, full, get_le32(e + 4), get_le32(e + 12), get_le32(e + 8), true);
		break;
	case MADT_TYPE_X2APIC_NMI: add_nmi(m, full, get_le32(e + 4), get_le16(e + 2), e[8]); break;
	}
}

struct walk {
	struct madt_info *m;
	u32 full;
};

static void visit(void *ctx, const u8 *e)
{
	struct walk *w = ctx;

	entry(w->m, &w->full, e);
}

bool acpi_madt_parse(const struct acpi_header *madt, struct madt_info *m)
{
	const u8 *t = (const u8 *)madt;
	struct walk ctx = { m, 0 };

	memset(m, 0, sizeof(*m));
	if (madt->length < MADT_ENTRIES) {
		note(m->problems, "length %u shorter than the %u-byte header", madt->length,
		     MADT_ENTRIES);
		return false;
	}
	m->lapic_address = get_le32(t + MADT_LAPIC_ADDRESS);
	m->flags = get_le32(t + MADT_FLAGS);

	acpi_walk_entries(madt, MADT_ENTRIES, min_length, ARRAY_SIZE(min_length), m->problems,
			  sizeof(m->problems), visit, &ctx);
	return true;
}

u32 madt_usable_cpus(const struct madt_info *m)
{
	u32 n = 0;

	/*
	 * Online-capable alone means "may be hot-added later" (QEMU marks the
	 * empty slots of -smp N,maxcpus=M so): not a CPU to start now.
	 */
	for (u32 i = 0; i < m->cpu_count; i++)
		n += m->cpus[i].enabled;
	return n;
}
