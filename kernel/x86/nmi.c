// SPDX-License-Identifier: MIT
/* The NMI entry: every source polled on every NMI, each entry accounted. */
#include "kernel/x86/nmi.h"
#include "kernel/x86/x86.h"

TABLE_DECLARE(struct nmi_source, hvprobe_nmi_sources);

static struct nmi_cpu nmi_cpus[MAX_CPUS];
static void (*sender)(const struct percpu *to);

struct nmi_cpu *nmi_cpu(u32 index)
{
	return &nmi_cpus[index];
}

void nmi_set_sender(void (*send)(const struct percpu *to))
{
	sender = send;
}

void nmi_send(const struct percpu *to)
{
	if (sender)
		sender(to);
}

void nmi_ipi_send(const struct percpu *target)
{
	__atomic_fetch_add(&nmi_cpus[target->index].mail, 1, __ATOMIC_RELEASE);
	nmi_send(target);
}

static void nmi_entry(struct trap_frame *f)
{
	u64 entry_tsc = rdtsc(), events = 0, mail;
	struct percpu *cpu = this_cpu();
	struct nmi_cpu *n = &nmi_cpus[cpu->index];
	const struct nmi_source *s;

	cpu->nmi_count++;
	/* Architecturally impossible (NMIs are blocked until IRET): count it. */
	if (n->in_handler)
		n->counts.nested++;
	n->in_handler = true;
	table_for_each(s, hvprobe_nmi_sources)
		events += s->poll(f, entry_tsc);
	mail = __atomic_exchange_n(&n->mail, 0, __ATOMIC_ACQ_REL);
	n->counts.nmis++;
	nmi_account(&n->counts, events, mail);
	n->in_handler = false;
}

void nmi_init(void)
{
	trap_set_handler(X86_TRAP_NMI, nmi_entry);
}
