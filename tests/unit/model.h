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
 * - The host is a KVM kernel (struct model_host), by the behaviours that
 *   changed between versions; each profile names the commits it stands
 *   for. An overflow sets its status bit and, with INT, requests a PMI;
 *   KVM delivers it through LVTPC, masks LVTPC on delivery where the
 *   profile does, and drops a PMI that finds LVTPC masked
 *   (kvm_apic_local_deliver()).
 * - Each MSR or APIC access is a VM exit, and KVM's emulation retires the
 *   exiting instruction (9cd803d496e7, kvm_skip_emulated_instruction()):
 *   an overflow there is counted in the exit. With 73554b29bd70 one exit
 *   delivers at most one PMI (KVM_REQ_PMI); without it, such an overflow
 *   is delivered twice (irq_work and KVM_REQ_PMI both call
 *   kvm_pmu_deliver_pmi()), and a second overflow in the exit again.
 *   Each exit costs exit_cycles of model time, retiring nothing.
 * - KVM holds two NMIs pending when the vCPU is not in an NMI and one
 *   when it is (process_nmi()); more merge (SDM Vol 3A 6.7.1). The
 *   handler ends at its IRET; an exception's return ends NMI blocking
 *   only where it returns through IRET (TRAP_EXCEPTION_IRET).
 * - Code runs on one modelled CPU at a time, each a host thread handed a
 *   baton. Interrupts are taken, and the baton may pass to another CPU,
 *   at the points where modelled code touches the machine: each MSR,
 *   APIC or TSC access, each pause, each workload iteration. Each MSR
 *   access retires access_events instructions first, an APIC access
 *   apic_events; an NMI's entry retires
 *   entry_events before the first source is polled.
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

/*
 * A KVM host, by what the PMI stress can meet of it. Versions are
 * mainline's; stable trees took the fixes at other points (6.1.y got
 * a16eb25b09c0 and 73554b29bd70 around 6.1.60), so a profile is its
 * commits, and the version only an example.
 */
struct model_host {
	const char *name;
	const char *commits; /* which of the four the profile has */
	/* a16eb25b09c0 masks LVTPC on delivery; 49ff3b4aec51 stops it for AMD. */
	bool mask_intel, mask_amd;
	/* 73554b29bd70: at most one PMI per VM exit. */
	bool one_pmi_per_exit;
	/* fad505b2cb83: NMI requests after PMI requests, no cancelled VM-entry. */
	bool pmi_before_nmi;
	/* Reprogramming at VM-entry (kvm_pmu_handle_event()) rather than per emulated instruction.
	 */
	bool deferred_reprogram;
	u32 exit_cycles; /* an exit's cost in model time */
};

enum model_host_id {
	MODEL_HOST_6_1_0,  /* 6.1.0 to about 6.1.59, 6.2 to 6.5: none of the four */
	MODEL_HOST_6_1_60, /* 6.1.y with a16eb25b09c0 and 73554b29bd70 */
	MODEL_HOST_6_6,	   /* a16eb25b09c0, 73554b29bd70 */
	MODEL_HOST_6_7,	   /* and fad505b2cb83 */
	MODEL_HOST_6_9,	   /* and 49ff3b4aec51: all four (6.12 too) */
	MODEL_HOST_STABLE, /* a stable tree with a16eb25b09c0, 73554b29bd70, 49ff3b4aec51 */
	MODEL_HOSTS
};

extern const struct model_host model_hosts[MODEL_HOSTS];

struct model_config {
	const struct model_host *host;
	enum pmu_vendor vendor;
	/* Intel: CPUID.0AH's version (1, 2 or 5); AMD: 0 legacy, 1 core, 2 PerfMonV2. */
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
	u64 pmis_twice; /* overflows delivered twice in one exit */
	u64 lost[64];	/* overflows KVM ignored: wrapped, no status, no PMI */
	u64 nmis_taken, nmis_merged;
	u64 nmis_nested; /* taken inside the handler: NMI blocking ended early */
	u64 injected;
	u64 exits;
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
	bool hook_only; /* the hook and nothing else: no NMI */
	u32 skip, times;
};

/* A common start: Intel v2, 4 GP and 3 fixed counters of 48 bits, FW_WRITE, on 6.9. */
struct model_config model_intel_v2(u32 cpus, u64 seed);
/* The four PMUs the issue names, on host h: Intel v2 and v5, AMD legacy and PerfMonV2. */
enum model_pmu { MODEL_INTEL_V2, MODEL_INTEL_V5, MODEL_AMD_LEGACY, MODEL_AMD_V2, MODEL_PMUS };
struct model_config model_pmu(enum model_pmu k, enum model_host_id h, u32 cpus, u64 seed);
extern const char *const model_pmu_names[MODEL_PMUS];

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
/* Counter bit (GP n, fixed 32 + i) of cpu overflows now, with its PMI. */
void model_overflow_now(u32 cpu, u32 bit);
/* An NMI with no source at all, on cpu, at its next point. */
void model_spurious_nmi(u32 cpu);
/*
 * On cpu's (skip + 1)-th write that resumes counting, armed counter 0 (at
 * status bit bit) overflows and the host PMI for it finds its
 * reprogramming pending, which KVM ignores (kvm_perf_overflow()): the
 * counter wraps with no status bit and no PMI.
 */
void model_lose_overflow(u32 cpu, u32 bit, u32 skip);

const struct model_truth *model_truth(u32 cpu);
/* Run n workload instructions on the calling CPU, outside the workload loop. */
void model_run(u64 n);

#endif
