/* SPDX-License-Identifier: MIT */
/*
 * What the pieces of SMP bring-up share, and nothing outside apic/smp/
 * should use: the tables and record of the bring-up (ap.c keeps them,
 * smp.c fills the tables, smp_json.c reads them for the smp DATA), and
 * what smp.c calls of parallel.c (the calibration line stays
 * parallel.c's own).
 */
#ifndef APIC_SMP_SMP_INTERNAL_H
#define APIC_SMP_SMP_INTERNAL_H

#include "kernel/acpi/madt.h"
#include "kernel/acpi/srat.h"
#include "kernel/x86/percpu.h"

struct json;

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
	u64 tsc_start, tsc_end;
	u32 started; /* APs kicked */
	/* When the BSP saw each AP online, by its own TSC; 0 when it never did. */
	u64 tsc_seen[MAX_CPUS];
	u64 init_udelay; /* what init_udelay= came to, and why */
	const char *init_udelay_why;
};
extern struct smp_state smp;

/* parallel.c: parallel bring-up, and each AP's lpj in either bring-up. */
void smp_parallel_prepare(void);
void smp_parallel_boot(void);
struct smp_cpu;
void smp_ap_lpj(struct smp_cpu *ap);
/* Whether ap is one of the APs the host-parallelism probe runs on. */
bool smp_in_probe(const struct smp_cpu *ap);
/* The calibration line's settings and what its probe found, for the smp DATA. */
void smp_parallel_json(struct json *j);

#endif
