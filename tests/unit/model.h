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
 * A KVM host, by what the PMI stress can meet of it: each behaviour is
 * a commit, and a profile the commits one kernel has (checked against
 * the sources of 6.1.y, 6.6.y and 6.12.y; docs/pmi.md's table). Each is
 * read where the model runs KVM's side (model.c's vcpu_enter_guest()):
 *
 * - mask_intel, mask_amd: kvm_apic_local_deliver() masks LVTPC when it
 *   delivers a PMI (a16eb25b09c0), for Intel-compatible guests only
 *   from 49ff3b4aec51.
 * - one_pmi_per_exit: 73554b29bd70 removed the irq_work
 *   (kvm_pmi_trigger_fn()). Without it one exit can deliver two PMIs:
 *   the irq_work's, for a host PMI taken outside the guest, and
 *   KVM_REQ_PMI's, for an overflow of an instruction KVM emulated in
 *   the same exit (the commit's changelog). The model does not time a
 *   host PMI's skid past the exit; it delivers every overflow in an exit
 *   twice, the most such a host can.
 * - pmi_before_nmi: fad505b2cb83; before it vcpu_enter_guest() checks
 *   KVM_REQ_NMI before KVM_REQ_PMU and KVM_REQ_PMI, so the NMI the PMI's
 *   delivery queues is found by kvm_vcpu_exit_request(), and the entry is
 *   cancelled (cancel_injection) and redone.
 * - deferred_reprogram: from 6.2 an emulated instruction's count is
 *   applied at VM-entry by kvm_pmu_handle_event() (KVM_REQ_PMU), whose
 *   overflow then raises KVM_REQ_PMI; before, in the exit itself
 *   (kvm_pmu_incr_counter()), at a reprogram's cost each.
 * - mediated: the mediated vPMU (kvm_intel.enable_mediated_pmu or
 *   kvm_amd's): the guest owns the counters, their reads and writes do
 *   not exit (the event selects still do), and an overflow reaches the
 *   host on a dedicated vector, not the host's perf NMI.
 */
struct model_host {
	const char *name;
	const char *commits; /* which of the four the profile has */
	bool mask_intel, mask_amd;
	bool one_pmi_per_exit;
	bool pmi_before_nmi;
	bool deferred_reprogram;
	bool mediated;
	u32 exit_cycles; /* an exit's round trip in model time */
};

enum model_host_id {
	MODEL_HOST_6_1_0,    /* 6.1.0 to 6.1.59: none of the four */
	MODEL_HOST_6_1_60,   /* 6.1.60 to about 6.1.87: a16eb25b09c0 alone */
	MODEL_HOST_6_1_141,  /* 6.1.y from about 6.1.88: and 49ff3b4aec51 */
	MODEL_HOST_6_6,	     /* a16eb25b09c0, 73554b29bd70 */
	MODEL_HOST_6_6_Y,    /* 6.6.y: and 49ff3b4aec51 */
	MODEL_HOST_6_7,	     /* a16eb25b09c0, 73554b29bd70, fad505b2cb83 */
	MODEL_HOST_6_9,	     /* and 49ff3b4aec51: all four (6.12 too) */
	MODEL_HOST_MEDIATED, /* all four, with the mediated vPMU on */
	MODEL_HOSTS
};

/* The requests vcpu_enter_guest() services, and KVM_REQ_EVENT after them. */
enum model_req { MODEL_REQ_NMI, MODEL_REQ_PMU, MODEL_REQ_PMI, MODEL_REQ_EVENT, MODEL_REQS };

/* The order host h checks its requests in, MODEL_REQS-terminated. */
const enum model_req *model_request_order(const struct model_host *h);

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
	/*
	 * A broken host: one more NMI, with no source, queued after every
	 * PMI delivered (what a second delivery of every PMI looks like).
	 */
	bool doubling;
	/* Out of order: a plain rdtsc() may read the TSC before earlier loads. */
	bool tsc_reads_early;
	/*
	 * The host's TSC offset of each vCPU: a vCPU's TSC is model time plus
	 * its offset plus its IA32_TSC_ADJUST (SDM Vol 3B "Time-Stamp Counter
	 * Adjustment"), which it may read and write.
	 */
	s64 tsc_offset[MODEL_CPUS];
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
	/* Of those, the guest's NMI or PMI-vector handler's own accesses. */
	u64 handler_exits;
	u64 exits_delivering_twice; /* exits whose VM-entry saw two PMI deliveries */
	/* KVM's side: VM-entries, and those cancelled at the last check. */
	u64 entries, cancels;
	/*
	 * PMIs delivered in NMI mode whose NMI a VM-entry injected: model
	 * time from kvm_pmu_deliver_pmi() to that entry, and the cancels in
	 * between, summed.
	 */
	u64 pmi_nmis, pmi_to_entry, pmi_cancels;
	/* Counter reprograms for emulated instructions: in the exit, at VM-entry. */
	u64 reprograms_in_exit, reprograms_at_entry;
	u64 doubled; /* the doubling host's extra NMIs */
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
/* Whether an access to msr on cpu is a VM exit under the started host. */
bool model_msr_exits(u32 cpu, u32 msr);
/*
 * What a host probe records from now on (tools/pmi-verdict's events, as
 * perf script prints them): VM-entries and exits, cancelled entries, PMI
 * deliveries, NMI injections, NMI IPIs, accepted LVTPC interrupts and
 * the guest's window marks, one line each on out; with lose_every, every
 * lose_every-th record is dropped instead and counted as perf's LOST.
 * NULL stops; returns the records lost.
 */
u64 model_record(void *out, u32 lose_every);
/*
 * A file for model_record(): name in the folder the environment's
 * HVPROBE_MODEL_PROBE names (for tools/tests/test_pmi_model_verdict.py
 * to read through tools/pmi-verdict's own parsing), else an anonymous
 * one; NULL when it cannot be made.
 */
void *model_record_file(const char *name);
/* One line "# " fmt on a recording, for what perf script would not print. */
void model_record_note(void *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes a model_record_file(); returns the bytes it holds. */
u64 model_record_close(void *out);
/* A window mark (kvm:kvm_pio of HOST_MARK_PORT) from CPU 0, now. */
void model_mark(u8 what);
/* Run n workload instructions on the calling CPU, outside the workload loop. */
void model_run(u64 n);

#endif
