// SPDX-License-Identifier: MIT
/* ICR sends and the INIT-SIPI verdict; see icr.h. */
#include "apic/icr.h"
#include "apic/apic.h"

static bool wait_idle(const struct icr_ops *ops)
{
	for (u32 i = 0; i < ICR_IDLE_POLLS; i++) {
		if (!(ops->read(APIC_ICR) & APIC_ICR_BUSY))
			return true;
		ops->pause();
	}
	return false;
}

bool icr_send(const struct icr_ops *ops, bool x2apic, u32 dest_apic_id, u32 icr_low)
{
	bool on, delivered;

	if (x2apic) {
		ops->fence();
		ops->wrmsr(MSR_IA32_X2APIC_ICR,
			   FIELD_PREP(X2APIC_ICR_DEST, dest_apic_id) | icr_low);
		return true;
	}
	on = ops->irq_save();
	/* The previous IPI first: a busy ICR may not be written (SDM 11.6.1). */
	wait_idle(ops);
	ops->write(APIC_ICR2, FIELD_PREP(APIC_ICR2_XAPIC_DEST, dest_apic_id));
	ops->write(APIC_ICR, icr_low);
	delivered = wait_idle(ops);
	ops->irq_restore(on);
	return delivered;
}

const char *icr_kick_failure(bool delivered, u32 esr)
{
	if (!delivered)
		return "APIC never delivered";
	if (esr & APIC_ESR_ERRORS)
		return "APIC delivery error";
	return NULL;
}
