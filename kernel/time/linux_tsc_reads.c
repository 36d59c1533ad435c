// SPDX-License-Identifier: MIT
/* Linux's TSC calibration reads on this machine; see linux_tsc_reads.h. */
#include "kernel/time/linux_tsc_reads.h"
#include "kernel/time/clock.h"
#include "kernel/x86/x86.h"

/* tsc_read_refs()'s one try: TSC, the reference, TSC. */
static u64 read_ref(void *ctx)
{
	const struct refclock *r = ctx;
	u64 before = rdtsc();

	(void)r->read();
	return rdtsc() - before;
}

void linux_tsc_measure(struct linux_tsc_verdict *v)
{
	const struct refclock *hpet = clock_refclock(timer_choice("hpet")),
			      *pmtmr = clock_refclock(timer_choice("pmtmr")),
			      *pit = clock_refclock(timer_choice("pit"));
	/* is_hpet_enabled() first, else acpi_pm_read_early(). */
	const struct refclock *ref = hpet->present ? hpet : pmtmr->present ? pmtmr : NULL;
	struct linux_tsc_reads reads = {
		.have_pit = pit->present,
		.ref = ref == hpet ? "HPET"
		       : ref	   ? "PMTIMER"
				   : NULL,
		.read_ref = read_ref,
		.pit_window = pit_linux_window,
		.ctx = (void *)ref,
	};

	if (ref && ref->start)
		ref->start();
	cli();
	linux_tsc_calibrate(&reads, v);
	sti();
	if (ref && ref->stop)
		ref->stop();
}
