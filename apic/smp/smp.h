/* SPDX-License-Identifier: MIT */
/*
 * SMP bring-up: every CPU the MADT lists as usable, started with
 * INIT-SIPI-SIPI (SDM Vol 3A 9.4.4), one at a time (bringup=serial, as
 * Linux before 6.5 and 6.5+ with cpuhp.parallel=0), all kicked first and
 * each held at alive (bringup=linux-6.5, cpuhp_bringup_cpus_parallel()),
 * or all kicked first in hvprobe's own concurrent mode, in no Linux
 * (bringup=parallel), with a timeline of BSP- and AP-side TSC
 * stamps. How each AP gets lpj is planned before it starts
 * (delay_plan_ap()); in parallel an AP that copies parks until its source
 * has a value, and calibrating APs take turns, as many at once as a probe
 * of the host allows. Waiting CPUs PAUSE briefly, then HLT.
 */
#ifndef APIC_SMP_SMP_H
#define APIC_SMP_SMP_H

#include "kernel/x86/percpu.h"

struct json;

/*
 * Each CPU's record of its bring-up, as kernel/x86/nmi.h keeps nmi_cpu():
 * TSC stamps by the BSP (INIT, SIPI) and by the CPU itself (alive,
 * calibrated, online), the ESR after its kick, in parallel bring-up its
 * place among the calibrating APs and what it parked for, and the work
 * it has run since.
 */
struct smp_cpu {
	struct percpu *cpu; /* whose record it is */
	u64 tsc_init, tsc_sipi, tsc_alive, tsc_calibrated, tsc_online;
	u32 esr;
	/* Parallel bring-up: place among the calibrating APs, and its waits. */
	u32 cal_rank;
	const char *waited_for;
	u64 tsc_wait_start, tsc_wait_end;
	/* The host-parallelism probe: the round this CPU ran, its count. */
	volatile u32 probe_round;
	volatile u64 probe_loops;
	/*
	 * The TSC-sync check (tsc_sync.h): its timeout in ms (0: none ran),
	 * its cost on the AP, and the largest warp the BSP saw in it.
	 */
	u32 tsc_sync_ms;
	u64 tsc_sync_cycles, tsc_warp_cycles;
	/* Its runs (more than one after a TSC_ADJUST step), and TSC_ADJUST's sum of steps. */
	u32 tsc_sync_runs;
	s64 tsc_adjusted;
	/* A warp whose mark is deferred until the BSP has seen this CPU online. */
	bool warp_pending;
	/* Work it has run for smp_run_on() and smp_run_all(). */
	volatile u64 work_done;
};

/* The bring-up record of the CPU at index (< MAX_CPUS). */
struct smp_cpu *smp_cpu(u32 index);

/* Tables, per-CPU data and the trampoline; false with why on failure. */
bool smp_init(char *why, size_t whylen);
/* Start the APs (all but cpus= of them are left alone). */
void smp_boot(void);

/*
 * Why the AP at index could not be started, as Linux says it ("APIC
 * never delivered", "APIC delivery error"); NULL when its kick went
 * through.
 */
const char *smp_kick_failure(u32 index);

/* What the firmware's tables said, as smp_init() read them. */
bool smp_have_madt(void);
/* Usable CPUs the MADT lists (1, the BSP, without a MADT). */
u32 smp_usable_cpus(void);
u32 smp_nodes(void);
/* The node the SRAT gives apic_id; 0 without an SRAT or an entry. */
u32 smp_node_of(u32 apic_id);
/*
 * What was skipped and why, "" for nothing: CPUs that were not started,
 * and entries the MADT and SRAT parsers passed over.
 */
const char *smp_problems(void);
const char *smp_madt_problems(void);
const char *smp_srat_problems(void);
/*
 * The smp DATA: CPUs online and calibrated, nodes, the bring-up settings
 * and its total time; and for each AP its own record, the timeline of
 * its bring-up in microseconds from the start, one DATA line each.
 */
void smp_json(struct json *j);
void smp_ap_json(struct json *j, u32 index);
/*
 * Parallel bring-up's calibration line: how many APs planned to
 * calibrate and how many were let do so at once (0, 0 serially).
 */
u32 smp_calibrating_aps(void);
u32 smp_calibrate_concurrency(void);

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
