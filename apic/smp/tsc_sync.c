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
 * Only one AP checks at a time: serially, and in linux-6.5 bring-up each
 * AP after the one before it is online.
 */
static struct {
	volatile u32 asked; /* index + 1 of the AP waiting for the BSP; 0: none */
	struct tsc_sync_pair pair;
	u64 source_cycles;
	u32 checks, warped;
} sync;

static u64 warp_cycles(u32 timeout_ms)
{
	return timeout_ms * (clock.tsc_hz / 1000);
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

bool smp_tsc_sync_ap(struct percpu *cpu)
{
	struct smp_cpu *s = smp_cpu(cpu->index);
	u64 t0 = rdtsc();
	bool in_step;

	s->tsc_sync_ms = timeout_ms(cpu);
	if (!s->tsc_sync_ms)
		return true;
	__atomic_store_n(&sync.asked, cpu->index + 1, __ATOMIC_RELEASE);
	smp_wake(cpu_at(0));
	in_step = tsc_sync_target(&sync.pair, warp_cycles(s->tsc_sync_ms), &s->tsc_adjusted,
				  &s->tsc_sync_runs);
	s->tsc_sync_cycles = rdtsc() - t0;
	return in_step;
}

void smp_tsc_sync_serve(void)
{
	u32 asked = __atomic_exchange_n(&sync.asked, 0, __ATOMIC_ACQ_REL);
	struct tsc_sync_source_runs r;
	struct smp_cpu *s;
	u64 t0 = rdtsc();

	if (!asked)
		return;
	s = smp_cpu(asked - 1);
	tsc_sync_source(&sync.pair, warp_cycles(s->tsc_sync_ms),
			smp_tsc_sync_runs(lpj_policy_chosen(), cpu_has(X86_FEATURE_TSC_ADJUST)),
			&r);
	s->tsc_warp_cycles = r.max_warp;
	sync.checks += r.runs;
	sync.warped += r.warped;
	sync.source_cycles += rdtsc() - t0;
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
