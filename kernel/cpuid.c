// SPDX-License-Identifier: MIT
/*
 * cpu_has(): one place that knows how to read a feature descriptor. Leaves
 * above the range's maximum return the data of the highest basic leaf on
 * Intel (SDM Vol 2A CPUID, "INPUT EAX = 0"), so the range is checked first.
 */
#include "kernel/cpuid.h"
#include "kernel/x86.h"

u32 cpuid_max_leaf(u32 base)
{
	return cpuid(base).eax;
}

bool cpu_has(struct cpu_feature f)
{
	u32 base = f.leaf & 0xffff0000;
	struct cpuid_regs r;
	u32 val;

	if (cpuid_max_leaf(base) < f.leaf)
		return false;
	r = cpuid_count(f.leaf, f.subleaf);
	switch (f.reg) {
	case CPUID_EAX: val = r.eax; break;
	case CPUID_EBX: val = r.ebx; break;
	case CPUID_ECX: val = r.ecx; break;
	default: val = r.edx; break;
	}
	return val & BIT(f.bit);
}
