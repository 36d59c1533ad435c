/* SPDX-License-Identifier: MIT */
/*
 * CPUID leaves and feature descriptors (SDM Vol 2A "CPUID", AMD APM Vol 3
 * Appendix E). A feature is a (leaf, subleaf, register, bit) descriptor read
 * through cpu_has(); the bare bit numbers are asm-safe for the boot path.
 */
#ifndef KERNEL_X86_CPUID_H
#define KERNEL_X86_CPUID_H

#include "kernel/lib/types.h"

#define CPUID_LEAF_VENDOR 0x00000000
#define CPUID_LEAF_FEATURES 0x00000001
#define CPUID_LEAF_TOPOLOGY 0x0000000b
#define CPUID_LEAF_TSC 0x00000015
#define CPUID_LEAF_HYPERVISOR 0x40000000
#define CPUID_LEAF_EXT_MAX 0x80000000
#define CPUID_LEAF_EXT_FEATURES 0x80000001
#define CPUID_LEAF_BRAND0 0x80000002
#define CPUID_LEAF_POWER 0x80000007

#define CPUID_EXT_FEATURES_EDX_LM 29

#ifndef __ASSEMBLER__

enum cpuid_reg { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX };

struct cpu_feature {
	u32 leaf;
	u32 subleaf;
	enum cpuid_reg reg;
	u8 bit;
};

#define CPU_FEATURE(l, s, r, b) \
	((struct cpu_feature){ .leaf = (l), .subleaf = (s), .reg = (r), .bit = (b) })

#define X86_FEATURE_APIC CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_EDX, 9)
#define X86_FEATURE_TSC CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_EDX, 4)
#define X86_FEATURE_MSR CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_EDX, 5)
#define X86_FEATURE_X2APIC CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_ECX, 21)
#define X86_FEATURE_HYPERVISOR CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_ECX, 31)
#define X86_FEATURE_LM \
	CPU_FEATURE(CPUID_LEAF_EXT_FEATURES, 0, CPUID_EDX, CPUID_EXT_FEATURES_EDX_LM)
/* AMD APM Vol 3 E.4.6, SDM Vol 2A Table 3-8: invariant TSC */
#define X86_FEATURE_INVTSC CPU_FEATURE(CPUID_LEAF_POWER, 0, CPUID_EDX, 8)

/* The leaf's maximum is checked first: out-of-range leaves read garbage. */
bool cpu_has(struct cpu_feature f);
u32 cpuid_max_leaf(u32 base);

/* Family and model with the extended fields folded in (SDM Vol 2A CPUID). */
struct cpu_signature {
	u32 family, model, stepping;
};

struct cpu_signature cpu_signature(void);
/* The 12-byte vendor string of leaf 0 ("GenuineIntel", "AuthenticAMD"). */
void cpu_vendor(char out[13]);
bool cpu_vendor_is(const char *vendor);

#endif /* __ASSEMBLER__ */
#endif
