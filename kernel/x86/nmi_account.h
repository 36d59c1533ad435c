/* SPDX-License-Identifier: MIT */
/*
 * What one NMI (or PMI) found, added up per CPU. SDM Vol 3A 6.7.1: while an
 * NMI is handled, one more is held pending and any further ones merge, so
 * a handler that finds several events may leave later NMIs with nothing to
 * find. Those are explained; NMIs with no source beyond that are not.
 */
#ifndef KERNEL_X86_NMI_ACCOUNT_H
#define KERNEL_X86_NMI_ACCOUNT_H

#include "kernel/lib/types.h"

struct nmi_counts {
	u64 entries;	/* handler entries, NMI or PMI vector */
	u64 nmis;	/* of which through the NMI vector */
	u64 sourced;	/* entries in which a source (the PMU, the watchdog) found its event */
	u64 events;	/* events those sources found (a PMU's: overflow bits serviced) */
	u64 ipi_nmis;	/* entries that found NMI-IPI mail */
	u64 ipis;	/* mail consumed: NMI IPIs accounted for */
	u64 multi;	/* entries that found more than one event */
	u64 merged;	/* events beyond the first in those entries */
	u64 unknown;	/* entries that found nothing */
	u64 nested;	/* entries while the handler was already running */
};

/* One handler entry in which the sources found events and mail was consumed. */
void nmi_account(struct nmi_counts *c, u64 events, u64 mail);
void nmi_counts_add(struct nmi_counts *sum, const struct nmi_counts *c);
/* sum = a - b, field by field: what happened between two snapshots. */
void nmi_counts_sub(struct nmi_counts *diff, const struct nmi_counts *a,
		    const struct nmi_counts *b);
/*
 * Every entry with nothing to find is covered by an event that an earlier
 * entry serviced on behalf of a later NMI.
 */
bool nmi_counts_explained(const struct nmi_counts *c);

#endif
