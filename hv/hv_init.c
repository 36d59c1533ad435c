// SPDX-License-Identifier: MIT
/* Detection on the running CPU, and the interfaces it finds. */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "hv/kvm.h"
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
}
