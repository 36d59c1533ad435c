/* SPDX-License-Identifier: MIT */
/*
 * SMP bring-up: every CPU the MADT lists as usable, started with
 * INIT-SIPI-SIPI (SDM Vol 3A 9.4.4), one at a time (bringup=serial, Linux
 * before 6.5) or all kicked first (bringup=parallel, Linux 6.5+), with a
 * timeline of BSP- and AP-side TSC stamps. Waiting CPUs HLT.
 */
#ifndef APIC_SMP_H
#define APIC_SMP_H

#include "kernel/acpi/madt.h"
#include "kernel/acpi/srat.h"
#include "kernel/x86/percpu.h"

struct smp_state {
	struct madt_info madt;
	bool have_madt;
	struct srat_info srat;
	bool have_srat;
	u32 nodes;
	u32 package_shift;
	u64 trampoline;
	/* CPUs the MADT lists that we could not or would not start, and why. */
	char problems[256];
	u64 tsc_start, tsc_end;
	u32 started; /* APs kicked */
};

extern struct smp_state smp;

/* Tables, per-CPU data and the trampoline; false with err on failure. */
bool smp_init(char *err, size_t errlen);
/* Start the APs (all but cpus= of them are left alone). */
void smp_boot(void);


/*
 * Run fn(arg) on an online AP and wait (HLT) until it returns or timeout_us
 * passes; false on timeout.
 */
bool smp_run_on(struct percpu *cpu, void (*fn)(void *arg), void *arg, u64 timeout_us);
/*
 * Run fn(arg) on every online CPU at once: posted to the APs, then run on
 * the calling CPU (the BSP); wait (HLT) until every AP has returned or
 * timeout_us passes. False on timeout.
 */
bool smp_run_all(void (*fn)(void *arg), void *arg, u64 timeout_us);
/*
 * HLT until done(arg) is true or timeout_us passes. The tick and wake IPIs
 * end each HLT, so the condition is re-checked promptly.
 */
bool smp_wait(bool (*done)(void *arg), void *arg, u64 timeout_us);
/* Wake another CPU out of HLT (a fixed IPI on APIC_VECTOR_WAKE). */
void smp_wake(const struct percpu *cpu);

#endif
