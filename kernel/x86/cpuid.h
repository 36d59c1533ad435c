/* SPDX-License-Identifier: MIT */
/*
 * CPUID leaves, feature and property descriptors (SDM Vol 2A "CPUID", AMD
 * APM Vol 3 Appendix E), as the KVM selftests' X86_FEATURE_* and
 * X86_PROPERTY_* are: a feature is a (leaf, subleaf, register, bit)
 * descriptor read through cpu_has(), a property a (leaf, subleaf,
 * register, low bit, high bit) one read through cpu_property(), in the
 * order KVM selftests' X86_PROPERTY() and kvm-unit-tests' take, so that a
 * property pastes both ways. The bare bit numbers are asm-safe for the
 * boot path.
 */
#ifndef KERNEL_X86_CPUID_H
#define KERNEL_X86_CPUID_H

#include "kernel/lib/types.h"

#define CPUID_LEAF_VENDOR 0x00000000
#define CPUID_LEAF_FEATURES 0x00000001
#define CPUID_LEAF_STRUCT_FEATURES 0x00000007
#define CPUID_LEAF_ARCH_PERFMON 0x0000000a
#define CPUID_LEAF_TOPOLOGY 0x0000000b
#define CPUID_LEAF_TSC 0x00000015
#define CPUID_LEAF_FREQUENCY 0x00000016
#define CPUID_LEAF_HYPERVISOR 0x40000000
#define CPUID_LEAF_EXT_MAX 0x80000000
#define CPUID_LEAF_EXT_FEATURES 0x80000001
#define CPUID_LEAF_BRAND0 0x80000002
#define CPUID_LEAF_POWER 0x80000007
#define CPUID_LEAF_AMD_PERFMON 0x80000022

#define CPUID_EXT_FEATURES_EDX_LM 29
/* CPUID.0BH:ECX[15:8], the level's type: 0 for a level with no data */
#define CPUID_TOPOLOGY_ECX_TYPE GENMASK(15, 8)
/* CPUID.1:EBX[31:24], the initial APIC ID */
#define CPUID_FEATURES_EBX_APIC_ID_SHIFT 24

#ifndef __ASSEMBLER__

enum cpuid_reg { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX };

struct cpuid_regs {
	u32 eax, ebx, ecx, edx;
};

struct cpu_feature {
	u32 leaf;
	u32 subleaf;
	enum cpuid_reg reg;
	u8 bit;
};

#define CPU_FEATURE(l, s, r, b)                                                                    \
	((struct cpu_feature){ .leaf = (l), .subleaf = (s), .reg = (r), .bit = (b) })

#define X86_FEATURE_APIC CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_EDX, 9)
#define X86_FEATURE_TSC CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_EDX, 4)
#define X86_FEATURE_MSR CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_EDX, 5)
#define X86_FEATURE_X2APIC CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_ECX, 21)
#define X86_FEATURE_HYPERVISOR CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_ECX, 31)
#define X86_FEATURE_LM CPU_FEATURE(CPUID_LEAF_EXT_FEATURES, 0, CPUID_EDX, CPUID_EXT_FEATURES_EDX_LM)
#define X86_FEATURE_PDCM CPU_FEATURE(CPUID_LEAF_FEATURES, 0, CPUID_ECX, 15)
/* SDM Vol 2A Table 3-8: TPAUSE and UMWAIT */
#define X86_FEATURE_WAITPKG CPU_FEATURE(CPUID_LEAF_STRUCT_FEATURES, 0, CPUID_ECX, 5)
/* SDM Vol 2A Table 3-8: the IA32_TSC_ADJUST MSR */
#define X86_FEATURE_TSC_ADJUST CPU_FEATURE(CPUID_LEAF_STRUCT_FEATURES, 0, CPUID_EBX, 1)
/* AMD APM Vol 3 E.4.6, SDM Vol 2A Table 3-8: invariant TSC */
#define X86_FEATURE_INVTSC CPU_FEATURE(CPUID_LEAF_POWER, 0, CPUID_EDX, 8)
/* AMD APM Vol 3 E.4.2: MONITORX and MWAITX */
#define X86_FEATURE_MWAITX CPU_FEATURE(CPUID_LEAF_EXT_FEATURES, 0, CPUID_ECX, 29)
/* AMD APM Vol 3 E.4.2: six core performance counters */
#define X86_FEATURE_PERFCTR_CORE CPU_FEATURE(CPUID_LEAF_EXT_FEATURES, 0, CPUID_ECX, 23)
/* AMD APM Vol 3 E.4.17: PerfMonV2, global control and status */
#define X86_FEATURE_PERFMON_V2 CPU_FEATURE(CPUID_LEAF_AMD_PERFMON, 0, CPUID_EAX, 0)

struct cpu_property {
	u32 leaf;
	u32 subleaf;
	enum cpuid_reg reg;
	u8 low, high;
};

/*
 * A swapped pair would give GENMASK(low, high) = 0 and read nothing,
 * silently: the build fails instead. The check is a constant expression,
 * so a descriptor still works as a static initializer.
 */
#define CPU_PROPERTY_CHECK(lo, hi)                                                                 \
	(0 * sizeof(struct {                                                                       \
		 _Static_assert((lo) <= (hi), "CPU_PROPERTY: low bit above high bit");             \
		 char c;                                                                           \
	 }))

#define CPU_PROPERTY(l, s, r, lo, hi)                                                              \
	((struct cpu_property){ .leaf = (l),                                                       \
				.subleaf = (s),                                                    \
				.reg = (r),                                                        \
				.low = (lo) + CPU_PROPERTY_CHECK(lo, hi),                          \
				.high = (hi) })

/* Leaf 1 EAX: the signature (SDM Vol 2A Figure 3-6) */
#define X86_PROPERTY_STEPPING CPU_PROPERTY(CPUID_LEAF_FEATURES, 0, CPUID_EAX, 0, 3)
#define X86_PROPERTY_MODEL CPU_PROPERTY(CPUID_LEAF_FEATURES, 0, CPUID_EAX, 4, 7)
#define X86_PROPERTY_FAMILY CPU_PROPERTY(CPUID_LEAF_FEATURES, 0, CPUID_EAX, 8, 11)
#define X86_PROPERTY_EXT_MODEL CPU_PROPERTY(CPUID_LEAF_FEATURES, 0, CPUID_EAX, 16, 19)
#define X86_PROPERTY_EXT_FAMILY CPU_PROPERTY(CPUID_LEAF_FEATURES, 0, CPUID_EAX, 20, 27)
/* Leaf 1 EBX[23:16]: addressable logical processors per package */
#define X86_PROPERTY_MAX_LOGICAL_CPUS CPU_PROPERTY(CPUID_LEAF_FEATURES, 0, CPUID_EBX, 16, 23)
/* Leaf 0BH, per level: the level's type and the APIC ID shift to the next */
#define X86_PROPERTY_TOPOLOGY_SHIFT(level) CPU_PROPERTY(CPUID_LEAF_TOPOLOGY, level, CPUID_EAX, 0, 4)
/* clang-format off */
#define X86_PROPERTY_TOPOLOGY_TYPE(level) CPU_PROPERTY(CPUID_LEAF_TOPOLOGY, level, CPUID_ECX, 8, 15)
#define  CPUID_TOPOLOGY_TYPE_INVALID 0
/* clang-format on */
/* Leaf 0AH: architectural performance monitoring (SDM Vol 3B 21.2) */
#define X86_PROPERTY_PMU_VERSION CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EAX, 0, 7)
#define X86_PROPERTY_PMU_NR_GP_COUNTERS CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EAX, 8, 15)
#define X86_PROPERTY_PMU_GP_COUNTERS_BIT_WIDTH                                                     \
	CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EAX, 16, 23)
#define X86_PROPERTY_PMU_EBX_BIT_VECTOR_LENGTH                                                     \
	CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EAX, 24, 31)
#define X86_PROPERTY_PMU_EVENTS_MASK CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EBX, 0, 31)
#define X86_PROPERTY_PMU_NR_FIXED_COUNTERS CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EDX, 0, 4)
#define X86_PROPERTY_PMU_FIXED_COUNTERS_BIT_WIDTH                                                  \
	CPU_PROPERTY(CPUID_LEAF_ARCH_PERFMON, 0, CPUID_EDX, 5, 12)
/* Leaf 80000022H EBX[3:0]: PerfMonV2's core counters (APM Vol 3 E.4.17) */
#define X86_PROPERTY_NR_PERFCTR_CORE CPU_PROPERTY(CPUID_LEAF_AMD_PERFMON, 0, CPUID_EBX, 0, 3)

/* The property's bits in a leaf already read: pure, for decoding tables too. */
static inline u32 cpu_property_in(struct cpu_property p, const struct cpuid_regs *r)
{
	u32 v = p.reg == CPUID_EAX   ? r->eax
		: p.reg == CPUID_EBX ? r->ebx
		: p.reg == CPUID_ECX ? r->ecx
				     : r->edx;

	return (u32)FIELD_GET(GENMASK(p.high, p.low), v);
}

/* The leaf's maximum is checked first: out-of-range leaves read garbage. */
bool cpu_has(struct cpu_feature f);
/* A property of this CPU; 0 where its leaf is out of range. */
u32 cpu_property(struct cpu_property p);
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
