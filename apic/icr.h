/* SPDX-License-Identifier: MIT */
/*
 * One IPI through the interrupt command register, as a sequence of steps
 * on the machine, so that the host tests run it unchanged against a
 * recording model (SDM Vol 3A 11.6.1 "Interrupt Command Register",
 * 11.12.9 "ICR Operation in x2APIC Mode"):
 *
 * - x2APIC: a fence, then one 64-bit WRMSR. Writes to the x2APIC MSRs are
 *   not serializing (SDM Vol 3A 11.12.3), so without the fence the IPI
 *   can overtake the stores that tell its target why it was sent (Linux
 *   weak_wrmsr_fence() before every x2APIC IPI: MFENCE; LFENCE).
 * - xAPIC: two MMIO writes (ICR2, then ICR) that another sender on this
 *   CPU must not split, so interrupts are off from the wait for the
 *   previous IPI to the wait for this one's delivery status (Linux
 *   __default_send_IPI_dest_field() under local_irq_save(), and
 *   safe_apic_wait_icr_idle() after INIT and SIPI).
 */
#ifndef APIC_ICR_H
#define APIC_ICR_H

#include "kernel/lib/types.h"

/* Polls of the delivery-status bit before a send counts as never delivered. */
#define ICR_IDLE_POLLS 1000000

struct icr_ops {
	/* Interrupts off; returns whether they were on. */
	bool (*irq_save)(void);
	void (*irq_restore)(bool was_on);
	/* Orders earlier stores before a non-serializing WRMSR. */
	void (*fence)(void);
	void (*wrmsr)(u32 msr, u64 val);
	u32 (*read)(u32 reg);
	void (*write)(u32 reg, u32 val);
	void (*pause)(void);
};

/*
 * Send icr_low (delivery mode, vector, trigger; no shorthand) to
 * dest_apic_id. False when the xAPIC's delivery status stayed busy for
 * ICR_IDLE_POLLS reads after the write (Linux: "APIC never delivered").
 */
bool icr_send(const struct icr_ops *ops, bool x2apic, u32 dest_apic_id, u32 icr_low);

/*
 * Linux's verdict on an INIT-SIPI-SIPI sequence
 * (wakeup_secondary_cpu_via_init()): NULL when it went through, else
 * what failed: a send never delivered, or an error the ESR latched (its
 * redirectable-IPI bit aside, as Linux masks it with 0xEF).
 */
const char *icr_kick_failure(bool delivered, u32 esr);

#endif
