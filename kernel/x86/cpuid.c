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

/* The range's maximum covers leaf. */
static bool leaf_in_range(u32 leaf)
{
	return cpuid_max_leaf(leaf & 0xffff0000) >= leaf;
}

bool cpu_has(struct cpu_feature f)
{
	/* One bit: low == high, known only at run time, so no CPU_PROPERTY(). */
	struct cpu_property bit = {
		.leaf = f.leaf, .subleaf = f.subleaf, .reg = f.reg, .low = f.bit, .high = f.bit
	};

	return cpu_property(bit);
}

u32 cpu_property(struct cpu_property p)
{
	struct cpuid_regs r;

	if (!leaf_in_range(p.leaf))
		return 0;
	r = cpuid_count(p.leaf, p.subleaf);
	return cpu_property_in(p, &r);
}

/* SDM Vol 2A CPUID, "Family, Model and Stepping": where the extended fields fold in. */
struct cpu_signature cpu_signature(void)
{
	u32 family = cpu_property(X86_PROPERTY_FAMILY), model = cpu_property(X86_PROPERTY_MODEL);

	return (struct cpu_signature){
		.family = family == 0xf ? family + cpu_property(X86_PROPERTY_EXT_FAMILY) : family,
		.model = family == 0x6 || family == 0xf
				 ? model | cpu_property(X86_PROPERTY_EXT_MODEL) << 4
				 : model,
		.stepping = cpu_property(X86_PROPERTY_STEPPING),
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
