/* SPDX-License-Identifier: MIT */
/*
 * What one NMI (or PMI) found, added up per CPU. SDM Vol 3A 6.7.1: while an
 * NMI is handled, one more is held pending and any further ones merge, so
 * a handler that finds several events may leave later NMIs with nothing to
 * find. Those are explained, but only by events that can have raised an
 * NMI of their own (the credit): NMIs with no source beyond that are not.
 */
#ifndef KERNEL_X86_NMI_ACCOUNT_H
#define KERNEL_X86_NMI_ACCOUNT_H

#include "kernel/lib/types.h"

struct nmi_counts {
	u64 entries;  /* handler entries, NMI or PMI vector */
	u64 nmis;     /* of which through the NMI vector */
	u64 sourced;  /* entries in which a source (the PMU, the watchdog) found its event */
	u64 events;   /* events those sources found (a PMU's: overflow bits serviced) */
	u64 ipi_nmis; /* entries that found NMI-IPI mail */
	u64 ipis;     /* mail consumed: NMI IPIs accounted for */
	u64 multi;    /* entries that found more than one event */
	u64 merged;   /* events beyond the first in those entries */
	/*
	 * NMIs beyond the first that what an entry found may have raised:
	 * each IPI raised one, a source says how many its events did. With
	 * LVTPC masked by the host, all the overflows one PMI carries raised
	 * that one NMI, so they are merged events but no credit.
	 */
	u64 credit;
	u64 unknown; /* entries that found nothing */
	/* Of those, right after an entry that found one event, or several, and no mail. */
	u64 unknown_after_one, unknown_after_several;
	u64 nested; /* entries while the handler was already running */
};

/*
 * One handler entry: events found by the sources, mail consumed, and the
 * NMIs all of that may have raised. *prev carries what the CPU's last
 * entry found from one call to the next.
 */
void nmi_account(struct nmi_counts *c, u64 *prev, u64 events, u64 mail, u64 raised);
void nmi_counts_add(struct nmi_counts *sum, const struct nmi_counts *c);
/* sum = a - b, field by field: what happened between two snapshots. */
void nmi_counts_sub(struct nmi_counts *diff, const struct nmi_counts *a,
		    const struct nmi_counts *b);
/*
 * Every entry with nothing to find is covered by an NMI that something an
 * earlier entry serviced may have left pending.
 */
bool nmi_counts_explained(const struct nmi_counts *c);

#endif
