// SPDX-License-Identifier: MIT
/*
 * The floor of SMP bring-up: each AP's record, the INIT-SIPI-SIPI kicks
 * (SDM Vol 3A 9.4.4), the BSP's wait and the wake IPI. See ap.h.
 */
#include "apic/smp/ap.h"
#include "apic/apic.h"
#include "apic/icr.h"
#include "apic/smp/smp_internal.h"
#include "kernel/options.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

/* Linux wakeup_secondary_cpu_via_init(): SIPI settle times. */
#define SIPI_DELAY_MODERN_US 10
#define SIPI_DELAY_LEGACY_US 300
#define SIPI_SETTLE_LEGACY_US 200

struct smp_state smp;

static struct smp_cpu smp_cpus[MAX_CPUS];

/* Why an AP's INIT-SIPI-SIPI failed (icr_kick_failure()), by CPU index; NULL when it did not. */
static const char *kick_failure[MAX_CPUS];

struct smp_cpu *smp_cpu(u32 index)
{
	return &smp_cpus[index];
}

struct smp_cpu *smp_cpu_of(const struct percpu *cpu)
{
	return &smp_cpus[cpu->index];
}

void smp_cpu_bind(struct percpu *cpu)
{
	smp_cpus[cpu->index].cpu = cpu;
}

const char *smp_kick_failure(u32 index)
{
	return index < MAX_CPUS ? kick_failure[index] : NULL;
}

static bool withheld(const struct percpu *cpu)
{
	return kernel_options.fault == FAULT_AP_SILENT && cpu->index == cpu_count() - 1;
}

/*
 * INIT, INIT de-assert, SIPI, SIPI: Linux's wakeup_secondary_cpu_via_init().
 * A failed AP is given up, as Linux's do_boot_cpu() does, rather than
 * waited for.
 */
bool smp_kick(struct smp_cpu *ap)
{
	u32 sipi = APIC_ICR_DM_STARTUP | APIC_ICR_VECTOR(smp.trampoline >> 12);
	bool modern = !smp.init_udelay, delivered = true;
	struct percpu *cpu = ap->cpu;

	apic_esr();
	ap->tsc_init = rdtsc();
	delivered &= apic_send_ipi(cpu->apic_id, APIC_ICR_DM_INIT | APIC_ICR_LEVEL_ASSERT |
							 APIC_ICR_TRIGGER_LEVEL);
	udelay(smp.init_udelay);
	delivered &= apic_send_ipi(cpu->apic_id, APIC_ICR_DM_INIT | APIC_ICR_TRIGGER_LEVEL);
	ap->tsc_sipi = rdtsc();
	/* fault=ap_silent: the last AP gets no SIPI, so it never answers. */
	if (withheld(cpu)) {
		smp.started++;
		return true;
	}
	for (int i = 0; i < 2 && delivered; i++) {
		delivered &= apic_send_ipi(cpu->apic_id, sipi);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_DELAY_LEGACY_US);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_SETTLE_LEGACY_US);
	}
	ap->esr = apic_esr();
	kick_failure[cpu->index] = icr_kick_failure(delivered, ap->esr);
	smp.started++;
	return !kick_failure[cpu->index];
}

struct batch {
	struct smp_cpu *ap[KICK_BATCH];
	u32 n;
};

/*
 * Parallel bring-up's kick of a batch of APs: the same sequence to each,
 * every step sent to all of them before the wait that follows it is taken
 * once, as the SDM's MP initialization example broadcasts INIT-SIPI-SIPI
 * (Vol 3A 9.4.4.1), but addressed AP by AP so that cpus= and fault= still
 * hold. Linux 6.5 kicks AP by AP with every wait each time, which costs
 * as much per AP as bringing one up: under TCG an AP is up 20 us after
 * its SIPI, well inside the 40 us of waits that follow it.
 */
static void kick_batch(const struct batch *b)
{
	u32 sipi = APIC_ICR_DM_STARTUP | APIC_ICR_VECTOR(smp.trampoline >> 12);
	bool modern = !smp.init_udelay, delivered[KICK_BATCH];
	u32 esr;

	apic_esr();
	for (u32 k = 0; k < b->n; k++) {
		b->ap[k]->tsc_init = rdtsc();
		delivered[k] = apic_send_ipi(b->ap[k]->cpu->apic_id,
					     APIC_ICR_DM_INIT | APIC_ICR_LEVEL_ASSERT |
						     APIC_ICR_TRIGGER_LEVEL);
	}
	udelay(smp.init_udelay);
	for (u32 k = 0; k < b->n; k++) {
		delivered[k] &= apic_send_ipi(b->ap[k]->cpu->apic_id,
					      APIC_ICR_DM_INIT | APIC_ICR_TRIGGER_LEVEL);
		b->ap[k]->tsc_sipi = rdtsc();
	}
	for (int round = 0; round < 2; round++) {
		for (u32 k = 0; k < b->n; k++)
			if (!withheld(b->ap[k]->cpu) && delivered[k])
				delivered[k] &= apic_send_ipi(b->ap[k]->cpu->apic_id, sipi);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_DELAY_LEGACY_US);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_SETTLE_LEGACY_US);
	}
	/* One ESR for the batch: an error fails every AP of it, as it cannot say whose. */
	esr = apic_esr();
	for (u32 k = 0; k < b->n; k++) {
		b->ap[k]->esr = esr;
		kick_failure[b->ap[k]->cpu->index] = icr_kick_failure(delivered[k], esr);
	}
	smp.started += b->n;
}

static bool batch_alive(void *arg)
{
	const struct batch *b = arg;

	for (u32 k = 0; k < b->n; k++)
		if (b->ap[k]->cpu->state == CPU_OFFLINE && !kick_failure[b->ap[k]->cpu->index])
			return false;
	return true;
}

static void kick_and_wait(struct batch *b)
{
	kick_batch(b);
	smp_wait(batch_alive, b, AP_ONLINE_TIMEOUT_US);
	b->n = 0;
}

/*
 * Every AP, in batches; `first` alone before the rest: the first
 * calibrating AP then starts its calibration when it would serially, on
 * the same tick, and a chain of calibrations, each ending on a tick edge,
 * ends no later than the serial one.
 */
void smp_kick_all(struct smp_cpu *first)
{
	struct batch b = { .n = 0 };

	if (first) {
		b.ap[b.n++] = first;
		kick_and_wait(&b);
	}
	for (u32 i = 1; i < cpu_count(); i++) {
		if (smp_cpu(i) == first)
			continue;
		b.ap[b.n++] = smp_cpu(i);
		if (b.n == KICK_BATCH)
			kick_and_wait(&b);
	}
	if (b.n)
		kick_and_wait(&b);
}

bool smp_seen_online(struct smp_cpu *ap)
{
	const struct percpu *cpu = ap->cpu;

	if (__atomic_load_n(&cpu->state, __ATOMIC_ACQUIRE) != CPU_ONLINE)
		return false;
	if (!smp.tsc_seen[cpu->index]) {
		smp.tsc_seen[cpu->index] = rdtsc();
		/* The control CPU runs the deferred mark's work item now. */
		if (ap->warp_pending)
			delay_tsc_sync(false);
	}
	return true;
}

bool smp_wait(bool (*done)(void *arg), void *arg, u64 timeout_us)
{
	u64 start = rdtsc(), limit = timeout_us * (clock.tsc_hz / 1000000);

	for (;;) {
		cli();
		if (done(arg)) {
			sti();
			return true;
		}
		if (rdtsc() - start > limit) {
			sti();
			return false;
		}
		/* STI's shadow covers HLT: a wake-up between check and HLT ends it. */
		asm volatile("sti; hlt" ::: "memory");
	}
}

void smp_wake(const struct percpu *cpu)
{
	apic_send_ipi(cpu->apic_id, APIC_ICR_DM_FIXED | APIC_ICR_VECTOR(APIC_VECTOR_WAKE));
}
