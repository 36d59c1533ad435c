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

/*
 * What an expected fault leaves for the code that armed it (ASM_TRY). An
 * NMI can land inside the interrupted code's ASM_TRY: a fault in a source
 * must not resume into that code (on the NMI's stack, and its IRET would
 * end NMI blocking), and a source's own ASM_TRY must not leave a vector
 * that code would take for its own. The NMI entry starts with none armed
 * and gives the interrupted code its own back.
 */
struct fault_state {
	u64 resume;
	s32 vector;
	u64 error_code, cr2;
};

static struct fault_state fault_state_take(struct percpu *cpu)
{
	struct fault_state s = { cpu->fault_resume, cpu->fault_vector, cpu->fault_error_code,
				 cpu->fault_cr2 };

	cpu->fault_resume = 0;
	cpu->fault_vector = -1;
	return s;
}

static void fault_state_give_back(struct percpu *cpu, const struct fault_state *s)
{
	cpu->fault_resume = s->resume;
	cpu->fault_vector = s->vector;
	cpu->fault_error_code = s->error_code;
	cpu->fault_cr2 = s->cr2;
}

static void nmi_entry(struct trap_frame *f)
{
	u64 entry_tsc = rdtsc(), events = 0, raised = 0, mail;
	struct percpu *cpu = this_cpu();
	struct fault_state interrupted = fault_state_take(cpu);
	struct nmi_cpu *n = &nmi_cpus[cpu->index];
	const struct nmi_source *s;

	cpu->nmi_count++;
	/* Architecturally impossible (NMIs are blocked until IRET): count it. */
	if (n->in_handler)
		n->counts.nested++;
	n->in_handler = true;
	table_for_each (s, hvprobe_nmi_sources) {
		u64 found = s->poll(f, entry_tsc);

		events += found;
		raised += s->raised ? s->raised(found) : found;
	}
	mail = __atomic_exchange_n(&n->mail, 0, __ATOMIC_ACQ_REL);
	n->counts.nmis++;
	nmi_account(&n->counts, &n->last_found, events, mail, raised);
	n->in_handler = false;
	fault_state_give_back(cpu, &interrupted);
}

void nmi_init(void)
{
	trap_set_handler(X86_TRAP_NMI, nmi_entry);
}
