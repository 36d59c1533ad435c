// SPDX-License-Identifier: MIT
/* NMI accounting, free of hardware access. */
#include "kernel/x86/nmi_account.h"

#define NMI_COUNT_FIELDS (sizeof(struct nmi_counts) / sizeof(u64))

void nmi_account(struct nmi_counts *c, u64 *prev, u64 events, u64 mail, u64 raised)
{
	u64 found = events + mail;

	c->entries++;
	if (events) {
		c->sourced++;
		c->events += events;
	}
	if (mail) {
		c->ipi_nmis++;
		c->ipis += mail;
	}
	if (!found) {
		c->unknown++;
		c->unknown_after_one += *prev == 1;
		c->unknown_after_several += *prev > 1;
	} else if (found > 1) {
		c->multi++;
		c->merged += found - 1;
	}
	raised += mail;
	if (raised > 1)
		c->credit += raised - 1;
	*prev = mail ? 0 : events;
}

void nmi_counts_add(struct nmi_counts *sum, const struct nmi_counts *c)
{
	u64 *s = (u64 *)sum;
	const u64 *v = (const u64 *)c;

	for (size_t i = 0; i < NMI_COUNT_FIELDS; i++)
		s[i] += v[i];
}

void nmi_counts_sub(struct nmi_counts *diff, const struct nmi_counts *a, const struct nmi_counts *b)
{
	u64 *d = (u64 *)diff;
	const u64 *x = (const u64 *)a, *y = (const u64 *)b;

	for (size_t i = 0; i < NMI_COUNT_FIELDS; i++)
		d[i] = x[i] - y[i];
}

bool nmi_counts_explained(const struct nmi_counts *c)
{
	return c->unknown <= c->credit;
}
