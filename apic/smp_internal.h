/* SPDX-License-Identifier: MIT */
/*
 * What the pieces of SMP bring-up share, and nothing outside apic/ should
 * use: smp.c's tables and record of the bring-up, parallel.c's
 * calibration line, the calls between the two, and what smp_json.c reads
 * of both for the smp DATA.
 */
#ifndef APIC_SMP_INTERNAL_H
#define APIC_SMP_INTERNAL_H

#include "apic/turns.h"
#include "kernel/acpi/madt.h"
#include "kernel/acpi/srat.h"
#include "kernel/x86/percpu.h"

/* A hang bound, not a target: an AP calibrates for ~80 ms. */
#define AP_ONLINE_TIMEOUT_US (10 * 1000000ULL)

/*
 * APs kicked together. Under TCG, APs that start at once slow each other
 * down (each vCPU's INIT and first run take QEMU work that waits for the
 * running vCPUs), so a whole machine kicked at once came up slower than
 * serially: 255 vCPUs in 56-75 ms against 29 ms serially, 16 in 2-46 ms
 * against 2-6 ms, on 2 loaded host cores. Pairs sharing their waits,
 * each kicked once the pair before is alive, came to 29-38 ms and
 * 2.0-2.7 ms: the waits shared, the start-up overlapped with the next
 * kick, and no crowd.
 */
#define KICK_BATCH 2

/* The tables smp_init() read, and the bring-up's record, which the smp DATA gives. */
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
	/* APs given up on: never alive within AP_ONLINE_TIMEOUT_US of their kick. */
	u8 given_up[MAX_CPUS];
	u64 tsc_start, tsc_end;
	u32 started; /* APs kicked */
	/* When the BSP saw each AP online, by its own TSC; 0 when it never did. */
	u64 tsc_seen[MAX_CPUS];
	u64 init_udelay; /* what init_udelay= came to, and why */
	const char *init_udelay_why;
};
extern struct smp_state smp;

/*
 * Parallel bring-up's line of calibrating APs: rank r may start once its
 * turn comes (turns.h). The BSP grants the first `concurrency` turns;
 * each AP that finishes grants one more and wakes its holder.
 */
struct calibration_line {
	u32 calibrators;
	struct turns turns; /* who may calibrate now (turns.h) */
	u32 concurrency;
	char why[160];
	u32 parallelism_x100; /* what the probe measured; 0 when none ran */
	u32 probed;
	volatile u32 probe_round, probe_arrived;
	volatile u64 probe_start, probe_end;
	u64 solo_loops, yardstick_us;
	struct percpu *ranked[MAX_CPUS];
};
extern struct calibration_line cal_line;

/* smp.c: stamp, on the BSP, each AP it sees online for the first time. */
bool smp_seen_online(struct percpu *cpu);
/* smp.c: kick every AP, in batches, first (an index, 0 for none) alone before the rest. */
void kick_all(u32 first);

/* parallel.c: parallel bring-up, and each AP's lpj in either bring-up. */
void prepare_parallel(void);
void boot_parallel(void);
void ap_lpj(struct percpu *cpu);
/* Whether cpu is one of the APs the host-parallelism probe runs on. */
bool in_probe(const struct percpu *cpu);

#endif
