// SPDX-License-Identifier: MIT
/*
 * The warp check of Linux's arch/x86/kernel/tsc_sync.c, on the AP and on
 * the BSP as the control CPU; see tsc_sync.h.
 */
#include "apic/smp/tsc_sync.h"
#include "apic/smp/smp.h"
#include "apic/smp/tsc_warp.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/time/policy.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/x86.h"

/*
 * The two CPUs meet twice, as Linux's start_count and stop_count: both
 * in before the loop, both out before the verdict is read. Only one AP
 * checks at a time: serially, and in linux-6.5 bring-up each AP after
 * the one before it is online.
 */
static struct {
	volatile u32 asked; /* index + 1 of the AP waiting for the BSP; 0: none */
	volatile u32 start, stop;
	struct tsc_warp warp;
	volatile bool in_step; /* the last check's verdict, for its AP */
	volatile bool again;   /* the last run warped and another follows */
	u64 source_cycles;
	u32 checks, warped;
} sync;

static u64 warp_cycles(u32 timeout_ms)
{
	return timeout_ms * (clock.tsc_hz / 1000);
}

static void wait_for(volatile u32 *count, u32 value)
{
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) != value)
		pause();
}

/* Whether another CPU of cpu's package is online: topology_core_cpumask() beyond cpu. */
static bool package_online(const struct percpu *cpu)
{
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *o = cpu_at(i);

		if (o != cpu && o->package == cpu->package &&
		    __atomic_load_n(&o->state, __ATOMIC_ACQUIRE) == CPU_ONLINE)
			return true;
	}
	return false;
}

/* topology_max_packages(): the packages of every CPU bring-up will start. */
static u32 packages(void)
{
	u32 n = 0;

	for (u32 i = 0; i < cpu_count(); i++) {
		bool first = true;

		for (u32 k = 0; k < i && first; k++)
			first = cpu_at(k)->package != cpu_at(i)->package;
		n += first;
	}
	return n;
}

static u32 timeout_ms(const struct percpu *cpu)
{
	const char *why;
	struct smp_tsc_sync_facts f = {
		.unstable = !delay_tsc_synchronized(),
		.constant = delay_tsc_constant(&why),
		.intel = cpu_vendor_is("GenuineIntel"),
		.reliable = delay_tsc_reliable(),
		.tsc_adjust = cpu_has(X86_FEATURE_TSC_ADJUST),
		.package_online = package_online(cpu),
		.unsync_count = lpj_policy_chosen()->unsync_count,
		.possible_cpus = cpu_count(),
		.packages = packages(),
	};

	return smp_tsc_sync_timeout_ms(&f);
}

/*
 * check_tsc_sync_target(), tsc_sync.c v6.5:475-508: where the source
 * calls for another run, step TSC_ADJUST by the warp and rerun.
 */
bool smp_tsc_sync_ap(struct percpu *cpu)
{
	struct smp_cpu *s = smp_cpu(cpu->index);
	u64 t0 = rdtsc();
	u64 mine, source;
	s64 step;
	bool again;

	s->tsc_sync_ms = timeout_ms(cpu);
	if (!s->tsc_sync_ms)
		return true;
	__atomic_store_n(&sync.asked, cpu->index + 1, __ATOMIC_RELEASE);
	smp_wake(cpu_at(0));
	do {
		__atomic_add_fetch(&sync.start, 1, __ATOMIC_ACQ_REL);
		wait_for(&sync.start, 2);
		mine = tsc_warp_loop(&sync.warp, warp_cycles(s->tsc_sync_ms));
		source = sync.warp.max_warp;
		__atomic_add_fetch(&sync.stop, 1, __ATOMIC_ACQ_REL);
		wait_for(&sync.stop, 2);
		s->tsc_sync_runs++;
		again = sync.again;
		if (again) {
			step = smp_tsc_adjust_step(mine, source);
			s->tsc_adjusted += step;
			wrmsr(MSR_IA32_TSC_ADJUST, rdmsr(MSR_IA32_TSC_ADJUST) + (u64)step);
		}
	} while (again);
	s->tsc_sync_cycles = rdtsc() - t0;
	return sync.in_step;
}

/*
 * check_tsc_sync_source(): runs until one is in step or none is left
 * (tsc_sync.c v6.5:358-361 sets how many).
 */
void smp_tsc_sync_serve(void)
{
	u32 asked = __atomic_exchange_n(&sync.asked, 0, __ATOMIC_ACQ_REL);
	struct smp_cpu *s;
	u64 t0 = rdtsc();
	u32 runs, verdict;

	if (!asked)
		return;
	s = smp_cpu(asked - 1);
	runs = smp_tsc_sync_runs(lpj_policy_chosen(), cpu_has(X86_FEATURE_TSC_ADJUST));
	do {
		wait_for(&sync.start, 1);
		sync.stop = 0;
		__atomic_store_n(&sync.start, 2, __ATOMIC_RELEASE);
		tsc_warp_loop(&sync.warp, warp_cycles(s->tsc_sync_ms));
		wait_for(&sync.stop, 1);
		verdict = smp_tsc_sync_after_run(&runs, sync.warp.warps, sync.warp.random);
		sync.in_step = verdict == SMP_TSC_SYNC_RUN_IN_STEP;
		sync.again = verdict == SMP_TSC_SYNC_RUN_AGAIN;
		s->tsc_warp_cycles = MAX(s->tsc_warp_cycles, sync.warp.max_warp);
		sync.checks++;
		sync.warped += !!sync.warp.warps;
		sync.start = 0;
		sync.warp = (struct tsc_warp){ 0 };
		sync.source_cycles += rdtsc() - t0;
		t0 = rdtsc();
		__atomic_store_n(&sync.stop, 2, __ATOMIC_RELEASE);
	} while (verdict == SMP_TSC_SYNC_RUN_AGAIN);
}

u64 smp_tsc_sync_source_cycles(void)
{
	return sync.source_cycles;
}

u32 smp_tsc_sync_checks(void)
{
	return sync.checks;
}

u32 smp_tsc_sync_warps(void)
{
	return sync.warped;
}
