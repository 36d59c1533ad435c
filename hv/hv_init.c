// SPDX-License-Identifier: MIT
/* Detection on the running CPU, the interfaces it finds, and what they offer. */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "hv/kvm.h"
#include "kernel/time/clock.h"
#include "kernel/x86/cpuid.h"

static struct cpuid_regs leaf(u32 l)
{
	return cpuid(l);
}

void hv_init(void)
{
	const struct hv_block *b;

	hv_scan(&hv, cpu_has(X86_FEATURE_HYPERVISOR), leaf);
	b = hv_find(&hv, HV_KIND_HYPERV);
	if (b)
		hyperv_init(b->base);
	b = hv_find(&hv, HV_KIND_KVM);
	if (b)
		kvm_init(b->base);
	/* What the clocks may take as stated instead of measuring. */
	clock_offers = (struct clock_offers){
		.hyperv = hyperv.present,
		.kvm = kvm.present,
		.hyperv_tsc_hz = hyperv.tsc_hz,
		.hyperv_apic_hz = hyperv.apic_hz,
		.kvmclock_tsc_khz = kvm.kvmclock ? kvm.kvmclock_tsc_khz : 0,
		.kvm_timing_tsc_khz = kvm.timing_leaf ? kvm.timing_tsc_khz : 0,
		.kvm_timing_apic_khz = kvm.timing_leaf ? kvm.timing_apic_khz : 0,
	};
}
