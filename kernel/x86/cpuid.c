// SPDX-License-Identifier: MIT
/*
 * cpu_has(): one place that knows how to read a feature descriptor. Leaves
 * above the range's maximum return the data of the highest basic leaf on
 * Intel (SDM Vol 2A CPUID, "INPUT EAX = 0"), so the range is checked first.
 */
#include "kernel/x86/cpuid.h"
#include "kernel/lib/string.h"
#include "kernel/x86/x86.h"

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

struct cpu_signature cpu_signature(void)
{
	u32 eax = cpuid(CPUID_LEAF_FEATURES).eax;
	u32 family = (eax >> 8) & 0xf, model = (eax >> 4) & 0xf;

	return (struct cpu_signature){
		.family = family == 0xf ? family + ((eax >> 20) & 0xff) : family,
		.model = family == 0x6 || family == 0xf ? model | (((eax >> 16) & 0xf) << 4)
							  : model,
		.stepping = eax & 0xf,
	};
}

void cpu_vendor(char out[13])
{
	struct cpuid_regs r = cpuid(CPUID_LEAF_VENDOR);

	memcpy(out, &r.ebx, 4);
	memcpy(out + 4, &r.edx, 4);
	memcpy(out + 8, &r.ecx, 4);
	out[12] = '\0';
}

bool cpu_vendor_is(const char *vendor)
{
	char v[13];

	cpu_vendor(v);
	return !strcmp(v, vendor);
}
