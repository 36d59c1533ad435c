/* SPDX-License-Identifier: MIT */
/*
 * The one NMI entry. An NMI carries no vector of its own to say who
 * raised it, and while one is handled a second is held pending and any
 * more merge into it (SDM Vol 3A 6.7.1 "Handling Multiple NMIs"): so
 * every NMI polls every source there is, always, and the CPU's NMI-IPI
 * mailbox. Sources (the PMU, the watchdog) register from their own
 * folders with DEFINE_NMI_SOURCE; each entry is accounted per CPU with no
 * locks.
 */
#ifndef KERNEL_X86_NMI_H
#define KERNEL_X86_NMI_H

/*
 * How an exception handler returns from the trap stubs. IRET ends NMI blocking
 * whatever it returns from (SDM Vol 3A 6.7.1), so a fault taken inside
 * the NMI handler (an NMI source's own ASM_TRY) and returned from with
 * IRET would let the next NMI in on the same IST stack, over the frame
 * of the one still running. So exceptions return with POPF and RET on
 * the interrupted stack instead, which leaves NMI blocking alone; only
 * the NMI itself and interrupts return through IRET. 0 here; the host
 * model reads it to know what an exception's return does.
 */
#define TRAP_EXCEPTION_IRET 0

#ifndef __ASSEMBLER__

#include "kernel/lib/table.h"
#include "kernel/x86/nmi_account.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/trap.h"

struct nmi_cpu {
	/* NMI IPIs posted to this CPU and not yet seen; other CPUs add. */
	volatile u64 mail;
	struct nmi_counts counts;
	/* NMI IPIs this CPU sent with nmi_ipi_send(). */
	u64 ipis_sent;
	u64 last_found; /* what the last entry found, for nmi_account() */
	bool in_handler;
} __attribute__((aligned(64)));

/*
 * A source of NMIs: poll() is called on every NMI, with the interrupted
 * frame and the TSC at entry, and returns how many of its events it
 * found and serviced (0 when it raised nothing). raised(), where a
 * source has it, says how many NMIs those events may have raised (an
 * NMI's worth of credit each, nmi_account()); without it, one each.
 */
struct nmi_source {
	const char *name;
	u64 (*poll)(const struct trap_frame *f, u64 entry_tsc);
	u64 (*raised)(u64 events);
};

#define DEFINE_NMI_SOURCE_RAISED(sname, spoll, sraised)                                            \
	static const struct nmi_source nmi_source_##sname TABLE_ENTRY(hvprobe_nmi_sources) = {     \
		.name = #sname,                                                                    \
		.poll = (spoll),                                                                   \
		.raised = (sraised),                                                               \
	}
#define DEFINE_NMI_SOURCE(sname, spoll) DEFINE_NMI_SOURCE_RAISED(sname, spoll, NULL)

/* Install the entry; from the start, so an early NMI is counted, not fatal. */
void nmi_init(void);
struct nmi_cpu *nmi_cpu(u32 index);
/* How an NMI reaches another CPU: set by the local APIC driver. */
void nmi_set_sender(void (*send)(const struct percpu *to));
void nmi_send(const struct percpu *to);
/* Post mail to target and send it an NMI. */
void nmi_ipi_send(const struct percpu *target);

#endif /* __ASSEMBLER__ */
#endif
