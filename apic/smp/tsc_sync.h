/* SPDX-License-Identifier: MIT */
/*
 * The TSC-sync check of an AP's bring-up. Under a policy with Linux's
 * check (its tsc_sync), in a bring-up mode that lets it run (serial or
 * linux-6.5), it is Linux's check_tsc_warp(): the control CPU and the AP
 * read the TSC in turn under a lock for a timeout, and a reading earlier
 * than the other CPU's last is a warp. Where it runs is the kernel
 * version's, whatever the bring-up's shape: Linux 6.1 after the AP's
 * calibration, the control CPU's half from native_cpu_up(); Linux 6.5+
 * before it, the AP asking the control CPU for its half
 * (smp_call_function_single() from check_tsc_sync_target()), serial
 * bring-ups included. Elsewhere it is hvprobe's cheap check: the AP's
 * alive stamp must not be earlier than the BSP's SIPI stamp.
 */
#ifndef APIC_SMP_TSC_SYNC_H
#define APIC_SMP_TSC_SYNC_H

#include "kernel/lib/types.h"

enum smp_tsc_sync_mode {
	SMP_TSC_SYNC_STAMPS,
	SMP_TSC_SYNC_LINUX_6_1,
	SMP_TSC_SYNC_LINUX_6_5,
	SMP_TSC_SYNC_MODE_COUNT,
};
extern const char *const smp_tsc_sync_mode_names[SMP_TSC_SYNC_MODE_COUNT];

struct bringup_mode;
struct lpj_policy;

/*
 * Which check runs and where: the policy's (its tsc_sync), where the
 * bring-up mode lets Linux's check run.
 */
u32 smp_tsc_sync_mode(const struct bringup_mode *mode, const struct lpj_policy *policy);

/* What Linux's check of one AP depends on, as the AP comes up. */
struct smp_tsc_sync_facts {
	bool unstable;	     /* a warp was seen already (tsc_unstable) */
	bool constant;	     /* X86_FEATURE_CONSTANT_TSC */
	bool intel;	     /* the boot CPU is Intel's */
	bool reliable;	     /* X86_FEATURE_TSC_RELIABLE (tsc_clocksource_reliable) */
	bool tsc_adjust;     /* X86_FEATURE_TSC_ADJUST */
	bool package_online; /* another CPU of the AP's package is online */
	/* What unsynchronized_tsc() counts (an enum lpj_unsync_count), and the counts. */
	u8 unsync_count;
	u32 possible_cpus, packages;
};

/*
 * How long, in ms, the AP and the control CPU run the warp loop; 0 when
 * Linux skips the check. Skipped when unsynchronized_tsc() holds (a warp
 * already seen; or a TSC neither constant nor reliable on a CPU other
 * than Intel's, which Linux assumes unsynchronized across sockets: by
 * more than one possible CPU before v6.12, by more than one package
 * since), when
 * the TSC is reliable (check_tsc_sync_target()), and, with TSC_ADJUST,
 * for an AP whose package has a CPU online already: then
 * tsc_store_and_check_tsc_adjust() only makes its TSC_ADJUST equal that
 * CPU's. Else loop_timeout(): 2 ms when the package has a CPU online
 * (topology_core_cpumask() holds more than the AP), 20 ms for the first
 * CPU of a package.
 */
u32 smp_tsc_sync_timeout_ms(const struct smp_tsc_sync_facts *f);

/*
 * How many runs of the check may go before a warp marks the TSC
 * unstable: Linux's test_runs, the policy's with TSC_ADJUST, else 1.
 */
u32 smp_tsc_sync_runs(const struct lpj_policy *policy, bool tsc_adjust);

enum smp_tsc_sync_run {
	SMP_TSC_SYNC_RUN_IN_STEP,  /* no warp: done */
	SMP_TSC_SYNC_RUN_AGAIN,	   /* a warp: the target adjusts its TSC, both rerun */
	SMP_TSC_SYNC_RUN_UNSTABLE, /* a warp and no run left, or random warps */
};

/*
 * check_tsc_sync_source()'s verdict on a run that saw warps (random of
 * them by both CPUs in turn); *runs_left counts down, 0 once done.
 */
u32 smp_tsc_sync_after_run(u32 *runs_left, u32 warps, u32 random);

/*
 * check_tsc_sync_target()'s step of TSC_ADJUST before a rerun: on by the
 * warp this CPU saw; back by the source's where it saw none (its TSC
 * was ahead).
 */
s64 smp_tsc_adjust_step(u64 mine, u64 source);

#ifndef HOST_TEST
#include "kernel/x86/percpu.h"

/*
 * On the AP, where Linux calls check_tsc_sync_target(): the check its
 * facts call for, with the control CPU; true when no warp was seen (or
 * no check ran).
 */
bool smp_tsc_sync_ap(struct percpu *cpu);
/*
 * On the BSP, from its waits for an AP: run the control CPU's half of the
 * check an AP asked for; at once when none did.
 */
void smp_tsc_sync_serve(void);
/* The time the BSP spent in the checks, in TSC cycles, and how many ran and saw a warp. */
u64 smp_tsc_sync_source_cycles(void);
u32 smp_tsc_sync_checks(void);
u32 smp_tsc_sync_warps(void);
#endif

#endif
