// SPDX-License-Identifier: MIT
/*
 * NMI accounting: which entries found a source, IPIs, merged or unknown,
 * and when NMIs that found nothing are explained (SDM Vol 3A 6.7.1: one
 * NMI pending at most, the rest merge).
 */
#include "kernel/test/test.h"
#include "kernel/x86/nmi_account.h"

DEFINE_TEST(unit_nmi_account, "source events, IPIs, merged and unknown NMIs", 0)
{
	struct nmi_counts c = { 0 }, sum = { 0 }, diff;

	nmi_account(&c, 1, 0);
	report(c.entries == 1 && c.sourced == 1 && c.events == 1 && !c.multi && !c.merged,
	       "one source event (a PMI), nothing merged");
	nmi_account(&c, 0, 3);
	report(c.ipi_nmis == 1 && c.ipis == 3 && c.multi == 1 && c.merged == 2,
	       "three IPIs in one NMI: two merged");
	nmi_account(&c, 2, 1);
	report(c.sourced == 2 && c.events == 3 && c.ipis == 4 && c.multi == 2 && c.merged == 4,
	       "two source events and an IPI together: two more merged");
	report(nmi_counts_explained(&c), "nothing unknown is explained");

	for (int i = 0; i < 4; i++)
		nmi_account(&c, 0, 0);
	report(c.unknown == 4 && c.entries == 7, "four NMIs that found nothing");
	report(nmi_counts_explained(&c), "four unknown, four merged: explained");
	nmi_account(&c, 0, 0);
	report(!nmi_counts_explained(&c), "a fifth is not: a spurious NMI");

	nmi_counts_add(&sum, &c);
	nmi_counts_add(&sum, &c);
	report(sum.entries == 16 && sum.unknown == 10 && sum.merged == 8, "counts add");
	nmi_counts_sub(&diff, &sum, &c);
	report(diff.entries == c.entries && diff.ipis == c.ipis && diff.nested == c.nested,
	       "and subtract back");
}
