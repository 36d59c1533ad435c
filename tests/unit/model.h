/* SPDX-License-Identifier: MIT */
/*
 * A host model of what the PMI stress runs on: CPUs with a PMU, an LVTPC,
 * NMI IPIs and NMI blocking, as a KVM guest sees them, for the unit tests
 * to run pmu/ and the kernel's NMI entry unchanged against.
 *
 * - The PMU is Intel's architectural one (v1 or v2, GP and fixed
 *   counters, global control and status, legacy and full-width writes)
 *   or AMD's (legacy, core, PerfMonV2), as SDM Vol 3B 21.2 and APM Vol 2
 *   13.2 describe. Every counter enabled counts the same events: each
 *   modelled instruction is one.
 * - An overflow sets its status bit and, with INT, raises a PMI through
 *   LVTPC; KVM masks LVTPC when it delivers a PMI to an Intel-compatible
 *   guest, and drops a PMI that finds LVTPC masked
 *   (kvm_apic_local_deliver()): so does the model.
 * - One NMI is held pending while the handler runs and more merge into it
 *   (SDM Vol 3A 6.7.1); the handler ends at its IRET.
 * - Code runs on one modelled CPU at a time, each a host thread handed a
 *   baton. Interrupts are taken, and the baton may pass to another CPU,
 *   at the points where modelled code touches the machine: each MSR,
 *   APIC or TSC access, each pause, each workload iteration. Each MSR
 *   access retires access_events instructions first, an APIC access
 *   apic_events; an NMI's entry retires
 *   entry_events before the first source is polled, the first
 *   NMI_PMC_STUB_INSNS of them before the stub's RDPMC.
 * - Which CPU runs next is drawn from seed, so a failure repeats. NMI
 *   IPIs can also be injected on purpose, right after a given MSR access.
 *
 * The model keeps the truth (every overflow that happened, every PMI
 * raised and dropped) for the tests to hold what hvprobe reports against.
 */
#ifndef TESTS_UNIT_MODEL_H
#define TESTS_UNIT_MODEL_H

#include "pmu/pmu.h"

#define MODEL_CPUS 4
#define MODEL_COUNTERS 8 /* GP counters, then fixed ones, by status bit */

struct model_config {
	enum pmu_vendor vendor;
	/* Intel: CPUID.0AH's version (1 or 2); AMD: 0 legacy, 1 core, 2 PerfMonV2. */
	u32 version;
	u32 gp_counters, gp_width, fixed_counters, fixed_width;
	bool fw_write;
	u32 cpus;
	u64 tsc_hz;
	u32 access_events;
	u32 apic_events; /* an APIC access: apic_write() picks the mode, then the access */
	u32 entry_events;
	u32 switch_permille;
	u64 seed;
};

/* What really happened on one CPU, since model_start(). */
struct model_truth {
	u64 overflows[64]; /* by status bit: GP n at n, fixed i at 32 + i */
	u64 pmis_raised, pmis_dropped;
	u64 nmis_taken, nmis_merged;
	u64 injected;
};

enum model_trigger {
	MODEL_AFTER_READ,  /* of msr */
	MODEL_AFTER_WRITE, /* of msr */
	MODEL_AFTER_PMI,   /* a PMI raised on cpu */
};

/*
 * An NMI raised on target at a trigger of cpu: an NMI IPI with mail, as
 * nmi_ipi_send() posts it, or with spurious, an NMI with no source at
 * all; hook, when set, is called first. The first `skip` triggers are
 * let by, then `times` of them inject. With counters_off, an access
 * triggers only while no event select of cpu is enabled.
 */
struct model_injection {
	enum model_trigger on;
	u32 cpu, target, msr;
	bool counters_off, spurious;
	void (*hook)(void);
	u32 skip, times;
};

/* A common start: Intel v2, 4 GP and 3 fixed counters of 48 bits, FW_WRITE. */
struct model_config model_intel_v2(u32 cpus, u64 seed);

/* A fresh machine: every CPU reset, the NMI and PMI handlers installed. */
void model_start(const struct model_config *c);
/* One more injection (up to a few per run). */
void model_inject(const struct model_injection *i);
/*
 * When cpu turns its counters off, an overflow of GP counter 0 whose PMI
 * the host dropped: its status bit set, LVTPC as the last PMI left it.
 */
void model_overflow_at_stop(u32 cpu);
/*
 * From model time from, for cycles, cpu does not run while another can:
 * a vCPU the host has descheduled.
 */
void model_stall(u32 cpu, u64 from, u64 cycles);
u64 model_now(void);
/* An NMI with no source at all, on cpu, at its next point. */
void model_spurious_nmi(u32 cpu);

const struct model_truth *model_truth(u32 cpu);
/* Run n workload instructions on the calling CPU, outside the workload loop. */
void model_run(u64 n);

#endif
